package main

import (
	"strings"
	"testing"
	"time"
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
