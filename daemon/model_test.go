package daemon

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vigil-iot/vigil/redact"
	"github.com/vigil-iot/vigil/store"
)

// TestModelSelf checks the notes the model keeps go to the state file
// redacted, and that setting the interval answers "not available" until
// the settings overlay provides it.
func TestModelSelf(t *testing.T) {
	db, err := store.Open(filepath.Join(t.TempDir(), "vigil.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	now := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	s := &modelSelf{db: db, now: func() time.Time { return now }, red: redact.New("hunter2-mqtt", "sk-the-llm-key-000")}
	if _, err := s.Remember(context.Background(), "broker login hunter2-mqtt; auth Bearer abcdefghijkl0123"); err != nil {
		t.Fatalf("Remember: %v", err)
	}
	notes, err := db.Notes()
	if err != nil || len(notes) != 1 {
		t.Fatalf("Notes() = %v, %v, want one", notes, err)
	}
	if want := "broker login [redacted]; auth Bearer [redacted]"; notes[0].Text != want || !notes[0].Time.Equal(now) {
		t.Errorf("stored note = %+v, want %q at %v", notes[0], want, now)
	}
	if _, err := s.SetInterval(context.Background(), 15*time.Minute); err == nil || !strings.Contains(err.Error(), "not available") {
		t.Errorf("SetInterval without the overlay = %v, want not available", err)
	}
}
