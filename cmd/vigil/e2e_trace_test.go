package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// straceOK skips the test unless strace can trace a child here (it is
// installed, and ptrace is allowed).
func straceOK(t *testing.T) string {
	t.Helper()
	path, err := exec.LookPath("strace")
	if err != nil {
		t.Skip("strace is not installed: this test counts the files vigil opens with it (apt install strace)")
	}
	if out, err := exec.Command(path, "-f", "-e", "trace=openat", "-o", os.DevNull, "true").CombinedOutput(); err != nil {
		t.Skipf("strace cannot trace here (%v: %s): this test counts the files vigil opens with it", err, out)
	}
	return path
}

// opens counts the openat calls of path in an strace log.
func opens(t *testing.T, log, path string) int {
	t.Helper()
	b, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Count(string(b), `"`+path+`"`)
}

// tracedVigil runs the binary under strace, logging its openat calls to
// log, and returns its stdout, stderr and exit code.
func tracedVigil(t *testing.T, strace, log string, args ...string) (string, string, int) {
	t.Helper()
	return runProgram(t, "", 5*time.Minute, nil, strace, append([]string{"-f", "-e", "trace=openat", "-o", log, vigilBin}, args...)...)
}

// TestSetOpensEachFileOnce: a change is made in one pass. Traced with
// strace, an offline `vigil set` opens the config file once and the state
// file once, the first time (no state file yet) and after; against a
// running daemon the CLI opens the config file once and the daemon, for
// the set, not at all (it validates against the base it keeps).
func TestSetOpensEachFileOnce(t *testing.T) {
	strace := straceOK(t)
	dir := t.TempDir()
	cfg := writeConfig(t, dir, overlayRules)
	writeFile(t, filepath.Join(dir, "HEARTBEAT.md"), "- Is the air fine?\n")
	db := filepath.Join(dir, "state", "vigil.db")

	for i, v := range []string{"15m", "20m"} {
		log := filepath.Join(dir, "offline"+strconv.Itoa(i)+".strace")
		out, errOut, code := tracedVigil(t, strace, log, "-c", cfg, "set", "heartbeat.interval", v)
		if code != 0 || !strings.Contains(out, "no daemon is running") {
			t.Fatalf("offline set %s: exit %d: %s%s", v, code, out, errOut)
		}
		c, d := opens(t, log, cfg), opens(t, log, db)
		t.Logf("offline set %s: config.toml opened %d, vigil.db %d", v, c, d)
		if c != 1 || d != 1 {
			t.Errorf("offline set %s (state file existed: %v) opened config.toml %d times and vigil.db %d times, want once each", v, i > 0, c, d)
		}
	}

	// The daemon, traced from its start.
	daemonLog := filepath.Join(dir, "daemon.strace")
	d := startProgram(t, "", nil, strace, "-f", "-e", "trace=openat", "-o", daemonLog, vigilBin, "-c", cfg, "run")
	// strace's own pid is not the daemon's: signal the traced vigil.
	vigilPid := func() int {
		b, _ := os.ReadFile(daemonLog)
		pid, _ := strconv.Atoi(strings.Fields(string(b) + " 0")[0])
		return pid
	}
	t.Cleanup(func() {
		if pid := vigilPid(); pid > 0 {
			syscall.Kill(pid, syscall.SIGKILL)
		}
		d.kill()
	})
	d.waitLog(t, regexp.MustCompile(`vigil starting`), 30*time.Second)
	deadline := time.Now().Add(30 * time.Second)
	for {
		out, _, _ := runVigil(t, "-c", cfg, "status")
		if strings.Contains(out, "daemon running") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the traced daemon did not answer status within 30s; log:\n%s", d.logText())
		}
		time.Sleep(200 * time.Millisecond)
	}
	before, dbBefore := opens(t, daemonLog, cfg), opens(t, daemonLog, db)
	cliLog := filepath.Join(dir, "cli.strace")
	out, errOut, code := tracedVigil(t, strace, cliLog, "-c", cfg, "set", "heartbeat.interval", "25m")
	if code != 0 || !strings.Contains(out, "heartbeat.interval set to 25m (was 20m)") {
		t.Fatalf("set against the daemon: exit %d: %s%s", code, out, errOut)
	}
	t.Logf("set against the daemon: the CLI opened config.toml %d, vigil.db %d", opens(t, cliLog, cfg), opens(t, cliLog, db))
	if c := opens(t, cliLog, cfg); c > 1 {
		t.Errorf("the CLI's set against a running daemon opened config.toml %d times, want at most once", c)
	}
	if c := opens(t, cliLog, db); c != 0 {
		t.Errorf("the CLI's set against a running daemon opened vigil.db %d times, want none (the daemon holds it)", c)
	}
	d.waitLog(t, regexp.MustCompile(`msg="setting applied"`), 10*time.Second)
	t.Logf("set against the daemon: the daemon opened config.toml %d, vigil.db %d", opens(t, daemonLog, cfg)-before, opens(t, daemonLog, db)-dbBefore)
	if c := opens(t, daemonLog, cfg) - before; c > 1 {
		t.Errorf("the daemon opened config.toml %d times for one set, want at most once", c)
	}
	if pid := vigilPid(); pid > 0 {
		syscall.Kill(pid, syscall.SIGTERM)
	}
	select {
	case <-d.done:
	case <-time.After(20 * time.Second):
		t.Fatal("the traced daemon did not stop on SIGTERM")
	}
}
