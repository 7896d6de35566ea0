package main

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/vigil-iot/vigil/baseline"
	"github.com/vigil-iot/vigil/store"
)

var reHeartbeat = regexp.MustCompile(`msg=heartbeat `)

// waitHeartbeats waits until the log holds n heartbeat lines; a heartbeat
// is committed, then logged, so the state file then holds its commit.
func (d *child) waitHeartbeats(t *testing.T, n int, timeout time.Duration) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for len(reHeartbeat.FindAllString(d.logText(), -1)) < n {
		if time.Now().After(deadline) {
			t.Fatalf("fewer than %d heartbeats within %s; log:\n%s", n, timeout, d.logText())
		}
		select {
		case <-d.done:
			t.Fatalf("vigil exited while waiting for heartbeat %d; log:\n%s", n, d.logText())
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// storedBaselines copies the state file (the daemon keeps it open and
// locked; between two commits its bytes are those of the last one) and
// returns the baselines it holds.
func storedBaselines(t *testing.T, dbFile string) []byte {
	t.Helper()
	data, err := os.ReadFile(dbFile)
	if err != nil {
		t.Fatal(err)
	}
	cp := filepath.Join(t.TempDir(), "copy.db")
	if err := os.WriteFile(cp, data, 0o600); err != nil {
		t.Fatal(err)
	}
	db, err := store.Open(cp, store.Options{Timeout: time.Second, ReadOnly: true})
	if err != nil {
		t.Fatalf("open a copy of the state file: %v", err)
	}
	defer db.Close()
	b, err := db.Baselines()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func decodeBaselines(t *testing.T, data []byte) *baseline.Set {
	t.Helper()
	set := baseline.New(time.UTC, nil)
	if err := set.UnmarshalBinary(data); err != nil {
		t.Fatalf("decode the stored baselines: %v", err)
	}
	return set
}

// TestBaselineSIGKILL: a real `vigil run` on the sim board (1 m heartbeats,
// 1 s samples) writes its baselines with each heartbeat's commit; a SIGKILL
// half an interval after a heartbeat loses only what was learned since
// that commit (at most one interval of updates: the state file then holds
// exactly what it held at the last heartbeat), and the restarted daemon
// carries on from it rather than starting over.
func TestBaselineSIGKILL(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cfg := writeConfig(t, dir, `
[[sensor]]
name = "air"
driver = "bme280"
sim = { every = "0s" }
`)
	dbFile := filepath.Join(dir, "state", "vigil.db")
	const key = "air.temperature"

	d := startDaemon(t, cfg)
	defer d.logIfFailed(t)
	d.waitHeartbeats(t, 1, 90*time.Second)
	first := storedBaselines(t, dbFile)
	d.waitHeartbeats(t, 2, 90*time.Second)
	last := storedBaselines(t, dbFile) // what it had at the last heartbeat commit
	lastAt := time.Now()
	time.Sleep(30 * time.Second) // mid-interval: samples and baseline updates go on in memory
	d.kill()
	since := time.Since(lastAt)
	if since >= time.Minute {
		t.Fatalf("the kill came %s after the last heartbeat, more than the 1m interval: the test proves nothing", since)
	}
	killed := storedBaselines(t, dbFile)

	if len(first) == 0 || len(last) == 0 {
		t.Fatalf("stored baselines after heartbeats 1 and 2: %d and %d bytes, want both written with the heartbeat's commit", len(first), len(last))
	}
	if bytes.Equal(first, last) {
		t.Errorf("the baselines stored by heartbeats 1 and 2 are the same: want each heartbeat to commit the minute's updates")
	}
	if !bytes.Equal(killed, last) {
		t.Errorf("after SIGKILL the state file's baselines (%d B) differ from those of the last heartbeat commit (%d B): want exactly the last commit's", len(killed), len(last))
	}
	set := decodeBaselines(t, killed)
	if !strings.Contains(strings.Join(set.Keys(), " "), key) {
		t.Fatalf("stored baselines hold %v, want %s", set.Keys(), key)
	}
	b0, _ := set.Band(key, time.Now())

	// Restarted, it carries on from the stored baselines: the same series
	// (its warm-up ends when it would have), learning on.
	d = startDaemon(t, cfg)
	defer d.logIfFailed(t)
	d.waitHeartbeats(t, 1, 90*time.Second)
	after := storedBaselines(t, dbFile)
	d.cmd.Process.Signal(syscall.SIGTERM)
	<-d.done
	if strings.Contains(d.logText(), "state_lost") {
		t.Errorf("the restart after SIGKILL reported state_lost:\n%s", d.logText())
	}
	if bytes.Equal(after, killed) {
		t.Errorf("the restarted daemon's first heartbeat stored the same baselines: want it to learn on")
	}
	b1, ok := decodeBaselines(t, after).Band(key, time.Now())
	if !ok || b1.Ready != b0.Ready || !b1.ReadyAt.Equal(b0.ReadyAt) {
		t.Errorf("%s after the restart: ready %v at %v, before the kill ready %v at %v: want the same series carried on, not a new one",
			key, b1.Ready, b1.ReadyAt, b0.Ready, b0.ReadyAt)
	}
	t.Logf("SIGKILL %s after the last heartbeat: baselines %d B as of that commit; after the restart %d B", since.Round(time.Second), len(killed), len(after))
}
