package agent

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/vigil-iot/vigil/alert"
	"github.com/vigil-iot/vigil/redact"
)

// cutSecret is a configured secret (an MQTT password, say) with no
// credential shape: only the Redactor knows it.
const cutSecret = "q7Zt9wLmN3xK2pR8vB4cMQTT"

// padTo returns filler that makes pad+cutSecret end 3 characters past n.
func padTo(n int) string { return strings.Repeat("x", n-len(cutSecret)+3) }

// noSecretStart fails if s holds the first redact.MinPrefix characters of
// cutSecret.
func noSecretStart(t *testing.T, what, s string) {
	t.Helper()
	if p := cutSecret[:redact.MinPrefix]; strings.Contains(s, p) {
		i := strings.Index(s, p)
		t.Errorf("%s holds the start of the secret: …%q", what, s[max(i-10, 0):])
	}
}

// TestCutAfterRedaction: every place the agent cuts what the model or
// the provider sent (a summary, a text answer, tool arguments, an error
// body) redacts first, so a secret across the cut leaves no part behind.
func TestCutAfterRedaction(t *testing.T) {
	argsJSON := func(k, v string) string { b, _ := json.Marshal(map[string]string{k: v}); return string(b) }
	tests := []struct {
		name  string
		turns []turn
		what  func(d Decision, err error) string
	}{
		{"summary", []turn{{calls: []call{respond("alert", "warning", padTo(redact.CutSummary)+cutSecret)}}},
			func(d Decision, _ error) string { return d.Summary }},
		{"text answer", []turn{{text: padTo(redact.CutSummary) + cutSecret}},
			func(d Decision, _ error) string { return d.Summary }},
		{"tool arguments", []turn{{calls: []call{{"c1", ToolReadSensor, argsJSON("name", padTo(redact.CutToolCall)+cutSecret)}}},
			{calls: []call{respond("ok", "", "")}}},
			func(d Decision, _ error) string { return strings.Join(d.ToolCalls, "\n") }},
		{"error body", []turn{{status: 400, body: argsJSON("error", padTo(redact.CutError)+cutSecret)}},
			func(_ Decision, err error) string { return fmt.Sprint(err) }},
		{"error inside a 200", []turn{{body: `{"error":` + argsJSON("message", padTo(redact.CutError)+cutSecret) + `}`}},
			func(_ Decision, err error) string { return fmt.Sprint(err) }},
	}
	for _, tt := range tests {
		forProviders(t, func(t *testing.T, p string) {
			t.Run(tt.name, func(t *testing.T) {
				turns := tt.turns
				if tt.name == "error inside a 200" && p == ProviderAnthropic {
					turns = []turn{{body: `{"type":"error","error":` + argsJSON("message", padTo(redact.CutError)+cutSecret) + `}`}}
				}
				f := newFake(t, p, turns...)
				cfg := testConfig(f)
				cfg.Redactor = redact.New(cutSecret)
				d, err := think(t, newTestAgent(t, cfg, nil, nil))
				got := tt.what(d, err)
				if !strings.Contains(got, "xxxxxxxxxx") {
					t.Fatalf("%s = %q (err %v): the padding is not there", tt.name, got, err)
				}
				noSecretStart(t, tt.name, got)
			})
		})
	}
}

// TestThinkMostSevereOfTurnWins: two heartbeat_respond calls in one turn:
// the more severe decision wins, and both are recorded.
func TestThinkMostSevereOfTurnWins(t *testing.T) {
	forProviders(t, func(t *testing.T, p string) {
		ok, crit := respond("ok", "", ""), respond("alert", "critical", "z")
		ok.id, crit.id = "c1", "c2"
		ok.args = `{"outcome":"ok"}`
		f := newFake(t, p, turn{calls: []call{ok, crit}})
		d, err := think(t, newTestAgent(t, testConfig(f), nil, nil))
		if err != nil {
			t.Fatalf("Think: %v", err)
		}
		if d.Outcome != OutcomeAlert || d.Severity != alert.Critical || d.Summary != "z" {
			t.Errorf("Think = %s %v %q, want alert critical \"z\"", d.Outcome, d.Severity, d.Summary)
		}
		want := []string{`heartbeat_respond {"outcome":"ok"}`, `heartbeat_respond {"outcome":"alert","severity":"critical","summary":"z"}`}
		if strings.Join(d.ToolCalls, "\n") != strings.Join(want, "\n") {
			t.Errorf("ToolCalls = %q, want %q", d.ToolCalls, want)
		}
	})
	t.Run("alert outweighs a pause", func(t *testing.T) {
		f := newFake(t, ProviderOpenAI, turn{calls: []call{{"p1", ToolPause, `{"minutes":15}`}, respond("alert", "critical", "x")}})
		d, err := think(t, newTestAgent(t, testConfig(f), nil, nil))
		if err != nil || d.Outcome != OutcomeAlert || d.Severity != alert.Critical || d.Pause != 0 || len(d.ToolCalls) != 2 {
			t.Errorf("Think = %+v, %v; want the critical alert, no pause, two calls recorded", d, err)
		}
	})
	tests := []struct {
		a, b Decision
		want bool
	}{
		{Decision{Outcome: OutcomeAlert, Severity: alert.Info}, Decision{Outcome: OutcomeOK}, true},
		{Decision{Outcome: OutcomeAlert, Severity: alert.Critical}, Decision{Outcome: OutcomeAlert, Severity: alert.Warning}, true},
		{Decision{Outcome: OutcomeAlert, Severity: alert.Warning}, Decision{Outcome: OutcomeAlert, Severity: alert.Critical}, false},
		{Decision{Outcome: OutcomeAlert, Severity: alert.Warning}, Decision{Outcome: OutcomeAlert, Severity: alert.Warning}, false},
		{Decision{Outcome: OutcomeAlert, Severity: alert.Info}, Decision{Outcome: OutcomePaused}, true},
		{Decision{Outcome: outcomeEscalate}, Decision{Outcome: OutcomeOK}, true},
		{Decision{Outcome: OutcomeOK}, Decision{Outcome: OutcomePaused}, false},
	}
	for _, tt := range tests {
		if got := severer(tt.a, tt.b); got != tt.want {
			t.Errorf("severer(%s %v, %s %v) = %t, want %t", tt.a.Outcome, tt.a.Severity, tt.b.Outcome, tt.b.Severity, got, tt.want)
		}
	}
}

// TestThinkErrorInside200: an error inside an HTTP 200 is an outage
// alike from both providers: Anthropic's overloaded_error event as
// OpenRouter's error with a 5xx code. Retried, then ErrUnreachable (which
// puts the heartbeat into backoff and raises llm_unreachable); a retry
// that answers ends the run well.
func TestThinkErrorInside200(t *testing.T) {
	bodies := map[string]string{
		ProviderOpenAI:    `{"error":{"code":502,"message":"Provider returned error"}}`,
		ProviderAnthropic: `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`,
	}
	forProviders(t, func(t *testing.T, p string) {
		t.Run("outage", func(t *testing.T) {
			f := newFake(t, p, turn{body: bodies[p]}, turn{body: bodies[p]}, turn{body: bodies[p]})
			d, err := think(t, newTestAgent(t, testConfig(f), nil, nil))
			if !errors.Is(err, ErrUnreachable) || errors.Is(err, ErrMalformed) || errors.Is(err, ErrRejected) {
				t.Fatalf("Think error = %v, want ErrUnreachable only", err)
			}
			if d.Calls != 3 {
				t.Errorf("Calls = %d, want 3 (retried twice)", d.Calls)
			}
			if got := ErrorClass(err); got != "no_answer" {
				t.Errorf("ErrorClass = %q, want no_answer", got)
			}
		})
		t.Run("recovers", func(t *testing.T) {
			f := newFake(t, p, turn{body: bodies[p]}, turn{calls: []call{respond("ok", "", "")}})
			d, err := think(t, newTestAgent(t, testConfig(f), nil, nil))
			if err != nil || d.Outcome != OutcomeOK || d.Calls != 2 {
				t.Errorf("Think = %s, %d calls, %v; want ok after 2 calls", d.Outcome, d.Calls, err)
			}
		})
	})
}
