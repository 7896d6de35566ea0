package baseline

import (
	"errors"
	"math"
	"testing"
	"time"
)

var t0 = time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)

// feed observes f(at) once a minute from start for d.
func feed(s *Set, key string, start time.Time, d time.Duration, f func(time.Time) float64) {
	for at := start; at.Before(start.Add(d)); at = at.Add(time.Minute) {
		s.Observe(key, f(at), at)
	}
}

// TestFollowsSeasonWithinAWeek: after a step change a bin has moved 95 % of
// the way after seven days of its hour, and not yet after five.
func TestFollowsSeasonWithinAWeek(t *testing.T) {
	s := New(time.UTC, nil)
	level := func(v float64) func(time.Time) float64 { return func(time.Time) float64 { return v } }
	feed(s, "k", t0, 21*24*time.Hour, level(10))
	step := t0.Add(21 * 24 * time.Hour)
	tests := []struct {
		days     int
		followed bool
	}{{5, false}, {7, true}}
	done := 0
	for _, tc := range tests {
		feed(s, "k", step.Add(time.Duration(done)*24*time.Hour), time.Duration(tc.days-done)*24*time.Hour, level(20))
		done = tc.days
		b, _ := s.Band("k", step.Add(time.Duration(done)*24*time.Hour+3*time.Hour))
		moved := (b.Usual - 10) / 10
		if got := moved >= 0.95; got != tc.followed {
			t.Errorf("after %d days of the new level the bin moved %.3f of the way, want >= 0.95: %v", tc.days, moved, tc.followed)
		}
	}
}

// TestOncePerMinute: a second observation within the same minute is
// dropped, and NaN is never taken.
func TestOncePerMinute(t *testing.T) {
	s := New(time.UTC, nil)
	tests := []struct {
		at   time.Time
		v    float64
		took bool
	}{
		{t0, 1, true},
		{t0.Add(30 * time.Second), 100, false},
		{t0.Add(59 * time.Second), 100, false},
		{t0.Add(time.Minute), 2, true},
		{t0.Add(2 * time.Minute), math.NaN(), false},
		{t0.Add(2 * time.Minute), math.Inf(1), false},
	}
	for _, tc := range tests {
		if got := s.Observe("k", tc.v, tc.at); got != tc.took {
			t.Errorf("Observe(%v at %s) = %v, want %v", tc.v, tc.at.Format("15:04:05"), got, tc.took)
		}
	}
	if b := s.m["k"].bins[0]; b.n != 2 || b.mean != 1.5 {
		t.Errorf("bin 0 = %d updates, mean %v, want 2, 1.5", b.n, b.mean)
	}
}

// TestWarmUp: no band for the first day, then the last 24 h's median and
// MAD (the Iglewicz–Hoaglin modified z-score), then each hour's own bin
// once it has seen its hour on two days.
func TestWarmUp(t *testing.T) {
	s := New(time.UTC, nil)
	// A sawtooth over the hour: 0..59 in the minute, plus the hour.
	f := func(at time.Time) float64 { return float64(at.Hour()*100 + at.Minute()) }
	feed(s, "k", t0, 23*time.Hour, f)
	b, ok := s.Band("k", t0.Add(23*time.Hour))
	if !ok || b.Ready || !math.IsNaN(b.Z(5)) {
		t.Fatalf("Band after 23 h = %+v, %v, want not ready and a NaN z", b, ok)
	}
	if want := t0.Add(24*time.Hour - Slot); !b.ReadyAt.Equal(want) {
		t.Errorf("ReadyAt after 23 h = %s, want %s", b.ReadyAt, want)
	}
	feed(s, "k", t0.Add(23*time.Hour), 2*time.Hour, f) // into day 2, 00:59
	at := t0.Add(25 * time.Hour)                       // 01:00 on day 2: hour 1 saw only day 1
	b, _ = s.Band("k", at)
	if !b.Ready || b.Hourly {
		t.Fatalf("Band on day 2 = %+v, want ready from the 24 h fallback", b)
	}
	// The ring holds one value per 10 minutes: hour*100 + 0, 10, ... 50.
	var vals []float64
	for slot := at.Add(-24 * time.Hour).Add(Slot); slot.Before(at); slot = slot.Add(Slot) {
		vals = append(vals, f(slot))
	}
	med := median(append([]float64(nil), vals...))
	dev := make([]float64, len(vals))
	for i, v := range vals {
		dev[i] = math.Abs(v - med)
	}
	mad := median(dev)
	x := 2000.0
	if got, want := b.Z(x), MADScale*(x-med)/mad; math.Abs(got-want) > 1e-9 {
		t.Errorf("fallback Z(%v) = %v, want the modified z %v (median %v, MAD %v)", x, got, want, med, mad)
	}
	if want := at.Add(MinPerDay * time.Minute); !b.ReadyAt.Equal(want) {
		t.Errorf("fallback band's ReadyAt = %s, want %s, when its hour's bin has counted day 2", b.ReadyAt, want)
	}
	// Hour 0 saw day 1 and day 2: it is hourly; hour 5 saw only day 1.
	if b, _ := s.Band("k", t0.Add(48*time.Hour+10*time.Minute)); !b.Hourly || b.Usual != 29.5 {
		t.Errorf("hour 0 after two days = %+v, want hourly, usual 29.5 (the mean of 0..59)", b)
	}
	b5, _ := s.Band("k", t0.Add(24*time.Hour+5*time.Hour))
	if b5.Hourly {
		t.Errorf("hour 5 after one day = %+v, want the fallback", b5)
	}
	if want := t0.Add(24*time.Hour + 5*time.Hour + MinPerDay*time.Minute); !b5.ReadyAt.Equal(want) {
		t.Errorf("hour 5's ReadyAt = %s, want %s", b5.ReadyAt, want)
	}
}

// TestNoiseFloor: a flat series is not infinitely unusual at its first
// step of one resolution: the spread is the floor.
func TestNoiseFloor(t *testing.T) {
	tests := []struct {
		name  string
		floor func(string) float64
		want  float64 // Z of one step of 0.01 above the flat value
	}{
		{"resolution", func(string) float64 { return 0.01 }, 1},
		{"no floor", nil, 0.01 / minSpread},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := New(time.UTC, tc.floor)
			feed(s, "k", t0, 3*24*time.Hour, func(time.Time) float64 { return 21 })
			b, _ := s.Band("k", t0.Add(3*24*time.Hour))
			if !b.Hourly {
				t.Fatalf("band after 3 days = %+v, want hourly", b)
			}
			if got := b.Z(21.01); math.Abs(got-tc.want)/tc.want > 1e-6 {
				t.Errorf("Z(21.01) on a flat 21 = %v, want %v", got, tc.want)
			}
		})
	}
}

// TestHourOfDayInZone: bins follow the device's zone, not UTC.
func TestHourOfDayInZone(t *testing.T) {
	loc := time.FixedZone("UTC+5", 5*3600)
	s := New(loc, nil)
	feed(s, "k", t0, 3*24*time.Hour, func(at time.Time) float64 { return float64(at.In(loc).Hour()) })
	b, _ := s.Band("k", time.Date(2026, 3, 4, 3, 30, 0, 0, loc))
	if !b.Hourly || b.Usual != 3 {
		t.Errorf("band at 03:30 local = %+v, want hourly, usual 3", b)
	}
}

// TestMarshalRoundTrip: the encoding is at most 2 KB a quantity and gives
// back the same bands; bad bytes are refused and leave the Set as it was.
func TestMarshalRoundTrip(t *testing.T) {
	s := New(time.UTC, func(string) float64 { return 0.1 })
	keys := []string{"air.temperature", "air.humidity", "board.soc_temperature"}
	for i, k := range keys {
		feed(s, k, t0, 3*24*time.Hour, func(at time.Time) float64 { return float64(i*10 + at.Hour() + at.Minute()%7) })
	}
	data, err := s.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	if per := len(data) / len(keys); per > 2048 {
		t.Errorf("MarshalBinary = %d bytes for %d quantities, %d each, want <= 2048", len(data), len(keys), per)
	}
	got := New(time.UTC, func(string) float64 { return 0.1 })
	if err := got.UnmarshalBinary(data); err != nil {
		t.Fatal(err)
	}
	for _, k := range keys {
		for _, at := range []time.Time{t0.Add(3*24*time.Hour + 7*time.Hour), t0.Add(30 * time.Hour)} {
			want, _ := s.Band(k, at)
			b, ok := got.Band(k, at)
			if !ok || b != want {
				t.Errorf("Band(%s, %s) after a round trip = %+v, want %+v", k, at, b, want)
			}
		}
	}
	for _, bad := range [][]byte{{9}, data[:len(data)-1], append(append([]byte(nil), data...), 0)} {
		if err := got.UnmarshalBinary(bad); !errors.Is(err, ErrFormat) {
			t.Errorf("UnmarshalBinary(%d bytes) = %v, want ErrFormat", len(bad), err)
		}
	}
	if len(got.Keys()) != len(keys) {
		t.Errorf("a refused UnmarshalBinary changed the Set: keys %v", got.Keys())
	}
}

// TestReset forgets one sensor's quantities, or all.
func TestReset(t *testing.T) {
	s := New(time.UTC, nil)
	for _, k := range []string{"air.temperature", "air.humidity", "airflow.speed", "board.load1"} {
		s.Observe(k, 1, t0)
	}
	if got := s.Reset("air"); len(got) != 2 || got[0] != "air.humidity" || got[1] != "air.temperature" {
		t.Errorf("Reset(air) = %v, want air.humidity, air.temperature", got)
	}
	if got := s.Keys(); len(got) != 2 || got[0] != "airflow.speed" {
		t.Errorf("Keys after Reset(air) = %v, want airflow.speed, board.load1", got)
	}
	if got := s.Reset(""); len(got) != 2 || len(s.Keys()) != 0 {
		t.Errorf("Reset(\"\") = %v, left %v", got, s.Keys())
	}
}

func FuzzUnmarshal(f *testing.F) {
	s := New(time.UTC, nil)
	feed(s, "air.temperature", t0, 2*time.Hour, func(at time.Time) float64 { return float64(at.Minute()) })
	data, _ := s.MarshalBinary()
	f.Add(data)
	f.Add([]byte{1, 1, 3, 'a', '.', 'b'})
	f.Fuzz(func(t *testing.T, data []byte) {
		s := New(time.UTC, nil)
		if err := s.UnmarshalBinary(data); err != nil {
			return
		}
		for _, k := range s.Keys() {
			s.Band(k, t0)
			s.Observe(k, 1, t0.Add(time.Hour))
		}
		if _, err := s.MarshalBinary(); err != nil {
			t.Fatal(err)
		}
	})
}

// TestOutlierKeepsSpread: an hour of a reading far off its usual value (a
// heater stuck on at night) stays unusual for the whole hour: the spread
// learns from a clipped deviation.
func TestOutlierKeepsSpread(t *testing.T) {
	s := New(time.UTC, func(string) float64 { return 0.01 })
	noise := func(at time.Time) float64 { return 15 + 0.2*math.Sin(float64(at.Unix()/60)*1.7) }
	feed(s, "k", t0, 3*24*time.Hour, noise)
	event := t0.Add(3*24*time.Hour + 3*time.Hour)
	feed(s, "k", t0.Add(3*24*time.Hour), 3*time.Hour, noise)
	for at := event; at.Before(event.Add(time.Hour)); at = at.Add(time.Minute) {
		b, _ := s.Band("k", at)
		if z := b.Z(28); z < 10 {
			t.Fatalf("z of 28 after %s of it = %.1f, want >= 10 (band %+v)", at.Sub(event), z, b)
		}
		s.Observe("k", 28, at)
	}
}

// BenchmarkObserve is one sample's update of one reading's baseline.
func BenchmarkObserve(b *testing.B) {
	s := New(time.UTC, func(string) float64 { return 0.01 })
	at := t0
	b.ReportAllocs()
	for b.Loop() {
		at = at.Add(time.Minute)
		s.Observe("air.temperature", 21+float64(at.Minute())/60, at)
	}
}
