package store

import (
	"encoding/json"
	"fmt"
	"time"
)

// MaxNotes is how many notes the notes ring keeps; the oldest is dropped
// when a new one arrives.
const MaxNotes = 16

// Note is one thing the model asked to remember across heartbeats (the
// remember tool). Text is already checked and redacted by its writer.
type Note struct {
	Time time.Time `json:"time"`
	Text string    `json:"text"`
}

// AddNote appends n to the notes ring in one write transaction, dropping
// the oldest notes beyond MaxNotes.
func (db *DB) AddNote(n Note) error {
	raw, err := json.Marshal(n)
	if err != nil {
		return fmt.Errorf("encode note: %w", err)
	}
	return db.Update(func(tx *Tx) error {
		b, err := tx.wbucket(bucketNotes)
		if err != nil {
			return err
		}
		if _, err := appendSeq(b, raw); err != nil {
			return fmt.Errorf("append note: %w", err)
		}
		if _, err := trimRing(b, MaxNotes); err != nil {
			return fmt.Errorf("trim notes: %w", err)
		}
		return nil
	})
}

// Notes returns the stored notes, oldest first. A file that never had
// notes (or was opened read-only before the notes ring existed) has none.
func (db *DB) Notes() ([]Note, error) {
	var out []Note
	err := db.View(func(tx *Tx) error {
		b := tx.bucket(bucketNotes)
		if b == nil {
			return nil
		}
		return b.ForEach(func(k, v []byte) error {
			var n Note
			if err := json.Unmarshal(v, &n); err != nil {
				return fmt.Errorf("decode note %x: %w", k, err)
			}
			out = append(out, n)
			return nil
		})
	})
	if err != nil {
		return nil, fmt.Errorf("read notes: %w", err)
	}
	return out, nil
}

// ClearNotes deletes every note in one write transaction and returns how
// many there were.
func (db *DB) ClearNotes() (int, error) {
	var n int
	err := db.Update(func(tx *Tx) error {
		b, err := tx.wbucket(bucketNotes)
		if err != nil {
			return err
		}
		n, err = dropThrough(b, b.Sequence())
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("clear notes: %w", err)
	}
	return n, nil
}
