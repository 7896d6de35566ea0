package agent

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestMaxTokensSent: llm.max_output_tokens reaches every request, in the
// max_tokens field both protocols take.
func TestMaxTokensSent(t *testing.T) {
	forProviders(t, func(t *testing.T, p string) {
		for _, tt := range []struct{ cfg, want int }{{0, DefaultMaxTokens}, {300, 300}} {
			f := newFake(t, p, turn{calls: []call{respond("ok", "", "")}})
			cfg := testConfig(f)
			cfg.MaxTokens = tt.cfg
			if _, err := think(t, newTestAgent(t, cfg, nil, nil)); err != nil {
				t.Fatalf("Think: %v", err)
			}
			reqs := f.requests()
			if got, _ := reqs[0].body["max_tokens"].(float64); int(got) != tt.want {
				t.Errorf("MaxTokens %d: request max_tokens = %v, want %d", tt.cfg, reqs[0].body["max_tokens"], tt.want)
			}
		}
	})
}

// TestThinkNoAnswer: well-formed answers that carry no decision end the
// run with ErrNoAnswer and the provider's reason, never with an outcome.
// The fixtures follow the providers' API references: OpenAI's refusal and
// finish_reason, Azure's content filter, OpenRouter's errors inside a 200,
// Anthropic's stop_reason and stop_details.
func TestThinkNoAnswer(t *testing.T) {
	tests := []struct {
		provider  string
		fixture   string // in testdata, or a body
		want      string
		retryable bool // OpenRouter says the provider is down: retried, then ErrUnreachable
	}{
		{ProviderOpenAI, "openai_refusal.json", "refusal: I'm sorry, I cannot assist with that request.", false},
		{ProviderOpenAI, "openai_length.json", "finish_reason length: the answer was cut at max_output_tokens", false},
		{ProviderOpenAI, "openai_content_filter.json", "finish_reason content_filter", false},
		{ProviderOpenAI, "openrouter_choice_error.json", "error in response: Provider returned error", false},
		{ProviderOpenAI, "openrouter_error_200.json", "error in response: Provider returned error", true},
		{ProviderOpenAI, `{"choices":[{"index":0,"message":{"role":"assistant","content":""},"finish_reason":"stop"}]}`, "empty answer", false},
		{ProviderAnthropic, "anthropic_refusal.json", "stop_reason refusal: the model declined: cyber This request was declined because it could enable cyber harm.", false},
		{ProviderAnthropic, "anthropic_max_tokens.json", "stop_reason max_tokens: the answer was cut at max_output_tokens", false},
		{ProviderAnthropic, `{"type":"message","role":"assistant","content":[],"stop_reason":"end_turn"}`, "empty answer", false},
	}
	for _, tt := range tests {
		t.Run(tt.provider+"/"+strings.TrimSuffix(tt.fixture[:min(len(tt.fixture), 40)], ".json"), func(t *testing.T) {
			body := tt.fixture
			if strings.HasSuffix(tt.fixture, ".json") {
				b, err := os.ReadFile(filepath.Join("testdata", tt.fixture))
				if err != nil {
					t.Fatal(err)
				}
				body = string(b)
			}
			f := newFakeFunc(t, tt.provider, func(int) turn { return turn{body: body} })
			d, err := think(t, newTestAgent(t, testConfig(f), nil, nil))
			var pe *ProviderError
			if !errors.Is(err, ErrNoAnswer) || !errors.As(err, &pe) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Think error = %v, want ErrNoAnswer with %q", err, tt.want)
			}
			if errors.Is(err, ErrUnreachable) != tt.retryable || errors.Is(err, ErrMalformed) == tt.retryable {
				t.Errorf("Think error = %v: ErrUnreachable %t, ErrMalformed %t; want retryable %t", err,
					errors.Is(err, ErrUnreachable), errors.Is(err, ErrMalformed), tt.retryable)
			}
			wantCalls := 1
			if tt.retryable {
				wantCalls = 3 // 1 + MaxRetries
			}
			if d.Calls != wantCalls || d.Outcome != "" || d.Summary != "" {
				t.Errorf("Think = %+v, want %d calls and no outcome", d, wantCalls)
			}
		})
	}
}
