package main

import (
	"testing"
	"time"
)

// TestStopDeadlineFor: `vigil run` gets its orderly shutdown, whatever the
// global flags before it; every other verb ends within a second.
func TestStopDeadlineFor(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want time.Duration
	}{
		{[]string{"run"}, stopRunDeadline},
		{[]string{"-c", "/etc/vigil/config.toml", "run"}, stopRunDeadline},
		{[]string{"--config=x.toml", "-v", "run", "--help"}, stopRunDeadline},
		{[]string{"status", "--json"}, stopDeadline},
		{[]string{"-c", "run", "status"}, stopDeadline}, // a config file named run
		{[]string{"help", "run"}, stopDeadline},
		{[]string{"--bogus", "run"}, stopDeadline},
		{nil, stopDeadline},
	} {
		if got := stopDeadlineFor(tt.args); got != tt.want {
			t.Errorf("stopDeadlineFor(%q) = %s, want %s", tt.args, got, tt.want)
		}
	}
	if stopDeadline >= time.Second {
		t.Errorf("stopDeadline = %s, want under a second", stopDeadline)
	}
}
