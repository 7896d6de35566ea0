package heartbeat

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vigil-iot/vigil/agent"
	"github.com/vigil-iot/vigil/alert"
)

// TestProviderNoAnswerIsAFailedRun: a refusal, a content filter, a cut
// answer or a provider error inside a 200 is a failed heartbeat carrying
// the provider's reason, never an alert to the person.
func TestProviderNoAnswerIsAFailedRun(t *testing.T) {
	tests := []struct {
		provider, fixture, want string
	}{
		{agent.ProviderOpenAI, "openai_refusal.json", "refusal: I'm sorry, I cannot assist with that request."},
		{agent.ProviderOpenAI, "openai_length.json", "finish_reason length"},
		{agent.ProviderOpenAI, "openai_content_filter.json", "finish_reason content_filter"},
		{agent.ProviderOpenAI, "openrouter_choice_error.json", "error in response: Provider returned error"},
		{agent.ProviderOpenAI, "openrouter_error_200.json", "error in response: Provider returned error"},
		{agent.ProviderAnthropic, "anthropic_refusal.json", "stop_reason refusal"},
		{agent.ProviderAnthropic, "anthropic_max_tokens.json", "stop_reason max_tokens"},
	}
	for _, tt := range tests {
		t.Run(strings.TrimSuffix(tt.fixture, ".json"), func(t *testing.T) {
			body, err := os.ReadFile(filepath.Join("..", "agent", "testdata", tt.fixture))
			if err != nil {
				t.Fatal(err)
			}
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				w.Write(body)
			}))
			defer srv.Close()
			h := newHarness(t, func(c *Config) { c.MaxQuiet = time.Minute })
			h.useAgent(tt.provider, srv.URL+"/v1", 0)
			h.clock.Advance(30 * time.Minute)
			h.sample()
			res := h.tick()
			if res.Run.Outcome != OutcomeFailed || res.Decision != nil || !strings.Contains(res.Run.Error, tt.want) {
				t.Errorf("run = %s, error %q; want failed with %q", res.Run.Outcome, res.Run.Error, tt.want)
			}
			for _, al := range res.Alerts {
				if al.Source != alert.SourceSystem {
					t.Errorf("alert %+v from a run without an answer", al)
				}
			}
		})
	}
}
