package heartbeat

import (
	"context"
	"math"
	"path/filepath"
	"testing"
	"time"
)

// TestHistoryCarriesUsual: each series with a baseline carries its usual
// band, one entry for every hour of the window in the device's zone, the
// band Set.Band gives for that hour; before the baseline is ready, none.
func TestHistoryCarriesUsual(t *testing.T) {
	g := &greenhouse{}
	r := newUsualRig(t, gateConfig(GateDeadband), g, "")
	r.run(2 * time.Hour)
	ctx := context.Background()
	since := r.clock.Now().Add(-90 * time.Minute)
	h, err := r.e.History(ctx, since)
	if err != nil {
		t.Fatal(err)
	}
	if len(h) != 1 || len(h[0].Usual) != 0 {
		t.Fatalf("after 2 h, History = %+v, want air.temperature with no usual band (warming up)", h)
	}

	r.run(3 * 24 * time.Hour)
	now := r.clock.Now()
	since = now.Add(-5*time.Hour + 30*time.Minute) // 21:30, now 02:00
	h, err = r.e.History(ctx, since)
	if err != nil {
		t.Fatal(err)
	}
	if len(h) != 1 || h[0].Key != "air.temperature" {
		t.Fatalf("History = %+v, want air.temperature", h)
	}
	u := h[0].Usual
	first := time.Date(since.Year(), since.Month(), since.Day(), since.Hour(), 0, 0, 0, time.UTC)
	if len(u) != 6 { // 21:00 (the window starts in it) to 02:00 (now is in it)
		t.Fatalf("%d usual hours, want 6 (21:00 to 02:00): %+v", len(u), u)
	}
	for i, uh := range u {
		at := first.Add(time.Duration(i) * time.Hour)
		b, _ := r.e.Baseline().Band("air.temperature", at)
		if !uh.Time.Equal(at) || uh.Usual != b.Usual || uh.Low != b.Low || uh.High != b.High || !b.Ready {
			t.Errorf("usual hour %d = %+v, want %v with %+v", i, uh, at, b)
		}
	}
	if !u[len(u)-1].Time.Add(time.Hour).After(now) || u[0].Time.After(since) {
		t.Errorf("usual hours %v–%v do not cover the window %v–%v", u[0].Time, u[len(u)-1].Time, since, now)
	}
	// The band follows the day: 02:00's usual (15 °C) is well below 21:00's.
	if u[0].Usual-u[len(u)-1].Usual < 3 {
		t.Errorf("usual at %v = %.1f, at %v = %.1f: want the evening warmer than the night", u[0].Time, u[0].Usual, u[len(u)-1].Time, u[len(u)-1].Usual)
	}
}

// TestStatusBandsWithoutSample: an engine with no sample of its own (the
// CLI on the state file, with no daemon running) still says what is usual
// now for every reading with a baseline, so `vigil status` and `vigil
// sensors` show it.
func TestStatusBandsWithoutSample(t *testing.T) {
	path := filepath.Join(t.TempDir(), "vigil.db")
	r := newUsualRig(t, gateConfig(GateDeadband), &greenhouse{}, path)
	r.run(3*24*time.Hour + 30*time.Minute) // the last tick commits the baselines
	r.db.Close()
	r2 := newUsualRig(t, gateConfig(GateDeadband), &greenhouse{}, path)
	r2.clock.Advance(3*24*time.Hour + 2*time.Hour) // 02:00 on day 4: nights are 15 °C
	st, err := r2.e.Status(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	b, ok := st.Baselines["air.temperature"]
	if !ok || !b.Ready || math.Abs(b.Usual-15) > 1 {
		t.Errorf("Status().Baselines[air.temperature] = %+v, %v, want the ready 02:00 band, usual about 15", b, ok)
	}
}
