package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/vigil-iot/vigil/heartbeat"
	"github.com/vigil-iot/vigil/internal/configtest"
	"github.com/vigil-iot/vigil/manage"
)

// settingsInterval is config.toml's heartbeat.interval in these tests: far
// from 10m, so the schedule shows which one is in force.
const settingsInterval = "6h"

// overlayRules is a sensor and a rule that never fires, for the settings
// tests.
const overlayRules = configtest.OverlayRules

// wantNextRun fails unless status's next run is the first or second tick
// of a schedule of interval started at start (the device's phase, then
// every interval), to within a few seconds.
func wantNextRun(t *testing.T, cfg string, start time.Time, interval time.Duration, what string) {
	t.Helper()
	st := statusJSON(t, cfg)
	first := start.Add(heartbeat.Phase("e2e", interval))
	for _, want := range []time.Time{first, first.Add(interval)} {
		if d := st.NextRun.Sub(want); d > -3*time.Second && d < 3*time.Second {
			return
		}
	}
	t.Fatalf("%s: status next run %s, want %s (the %s schedule started at %s)", what, st.NextRun, first, interval, start.Format(time.TimeOnly))
}

func getJSON(t *testing.T, cfg, key string) manage.SettingView {
	t.Helper()
	out, errOut, code := runVigil(t, "-c", cfg, "get", key, "--json")
	if code != 0 {
		t.Fatalf("get %s --json: exit %d: %s", key, code, errOut)
	}
	var vs []manage.SettingView
	if err := json.Unmarshal([]byte(out), &vs); err != nil || len(vs) != 1 {
		t.Fatalf("get %s --json = %q (%v), want one value", key, out, err)
	}
	return vs[0]
}

// TestSetIntervalOnRunningDaemon is issue 14's "done when" against a real
// daemon: set changes the next tick at once (status shows it), survives a
// SIGKILL, unset goes back to the file's value, and a bad value is refused
// with the validator's message and stores nothing.
func TestSetIntervalOnRunningDaemon(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	// An LLM that is never asked (no tick comes within the test): in
	// rules-only mode there is no next run to show.
	cfg := writeConfig(t, dir, "\n[llm]\nbase_url = \"http://127.0.0.1:9/v1\"\n")
	writeFile(t, cfg, strings.Replace(readFile(t, cfg), `interval = "1m"`, `interval = "`+settingsInterval+`"`, 1))
	fileLine := cfg + ":" + itoa(lineOf(t, cfg, `interval = "`+settingsInterval+`"`))
	start := time.Now()
	d := startDaemon(t, cfg, "OPENAI_API_KEY=sk-never-used")
	d.waitLog(t, regexp.MustCompile(`vigil starting`), 10*time.Second)
	wantNextRun(t, cfg, start, 6*time.Hour, "at start")

	setAt := time.Now()
	out, errOut, code := runVigil(t, "-c", cfg, "set", "heartbeat.interval", "10m")
	if code != 0 || !strings.Contains(out, "heartbeat.interval set to 10m (was 6h)") {
		t.Fatalf("set heartbeat.interval 10m: exit %d, %q %s", code, out, errOut)
	}
	wantNextRun(t, cfg, setAt, 10*time.Minute, "after set 10m")
	d.waitLog(t, regexp.MustCompile(`msg="setting changed" change="heartbeat.interval set to 10m by socket" source=socket`), 5*time.Second)
	d.waitLog(t, regexp.MustCompile(`msg=alert .*severity=info source=system rule=setting .*summary="heartbeat.interval set to 10m by socket"`), 5*time.Second)
	if g := getJSON(t, cfg, "heartbeat.interval"); g.Value != "10m" || !strings.HasPrefix(g.Origin, "set ") || !strings.HasSuffix(g.Origin, " by socket") {
		t.Fatalf("get after set = %+v, want 10m, set ... by socket", g)
	}

	// A power cut: the value is in the state file, and in force again.
	d.kill()
	restart := time.Now()
	d = startDaemon(t, cfg, "OPENAI_API_KEY=sk-never-used")
	d.waitLog(t, regexp.MustCompile(`vigil starting" .*interval=10m0s`), 10*time.Second)
	wantNextRun(t, cfg, restart, 10*time.Minute, "after SIGKILL and restart")
	if g := getJSON(t, cfg, "heartbeat.interval"); g.Value != "10m" || !strings.HasSuffix(g.Origin, " by socket") {
		t.Fatalf("get after restart = %+v, want 10m set by socket", g)
	}

	// A bad value: the validator's message, exit 78, nothing stored.
	out, errOut, code = runVigil(t, "-c", cfg, "set", "heartbeat.interval", "30s")
	if code != 78 || !strings.Contains(errOut, `heartbeat.interval: must be at least 1m (got "30s")`) {
		t.Fatalf("set heartbeat.interval 30s: exit %d, %q %q; want 78 with the validator's message", code, out, errOut)
	}
	if g := getJSON(t, cfg, "heartbeat.interval"); g.Value != "10m" {
		t.Fatalf("get after a refused set = %+v, want 10m still", g)
	}

	unsetAt := time.Now()
	out, errOut, code = runVigil(t, "-c", cfg, "unset", "heartbeat.interval")
	if code != 0 || !strings.Contains(out, "back to 6h ("+fileLine+")") {
		t.Fatalf("unset: exit %d, %q %s; want back to 6h (%s)", code, out, errOut, fileLine)
	}
	wantNextRun(t, cfg, unsetAt, 6*time.Hour, "after unset")
	if g := getJSON(t, cfg, "heartbeat.interval"); g.Value != "6h" || g.Origin != fileLine {
		t.Fatalf("get after unset = %+v, want 6h from %s", g, fileLine)
	}

	// Stopped, the state file has no overlay left: a fresh start is on 6h.
	d.kill()
	if out, _, _ := runVigil(t, "-c", cfg, "config", "check"); strings.Contains(out, "by socket") {
		t.Fatalf("config check still shows an overlay value after unset:\n%s", out)
	}
}

// TestSetWithoutDaemonCreatesNothingWhenRefused: with no daemon, get
// reads nothing into being, a refused set creates no state file, and an
// accepted one is shown by get and config check with its origin, and
// status applies the overlay too (a disabled rule shows as disabled).
func TestSetWithoutDaemonCreatesNothingWhenRefused(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cfg := writeConfig(t, dir, overlayRules)
	state := filepath.Join(dir, "state")
	if _, errOut, code := runVigil(t, "-c", cfg, "get"); code != 0 {
		t.Fatalf("get: exit %d: %s", code, errOut)
	}
	if _, errOut, code := runVigil(t, "-c", cfg, "set", "heartbeat.interval", "30s"); code != 78 || !strings.Contains(errOut, `heartbeat.interval: must be at least 1m (got "30s")`) {
		t.Fatalf("set 30s: exit %d: %s", code, errOut)
	}
	if _, errOut, code := runVigil(t, "-c", cfg, "set", "heartbeat.nope", "1"); code != 78 || !strings.Contains(errOut, "settable keys: heartbeat.enabled") {
		t.Fatalf("set heartbeat.nope: exit %d: %s", code, errOut)
	}
	if _, err := os.Stat(state); !os.IsNotExist(err) {
		t.Fatalf("read-only and refused commands created %s (%v)", state, err)
	}
	if out, errOut, code := runVigil(t, "-c", cfg, "set", "heartbeat.interval", "15m"); code != 0 || !strings.Contains(out, "no daemon is running") {
		t.Fatalf("set 15m: exit %d: %q %s", code, out, errOut)
	}
	if out, errOut, code := runVigil(t, "-c", cfg, "set", "rule.too_hot.enabled", "false"); code != 0 {
		t.Fatalf("set rule.too_hot.enabled false: exit %d: %q %s", code, out, errOut)
	}
	if st := statusJSON(t, cfg); len(st.Rules) != 1 || st.Rules[0].State != heartbeat.RuleDisabled {
		t.Fatalf("status with no daemon after disabling too_hot: rules %+v, want it disabled", st.Rules)
	}
	out, errOut, code := runVigil(t, "-c", cfg, "config", "check")
	if code != 0 || !regexp.MustCompile(`(?m)^# heartbeat\.interval = 15m \(set \d{4}-\d\d-\d\d \d\d:\d\d:\d\d \+00:00 by cli\)$`).MatchString(out) ||
		!strings.Contains(out, `interval = "15m"`) {
		t.Fatalf("config check: exit %d, want the overlay line and the overlaid value:\n%s\n%s", code, out, errOut)
	}
}
