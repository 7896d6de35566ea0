package heartbeat

import (
	"context"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"

	"github.com/vigil-iot/vigil/alert"
	"github.com/vigil-iot/vigil/device"
	"github.com/vigil-iot/vigil/rule"
	"github.com/vigil-iot/vigil/store"
)

// exactWave is the air temperature at sample i (one a minute): a daily
// swing between 18 and 26 °C, an excursion to about 37 °C for a quarter of
// an hour every five hours, a two-minute spike every 97 minutes, and a
// little deterministic noise, so the rules below fire, hold, flap and
// resolve many times over a day and a half.
func exactWave(i int) float64 {
	v := 22 + 4*math.Sin(2*math.Pi*float64(i)/1440)
	if m := i % 300; m >= 200 && m < 215 {
		v += 15 - math.Abs(float64(m-207))
	}
	if i%97 < 2 {
		v += 13
	}
	return math.Round((v+0.3*math.Sin(float64(i)*1.7))*100) / 100
}

// TestBacktestEqualsSampleLoop: the backtest's figures are what the
// sample loop did. One engine runs its sample loop over 36 h of
// one-minute samples, with a heartbeat every 30 minutes committing the
// history, and every rule below in force; the loop's own firings are
// watched after each sample. Then each rule is backtested on that same
// engine over the history it kept, and the two must agree exactly: the
// count of firings, the first and the last, the time spent firing, and
// whether it fires (or is pending) on the last sample.
func TestBacktestEqualsSampleLoop(t *testing.T) {
	specs := []struct {
		name, when, clear string
		forD              time.Duration
	}{
		{"threshold", "air.temperature > 34", "", 0},
		{"held", "air.temperature > 34", "", 10 * time.Minute},
		{"hysteresis", "air.temperature > 30", "air.temperature < 25", 0},
		{"held_hysteresis", "air.temperature > 30", "air.temperature < 25", 3 * time.Minute},
		{"rising", "delta(air.temperature, 5m) > 4", "", 0},
		{"night_and_warm", "air.temperature > 24 && abs(delta(air.temperature, 30m)) < 1", "", 2 * time.Minute},
		{"stale", "stale(air) > 3m", "", 0},
		{"error", "error(air)", "", 2 * time.Minute},
		{"unusual", "unusual(air.temperature) > 3", "", 0},
	}
	var rules []Rule
	for _, s := range specs {
		sp := rule.Spec{Name: s.name, When: mustCompile(t, s.when), For: s.forD}
		if s.clear != "" {
			sp.Clear = mustCompile(t, s.clear)
		}
		rules = append(rules, Rule{Spec: sp, Severity: alert.Warning})
	}
	h := newHarness(t, func(c *Config) {
		c.SampleInterval = time.Minute
		c.Rules = rules
		c.FloodLimit = 1 << 20
	})
	type loopFigures struct {
		fired       int
		first, last time.Time
		firingS     float64
		since       time.Time
	}
	loop := map[string]*loopFigures{}
	for _, s := range specs {
		loop[s.name] = &loopFigures{}
	}
	const samples = 36 * 60
	var lastAt time.Time
	for i := range samples {
		h.clock.Advance(time.Minute)
		h.sensor.set(exactWave(i))
		h.sensor.fail(nil)
		if m := i % 400; m >= 300 && m < 307 { // a loose wire now and then
			h.sensor.fail(errors.New("bme280: i2c bus 1 addr 0x76: nack"))
		}
		h.sample()
		now := h.clock.Now()
		lastAt = now
		h.e.mu.Lock()
		for name, f := range loop {
			firing := h.e.rules[name].state.Firing
			switch {
			case firing && f.since.IsZero():
				f.fired++
				if f.first.IsZero() {
					f.first = now
				}
				f.last, f.since = now, now
			case !firing && !f.since.IsZero():
				f.firingS += now.Sub(f.since).Seconds()
				f.since = time.Time{}
			}
		}
		h.e.mu.Unlock()
		if i%30 == 29 {
			h.tick() // commits the pending history rows
		}
	}
	for _, s := range specs {
		t.Run(s.name, func(t *testing.T) {
			f := loop[s.name]
			h.e.mu.Lock()
			st := h.e.rules[s.name].state
			h.e.mu.Unlock()
			if !f.since.IsZero() {
				f.firingS += lastAt.Sub(f.since).Seconds()
			}
			if f.fired < 2 {
				t.Fatalf("the sample loop fired %s %d times: the wave does not exercise it", s.name, f.fired)
			}
			var spec *rule.Spec
			for i := range rules {
				if rules[i].Spec.Name == s.name {
					spec = &rules[i].Spec
				}
			}
			bt, err := h.e.Backtest(context.Background(), spec, 3)
			if err != nil {
				t.Fatal(err)
			}
			got := fmt.Sprintf("samples %d, fired %d, first %s, last %s, firing %.0fs, on prompt %v",
				bt.Samples, bt.Fired, bt.First.Format(time.TimeOnly), bt.Last.Format(time.TimeOnly), bt.FiringS, bt.OnPrompt)
			want := fmt.Sprintf("samples %d, fired %d, first %s, last %s, firing %.0fs, on prompt %v",
				samples, f.fired, f.first.Format(time.TimeOnly), f.last.Format(time.TimeOnly), f.firingS, st.Firing || !st.PendingSince.IsZero())
			if got != want || !bt.First.Equal(f.first) || !bt.Last.Equal(f.last) {
				t.Errorf("backtest of %s:\n got  %s\n want %s (the sample loop)", s.name, got, want)
			}
		})
	}
}

// BenchmarkBacktest: the backtest of one rule over 48 h of one-minute
// history (2,880 rows, the state file's whole history ring) for 20
// quantities: reading the rows from the state file and replaying them
// through the sample loop's evaluator, as a proposal does once before a
// person sees it.
func BenchmarkBacktest(b *testing.B) {
	const sensors, quantities, rows = 5, 4, 48 * 60
	db, err := store.Open(filepath.Join(b.TempDir(), "vigil.db"), store.Options{Timeout: time.Second})
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	var named []device.Named
	for s := range sensors {
		named = append(named, device.Named{Name: fmt.Sprintf("s%d", s), Sensor: &fakeSensor{}})
	}
	snaps := make([]device.Snapshot, rows)
	for i := range snaps {
		r := make(map[string]device.Value, sensors*quantities)
		for s := range sensors {
			for q := range quantities {
				r[fmt.Sprintf("s%d.q%d", s, q)] = device.Value{Value: exactWave(i + 37*(s*quantities+q)), Unit: device.Celsius}
			}
		}
		snaps[i] = device.Snapshot{Time: t0.Add(time.Duration(i) * time.Minute), Readings: r}
	}
	if err := db.Update(func(tx *store.Tx) error { return tx.AppendHistory(snaps) }); err != nil {
		b.Fatal(err)
	}
	e, err := New(Config{DeviceID: "bench", SampleInterval: time.Minute, Interval: 30 * time.Minute},
		Deps{Clock: clockwork.NewFakeClockAt(t0.Add(rows * time.Minute)), DB: db, Sensors: named})
	if err != nil {
		b.Fatal(err)
	}
	when, err := rule.Compile("s2.q1 > 34")
	if err != nil {
		b.Fatal(err)
	}
	spec := &rule.Spec{Name: "too_warm", When: when, For: 10 * time.Minute}
	ctx := context.Background()
	var bt alert.Backtest
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if bt, err = e.Backtest(ctx, spec, 3); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	if bt.Samples != rows || bt.Fired == 0 {
		b.Fatalf("backtest = %+v, want %d samples and some firings", bt, rows)
	}
	b.ReportMetric(float64(bt.Samples), "rows")
}
