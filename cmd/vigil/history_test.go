package main

import (
	"strings"
	"testing"
	"time"

	"github.com/vigil-iot/vigil/config"
	"github.com/vigil-iot/vigil/heartbeat"
)

// TestHistorySinceBound: `vigil history --since` reaches back as far as the
// history kept (48 h) and no further: a longer window is a usage error
// that names the maximum, not a silent cut at 48 h.
func TestHistorySinceBound(t *testing.T) {
	dir := t.TempDir()
	cfg := webConfig(t, dir, 18082)
	seedDay(t, dir, time.Now())
	if _, errOut, code := runVigil(t, "-c", cfg, "history", "air.temperature", "--since", "48h", "--csv"); code != 0 {
		t.Errorf("history --since 48h: exit %d, want 0: %s", code, errOut)
	}
	for _, since := range []string{"49h", "168h"} {
		_, errOut, code := runVigil(t, "-c", cfg, "history", "--since", since)
		if code != 2 || !strings.Contains(errOut, "at most 48h") || !strings.Contains(errOut, since) {
			t.Errorf("history --since %s: exit %d, stderr %q; want exit 2 naming %s and the maximum, at most 48h", since, code, errOut, since)
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
	ec, err := engineConfig(cfg)
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
