package heartbeat

import (
	"context"
	"testing"
	"time"

	"github.com/vigil-iot/vigil/alert"
)

// TestDisabledRule: a disabled rule is not evaluated and shows as disabled;
// disabling a firing rule sends one resolved alert saying so; enabled
// again, it fires again.
func TestDisabledRule(t *testing.T) {
	h := newHarness(t, nil)
	h.sensor.set(40)
	h.sample()
	if ob := h.outbox(); len(ob) != 1 || ob[0].Alert.State != alert.StateFiring {
		t.Fatalf("outbox after a hot sample = %+v, want one firing alert", ob)
	}
	disabled := h.cfg
	disabled.Rules = append([]Rule(nil), h.cfg.Rules...)
	disabled.Rules[0].Disabled = true
	h.e.Reconfigure(disabled, h.e.deps.Sensors, h.e.deps.Thinker)
	h.clock.Advance(h.cfg.SampleInterval)
	h.sample()
	ob := h.outbox()
	if len(ob) != 2 || ob[1].Alert.State != alert.StateResolved || ob[1].Alert.Rule != "too_hot" ||
		ob[1].Alert.Summary != "too_hot disabled while firing: no longer watched (air at 40 °C)" {
		t.Fatalf("outbox after disabling a firing rule = %+v, want a resolved alert saying it was disabled", ob)
	}
	for range 3 {
		h.clock.Advance(h.cfg.SampleInterval)
		h.sample()
	}
	if n := len(h.outbox()); n != 2 {
		t.Fatalf("a disabled rule queued more alerts: %d entries", n)
	}
	st, err := h.e.Status(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Rules) != 1 || st.Rules[0].State != RuleDisabled {
		t.Errorf("status rules = %+v, want too_hot disabled", st.Rules)
	}
	h.e.Reconfigure(h.cfg, h.e.deps.Sensors, h.e.deps.Thinker)
	h.clock.Advance(h.cfg.SampleInterval)
	h.sample()
	if ob := h.outbox(); len(ob) != 3 || ob[2].Alert.State != alert.StateFiring {
		t.Fatalf("outbox after enabling again = %+v, want it firing again", ob)
	}
}

// TestStatusSaysWhyHeartbeatsAreOff: with no interval and no schedule the
// status has no next run and gives the reason the config named; with
// heartbeats on it gives none.
func TestStatusSaysWhyHeartbeatsAreOff(t *testing.T) {
	h := newHarness(t, func(c *Config) { c.Interval, c.Off = 0, `heartbeat.interval = "0"` })
	st, err := h.e.Status(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if st.HeartbeatsOff != `heartbeat.interval = "0"` || !st.NextRun.IsZero() {
		t.Errorf("status with heartbeats off: HeartbeatsOff %q, NextRun %v; want the reason and no next run", st.HeartbeatsOff, st.NextRun)
	}
	unnamed := h.cfg
	unnamed.Off = "" // a caller that names no reason still gets one
	h.e.Reconfigure(unnamed, h.e.deps.Sensors, h.e.deps.Thinker)
	if st, _ := h.e.Status(context.Background()); st.HeartbeatsOff != "no interval and no schedule" {
		t.Errorf("status with heartbeats off and no reason given: HeartbeatsOff %q", st.HeartbeatsOff)
	}
	on := h.cfg
	on.Interval, on.Off = 30*time.Minute, ""
	h.e.Reconfigure(on, h.e.deps.Sensors, h.e.deps.Thinker)
	if st, _ := h.e.Status(context.Background()); st.HeartbeatsOff != "" {
		t.Errorf("status with heartbeats on: HeartbeatsOff %q, want none", st.HeartbeatsOff)
	}
}
