package main

import (
	"strings"
	"testing"
	"time"

	"github.com/vigil-iot/vigil/config"
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
		if got := heartbeatSpacing(cfg); got != tc.want {
			t.Errorf("heartbeatSpacing(%q) = %s, want %s", tc.src, got, tc.want)
		}
	}
}
