package store

// Structured damage of a real state file with branch pages: cycles, double
// references, counts and overflows beyond the page, meta pages that point
// beyond the file with valid checksums, truncation and swapped pages. Each
// damaged file is opened in a child process with a deadline, so a hang or a
// fatal fault (neither of which recover() can catch) is a failure of this
// test, not of the test binary. The damage itself is internal/damagetest's,
// which the end-to-end tests also aim at the vigil binary.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/vigil-iot/vigil/internal/damagetest"
)

// branchyFile writes a real state file through the store's own API, enough
// that buckets have branch pages, and returns its bytes.
func branchyFile(t testing.TB) []byte {
	t.Helper()
	db := openTemp(t, Options{})
	for i := range 60 {
		update(t, db, func(tx *Tx) error { return churn(tx, i) })
	}
	path := db.Path()
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// childResult is what the child process reports.
type childResult struct {
	ReadOnly string // "ok", "corrupt" or another error
	Lost     bool
	MovedTo  string
	Cause    string
	Err      string // an error of the open with Reset, or of using the file after it
}

const damagedEnv = "VIGIL_STORE_DAMAGED"

// TestDamagedChild is the child process of TestOpenDamaged: it opens the
// file named by $VIGIL_STORE_DAMAGED and prints what happened as JSON.
func TestDamagedChild(t *testing.T) {
	path := os.Getenv(damagedEnv)
	if path == "" {
		t.Skip("child of TestOpenDamaged")
	}
	out, _ := json.Marshal(openDamaged(path))
	fmt.Printf("\nRESULT %s\n", out)
}

// openDamaged opens the file at path read-only, then with Reset, and uses
// it.
func openDamaged(path string) childResult {
	var r childResult
	db, err := Open(path, Options{ReadOnly: true})
	switch {
	case err == nil:
		r.ReadOnly = "ok"
		db.Close()
	case errors.Is(err, ErrCorrupt):
		r.ReadOnly = "corrupt"
	default:
		r.ReadOnly = err.Error()
	}
	db, err = Open(path, Options{Reset: true, Now: func() time.Time { return time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC) }})
	if err == nil {
		var lost Lost
		lost, r.Lost = db.TakeLost()
		r.MovedTo, r.Cause = lost.MovedTo, lost.Cause
		err = db.Update(func(tx *Tx) error { return churn(tx, 99) })
		if err == nil {
			err = db.Check()
		}
		if cerr := db.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		r.Err = err.Error()
	}
	return r
}

// TestOpenDamaged: every structured damage of a real file with branch pages
// is found, read-only and with Reset, in bounded time; with Reset the file
// is moved aside, state_lost is reported, and the fresh file works.
func TestOpenDamaged(t *testing.T) {
	src := branchyFile(t)
	l := damagetest.ReadLayout(t, src)
	t.Logf("page size %d, %d pages, bucket %q has branch root %d (first child %d)", l.PS, l.HWM, l.Bucket, l.Branch, l.Child)
	for _, c := range damagetest.Cases() {
		t.Run(c.Name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "vigil.db")
			if err := os.WriteFile(path, c.Damage(bytes.Clone(src), l), 0o600); err != nil {
				t.Fatal(err)
			}
			r := runDamagedChild(t, path)
			if r.ReadOnly != "corrupt" {
				t.Errorf("read-only Open: %s, want ErrCorrupt", r.ReadOnly)
			}
			if r.Err != "" || !r.Lost || r.MovedTo == "" {
				t.Fatalf("Open with Reset: %+v, want the file moved aside, state lost reported and a working fresh file", r)
			}
			t.Logf("cause: %s", r.Cause)
			if _, err := os.Stat(r.MovedTo); err != nil {
				t.Errorf("moved-aside file: %v", err)
			}
		})
	}
}

// childDeadline is far beyond what an open takes (milliseconds): it only
// turns a hang into a failure.
const childDeadline = 20 * time.Second

func runDamagedChild(t *testing.T, path string) childResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), childDeadline)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestDamagedChild$", "-test.count=1", "-test.timeout=60s")
	cmd.Env = append(os.Environ(), damagedEnv+"="+path)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	if errors.Is(err, syscall.ENOEXEC) {
		// Under qemu-user (make test-qemu) the test binary cannot start
		// another: open in this process, where a hang still fails the
		// test, but a fatal fault ends the binary.
		return openDamagedHere(t, path)
	}
	if ctx.Err() != nil {
		t.Fatalf("opening the damaged file did not finish within %s (killed)", childDeadline)
	}
	_, js, ok := bytes.Cut(out.Bytes(), []byte("\nRESULT "))
	if err != nil || !ok {
		t.Fatalf("child: %v\n%s", err, tail(out.Bytes(), 1500))
	}
	js, _, _ = bytes.Cut(js, []byte("\n"))
	var r childResult
	if err := json.Unmarshal(js, &r); err != nil {
		t.Fatalf("child result %q: %v", js, err)
	}
	return r
}

func openDamagedHere(t *testing.T, path string) childResult {
	t.Helper()
	done := make(chan childResult, 1)
	go func() { done <- openDamaged(path) }()
	select {
	case r := <-done:
		return r
	case <-time.After(childDeadline):
		t.Fatalf("opening the damaged file did not finish within %s", childDeadline)
		return childResult{}
	}
}

func tail(b []byte, n int) []byte {
	if len(b) > n {
		return b[len(b)-n:]
	}
	return b
}
