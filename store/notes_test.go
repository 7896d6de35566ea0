package store

import (
	"errors"
	"fmt"
	"path/filepath"
	"testing"
	"time"
)

func TestNotesRing(t *testing.T) {
	path := filepath.Join(t.TempDir(), "vigil.db")
	db, err := Open(path, Options{})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	base := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	if got, err := db.Notes(); err != nil || len(got) != 0 {
		t.Fatalf("Notes() on a new file = %v, %v, want none", got, err)
	}
	const written = MaxNotes + 5
	for i := range written {
		if err := db.AddNote(Note{Time: base.Add(time.Duration(i) * time.Minute), Text: fmt.Sprintf("note %d", i)}); err != nil {
			t.Fatalf("AddNote(%d): %v", i, err)
		}
	}
	check := func(db *DB, when string) {
		t.Helper()
		got, err := db.Notes()
		if err != nil {
			t.Fatalf("%s: Notes: %v", when, err)
		}
		if len(got) != MaxNotes {
			t.Fatalf("%s: Notes() holds %d notes, want %d", when, len(got), MaxNotes)
		}
		for i, n := range got {
			want := written - MaxNotes + i // the oldest five were dropped
			if n.Text != fmt.Sprintf("note %d", want) || !n.Time.Equal(base.Add(time.Duration(want)*time.Minute)) {
				t.Errorf("%s: Notes()[%d] = %+v, want note %d", when, i, n, want)
			}
		}
	}
	check(db, "open")
	if err := db.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}

	db, err = Open(path, Options{})
	if err != nil {
		t.Fatalf("reopen: %v", err)
	}
	check(db, "reopened")
	db.Close()

	ro, err := Open(path, Options{ReadOnly: true})
	if err != nil {
		t.Fatalf("read-only open: %v", err)
	}
	check(ro, "read-only")
	if err := ro.AddNote(Note{Time: base, Text: "x"}); !errors.Is(err, ErrReadOnly) {
		t.Errorf("AddNote on a read-only file = %v, want ErrReadOnly", err)
	}
	if _, err := ro.ClearNotes(); !errors.Is(err, ErrReadOnly) {
		t.Errorf("ClearNotes on a read-only file = %v, want ErrReadOnly", err)
	}
	ro.Close()

	db, err = Open(path, Options{})
	if err != nil {
		t.Fatalf("reopen: %v", err)
	}
	defer db.Close()
	if n, err := db.ClearNotes(); err != nil || n != MaxNotes {
		t.Fatalf("ClearNotes() = %d, %v, want %d", n, err, MaxNotes)
	}
	if got, err := db.Notes(); err != nil || len(got) != 0 {
		t.Fatalf("Notes() after ClearNotes = %v, %v, want none", got, err)
	}
	if n, err := db.ClearNotes(); err != nil || n != 0 {
		t.Fatalf("second ClearNotes() = %d, %v, want 0", n, err)
	}
	if err := db.AddNote(Note{Time: base, Text: "after clear"}); err != nil {
		t.Fatalf("AddNote after clear: %v", err)
	}
	if got, _ := db.Notes(); len(got) != 1 || got[0].Text != "after clear" {
		t.Errorf("Notes() after clear and add = %+v, want the one new note", got)
	}
}

// TestNotesOneCommit checks that adding a note, with the ring full, is one
// write transaction.
func TestNotesOneCommit(t *testing.T) {
	db := openTemp(t, Options{})
	for i := range MaxNotes + 1 {
		before := db.Commits()
		if err := db.AddNote(Note{Time: time.Unix(int64(i), 0).UTC(), Text: "n"}); err != nil {
			t.Fatalf("AddNote: %v", err)
		}
		if c := db.Commits() - before; c != 1 {
			t.Fatalf("AddNote %d made %d commits, want 1", i, c)
		}
	}
}
