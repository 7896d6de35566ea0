package agent

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vigil-iot/vigil/alert"
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

// memMemory is ModelMemory over a map, as the state file keeps it.
type memMemory struct {
	mu   sync.Mutex
	text map[string]bool
	sets int
}

func (m *memMemory) TextOnly(model string) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.text[model], nil
}

func (m *memMemory) SetTextOnly(model string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.text[model] = true
	m.sets++
	return nil
}

// TestTextFallbackWhenToolsUnsupported: a server that rejects tools for the
// model (Ollama's 400, llama.cpp without --jinja) gets the same heartbeat
// without tools and answers in the text contract; the model is remembered,
// so later runs and a restarted agent send no tools. llama.cpp's server
// answers the rejection with a 500 (its request parser throws, and the
// handler files that as server_error): it is not retried with tools.
func TestTextFallbackWhenToolsUnsupported(t *testing.T) {
	for _, tt := range []struct {
		name      string
		status    int
		rejection string
	}{
		{"ollama", http.StatusBadRequest, `{"error":"registry.ollama.ai/library/gemma:2b does not support tools"}`},
		{"llama.cpp-400", http.StatusBadRequest, `{"error":{"code":400,"message":"tools param requires --jinja flag","type":"invalid_request_error"}}`},
		// Exactly what llama-server without --jinja sends: format_error_response(e.what(), ERROR_TYPE_SERVER).
		{"llama.cpp-500", http.StatusInternalServerError, `{"error":{"code":500,"message":"tools param requires --jinja flag","type":"server_error"}}`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var mu sync.Mutex
			var withTools []bool
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				var req struct {
					Tools []json.RawMessage `json:"tools"`
				}
				raw, _ := io.ReadAll(r.Body)
				json.Unmarshal(raw, &req)
				mu.Lock()
				withTools = append(withTools, len(req.Tools) > 0)
				mu.Unlock()
				w.Header().Set("Content-Type", "application/json")
				if len(req.Tools) > 0 {
					w.WriteHeader(tt.status)
					io.WriteString(w, tt.rejection)
					return
				}
				io.WriteString(w, `{"id":"c","object":"chat.completion","model":"gemma:2b","choices":[{"index":0,"message":{"role":"assistant","content":"ALERT: critical: the freezer is at -2 °C"},"finish_reason":"stop"}],"usage":{"prompt_tokens":900,"completion_tokens":12,"total_tokens":912}}`)
			}))
			defer srv.Close()
			mem := &memMemory{text: map[string]bool{}}
			cfg := Config{BaseURL: srv.URL + "/v1", Model: "gemma:2b", RetryBase: time.Millisecond, Memory: mem}
			log, buf := logBuffer()
			a := newTestAgent(t, cfg, nil, log)
			for run := 0; run < 2; run++ {
				d, err := think(t, a)
				if err != nil || d.Outcome != OutcomeAlert || d.Severity != alert.Critical || d.Summary != "the freezer is at -2 °C" {
					t.Fatalf("run %d: Think = %+v, %v; want the text answer's critical alert", run, d, err)
				}
			}
			if n := strings.Count(buf.String(), "llm model does not support tools;"); n != 1 {
				t.Errorf("logged the switch %d times, want once:\n%s", n, buf)
			}
			if _, err := think(t, newTestAgent(t, cfg, nil, nil)); err != nil { // a restart
				t.Fatal(err)
			}
			mu.Lock()
			defer mu.Unlock()
			if want := []bool{true, false, false, false}; !slices.Equal(withTools, want) {
				t.Errorf("requests with tools = %v, want %v", withTools, want)
			}
			if mem.sets != 1 || !mem.text["gemma:2b"] {
				t.Errorf("memory = %v after %d sets, want gemma:2b set once", mem.text, mem.sets)
			}
		})
	}
}

// TestRejectedToolsOtherwiseStaysRejected: a 400 about something else is
// not taken for missing tool support.
func TestRejectedToolsOtherwiseStaysRejected(t *testing.T) {
	f := newFake(t, ProviderOpenAI, turn{status: 400, body: `{"error":{"message":"context length exceeded","type":"invalid_request_error"}}`})
	mem := &memMemory{text: map[string]bool{}}
	cfg := testConfig(f)
	cfg.Memory = mem
	if _, err := think(t, newTestAgent(t, cfg, nil, nil)); !errors.Is(err, ErrRejected) {
		t.Fatalf("Think error = %v, want ErrRejected", err)
	}
	if mem.sets != 0 || len(f.requests()) != 1 {
		t.Errorf("%d requests, %d text-only switches; want 1 and 0", len(f.requests()), mem.sets)
	}
}
