package buildinfo

import (
	"testing"
	"time"
)

// TestStampedWins: what the Makefile stamps is what the binary says.
func TestStampedWins(t *testing.T) {
	if got, want := Time("2026-05-01T10:00:00Z"), time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC); !got.Equal(want) {
		t.Errorf("Time = %v, want %v", got, want)
	}
	if got := Revision("abc123"); got != "abc123" {
		t.Errorf("Revision = %q, want abc123", got)
	}
	if got := Time("not a time"); got.Before(fallbackTime) {
		t.Errorf("Time(bad) = %v, before the fallback %v", got, fallbackTime)
	}
}
