package heartbeat

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/vigil-iot/vigil/agent"
	"github.com/vigil-iot/vigil/store"
)

// TestInputMetaAndNotes checks what the heartbeat tells the model about
// the run itself: the gate's reason as the trigger, the tick's due time,
// the interval, the failure streak with the last error's class, and the
// model's notes from the state file with their times.
func TestInputMetaAndNotes(t *testing.T) {
	h := newHarness(t, nil)
	noted := h.wall.Now().Add(-3 * time.Hour).UTC()
	if err := h.db.AddNote(store.Note{Time: noted, Text: "freezer door was open at noon"}); err != nil {
		t.Fatal(err)
	}
	h.sample()
	due := h.wall.Now().Add(-2 * time.Second)
	if _, err := h.e.tick(context.Background(), false, CheckOptions{due: due}); err != nil {
		t.Fatal(err)
	}
	in := h.thinker.last
	want := agent.Meta{Trigger: ReasonFirst, ScheduledAt: due, Interval: 30 * time.Minute}
	if in.Meta != want {
		t.Errorf("first run Meta = %+v, want %+v", in.Meta, want)
	}
	if len(in.Notes) != 1 || in.Notes[0].Text != "freezer door was open at noon" || !in.Notes[0].Time.Equal(noted) {
		t.Errorf("Notes = %+v, want the stored note at %v", in.Notes, noted)
	}

	// Two failures in a row: the next run is a retry and says why.
	h.thinker.err = &agent.ProviderError{Provider: "openai", Status: 503, Retryable: true, Err: errors.New("loading")}
	h.clock.Advance(30 * time.Minute)
	h.sensor.set(25) // a change the gate lets through
	h.sample()
	if r := h.tick(); r.Run.Outcome != OutcomeFailed || r.Run.Reason != ReasonChanged {
		t.Fatalf("run = %+v, want failed", r.Run)
	}
	h.thinker.err = &agent.ProviderError{Provider: "openai", Retryable: true, Timeout: true, Err: errors.New("no response within 60s")}
	h.clock.Advance(30 * time.Minute)
	if r := h.tick(); r.Run.Outcome != OutcomeFailed || r.Run.Reason != ReasonRetry {
		t.Fatalf("run = %+v, want a failed retry", r.Run)
	}
	if m := h.thinker.last.Meta; m.Trigger != ReasonRetry || m.FailureStreak != 1 || m.LastErrorClass != "http_5xx" {
		t.Errorf("Meta after one failure = %+v, want retry, streak 1, http_5xx", m)
	}
	h.thinker.err = nil
	h.clock.Advance(30 * time.Minute) // one tick of backoff after the second failure
	h.tick()
	h.clock.Advance(30 * time.Minute)
	if r := h.tick(); r.Run.Outcome != OutcomeOK {
		t.Fatalf("run = %+v, want ok", r.Run)
	}
	if m := h.thinker.last.Meta; m.Trigger != ReasonRetry || m.FailureStreak != 2 || m.LastErrorClass != "timeout" || !m.ScheduledAt.IsZero() {
		t.Errorf("Meta after two failures = %+v, want retry, streak 2, timeout, no due time (h.tick passes none)", m)
	}

	// A forced run (vigil check) has no due time.
	if _, err := h.e.Check(context.Background(), CheckOptions{}); err != nil {
		t.Fatal(err)
	}
	if m := h.thinker.last.Meta; m.Trigger != ReasonForced || !m.ScheduledAt.IsZero() || m.FailureStreak != 0 {
		t.Errorf("forced run Meta = %+v, want forced, no due time, streak 0", m)
	}
}
