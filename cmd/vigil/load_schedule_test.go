package main

import (
	"strings"
	"testing"
	"time"

	"github.com/vigil-iot/vigil/config"
)

// TestEngineConfigSchedule: heartbeat.schedule reaches the engine in place
// of the interval, in the device's time zone; enabled = false turns both off.
func TestEngineConfigSchedule(t *testing.T) {
	tests := []struct {
		src          string
		wantSchedule bool
		wantInterval time.Duration
	}{
		{"[device]\ntimezone = \"Europe/Berlin\"\n[heartbeat]\nschedule = [\"07:30\", \"19:00\"]\n", true, 0},
		{"[heartbeat]\nschedule = [\"30 7 * * 1-5\"]\n", true, 0},
		{"[heartbeat]\ninterval = \"10m\"\n", false, 10 * time.Minute},
		{"[heartbeat]\nenabled = false\nschedule = [\"07:30\"]\n", false, 0},
	}
	for _, tt := range tests {
		cfg, err := config.Parse(strings.NewReader(tt.src), "config.toml")
		if err != nil {
			t.Fatalf("config.Parse(%q): %v", tt.src, err)
		}
		ec, err := engineConfig(cfg)
		if err != nil {
			t.Fatalf("engineConfig(%q): %v", tt.src, err)
		}
		if (ec.Schedule != nil) != tt.wantSchedule || ec.Interval != tt.wantInterval {
			t.Errorf("engineConfig(%q): schedule set %v, interval %s; want %v, %s", tt.src, ec.Schedule != nil, ec.Interval, tt.wantSchedule, tt.wantInterval)
		}
		if ec.Schedule != nil {
			// 2026-06-01 06:00 UTC is 08:00 in Berlin: the next run is 19:00 there.
			next := ec.Schedule.Next(time.Date(2026, 6, 1, 6, 0, 0, 0, time.UTC), ec.Location)
			if next.IsZero() || !next.After(time.Date(2026, 6, 1, 6, 0, 0, 0, time.UTC)) {
				t.Errorf("engineConfig(%q): Next = %v, want a later time", tt.src, next)
			}
			if strings.Contains(tt.src, "Berlin") && !next.Equal(time.Date(2026, 6, 1, 17, 0, 0, 0, time.UTC)) {
				t.Errorf("engineConfig(%q): Next after 08:00 Berlin = %v, want 19:00 Berlin", tt.src, next.In(ec.Location))
			}
		}
	}
}
