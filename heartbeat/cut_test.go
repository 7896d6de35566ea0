package heartbeat

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"

	"github.com/vigil-iot/vigil/agent"
	"github.com/vigil-iot/vigil/alert"
	"github.com/vigil-iot/vigil/redact"
)

// llmServer answers every request with body, as an OpenAI-compatible
// server or Anthropic's Messages API would.
func llmServer(t *testing.T, body string) *httptest.Server {
	t.Helper()
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(body))
	}))
	t.Cleanup(s.Close)
	return s
}

// useAgentWith puts the real agent with cfg on h's engine.
func (h *harness) useAgentWith(cfg agent.Config) {
	h.t.Helper()
	cfg.Model, cfg.Timeout, cfg.RetryBase, cfg.RetryMax = "m", 2*time.Second, time.Millisecond, 5*time.Millisecond
	a, err := agent.New(cfg, nil, clockwork.NewRealClock(), nil)
	if err != nil {
		h.t.Fatal(err)
	}
	h.thinker = nil
	h.restart()
	h.e.deps.Thinker = a
}

// TestPaddedSummaryLeavesNoKey: a heartbeat_respond summary of 'x'*473
// and the API key (28 characters) straddles the summary's cut at 500: no
// part of the key reaches the run record or the alert that MQTT and
// Telegram deliver.
func TestPaddedSummaryLeavesNoKey(t *testing.T) {
	const key = "Zq81-vigil-LLM-key-7Hn3XwPa9" // no credential shape: only the Redactor knows it
	args, _ := json.Marshal(map[string]string{"outcome": "alert", "severity": "warning", "summary": strings.Repeat("x", 473) + key})
	call, _ := json.Marshal(map[string]any{"id": "c1", "type": "function", "function": map[string]string{"name": agent.ToolRespond, "arguments": string(args)}})
	srv := llmServer(t, `{"choices":[{"message":{"role":"assistant","content":null,"tool_calls":[`+string(call)+`]},"finish_reason":"tool_calls"}]}`)
	h := newHarness(t, func(c *Config) { c.MaxQuiet = time.Minute })
	h.useAgentWith(agent.Config{Provider: agent.ProviderOpenAI, BaseURL: srv.URL + "/v1", APIKey: key, Redactor: redact.New()})
	h.clock.Advance(30 * time.Minute)
	h.sample()
	res := h.tick()
	if res.Run.Outcome != OutcomeAlert {
		t.Fatalf("run = %s %s %q, want an alert", res.Run.Outcome, res.Run.Reason, res.Run.Error)
	}
	start := key[:redact.MinPrefix]
	rec, _ := json.Marshal(res.Run)
	if strings.Contains(string(rec), start) {
		t.Errorf("run record holds the key's start: %s", rec)
	}
	n := 0
	for _, e := range h.outbox() {
		if e.Alert.Source != alert.SourceLLM {
			continue
		}
		n++
		if s := e.Alert.Summary; strings.Contains(s, start) || !strings.Contains(s, "xxxx") {
			t.Errorf("alert to deliver ends …%q: want the padding and no part of the key", s[max(len(s)-40, 0):])
		}
	}
	if n == 0 {
		t.Error("no LLM alert in the outbox")
	}
}

// TestErrorInside200IsOutage: an error inside an HTTP 200, Anthropic's
// overloaded_error as OpenRouter's provider error, fails the run as an
// outage: the agent retried it, and llm_unreachable fires.
func TestErrorInside200IsOutage(t *testing.T) {
	for _, tt := range []struct{ provider, path, body string }{
		{agent.ProviderOpenAI, "/v1", `{"error":{"code":502,"message":"Provider returned error"}}`},
		{agent.ProviderAnthropic, "", `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`},
	} {
		t.Run(tt.provider, func(t *testing.T) {
			srv := llmServer(t, tt.body)
			h := newHarness(t, func(c *Config) { c.MaxQuiet = time.Minute })
			h.useAgentWith(agent.Config{Provider: tt.provider, BaseURL: srv.URL + tt.path, MaxRetries: 2})
			h.clock.Advance(30 * time.Minute)
			h.sample()
			res := h.tick()
			if res.Run.Outcome != OutcomeFailed || res.Run.LLMCalls != 3 {
				t.Errorf("run = %s after %d calls (%q), want failed after 3 (two retries)", res.Run.Outcome, res.Run.LLMCalls, res.Run.Error)
			}
			firing := false
			for _, e := range h.outbox() {
				firing = firing || e.Alert.Rule == "llm_unreachable" && e.Alert.State == alert.StateFiring
			}
			if !firing {
				t.Errorf("no llm_unreachable alert after %q", res.Run.Error)
			}
		})
	}
}

// TestTwoDecisionsInOneTurn: a model turn that calls heartbeat_respond
// with ok and then with a critical alert raises the critical alert, and
// the run lists both calls.
func TestTwoDecisionsInOneTurn(t *testing.T) {
	srv := llmServer(t, `{"choices":[{"message":{"role":"assistant","content":null,"tool_calls":[`+
		`{"id":"c1","type":"function","function":{"name":"heartbeat_respond","arguments":"{\"outcome\":\"ok\"}"}},`+
		`{"id":"c2","type":"function","function":{"name":"heartbeat_respond","arguments":"{\"outcome\":\"alert\",\"severity\":\"critical\",\"summary\":\"z\"}"}}`+
		`]},"finish_reason":"tool_calls"}]}`)
	h := newHarness(t, func(c *Config) { c.MaxQuiet = time.Minute })
	h.useAgentWith(agent.Config{Provider: agent.ProviderOpenAI, BaseURL: srv.URL + "/v1"})
	h.clock.Advance(30 * time.Minute)
	h.sample()
	res := h.tick()
	if res.Run.Outcome != OutcomeAlert || len(res.Run.ToolCalls) != 2 {
		t.Fatalf("run = %s with tool calls %q, want alert with both calls", res.Run.Outcome, res.Run.ToolCalls)
	}
	var got []alert.Severity
	for _, e := range h.outbox() {
		if e.Alert.Source == alert.SourceLLM {
			got = append(got, e.Alert.Severity)
		}
	}
	if len(got) != 1 || got[0] != alert.Critical {
		t.Errorf("LLM alerts queued: %v, want one critical", got)
	}
}
