package heartbeat

import (
	"context"
	"testing"

	"github.com/vigil-iot/vigil/alert"
	"github.com/vigil-iot/vigil/store"
)

// TestNoticesAreEvents: the audit of a change (Notice) and a test alert are
// queued as notices, not firing alerts, and they are not the "last alert"
// the next heartbeat's prompt names: that stays the last problem.
func TestNoticesAreEvents(t *testing.T) {
	h := newHarness(t, nil)
	h.sensor.set(40)
	h.sample() // too_hot fires: the last alert
	var before store.State
	h.db.View(func(tx *store.Tx) error { var err error; before, err = tx.State(); return err })
	if before.LastAlert == "" {
		t.Fatal("no last alert after a rule fired")
	}
	ctx := context.Background()
	n, err := h.e.Notice(ctx, alert.RuleSetting, "heartbeat.interval set to 10m by cli")
	if err != nil {
		t.Fatal(err)
	}
	ta, err := h.e.TestAlert(ctx, alert.Critical, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range []alert.Alert{n, ta} {
		if a.State != alert.StateNotice || a.Source != alert.SourceSystem {
			t.Errorf("queued %s/%s with state %q, want a system notice", a.Source, a.Rule, a.State)
		}
	}
	ob := h.outbox()
	if len(ob) != 3 {
		t.Fatalf("outbox holds %d alerts, want 3 (the rule, the notice, the test alert)", len(ob))
	}
	for _, e := range ob[1:] {
		if e.Alert.State != alert.StateNotice {
			t.Errorf("outbox: %s/%s state %q, want notice", e.Alert.Source, e.Alert.Rule, e.Alert.State)
		}
	}
	var after store.State
	h.db.View(func(tx *store.Tx) error { var err error; after, err = tx.State(); return err })
	if after.LastAlert != before.LastAlert || !after.LastAlertAt.Equal(before.LastAlertAt) {
		t.Errorf("last alert after two notices = %q at %v, want the rule's %q at %v (a notice is no alert to the model)",
			after.LastAlert, after.LastAlertAt, before.LastAlert, before.LastAlertAt)
	}
	if in, err := h.e.input(h.wall.Now()); err != nil || in.LastAlert != before.LastAlert {
		t.Errorf("the prompt's last alert = %q (%v), want %q", in.LastAlert, err, before.LastAlert)
	}
	if after.Counters["alerts"] != before.Counters["alerts"] || after.Counters["notices"] != before.Counters["notices"]+2 {
		t.Errorf("counters alerts %d→%d, notices %d→%d; want alerts unchanged and 2 more notices",
			before.Counters["alerts"], after.Counters["alerts"], before.Counters["notices"], after.Counters["notices"])
	}
}
