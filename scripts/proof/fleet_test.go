package main

import (
	"testing"
	"time"
)

// TestLLMWindow: the fullest 5 s window slides (it is not bucketed by
// wall-clock second), and the average is per window over the whole span.
func TestLLMWindow(t *testing.T) {
	t0 := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	at := func(ms ...int) []time.Time {
		var ts []time.Time
		for _, m := range ms {
			ts = append(ts, t0.Add(time.Duration(m)*time.Millisecond))
		}
		return ts
	}
	for _, tc := range []struct {
		name     string
		times    []time.Time
		span     time.Duration
		peak     int
		avg      float64
		startsAt time.Duration
	}{
		{"none", nil, 10 * time.Second, 0, 0, 0},
		// 4 requests in 20 s: 1 per 5 s on average; two fall within
		// 5 s of each other across a second boundary.
		{"even", at(0, 5000, 10000, 15000), 20 * time.Second, 1, 1, 0},
		{"burst across seconds", at(0, 7900, 8100, 12800, 19000), 20 * time.Second, 3, 1.25, 7900 * time.Millisecond},
		// A request exactly w after another is in the next window.
		{"edge", at(1000, 6000), 10 * time.Second, 1, 1, 1000 * time.Millisecond},
		// Outside [from, to): not counted.
		{"outside", append(at(500), t0.Add(-time.Second), t0.Add(10*time.Second)), 10 * time.Second, 1, 0.5, 500 * time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := newLLMLoad(tc.times, t0, t0.Add(tc.span))
			peak, avg, start := l.peak, l.avg, l.at
			if peak != tc.peak || avg != tc.avg || (peak > 0 && start.Sub(t0) != tc.startsAt) {
				t.Errorf("newLLMLoad = %d, %v, %s; want %d, %v, %s", peak, avg, start.Sub(t0), tc.peak, tc.avg, tc.startsAt)
			}
		})
	}
}
