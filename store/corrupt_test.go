package store

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/vigil-iot/vigil/alert"
)

// populated returns the path of a closed state file with 20 rounds of runs,
// history and alerts in it, and the page number of the run ring's root.
func populated(t *testing.T) (path string, runsRoot, pageSize int64) {
	t.Helper()
	db := openTemp(t, Options{})
	for i := range 20 {
		update(t, db, func(tx *Tx) error { return churn(tx, i) })
	}
	if err := db.View(func(tx *Tx) error {
		runsRoot = int64(tx.tx.Bucket(bucketRuns).Root())
		pageSize = int64(tx.tx.DB().Info().PageSize)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if runsRoot == 0 {
		t.Fatal("run ring is inline; grow it for this test")
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	return db.Path(), runsRoot, pageSize
}

func writeAt(t *testing.T, path string, b []byte, off int64) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt(b, off); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

func sum(t *testing.T, path string) [32]byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return sha256.Sum256(b)
}

func TestOpenCorrupt(t *testing.T) {
	tests := []struct {
		name   string
		damage func(t *testing.T, path string, runsRoot, pageSize int64)
	}{
		{"page flags zeroed", func(t *testing.T, path string, root, ps int64) {
			writeAt(t, path, []byte{0, 0}, root*ps+8) // neither branch nor leaf
		}},
		{"page overwritten", func(t *testing.T, path string, root, ps int64) {
			writeAt(t, path, bytes.Repeat([]byte{0xA5}, int(ps)), root*ps)
		}},
		{"both meta pages zeroed", func(t *testing.T, path string, root, ps int64) {
			writeAt(t, path, make([]byte, 2*ps), 0)
		}},
		{"truncated", func(t *testing.T, path string, root, ps int64) {
			// Cut through the run ring's root: half the file is not
			// always past the last page in use.
			if err := os.Truncate(path, root*ps+ps/2); err != nil {
				t.Fatal(err)
			}
		}},
		{"garbage", func(t *testing.T, path string, root, ps int64) {
			if err := os.WriteFile(path, bytes.Repeat([]byte("not a database "), 2000), 0o600); err != nil {
				t.Fatal(err)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path, root, ps := populated(t)
			tt.damage(t, path, root, ps)
			before := sum(t, path)

			_, err := Open(path, Options{ReadOnly: true})
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("read-only Open = %v, want ErrCorrupt", err)
			}
			if !strings.Contains(err.Error(), path) {
				t.Errorf("read-only Open = %q, does not name the file", err)
			}
			_, err = Open(path, Options{})
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("Open without Reset = %v, want ErrCorrupt", err)
			}
			if sum(t, path) != before {
				t.Fatal("Open without Reset changed the file")
			}

			now := time.Date(2026, 11, 26, 11, 43, 0, 0, time.UTC)
			db, err := Open(path, Options{Reset: true, Now: func() time.Time { return now }})
			if err != nil {
				t.Fatalf("Open with Reset: %v", err)
			}
			defer db.Close()
			lost, ok := db.TakeLost()
			if !ok || !lost.AtOpen {
				t.Fatalf("TakeLost() = %+v, %v; want a reset at open", lost, ok)
			}
			if want := path + ".corrupt-20261126T114300Z"; lost.MovedTo != want {
				t.Errorf("MovedTo = %q, want %q", lost.MovedTo, want)
			}
			if sum(t, lost.MovedTo) != before {
				t.Error("the moved-aside file is not the damaged file")
			}
			if _, again := db.TakeLost(); again {
				t.Error("TakeLost reported the reset twice")
			}
			update(t, db, func(tx *Tx) error { return churn(tx, 0) })
			if err := db.Check(); err != nil {
				t.Errorf("fresh file: Check() = %v", err)
			}
		})
	}
}

func TestKeepNewestCorrupt(t *testing.T) {
	path := filepath.Join(t.TempDir(), "vigil.db")
	now := time.Date(2026, 11, 26, 11, 0, 0, 0, time.UTC)
	var moved []string
	for i := range 5 {
		if err := os.WriteFile(path, []byte(fmt.Sprintf("garbage %d", i)), 0o600); err != nil {
			t.Fatal(err)
		}
		at := now.Add(time.Duration(i/2) * time.Hour) // two resets within one second
		db, err := Open(path, Options{Reset: true, Now: func() time.Time { return at }})
		if err != nil {
			t.Fatalf("Open #%d: %v", i, err)
		}
		l, _ := db.TakeLost()
		moved = append(moved, l.MovedTo)
		db.Close()
		os.Remove(path)
	}
	got := CorruptFiles(path)
	if want := moved[2:]; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("CorruptFiles = %q, want the newest three %q", got, want)
	}
}

// TestResetWhileOpen damages a page under an open file: the transaction that
// meets it fails with ErrCorrupt, the file is replaced, and the next one works.
func TestResetWhileOpen(t *testing.T) {
	path, root, ps := populated(t)
	db, err := Open(path, Options{Reset: true, Now: time.Now})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, ok := db.TakeLost(); ok {
		t.Fatal("a sound file was reset")
	}
	var last uint64
	view(t, db, func(tx *Tx) error {
		p, err := tx.Pending("mqtt", 0)
		if len(p) > 0 {
			last = p[len(p)-1].Seq
		}
		return err
	})
	writeAt(t, path, bytes.Repeat([]byte{0x5A}, int(ps)), root*ps)

	err = db.View(func(tx *Tx) error { _, err := tx.Runs(100); return err })
	if !errors.Is(err, ErrCorrupt) {
		t.Fatalf("View over a damaged page = %v, want ErrCorrupt", err)
	}
	lost, ok := db.TakeLost()
	if !ok || lost.AtOpen || lost.MovedTo == "" {
		t.Fatalf("TakeLost() = %+v, %v; want a reset while running", lost, ok)
	}
	var seq uint64
	update(t, db, func(tx *Tx) error {
		var err error
		seq, _, err = tx.Enqueue(alert.Alert{ID: "state-lost", Severity: alert.Critical, Source: alert.SourceSystem})
		return err
	})
	if seq <= last {
		t.Fatalf("first seq after reset = %d, want above the old file's %d", seq, last)
	}
	// A transport that acknowledges an entry read from the old file must not
	// acknowledge the new one.
	update(t, db, func(tx *Tx) error { return tx.Ack("mqtt", last, []string{"mqtt"}) })
	view(t, db, func(tx *Tx) error {
		p, err := tx.Pending("mqtt", 0)
		if len(p) != 1 || p[0].Alert.ID != "state-lost" {
			t.Errorf("Pending after a stale ack = %+v, want the state-lost alert", p)
		}
		return err
	})
}

// TestGuardFault reads past the end of a truncated file's mapping: the memory
// fault is an error, not a crash.
func TestGuardFault(t *testing.T) {
	path, _, ps := populated(t)
	db, err := Open(path, Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := os.Truncate(path, 2*ps); err != nil {
		t.Fatal(err)
	}
	err = db.tx("read", func(b *bolt.DB) error {
		return b.View(func(tx *bolt.Tx) error {
			return tx.Bucket(bucketHistory).ForEach(func(k, v []byte) error { return nil })
		})
	})
	if !errors.Is(err, ErrCorrupt) {
		t.Fatalf("read past the end = %v, want ErrCorrupt", err)
	}
}
