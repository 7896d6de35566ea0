package heartbeat

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/vigil-iot/vigil/alert"
	"github.com/vigil-iot/vigil/device"
	"github.com/vigil-iot/vigil/rule"
)

// series makes one-minute snapshots of air.temperature from t0.
func series(t0 time.Time, temps ...float64) []device.Snapshot {
	out := make([]device.Snapshot, len(temps))
	for i, v := range temps {
		out[i] = device.Snapshot{Time: t0.Add(time.Duration(i) * time.Minute),
			Readings: map[string]device.Value{"air.temperature": {Value: v, Unit: device.Celsius}}}
	}
	return out
}

func mustSpec(t *testing.T, when string, forD time.Duration) *rule.Spec {
	t.Helper()
	e, err := rule.Compile(when)
	if err != nil {
		t.Fatal(err)
	}
	return &rule.Spec{Name: "warm", When: e, For: forD}
}

// TestReplay: the figures of a backtest (firings, time firing, first and
// last, on the prompting readings, per day, noisy) over a known history,
// with `for` and with delta() over the replayed rows.
func TestReplay(t *testing.T) {
	t0 := time.Date(2026, 3, 14, 0, 0, 0, 0, time.UTC)
	e := &Engine{cfg: Config{MemHistory: 720}}
	temps := []float64{20, 35, 35, 20, 20, 36, 36, 36, 20, 35}
	for _, tc := range []struct {
		name string
		spec *rule.Spec
		max  int
		want alert.Backtest
	}{
		{"threshold", mustSpec(t, "air.temperature > 34", 0), 3, alert.Backtest{
			Fired: 3, FiringS: 2*60 + 3*60 + 0, First: t0.Add(time.Minute), Last: t0.Add(9 * time.Minute),
			OnPrompt: true, PerDay: 3}},
		{"for", mustSpec(t, "air.temperature > 34", 90*time.Second), 3, alert.Backtest{
			Fired: 1, FiringS: 60, First: t0.Add(7 * time.Minute), Last: t0.Add(7 * time.Minute),
			OnPrompt: true, PerDay: 1}},
		{"noisy", mustSpec(t, "air.temperature > 34", 0), 2, alert.Backtest{
			Fired: 3, FiringS: 5 * 60, First: t0.Add(time.Minute), Last: t0.Add(9 * time.Minute),
			OnPrompt: true, PerDay: 3, Noisy: true}},
		// delta over the two minutes before: +15 at 1 and 2 (resolves at 3),
		// +16 at 5 and 6 (resolves at 7), -1 at 9.
		{"delta", mustSpec(t, "delta(air.temperature, 2m) > 10", 0), 3, alert.Backtest{
			Fired: 2, FiringS: 4 * 60, First: t0.Add(time.Minute), Last: t0.Add(5 * time.Minute), PerDay: 2}},
		{"never", mustSpec(t, "air.temperature > 50", 0), 3, alert.Backtest{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := e.Replay(tc.spec, series(t0, temps...), tc.max)
			tc.want.From, tc.want.To, tc.want.Samples = t0, t0.Add(9*time.Minute), len(temps)
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("Replay (-want +got):\n%s", d)
			}
		})
	}
}
