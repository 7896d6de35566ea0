package heartbeat

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/vigil-iot/vigil/agent"
	"github.com/vigil-iot/vigil/alert"
)

// problemKeys returns the engine's Problems as sorted "source/rule" keys,
// checking each is a firing problem of this device.
func problemKeys(t *testing.T, e *Engine) ([]string, []alert.Alert) {
	t.Helper()
	ps, err := e.Problems(context.Background())
	if err != nil {
		t.Fatalf("Problems() = %v", err)
	}
	var keys []string
	for _, p := range ps {
		if !p.IsProblem() || p.Device != "test-dev" || p.ID == "" || p.Time.IsZero() {
			t.Errorf("Problems() holds %+v, want firing problems of test-dev with an id and a time", p)
		}
		keys = append(keys, p.Source+"/"+p.Rule)
	}
	slices.Sort(keys)
	return keys, ps
}

// TestProblemsFromDurableState: what the MQTT problem sensor is rebuilt
// from on every connect. A firing rule, llm_unreachable, heartbeat_failed
// and the LLM's open alert are firing across a restart, each as the alert
// that was sent (found in the alert log); notices never are; an ok
// heartbeat closes the LLM's alert, a resolve the rule.
func TestProblemsFromDurableState(t *testing.T) {
	h := newHarness(t, func(c *Config) { c.MaxQuiet = time.Minute })
	if keys, _ := problemKeys(t, h.e); len(keys) != 0 {
		t.Fatalf("Problems() on a fresh engine = %v, want none", keys)
	}
	h.sensor.set(40)
	h.sample() // too_hot fires
	h.thinker.dec = agent.Decision{Outcome: agent.OutcomeAlert, Severity: alert.Critical, Summary: "smoke in the greenhouse"}
	h.clock.Advance(time.Minute)
	h.sample()
	if r := h.tick(); len(r.Alerts) != 1 {
		t.Fatalf("LLM alert run queued %d alerts, want 1", len(r.Alerts))
	}
	// The same complaint again within the cooldown: no new alert, the
	// first one stays open.
	h.clock.Advance(time.Minute)
	h.sample()
	if r := h.tick(); r.Run.Reason != ReasonDuplicate {
		t.Fatalf("second alert run = %s/%s, want a duplicate", r.Run.Outcome, r.Run.Reason)
	}
	if _, err := h.e.Notice(context.Background(), alert.RuleSetting, "heartbeat.interval set to 10m by cli"); err != nil {
		t.Fatal(err)
	}
	if _, err := h.e.TestAlert(context.Background(), alert.Critical, ""); err != nil {
		t.Fatal(err)
	}
	// The LLM goes away: after FailureAlertAfter failures both faults fire.
	h.thinker.err = errors.Join(agent.ErrUnreachable, errors.New("connection refused"))
	for range 12 {
		h.clock.Advance(30 * time.Minute)
		h.sample()
		h.tick()
	}
	h.restart()

	keys, ps := problemKeys(t, h.e)
	want := []string{"llm/", "rule/too_hot", "system/heartbeat_failed", "system/llm_unreachable"}
	if !slices.Equal(keys, want) {
		t.Fatalf("Problems() after a restart = %v, want %v", keys, want)
	}
	for _, p := range ps {
		switch p.Source {
		case alert.SourceLLM:
			if p.Summary != "smoke in the greenhouse" || p.Severity != alert.Critical {
				t.Errorf("LLM problem = %+v, want the alert that was sent", p)
			}
		case alert.SourceRule:
			if !strings.HasPrefix(p.Summary, "air at 40") || p.Severity != alert.Critical {
				t.Errorf("rule problem = %+v, want the alert that was sent", p)
			}
		}
	}

	// The LLM answers again, ok: its alert and both faults close.
	h.thinker.err = nil
	h.thinker.dec = agent.Decision{Outcome: agent.OutcomeOK}
	for range 10 {
		h.clock.Advance(30 * time.Minute)
		h.sample()
		h.tick()
	}
	if keys, _ := problemKeys(t, h.e); !slices.Equal(keys, []string{"rule/too_hot"}) {
		t.Errorf("Problems() after an ok heartbeat = %v, want only rule/too_hot", keys)
	}
	h.sensor.set(20)
	h.sample()
	h.restart()
	if keys, _ := problemKeys(t, h.e); len(keys) != 0 {
		t.Errorf("Problems() after the rule resolved = %v, want none", keys)
	}
}

// TestProblemsWithoutTheAlertLog: a rule firing whose alert the alert log
// no longer holds (200 alerts later) is still a problem, made up from its
// rule state.
func TestProblemsWithoutTheAlertLog(t *testing.T) {
	h := newHarness(t, nil)
	h.sensor.set(40)
	h.sample()
	for i := range 210 {
		if _, err := h.e.Notice(context.Background(), alert.RuleSetting, "change "+strings.Repeat("x", i%3)); err != nil {
			t.Fatal(err)
		}
	}
	h.restart()
	keys, ps := problemKeys(t, h.e)
	if !slices.Equal(keys, []string{"rule/too_hot"}) {
		t.Fatalf("Problems() = %v, want rule/too_hot", keys)
	}
	if p := ps[0]; p.Severity != alert.Critical || !strings.Contains(p.Summary, "too_hot") {
		t.Errorf("made-up rule problem = %+v, want critical, naming the rule", p)
	}
}
