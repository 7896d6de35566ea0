package main

import (
	"bytes"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/vigil-iot/vigil/alert"
	"github.com/vigil-iot/vigil/device"
	"github.com/vigil-iot/vigil/internal/damagetest"
	"github.com/vigil-iot/vigil/internal/mosquittotest"
	"github.com/vigil-iot/vigil/store"
)

// branchyState writes a state file through the store's own API with
// enough runs, history and alerts that a bucket has a branch page, and
// returns its bytes and the pages internal/damagetest aims at.
func branchyState(t *testing.T) ([]byte, damagetest.Layout) {
	t.Helper()
	db, err := store.Open(filepath.Join(t.TempDir(), "vigil.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	for i := range 60 {
		at := t0.Add(time.Duration(i) * time.Minute)
		err := db.Update(func(tx *store.Tx) error {
			if _, err := tx.AppendRun(store.Run{Start: at, Outcome: "ok", DurationMS: 1200, Tokens: 800,
				ToolCalls: []string{"read_sensor", "heartbeat_respond"}, Reason: "changed"}); err != nil {
				return err
			}
			snaps := make([]device.Snapshot, 10)
			for j := range snaps {
				snaps[j] = device.Snapshot{Time: at.Add(time.Duration(j) * 3 * time.Second),
					Readings: map[string]device.Value{"air.temperature": {Value: 20 + float64(j), Unit: device.Celsius}}}
			}
			if err := tx.AppendHistory(snaps); err != nil {
				return err
			}
			_, _, err := tx.Enqueue(alert.Alert{ID: fmt.Sprintf("a%d", i), Device: "e2e", Time: at, Severity: alert.Warning,
				Source: alert.SourceRule, Rule: "too_hot", State: alert.StateFiring, Summary: "greenhouse at 36 °C"})
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	path := db.Path()
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b, damagetest.ReadLayout(t, b)
}

// damagedConfig writes a config whose state file is damaged.
func damagedConfig(t *testing.T, damaged []byte) (cfg, db string) {
	t.Helper()
	dir := t.TempDir()
	cfg = writeConfig(t, dir, alwaysFires)
	db = filepath.Join(dir, "state", "vigil.db")
	os.MkdirAll(filepath.Dir(db), 0o700)
	if err := os.WriteFile(db, damaged, 0o600); err != nil {
		t.Fatal(err)
	}
	return cfg, db
}

// runBounded runs the binary and fails the test when it has not ended
// within limit.
func runBounded(t *testing.T, limit time.Duration, args ...string) (stderr string, code int) {
	t.Helper()
	cmd := exec.Command(vigilBin, args...)
	cmd.Env = append(os.Environ(), "OPENAI_API_KEY=", "VIGIL_CONFIG=", "NOTIFY_SOCKET=")
	var errb bytes.Buffer
	cmd.Stderr = &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
		return errb.String(), cmd.ProcessState.ExitCode()
	case <-time.After(limit):
		cmd.Process.Kill()
		<-done
		t.Fatalf("vigil %s did not answer within %s (killed)\n%s", strings.Join(args, " "), limit, tail(errb.String(), 800))
		return "", 0
	}
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

// TestDamagedStateAnswers: on every structured damage of internal/
// damagetest (the store's own tests open the same files), among them the
// ones that made vigil spin or crash at 949d7f9, `vigil status --json`
// answers within 5 s (the file is corrupt and left as it is), `vigil run`
// starts within 5 s on a fresh file with the damaged one moved aside, and
// `vigil status` then answers within 5 s.
func TestDamagedStateAnswers(t *testing.T) {
	src, l := branchyState(t)
	t.Logf("state file of %d bytes, page size %d, bucket %q has branch page %d", len(src), l.PS, l.Bucket, l.Branch)
	for _, c := range damagetest.Cases() {
		t.Run(c.Name, func(t *testing.T) {
			cfg, db := damagedConfig(t, c.Damage(bytes.Clone(src), l))
			before := fileSum(t, db)

			errOut, code := runBounded(t, 5*time.Second, "-c", cfg, "status", "--json")
			if code != 1 || !strings.Contains(errOut, "state file is corrupt") || strings.Contains(errOut, "goroutine ") {
				t.Fatalf("status on the damaged file: exit %d\n%s", code, tail(errOut, 800))
			}
			if fileSum(t, db) != before {
				t.Fatal("status changed the damaged file")
			}

			d := startDaemon(t, cfg)
			defer d.logIfFailed(t)
			d.waitLog(t, regexp.MustCompile(`vigil starting`), 5*time.Second)
			if !strings.Contains(d.logText(), "state file was corrupt") {
				t.Errorf("run did not report the damaged file:\n%s", d.logText())
			}
			if got := store.CorruptFiles(db); len(got) != 1 {
				t.Errorf("moved-aside files = %v, want one", got)
			}
			d.cmd.Process.Signal(syscall.SIGTERM)
			<-d.done

			if errOut, code := runBounded(t, 5*time.Second, "-c", cfg, "status"); code != 0 {
				t.Errorf("status after run: exit %d\n%s", code, errOut)
			}
		})
	}
}

// TestStatusAnswersSIGTERM: `vigil status` ends within a second of SIGTERM
// whatever it is doing: waiting on a daemon that accepted the connection
// and never answers, or reading a state file that made it spin.
func TestStatusAnswersSIGTERM(t *testing.T) {
	src, l := branchyState(t)
	t.Run("daemon does not answer", func(t *testing.T) {
		dir := t.TempDir()
		cfg := writeConfig(t, dir, alwaysFires)
		os.MkdirAll(filepath.Join(dir, "state"), 0o700)
		ln, err := net.Listen("unix", filepath.Join(dir, "state", "vigil.sock"))
		if err != nil {
			t.Fatal(err)
		}
		defer ln.Close()
		accepted := make(chan net.Conn, 1)
		go func() {
			c, err := ln.Accept()
			if err == nil {
				accepted <- c // held open, never answered
			}
		}()
		d := startChild(t, nil, "-c", cfg, "status")
		select {
		case c := <-accepted:
			defer c.Close()
		case <-time.After(10 * time.Second):
			t.Fatalf("status never called the socket:\n%s", d.logText())
		}
		time.Sleep(200 * time.Millisecond) // inside the read
		sigtermWithin(t, d, time.Second)
		if code := d.cmd.ProcessState.ExitCode(); code != 1 || !strings.Contains(d.logText(), "vigil: still busy") {
			t.Errorf("status stopped by SIGTERM: exit %d\n%s", code, d.logText())
		}
	})
	c := damagetest.Cases()[0] // a branch element that points at its own page
	t.Run(c.Name, func(t *testing.T) {
		cfg, _ := damagedConfig(t, c.Damage(bytes.Clone(src), l))
		d := startChild(t, nil, "-c", cfg, "status", "--json")
		time.Sleep(300 * time.Millisecond) // at 949d7f9: spinning in the walk
		sigtermWithin(t, d, time.Second)
	})
}

// sigtermWithin sends SIGTERM to d (unless it has ended already) and fails
// when it has not ended within limit.
func sigtermWithin(t *testing.T, d *child, limit time.Duration) {
	t.Helper()
	d.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-d.done:
	case <-time.After(limit):
		t.Fatalf("vigil still running %s after SIGTERM:\n%s", limit, tail(d.logText(), 800))
	}
}

// TestWaitingVerbsAnswerSIGTERM: the verbs that wait on a far side end
// within a second of SIGTERM: vigil init waiting for the person's /start
// (the config it would replace untouched), and vigil fleet do waiting for
// the answer of a device that never gives one.
func TestWaitingVerbsAnswerSIGTERM(t *testing.T) {
	t.Run("init waiting for /start", func(t *testing.T) {
		r := newInitRig(t)
		out := t.TempDir()
		old := []byte("# the config a person wrote\n")
		cfg := filepath.Join(out, "config.toml")
		if err := os.WriteFile(cfg, old, 0o640); err != nil {
			t.Fatal(err)
		}
		before := r.polls()
		args := append(r.plumbing(out), "--yes", "--force", "--telegram-token-file", r.token)
		d := startChild(t, []string{"VIGIL_SIM_I2C=" + initSimI2C}, args...)
		for deadline := time.Now().Add(20 * time.Second); r.polls() <= before; time.Sleep(20 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("vigil init never began to wait for /start:\n%s", d.logText())
			}
		}
		time.Sleep(200 * time.Millisecond) // inside the long poll
		sigtermWithin(t, d, time.Second)
		if got, _ := os.ReadFile(cfg); !bytes.Equal(got, old) {
			t.Errorf("config.toml after a stopped init:\n%s\nwant it untouched", got)
		}
	})
	t.Run("fleet do waiting for answers", func(t *testing.T) {
		b := mosquittotest.Start(t, mosquittotest.Options{})
		dev := mosquittotest.Subscribe(t, b.URL(), "vigil/+/cmd/#")
		dev.Publish("vigil/hush/status", true, "online")
		dev.Publish("vigil/hush/info", true, `{"time":"2026-11-28T00:00:00Z","board":"sim","version":"v1","interval":"30m0s"}`)
		d := startChild(t, nil, "fleet", "do", "check", "--select", "all", "--yes", "--timeout", "1m", "--broker", b.URL())
		dev.Wait("vigil/hush/cmd/check", 30*time.Second, func(mosquittotest.Message) bool { return true })
		time.Sleep(200 * time.Millisecond) // waiting for the answer
		sigtermWithin(t, d, time.Second)
	})
}
