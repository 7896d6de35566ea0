package manage

import (
	"testing"
	"time"

	"github.com/vigil-iot/vigil/store"
)

func TestAge(t *testing.T) {
	t0 := time.Date(2026, 3, 14, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		d    time.Duration
		want string
	}{
		{-time.Second, "0s"}, {40 * time.Second, "40s"}, {12*time.Minute + 59*time.Second, "12m"},
		{2*time.Hour + 5*time.Minute, "2h"}, {47 * time.Hour, "47h"}, {73 * time.Hour, "3d"},
	}
	for _, tt := range tests {
		if got := Age(tt.d); got != tt.want {
			t.Errorf("Age(%v) = %q, want %q", tt.d, got, tt.want)
		}
	}
	rt := Runtime{Notes: []store.Note{
		{Time: t0.Add(-2 * time.Hour), Text: "<script>alert(1)</script>"},
		{Time: t0.Add(-26 * time.Hour), Text: "door & window \"open\""},
	}}
	if got := rt.NotesLine(t0); got != "2 (newest 2h ago)" {
		t.Errorf("NotesLine = %q, want %q", got, "2 (newest 2h ago)")
	}
	if got := (Runtime{}).NotesLine(t0); got != "none" {
		t.Errorf("NotesLine of none = %q", got)
	}
}
