package heartbeat

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/vigil-iot/vigil/alert"
)

// TestStatusShowsHeldAlerts: what Telegram holds for its digest (quiet
// hours, max_per_hour) is in the status, with when the digest goes out and
// why, in the device's zone; nothing held, no Held.
func TestStatusShowsHeldAlerts(t *testing.T) {
	loc, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, func(c *Config) { c.Location = loc })
	if st, err := h.e.Status(context.Background()); err != nil || st.Held != nil {
		t.Fatalf("Status() with nothing held: Held = %+v, %v; want nil", st.Held, err)
	}
	due := time.Date(2026, 1, 11, 6, 0, 0, 0, time.UTC)
	for i, sum := range []string{"air at 36 °C", "air at 37 °C"} {
		a := alert.Alert{ID: "dev-" + sum, Device: "test-dev", Time: time.Date(2026, 1, 10, 22, 30+i, 0, 0, time.UTC),
			Severity: alert.Warning, Source: alert.SourceRule, Rule: "too_hot", State: alert.StateFiring, Summary: sum}
		if err := h.db.HoldTelegram(a, due, "quiet hours end"); err != nil {
			t.Fatal(err)
		}
	}
	st, err := h.e.Status(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if st.Held == nil || st.Held.Transport != "telegram" || len(st.Held.Alerts) != 2 || st.Held.Why != "quiet hours end" ||
		!st.Held.Due.Equal(due) || st.Held.Due.Location() != loc || st.Held.Alerts[0].Time.Location() != loc {
		t.Fatalf("Status().Held = %+v, want 2 telegram alerts due %v in %v", st.Held, due, loc)
	}
	got := strings.Join(st.Held.Lines(), "\n")
	want := "telegram 2 alerts, one digest at 2026-01-11 07:00:00 +01:00 (quiet hours end)\n" +
		"  2026-01-10 23:30:00 +01:00  warning  too_hot: air at 36 °C\n" +
		"  2026-01-10 23:31:00 +01:00  warning  too_hot: air at 37 °C"
	if got != want {
		t.Errorf("Held.Lines() =\n%s\nwant\n%s", got, want)
	}
}

// TestHeldLinesSayWhatWasDropped: `vigil status` says how many held alerts
// the full digest dropped, by kind (issue 28, finding 2).
func TestHeldLinesSayWhatWasDropped(t *testing.T) {
	h := &Held{Transport: "telegram", Alerts: []alert.Alert{{Severity: alert.Warning, Source: alert.SourceLLM, State: alert.StateFiring, Summary: "91 %\nfiring:   none"}},
		Dropped: 206, DroppedBy: alert.Dropped{Warning: 1, Notices: 205}}
	got := h.Lines()
	if want := "telegram 1 alert, one digest; 206 dropped (1 warning, 205 notices)"; got[0] != want {
		t.Errorf("Held.Lines()[0] = %q, want %q", got[0], want)
	}
	// A summary is one line: its line breaks are shown escaped.
	if want := `  0001-01-01 00:00:00 +00:00  warning  llm: 91 %\nfiring:   none`; len(got) != 2 || got[1] != want {
		t.Errorf("Held.Lines() = %q, want the alert as %q", got, want)
	}
}
