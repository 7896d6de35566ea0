package fleet

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/vigil-iot/vigil/internal/termtext"
)

// Snapshot is the fleet at one instant: the --json form of the view, and
// what the table shows. Summary counts every device; Devices are the ones
// Filter shows, in the order of Compare.
type Snapshot struct {
	Time    time.Time `json:"time"`
	Summary Summary   `json:"summary"`
	// Versions counts the devices (all of them) per version, the most
	// common first.
	Versions []VersionCount `json:"versions"`
	Filter   *Filter        `json:"filter,omitempty"` // nil: every device
	Devices  []Device       `json:"devices"`
}

// NewSnapshot is the snapshot at now of all (the view's Devices), showing
// the devices f matches.
func NewSnapshot(now time.Time, all []Device, f Filter) Snapshot {
	s := Snapshot{Time: now.UTC(), Summary: Summarize(all), Devices: []Device{}}
	for _, v := range Versions(all) {
		s.Versions = append(s.Versions, VersionCount{v.Version, v.Count})
	}
	if f.Any() {
		s.Filter = &f
	}
	for _, d := range all {
		if f.Match(d) {
			s.Devices = append(s.Devices, d)
		}
	}
	return s
}

// WriteJSON writes the snapshot as one indented JSON document.
func (s Snapshot) WriteJSON(w io.Writer) error {
	if s.Devices == nil {
		s.Devices = []Device{}
	}
	// What devices sent stays exact, but no control character is raw.
	if err := termtext.WriteJSON(w, s); err != nil {
		return fmt.Errorf("write fleet json: %w", err)
	}
	return nil
}

// Width is the widest line WriteTable writes: an 80-column terminal.
const Width = 80

// The table's columns, at most this wide (in characters); FIRING, the
// last, gets what is left of Width. An id longer than idWidth is cut
// with an ellipsis: --json has it whole, as it has each device's board,
// version, heartbeat reason and last alert, which the table leaves out.
const (
	idWidth    = 24
	sinceWidth = 8  // "59m ago", "100d ago"
	beatWidth  = 16 // "skipped 100d ago"
	tagsWidth  = 14 // "north,tomatoes"
	colGap     = 2
)

var tableHeader = []string{"DEVICE", "STATE", "SINCE", "HEARTBEAT", "FIRING"}

// withTags is row with the tags cell before the last (FIRING) when on.
func withTags(row []string, on bool, cell string) []string {
	if !on {
		return row
	}
	return slices.Insert(slices.Clone(row), len(row)-1, cmp.Or(cell, "-"))
}

// ackMark follows the name of an acknowledged problem in FIRING.
const ackMark = "✓"

// WriteTable writes the snapshot for a person: a summary line (the whole
// fleet), a line naming the filter when one is set, then one line per
// device shown. No line is wider than Width.
func (s Snapshot) WriteTable(w io.Writer) error {
	var b strings.Builder
	b.WriteString(s.summaryLine())
	if s.Filter != nil {
		if len(s.Devices) == 0 {
			fmt.Fprintf(&b, "no device is %s\n", s.Filter)
		} else {
			fmt.Fprintf(&b, "%d shown: %s\n", len(s.Devices), s.Filter)
		}
	}
	if len(s.Devices) > 0 || s.Filter == nil {
		// TAGS only when a device shown has one.
		tags := slices.ContainsFunc(s.Devices, func(d Device) bool { return len(d.Tags) > 0 })
		rows := [][]string{withTags(tableHeader, tags, "TAGS")}
		for _, d := range s.Devices {
			rows = append(rows, withTags(s.row(d), tags, clip(termtext.Line(strings.Join(d.Tags, ",")), tagsWidth)))
		}
		writeColumns(&b, rows)
	}
	if _, err := io.WriteString(w, b.String()); err != nil {
		return fmt.Errorf("write fleet table: %w", err)
	}
	return nil
}

// summaryLine is "1000 devices: 990 online, 5 offline, 3 stale, 2 firing"
// (" (1 acknowledged)" when every problem of some firing device was
// acknowledged, ", 1 unknown" and ", 1 missing" when there is one) and the
// time, when it fits, with a newline; then, when the fleet runs more than
// one version, a line naming them ("3 versions: 41 on v1.4.2, 2 on
// v1.4.1, 1 on v1.3.0"), folded to Width.
func (s Snapshot) summaryLine() string {
	c := s.Summary
	line := fmt.Sprintf("%d devices: %d online, %d offline, %d stale, %d firing", c.Devices, c.Online, c.Offline, c.Stale, c.Firing)
	if c.Acked > 0 {
		line += fmt.Sprintf(" (%d acknowledged)", c.Acked)
	}
	if c.Unknown > 0 {
		line += fmt.Sprintf(", %d unknown", c.Unknown)
	}
	if c.Missing > 0 {
		line += fmt.Sprintf(", %d missing", c.Missing)
	}
	if at := "  " + s.Time.UTC().Format("15:04:05Z"); len(line)+len(at) <= Width {
		line += at
	}
	line += "\n"
	if skew := skewLine(s.Versions); skew != "" {
		line += termtext.Wrap(skew, Width, "  ") + "\n"
	}
	return line
}

func (s Snapshot) row(d Device) []string {
	beat := "-"
	if h := d.Heartbeat; h != nil {
		beat = h.Outcome + " " + ago(time.Duration(h.Age))
	}
	firing := "-"
	if len(d.Firing) > 0 {
		worst := d.Firing[0].Severity
		names := make([]string, len(d.Firing))
		for i, f := range d.Firing {
			worst = max(worst, f.Severity)
			names[i] = f.Rule
			if names[i] == "" {
				names[i] = f.Source
			}
			if f.AckedBy != "" {
				names[i] += ackMark
			}
		}
		firing = worst.String() + " " + strings.Join(names, ",")
	}
	since := "-"
	if !d.Since.IsZero() {
		since = ago(s.Time.Sub(d.Since))
	}
	if d.State == Missing && len(d.Firing) == 0 {
		// What it last said about its problems is not known here.
		firing = "last seen " + since
		if d.LastSeen.IsZero() {
			firing = "last seen: not known"
		}
	}
	// What the devices sent (the id in their topic, rule names, outcomes)
	// is shown with control characters escaped: never raw on a terminal.
	return []string{clip(termtext.Line(d.ID), idWidth), termtext.Line(d.State), clip(since, sinceWidth),
		clip(termtext.Line(beat), beatWidth), termtext.Line(firing)}
}

// writeColumns pads every column but the last to its widest cell and cuts
// the last to what is left of Width.
func writeColumns(b *strings.Builder, rows [][]string) {
	n := len(rows[0])
	widths := make([]int, n)
	for _, r := range rows {
		for i, cell := range r[:n-1] {
			widths[i] = max(widths[i], utf8.RuneCountInString(cell))
		}
	}
	used := 0
	for _, w := range widths[:n-1] {
		used += w + colGap
	}
	last := Width - used
	for _, r := range rows {
		for i, cell := range r[:n-1] {
			b.WriteString(cell)
			b.WriteString(strings.Repeat(" ", widths[i]-utf8.RuneCountInString(cell)+colGap))
		}
		b.WriteString(clip(r[n-1], last))
		b.WriteByte('\n')
	}
}

// ago is a short age: 42s ago, 5m ago, 3h ago, 2d ago.
func ago(d time.Duration) string {
	switch {
	case d < 0:
		return "now"
	case d < time.Minute:
		return fmt.Sprintf("%ds ago", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%dm ago", int(d.Minutes()))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh ago", int(d.Hours()))
	}
	return fmt.Sprintf("%dd ago", int(d.Hours()/24))
}

// clip folds white space and cuts s to n characters, the last an ellipsis.
func clip(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}
