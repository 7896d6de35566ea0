package heartbeat

import (
	"errors"
	"testing"
	"time"

	"github.com/vigil-iot/vigil/agent"
	"github.com/vigil-iot/vigil/alert"
)

// llmAlerts returns the LLM's alerts in the outbox, oldest first.
func (h *harness) llmAlerts() []alert.Alert {
	h.t.Helper()
	var out []alert.Alert
	for _, e := range h.outbox() {
		if e.Alert.Source == alert.SourceLLM {
			out = append(out, e.Alert)
		}
	}
	return out
}

// TestLLMAlertResolves: an LLM alert is firing until a later heartbeat
// ends ok, across a restart; that heartbeat queues one resolved alert
// (source llm, the firing one's rule and severity, naming what it ends),
// and later ok heartbeats queue none.
func TestLLMAlertResolves(t *testing.T) {
	h := newHarness(t, func(c *Config) { c.MaxQuiet = time.Minute })
	h.thinker.dec = agent.Decision{Outcome: agent.OutcomeAlert, Severity: alert.Critical, Summary: "smoke in the greenhouse"}
	h.sample()
	if r := h.tick(); len(r.Alerts) != 1 {
		t.Fatalf("alert run queued %d alerts, want 1", len(r.Alerts))
	}
	// A skipped and a failed run in between close nothing.
	h.clock.Advance(time.Minute)
	h.thinker.err = errors.New("the model answered nonsense")
	h.tick()
	h.thinker.err = nil
	h.restart()
	if keys, _ := problemKeys(t, h.e); len(keys) != 1 || keys[0] != "llm/" {
		t.Fatalf("Problems() before the ok heartbeat = %v, want llm/", keys)
	}
	h.thinker.dec = agent.Decision{Outcome: agent.OutcomeOK}
	for range 3 {
		h.clock.Advance(time.Minute)
		h.sample()
		h.tick()
	}
	var resolved []alert.Alert
	for _, a := range h.llmAlerts() {
		if a.State == alert.StateResolved {
			resolved = append(resolved, a)
		}
	}
	if len(resolved) != 1 {
		t.Fatalf("%d resolved LLM alerts after three ok heartbeats, want exactly 1: %+v", len(resolved), h.llmAlerts())
	}
	if r := resolved[0]; r.Rule != "" || r.Severity != alert.Critical || r.Summary != "smoke in the greenhouse" || r.IsProblem() {
		t.Errorf("resolved alert = %+v, want source llm, no rule, critical, naming the alert it ends", r)
	}
	keys, _ := problemKeys(t, h.e)
	for _, k := range keys {
		if k == "llm/" {
			t.Error("Problems() still lists the LLM's alert after it resolved")
		}
	}
}

// TestLLMAlertAfterResolveIsNew: once an ok heartbeat resolved the LLM's
// alert, the same complaint again is a new alert, even within
// alert_cooldown: the cooldown holds back the same alert only while it
// is firing (TestLLMAlertCooldown).
func TestLLMAlertAfterResolveIsNew(t *testing.T) {
	h := newHarness(t, func(c *Config) { c.MaxQuiet = time.Minute })
	bad := agent.Decision{Outcome: agent.OutcomeAlert, Severity: alert.Warning, Summary: "humidity 91 % for 3h"}
	h.thinker.dec = bad
	h.sample()
	first := h.tick()
	h.thinker.dec = agent.Decision{Outcome: agent.OutcomeOK}
	h.clock.Advance(time.Minute)
	h.sample()
	h.tick()
	h.thinker.dec = bad
	h.clock.Advance(time.Minute)
	h.sample()
	again := h.tick()
	if again.Run.Reason == ReasonDuplicate || len(again.Alerts) != 1 || again.Alerts[0].ID == first.Alerts[0].ID {
		t.Fatalf("the alert again after it resolved = %s/%s with %d alerts, want a new alert", again.Run.Outcome, again.Run.Reason, len(again.Alerts))
	}
	if _, ps := problemKeys(t, h.e); len(ps) != 1 || ps[0].ID != again.Alerts[0].ID {
		t.Errorf("Problems() = %+v, want the new LLM alert firing", ps)
	}
}
