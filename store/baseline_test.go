package store

import (
	"bytes"
	"testing"
)

// TestBaselinesSurviveReopen: the baselines blob is stored whole, read back
// after a reopen and by a read-only open, and deleted by an empty put.
func TestBaselinesSurviveReopen(t *testing.T) {
	db := openTemp(t, Options{})
	if got, err := db.Baselines(); err != nil || got != nil {
		t.Fatalf("Baselines() on a new file = %v, %v, want nil, nil", got, err)
	}
	blob := bytes.Repeat([]byte{1, 2, 3, 0}, 700)
	if err := db.Update(func(tx *Tx) error { return tx.PutBaselines(blob) }); err != nil {
		t.Fatal(err)
	}
	db = reopen(t, db, Options{})
	got, err := db.Baselines()
	if err != nil || !bytes.Equal(got, blob) {
		t.Fatalf("Baselines() after reopen = %d bytes, %v, want the %d stored", len(got), err, len(blob))
	}
	ro := reopen(t, db, Options{ReadOnly: true})
	if got, err := ro.Baselines(); err != nil || !bytes.Equal(got, blob) {
		t.Fatalf("Baselines() read-only = %d bytes, %v, want the %d stored", len(got), err, len(blob))
	}
	db = reopen(t, ro, Options{})
	if err := db.Update(func(tx *Tx) error { return tx.PutBaselines(nil) }); err != nil {
		t.Fatal(err)
	}
	if got, err := db.Baselines(); err != nil || got != nil {
		t.Fatalf("Baselines() after an empty put = %d bytes, %v, want none", len(got), err)
	}
}
