package baseline_test

import (
	"math"
	"testing"
	"time"

	"github.com/vigil-iot/vigil/baseline"
)

// An event does not teach the baseline that it is usual while it lasts: a
// stuck heater holding 28 °C for 45 minutes of a night whose 3 a.m. is
// 15 °C stays unusual (z > 4) every minute of it, so a rule on unusual()
// fires once and does not resolve mid-event.
func TestEventStaysUnusual(t *testing.T) {
	set := baseline.New(time.UTC, func(string) float64 { return 0.01 })
	start := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
	event := start.AddDate(0, 0, 4).Add(3 * time.Hour)
	for at := start; at.Before(event); at = at.Add(time.Minute) {
		set.Observe("air.temperature", 15+0.1*float64(at.Minute()%5-2), at) // a flat, slightly noisy night
	}
	for m := 0; m < 45; m++ {
		at := event.Add(time.Duration(m) * time.Minute)
		set.Observe("air.temperature", 28, at)
		b, _ := set.Band("air.temperature", at)
		if z := b.Z(28); !(z > 4) {
			t.Fatalf("minute %d of the event: 28 °C has z %.1f (usual %.2f, spread %.2f), want above 4 throughout", m, z, b.Usual, b.Spread)
		}
	}
}

// After the event, the next night's usual 15 °C is usual again: the stuck
// heater did not move the bin's mean towards 28 °C, so the night after is
// not "unusually cold" (which would ask the LLM about a normal night).
func TestEventNotLearnt(t *testing.T) {
	set := baseline.New(time.UTC, func(string) float64 { return 0.01 })
	start := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
	event := start.AddDate(0, 0, 4).Add(3 * time.Hour)
	next := event.AddDate(0, 0, 1)
	for at := start; at.Before(next); at = at.Add(time.Minute) {
		v := 15 + 0.1*float64(at.Minute()%5-2)
		if !at.Before(event) && at.Before(event.Add(45*time.Minute)) {
			v = 28
		}
		set.Observe("air.temperature", v, at)
	}
	b, _ := set.Band("air.temperature", next)
	if z := b.Z(15); math.Abs(z) >= 3 {
		t.Errorf("the night after the event, 15 °C at 03:00 has z %.1f (usual %.2f, spread %.2f): want usual again (|z| < 3)", z, b.Usual, b.Spread)
	}
}
