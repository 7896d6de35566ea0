package status

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/vigil-iot/vigil/heartbeat"
)

func TestStatusClockWord(t *testing.T) {
	for _, c := range []struct {
		plausible, synced bool
		want              string
	}{
		{true, true, "clock:    2026-05-01 12:00:00 +00:00, synced\n"},
		{true, false, "clock:    2026-05-01 12:00:00 +00:00, plausible (not synchronised by NTP as far as the kernel knows)\n"},
		{false, false, "clock:    2026-05-01 12:00:00 +00:00, NOT plausible (earlier than the build date)\n"},
		{false, true, "clock:    2026-05-01 12:00:00 +00:00, NOT plausible (earlier than the build date)\n"},
	} {
		var b bytes.Buffer
		WriteStatus(&b, View{Status: heartbeat.Status{Now: time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC), ClockPlausible: c.plausible}}, true, c.synced)
		if !strings.Contains(b.String(), c.want) {
			t.Errorf("plausible=%v synced=%v: status\n%s\nwant the line %q", c.plausible, c.synced, b.String(), c.want)
		}
	}
}

// The accepted-commands list shows its times in the device zone, like
// every other time in status (they are kept in UTC).
func TestStatusCommandsInDeviceZone(t *testing.T) {
	berlin, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	WriteStatus(&b, View{Status: heartbeat.Status{
		Now:      time.Date(2026, 11, 26, 16, 5, 0, 0, berlin),
		Commands: []heartbeat.Command{{Time: time.Date(2026, 11, 26, 15, 2, 29, 0, time.UTC), Source: "socket", Command: "pause 30m0s"}},
	}}, true, false)
	if want := "2026-11-26 16:02:29 +01:00  pause 30m0s  socket"; !strings.Contains(b.String(), want) {
		t.Errorf("status does not list the command as %q:\n%s", want, b.String())
	}
}
