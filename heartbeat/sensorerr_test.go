package heartbeat

import (
	"context"
	"errors"
	"testing"
)

// TestStatusSensorErrors: status carries the sensors that failed in the
// last sample with its time: the engine's own sample, or after a restart
// without one, the last the state file stored; with neither, none and no
// time.
func TestStatusSensorErrors(t *testing.T) {
	h := newHarness(t, nil)
	status := func() Status {
		t.Helper()
		st, err := h.e.Status(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		return st
	}
	if st := status(); len(st.SensorErrors) != 0 || !st.SensorsAt.IsZero() || st.SensorErrors == nil {
		t.Errorf("before any sample: sensor errors %v at %v, want an empty map and no time", st.SensorErrors, st.SensorsAt)
	}
	h.sensor.fail(errors.New("tmp102: i2c bus 7: not found"))
	h.sample()
	st := status()
	if got := st.SensorErrors["air"]; got != "tmp102: i2c bus 7: not found" || !st.SensorsAt.Equal(t0) {
		t.Errorf("after a failed sample: sensor errors %v at %v, want air's at %v", st.SensorErrors, st.SensorsAt, t0)
	}
	h.tick() // stores the sample
	h.restart()
	st = status()
	if st.Snapshot != nil {
		t.Fatal("a restarted engine has a sample of its own")
	}
	if got := st.SensorErrors["air"]; got != "tmp102: i2c bus 7: not found" || !st.SensorsAt.Equal(t0) {
		t.Errorf("from the state file: sensor errors %v at %v, want air's at %v", st.SensorErrors, st.SensorsAt, t0)
	}
	h.sensor.fail(nil)
	h.sample()
	if st := status(); len(st.SensorErrors) != 0 || st.SensorsAt.IsZero() {
		t.Errorf("after a good sample: sensor errors %v at %v, want none, with its time", st.SensorErrors, st.SensorsAt)
	}
}
