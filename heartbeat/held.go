package heartbeat

import (
	"fmt"
	"time"

	"github.com/vigil-iot/vigil/alert"
	"github.com/vigil-iot/vigil/internal/termtext"
	"github.com/vigil-iot/vigil/store"
	"github.com/vigil-iot/vigil/transport"
)

// Held is what Telegram holds back for one digest (its quiet hours and
// max_per_hour), and when that goes out. Times are in the device's zone.
type Held struct {
	Transport string        `json:"transport"`
	Alerts    []alert.Alert `json:"alerts"`            // oldest first
	Dropped   int           `json:"dropped,omitempty"` // held alerts dropped: more were held than the state file keeps
	// DroppedBy counts the dropped ones by kind: notices go first, so a
	// flood of notices never pushes out an alert.
	DroppedBy alert.Dropped `json:"dropped_by,omitzero"`
	Due       time.Time     `json:"due,omitzero"`  // when the digest goes out
	Why       string        `json:"why,omitempty"` // why then: "quiet hours end", "max_per_hour frees a slot", ...
}

// heldShown is how many held alerts `vigil status` lists; --json has all.
const heldShown = 10

// heldStatus returns Telegram's held alerts for Status, nil when none.
func heldStatus(h store.TelegramHeld, loc *time.Location) *Held {
	if len(h.Alerts) == 0 {
		return nil
	}
	out := &Held{Transport: "telegram", Alerts: h.Alerts, Dropped: h.Dropped.Total(), DroppedBy: h.Dropped, Why: h.Why}
	if !h.Due.IsZero() {
		out.Due = h.Due.In(loc)
	}
	for i := range out.Alerts {
		out.Alerts[i].Time = out.Alerts[i].Time.In(loc)
	}
	return out
}

// Lines renders the held alerts for `vigil status`: what is held, when it
// goes out, and the first heldShown alerts.
func (h *Held) Lines() []string {
	head := fmt.Sprintf("%s %s, one digest", h.Transport, plural(len(h.Alerts), "alert"))
	if !h.Due.IsZero() {
		head += " at " + h.Due.Format(transport.TimeLayout)
	}
	if h.Why != "" {
		head += " (" + h.Why + ")"
	}
	if h.Dropped > 0 {
		head += fmt.Sprintf("; %d dropped (%s)", h.Dropped, h.DroppedBy)
	}
	lines := []string{head}
	for i, a := range h.Alerts {
		if i == heldShown {
			lines = append(lines, fmt.Sprintf("  … and %d more (vigil status --json lists them)", len(h.Alerts)-heldShown))
			break
		}
		sev := a.Severity.String()
		switch {
		case a.State == alert.StateResolved:
			sev = "resolved"
		case a.IsNotice():
			sev = "notice"
		}
		// One line each: a summary's line breaks cannot forge a line of status.
		lines = append(lines, fmt.Sprintf("  %s  %s  %s: %s", a.Time.Format(transport.TimeLayout), sev, termtext.Line(a.Name()), termtext.Line(a.Summary)))
	}
	return lines
}
