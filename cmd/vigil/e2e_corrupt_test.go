package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/vigil-iot/vigil/internal/mosquittotest"
	"github.com/vigil-iot/vigil/store"
)

// alwaysFires fires on the first sample of every start on a fresh file.
const alwaysFires = `
[[sensor]]
name = "air"
driver = "bme280"
sim = { every = "0s" }

[[rule]]
name = "always"
when = "air.pressure > 0"
severity = "critical"
message = "pressure at {air.pressure}"
`

// realStateFile runs `vigil run` for a few seconds with a flapping rule and
// returns a copy of the state file it leaves behind.
func realStateFile(t *testing.T) []byte {
	t.Helper()
	dir := t.TempDir()
	cfg := writeConfig(t, dir, flappingSensors)
	d := startDaemon(t, cfg)
	waitCommitted(t, d, 3, 20*time.Second)
	d.cmd.Process.Signal(syscall.SIGTERM)
	<-d.done
	b, err := os.ReadFile(filepath.Join(dir, "state", "vigil.db"))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func fileSum(t *testing.T, path string) [32]byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return sha256.Sum256(b)
}

// TestCorruptStateBinary starts the real daemon on damaged copies of a real
// state file: status refuses each damaged file with a clear message and
// leaves it alone; run starts, has the rule firing within two samples, and a
// second run on the result starts without another reset.
func TestCorruptStateBinary(t *testing.T) {
	cases := 5
	if testing.Short() {
		cases = 2
	}
	src := realStateFile(t)
	rng := rand.New(rand.NewPCG(7, 7))
	damage := []func([]byte) []byte{
		func(b []byte) []byte { // a random page
			p := 2 + rng.IntN(len(b)/4096-2)
			for i := p * 4096; i < (p+1)*4096; i++ {
				b[i] = byte(rng.Uint32())
			}
			return b
		},
		func(b []byte) []byte { clear(b[:8192]); return b },          // header zeroed
		func(b []byte) []byte { return b[:4096+rng.IntN(len(b)/2)] }, // truncated
		func(b []byte) []byte { return bytes.Repeat([]byte("garbage!"), 1024) },
	}
	resets := 0
	defer func() { t.Logf("CORRUPTBIN cases=%d resets=%d", cases, resets) }()
	for i := range cases {
		dir := t.TempDir()
		cfg := writeConfig(t, dir, alwaysFires)
		db := filepath.Join(dir, "state", "vigil.db")
		os.MkdirAll(filepath.Dir(db), 0o700)
		if err := os.WriteFile(db, damage[i%len(damage)](append([]byte(nil), src...)), 0o600); err != nil {
			t.Fatal(err)
		}
		before := fileSum(t, db)
		out, errOut, code := runVigil(t, "-c", cfg, "status")
		damaged := code != 0
		if damaged {
			if code != 1 || !strings.Contains(errOut, "state file is corrupt") || !strings.Contains(errOut, "'vigil run' moves it aside") ||
				strings.Contains(errOut, "panic") || strings.Contains(errOut, "goroutine") {
				t.Fatalf("case %d: status on a damaged file: exit %d\n%s%s", i, code, out, errOut)
			}
		}
		if fileSum(t, db) != before {
			t.Fatalf("case %d: status changed the damaged file", i)
		}
		for start := range 2 {
			d := startDaemon(t, cfg)
			d.waitLog(t, regexp.MustCompile(`vigil starting`), 10*time.Second)
			waitFiring(t, cfg, "always", 3*time.Second) // two samples of 1s, and some slack
			d.cmd.Process.Signal(syscall.SIGTERM)
			<-d.done
			reset := strings.Contains(d.logText(), "state file was corrupt")
			if start == 1 && reset {
				t.Fatalf("case %d: the second start reset the file again:\n%s", i, d.logText())
			}
			if start == 0 && reset {
				resets++
			}
			if start == 0 && damaged && !reset {
				t.Fatalf("case %d: status found the file damaged, run did not reset it:\n%s", i, d.logText())
			}
			if strings.Contains(d.logText(), "goroutine ") {
				t.Fatalf("case %d: a stack trace in the log:\n%s", i, d.logText())
			}
		}
	}
}

// waitFiring polls `vigil status` until the rule is firing.
func waitFiring(t *testing.T, cfg, rule string, timeout time.Duration) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		out, _, _ := runVigil(t, "-c", cfg, "status")
		if regexp.MustCompile(`firing:\s+.*\b` + rule + `\b`).MatchString(out) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("rule %s not firing within %s:\n%s", rule, timeout, out)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// TestStateLostOverMQTT: a daemon that finds its state file corrupt delivers
// a critical state_lost alert to a real mosquitto.
func TestStateLostOverMQTT(t *testing.T) {
	t.Parallel()
	b := startMosquitto(t)
	rec := mosquittotest.Subscribe(t, b.URL(), topicAlert)
	dir := t.TempDir()
	cfg := writeConfig(t, dir, alwaysFires+mqttConfig(b.URL(), "homeassistant = false"))
	db := filepath.Join(dir, "state", "vigil.db")
	os.MkdirAll(filepath.Dir(db), 0o700)
	if err := os.WriteFile(db, bytes.Repeat([]byte{0xFF}, 64*1024), 0o600); err != nil {
		t.Fatal(err)
	}
	startDaemon(t, cfg)
	m := rec.Wait(topicAlert, 20*time.Second, func(m mosquittotest.Message) bool {
		return strings.Contains(m.Payload, `"rule":"state_lost"`)
	})
	var a struct{ Severity, Source, Rule, State, Summary string }
	if err := json.Unmarshal([]byte(m.Payload), &a); err != nil {
		t.Fatal(err)
	}
	if a.Severity != "critical" || a.Source != "system" || a.State != "firing" {
		t.Errorf("state_lost alert = %+v", a)
	}
	for _, want := range []string{db, "queued alerts", "pause", "counters", "history", db + ".corrupt-"} {
		if !strings.Contains(a.Summary, want) {
			t.Errorf("state_lost summary lacks %q: %s", want, a.Summary)
		}
	}
	if got := store.CorruptFiles(db); len(got) != 1 {
		t.Errorf("moved-aside files = %v, want one", got)
	}
	rec.Wait(topicAlert, 10*time.Second, func(m mosquittotest.Message) bool { return strings.Contains(m.Payload, `"rule":"always"`) })
}

// TestReadOnlyCommandsWriteNothing: status and check --dry-run leave an
// existing state file byte-identical and create nothing on a fresh machine.
func TestReadOnlyCommandsWriteNothing(t *testing.T) {
	dir := t.TempDir()
	cfg := writeConfig(t, dir, alwaysFires)
	state := filepath.Join(dir, "state")
	for _, args := range [][]string{{"status"}, {"status", "--json"}, {"check", "--dry-run"}} {
		out, errOut, code := runVigil(t, append([]string{"-c", cfg}, args...)...)
		if code != 0 {
			t.Fatalf("%v on a fresh machine: exit %d\n%s%s", args, code, out, errOut)
		}
		if _, err := os.Stat(state); err == nil {
			t.Fatalf("%v on a fresh machine created %s", args, state)
		}
	}
	// A real file, with a firing rule in it.
	d := startDaemon(t, cfg)
	d.waitLog(t, regexp.MustCompile(`msg=rule rule=always event=firing`), 10*time.Second)
	d.cmd.Process.Signal(syscall.SIGTERM)
	<-d.done
	db := filepath.Join(state, "vigil.db")
	before := fileSum(t, db)
	for _, args := range [][]string{{"status"}, {"check", "--dry-run"}, {"check", "--dry-run", "--json"}} {
		out, errOut, code := runVigil(t, append([]string{"-c", cfg}, args...)...)
		if code != 0 {
			t.Fatalf("%v: exit %d\n%s%s", args, code, out, errOut)
		}
		if fileSum(t, db) != before {
			t.Fatalf("%v changed the state file", args)
		}
	}
}
