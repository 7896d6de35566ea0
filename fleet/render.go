package fleet

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"
)

// Snapshot is the --json form of the view.
type Snapshot struct {
	Time    time.Time `json:"time"`
	Devices []Device  `json:"devices"`
}

// WriteJSON writes the devices as one indented JSON document.
func WriteJSON(w io.Writer, now time.Time, devs []Device) error {
	if devs == nil {
		devs = []Device{}
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(Snapshot{Time: now.UTC(), Devices: devs}); err != nil {
		return fmt.Errorf("write fleet json: %w", err)
	}
	return nil
}

// summaryWidth bounds the last alert's summary in the table.
const summaryWidth = 48

// WriteTable writes the devices as an aligned table, one line per device,
// with a header and a count line.
func WriteTable(w io.Writer, now time.Time, devs []Device) error {
	counts := map[string]int{}
	for _, d := range devs {
		counts[d.State]++
	}
	fmt.Fprintf(w, "%d devices: %d online, %d stale, %d offline  (%s)\n", len(devs), counts[Online], counts[Stale], counts[Offline],
		now.UTC().Format("2006-01-02 15:04:05Z"))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "DEVICE\tSTATE\tSINCE\tHEARTBEAT\tFIRING\tLAST ALERT\tBOARD\tVERSION")
	for _, d := range devs {
		hb := "-"
		if h := d.Heartbeat; h != nil {
			hb = h.Outcome
			if h.Reason != "" {
				hb += " (" + h.Reason + ")"
			}
			hb += " " + ago(time.Duration(h.Age))
		}
		firing := "-"
		if len(d.Firing) > 0 {
			names := make([]string, len(d.Firing))
			for i, f := range d.Firing {
				names[i] = f.Rule
				if names[i] == "" {
					names[i] = f.Source
				}
			}
			firing = strings.Join(names, ",")
		}
		last := "-"
		if a := d.LastAlert; a != nil {
			last = a.Severity.String() + " " + a.State + ": " + clip(a.Summary, summaryWidth)
		}
		since := "-"
		if !d.Since.IsZero() {
			since = ago(now.Sub(d.Since))
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", d.ID, d.State, since, hb, firing, last, or(d.Board), or(d.Version))
	}
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("write fleet table: %w", err)
	}
	return nil
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

func clip(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

func or(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
