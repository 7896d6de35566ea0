package daemon

import (
	"strings"
	"testing"
	"time"

	"github.com/vigil-iot/vigil/config"
	"github.com/vigil-iot/vigil/heartbeat"
)

// The info topic's interval is what `vigil fleet` waits 3× of before it
// calls a device silent: with a schedule it is the schedule's longest gap,
// not the unused interval default.
func TestHeartbeatSpacing(t *testing.T) {
	for _, tc := range []struct {
		src  string
		want time.Duration
	}{
		{"[heartbeat]\ninterval = \"10m\"\n", 10 * time.Minute},
		{"[heartbeat]\nschedule = [\"07:30\", \"12:00\", \"19:00\"]\n", 12*time.Hour + 30*time.Minute},
		{"[heartbeat]\nenabled = false\n", 0},
		{"[heartbeat]\ninterval = \"0\"\n", 0},
	} {
		cfg, err := config.Parse(strings.NewReader(tc.src), "config.toml")
		if err != nil {
			t.Fatal(err)
		}
		if got := HeartbeatSpacing(cfg); got != tc.want {
			t.Errorf("heartbeatSpacing(%q) = %s, want %s", tc.src, got, tc.want)
		}
	}
}

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
		ec, err := EngineConfig(cfg)
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

// TestHistoryKept: the bound --since follows is what the daemon is wired to
// keep: the engine persists one snapshot per heartbeat.DefaultHistoryStep into the store's
// ring of DefaultHistoryCap.
func TestHistoryKept(t *testing.T) {
	cfg, err := config.Parse(strings.NewReader(""), "config.toml")
	if err != nil {
		t.Fatal(err)
	}
	ec, err := EngineConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if ec.HistoryStep != heartbeat.DefaultHistoryStep {
		t.Errorf("engineConfig: HistoryStep %v, want heartbeat.DefaultHistoryStep %v (the --since bound assumes it)", ec.HistoryStep, heartbeat.DefaultHistoryStep)
	}
	if heartbeat.HistoryKept != 48*time.Hour {
		t.Errorf("heartbeat.HistoryKept = %v; the help, man page and README say 48 hours", heartbeat.HistoryKept)
	}
}

// TestEngineConfigCompilesNoRule: the engine's rules are the expressions
// config.Parse compiled; turning a config into the engine's settings (at
// start, on every apply) compiles none again.
func TestEngineConfigCompilesNoRule(t *testing.T) {
	cfg, err := config.Parse(strings.NewReader("[[sensor]]\nname = \"air\"\ndriver = \"bme280\"\n\n[[rule]]\nname = \"too_hot\"\nwhen = \"air.temperature > 30\"\nclear = \"air.temperature < 28\"\n"), "config.toml")
	if err != nil {
		t.Fatal(err)
	}
	a, err := EngineConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := EngineConfig(cfg)
	if a.Rules[0].Spec.When != b.Rules[0].Spec.When || a.Rules[0].Spec.Clear != b.Rules[0].Spec.Clear {
		t.Errorf("EngineConfig compiled the rule again: when %p then %p", a.Rules[0].Spec.When, b.Rules[0].Spec.When)
	}
}
