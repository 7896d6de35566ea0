package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/vigil-iot/vigil/internal/configtest"
	"github.com/vigil-iot/vigil/store"
)

// vigilBin is the real binary, built once for the end-to-end tests.
var vigilBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "vigil-e2e")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	vigilBin = filepath.Join(dir, "vigil")
	// vigil fleet keeps a roster of the devices it saw in the user's
	// cache directory: the tests' rosters stay in theirs.
	os.Setenv("XDG_CACHE_HOME", filepath.Join(dir, "cache"))
	out, err := exec.Command("go", "build", "-o", vigilBin, ".").CombinedOutput()
	if err != nil {
		fmt.Fprintf(os.Stderr, "build vigil: %v\n%s", err, out)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// writeConfig writes a sim config into dir and returns its path.
func writeConfig(t *testing.T, dir, extra string) string {
	t.Helper()
	return configtest.Write(t, dir, extra)
}

// child is a running `vigil run` child with its log captured.
type child struct {
	cmd  *exec.Cmd
	mu   sync.Mutex
	log  bytes.Buffer
	done chan struct{}
}

func startDaemon(t *testing.T, cfgPath string, env ...string) *child {
	t.Helper()
	return startChild(t, env, "-c", cfgPath, "run")
}

// startChild starts the binary with args (and env on top of this
// process's, without an LLM key or a notify socket) and captures its log.
func startChild(t *testing.T, env []string, args ...string) *child {
	t.Helper()
	return startChildIn(t, "", env, args...)
}

// startChildIn is startChild with the working directory dir.
func startChildIn(t *testing.T, dir string, env []string, args ...string) *child {
	t.Helper()
	return startProgram(t, dir, env, vigilBin, args...)
}

// startProgram is startChildIn of prog: the binary, or a program that runs
// it (strace).
func startProgram(t *testing.T, dir string, env []string, prog string, args ...string) *child {
	t.Helper()
	d := &child{done: make(chan struct{})}
	d.cmd = exec.Command(prog, args...)
	d.cmd.Dir = dir
	d.cmd.Env = append(os.Environ(), "OPENAI_API_KEY=", "NOTIFY_SOCKET=")
	d.cmd.Env = append(d.cmd.Env, env...)
	stderr, err := d.cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := d.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			d.mu.Lock()
			d.log.WriteString(sc.Text() + "\n")
			d.mu.Unlock()
		}
		d.cmd.Wait()
		close(d.done)
	}()
	t.Cleanup(func() { d.kill() })
	return d
}

func (d *child) logText() string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.log.String()
}

// logIfFailed logs the child's output if t has failed; tests defer it.
func (d *child) logIfFailed(t *testing.T) {
	if t.Failed() {
		t.Logf("daemon log:\n%s", d.logText())
	}
}

func (d *child) kill() {
	if d.cmd.Process != nil {
		d.cmd.Process.Signal(syscall.SIGKILL)
		<-d.done
	}
}

// waitLog waits until the log matches re.
func (d *child) waitLog(t *testing.T, re *regexp.Regexp, timeout time.Duration) string {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		if m := re.FindString(d.logText()); m != "" {
			return m
		}
		select {
		case <-d.done:
			t.Fatalf("vigil exited while waiting for %s; log:\n%s", re, d.logText())
		case <-time.After(50 * time.Millisecond):
		}
	}
	t.Fatalf("no %s in the log within %s; log:\n%s", re, timeout, d.logText())
	return ""
}

func runVigil(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	return runIn(t, "", nil, args...)
}

func TestRunFiresAndResolvesAndAnswersStatus(t *testing.T) {
	dir := t.TempDir()
	cfg := writeConfig(t, dir, `
[[sensor]]
name = "air"
driver = "bme280"
sim = { every = "6s", length = "4s", rise = 20 }

[[rule]]
name = "too_hot"
when = "air.temperature > 35"
clear = "air.temperature < 33"
severity = "critical"
message = "air at {air.temperature}"
`)
	d := startDaemon(t, cfg)
	d.waitLog(t, regexp.MustCompile(`rules-only mode`), 10*time.Second)
	d.waitLog(t, regexp.MustCompile(`msg=alert .*rule=too_hot state=firing`), 30*time.Second)
	d.waitLog(t, regexp.MustCompile(`msg=alert .*rule=too_hot state=resolved`), 30*time.Second)

	out, errOut, code := runVigil(t, "-c", cfg, "status")
	if code != 0 {
		t.Fatalf("vigil status exit %d: %s", code, errOut)
	}
	for _, want := range []string{"device:   e2e (daemon running; rules-only mode)", "outbox:   log 0", "paused:   no"} {
		if !strings.Contains(out, want) {
			t.Errorf("status output lacks %q:\n%s", want, out)
		}
	}
	out, errOut, code = runVigil(t, "-c", cfg, "pause", "5")
	if code != 0 || !strings.Contains(out, "paused for 5m0s") {
		t.Fatalf("vigil pause 5: exit %d, %q %q", code, out, errOut)
	}
	out, _, _ = runVigil(t, "-c", cfg, "status", "--json")
	var st struct {
		PausedUntil string `json:"paused_until"`
		Outbox      map[string]int
	}
	if err := json.Unmarshal([]byte(out), &st); err != nil || st.PausedUntil == "" {
		t.Fatalf("status --json after pause: %v, paused_until %q\n%s", err, st.PausedUntil, out)
	}
	d.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-d.done:
	case <-time.After(10 * time.Second):
		t.Fatal("vigil did not stop on SIGTERM")
	}
	if !strings.Contains(d.logText(), "vigil stopped") {
		t.Errorf("no clean shutdown in the log:\n%s", d.logText())
	}
	// Without a daemon, status works on the state file and still sees the pause.
	out, errOut, code = runVigil(t, "-c", cfg, "status")
	if code != 0 || !strings.Contains(out, "paused:   until") {
		t.Fatalf("offline status: exit %d\n%s\n%s", code, out, errOut)
	}
	// And resume works on the state file too.
	out, errOut, code = runVigil(t, "-c", cfg, "resume")
	if code != 0 || !strings.Contains(out, "heartbeats resumed (saved; no daemon running)") {
		t.Fatalf("offline resume: exit %d\n%s\n%s", code, out, errOut)
	}
	if out, _, _ = runVigil(t, "-c", cfg, "status"); !strings.Contains(out, "paused:   no") {
		t.Fatalf("status after an offline resume still paused:\n%s", out)
	}
}

var (
	reQueued    = regexp.MustCompile(`msg=rule .*alert=(\S+)`)
	reDelivered = regexp.MustCompile(`msg=alert id=(\S+)`)
)

// TestPowerCut SIGKILLs a real `vigil run` at random instants while a rule
// flaps, and checks after every kill that the state file is consistent and
// that every alert committed before the kill was delivered or is still queued.
func TestPowerCut(t *testing.T) {
	t.Parallel()
	kills := 50
	if testing.Short() {
		kills = 10
	}
	dir := t.TempDir()
	cfg := writeConfig(t, dir, flappingSensors)
	rng := rand.New(rand.NewPCG(1, 2))
	committed := map[string]bool{}
	delivered := map[string]bool{}
	dbFile := filepath.Join(dir, "state", "vigil.db")
	for i := 0; i < kills; i++ {
		d := startDaemon(t, cfg)
		d.waitLog(t, regexp.MustCompile(`vigil starting`), 10*time.Second)
		time.Sleep(time.Duration(500+rng.IntN(2500)) * time.Millisecond)
		d.kill()
		for _, m := range reQueued.FindAllStringSubmatch(d.logText(), -1) {
			if m[1] != "held" {
				committed[m[1]] = true
			}
		}
		for _, m := range reDelivered.FindAllStringSubmatch(d.logText(), -1) {
			delivered[m[1]] = true
		}
		queued := checkState(t, dbFile, i)
		for id := range committed {
			if !delivered[id] && !queued[id] {
				t.Fatalf("kill %d: alert %s was committed but is neither delivered nor queued", i, id)
			}
		}
	}
	if len(committed) < kills {
		t.Fatalf("only %d alerts were committed over %d kills: the test did not exercise delivery", len(committed), kills)
	}
	t.Logf("%d kills, %d alerts committed, %d delivered", kills, len(committed), len(delivered))
}

// checkState opens the state file after a kill, runs bbolt's check and
// returns the ids still queued for the log transport.
func checkState(t *testing.T, path string, i int) map[string]bool {
	t.Helper()
	db, err := store.Open(path, store.Options{Timeout: 2 * time.Second})
	if err != nil {
		t.Fatalf("kill %d: state file does not open: %v", i, err)
	}
	defer db.Close()
	if err := db.Check(); err != nil {
		t.Fatalf("kill %d: bbolt check: %v", i, err)
	}
	queued := map[string]bool{}
	if err := db.View(func(tx *store.Tx) error {
		ents, err := tx.Pending("log", 100000)
		for _, e := range ents {
			queued[e.Alert.ID] = true
		}
		return err
	}); err != nil {
		t.Fatalf("kill %d: read outbox: %v", i, err)
	}
	return queued
}

func TestConfigErrorExits78(t *testing.T) {
	dir := t.TempDir()
	cfg := writeConfig(t, dir, "bogus_key = 1\n")
	_, errOut, code := runVigil(t, "-c", cfg, "config", "check")
	if code != 78 {
		t.Fatalf("exit code = %d, want 78; stderr %s", code, errOut)
	}
	if !strings.Contains(errOut, "config.toml:12: heartbeat.bogus_key: unknown key") {
		t.Errorf("error does not name the key and line: %s", errOut)
	}
	_, _, code = runVigil(t, "-c", cfg, "run")
	if code != 78 {
		t.Fatalf("run with a bad config: exit %d, want 78", code)
	}
	_, _, code = runVigil(t, "frobnicate")
	if code != 2 {
		t.Fatalf("unknown command: exit %d, want 2", code)
	}
}
