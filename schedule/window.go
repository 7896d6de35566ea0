package schedule

import (
	"fmt"
	"strings"
	"time"
)

// Window is a daily span of the clock face in the device's zone, from Start
// up to End (offsets from local midnight); End before Start wraps midnight.
// heartbeat.active_hours and telegram.quiet_hours are windows. They read
// the clock face, so "07:00" stays 07:00 across DST changes.
type Window struct {
	Start, End time.Duration
}

// Contains reports whether the clock face of t in loc lies in the window.
func (w Window) Contains(t time.Time, loc *time.Location) bool {
	lt := t.In(loc)
	tod := time.Duration(lt.Hour())*time.Hour + time.Duration(lt.Minute())*time.Minute +
		time.Duration(lt.Second())*time.Second
	if w.Start <= w.End {
		return tod >= w.Start && tod < w.End
	}
	return tod >= w.Start || tod < w.End
}

// EndAfter returns the first instant after t at which the clock face in loc
// reads End: when a window that holds t is over.
func (w Window) EndAfter(t time.Time, loc *time.Location) time.Time {
	lt := t.In(loc)
	h, m := int(w.End/time.Hour), int(w.End%time.Hour/time.Minute)
	for d := range 3 {
		if e := time.Date(lt.Year(), lt.Month(), lt.Day()+d, h, m, 0, 0, loc); e.After(t) {
			return e
		}
	}
	return t.Add(24 * time.Hour) // unreachable: End recurs every day
}

// String returns "HH:MM-HH:MM".
func (w Window) String() string {
	f := func(d time.Duration) string {
		return fmt.Sprintf("%02d:%02d", int(d/time.Hour), int(d%time.Hour/time.Minute))
	}
	return f(w.Start) + "-" + f(w.End)
}

// ParseWindow parses "HH:MM-HH:MM" (24h clock; the end may be "24:00").
func ParseWindow(s string) (*Window, error) {
	start, end, ok := strings.Cut(s, "-")
	if !ok {
		return nil, fmt.Errorf(`must be "HH:MM-HH:MM" (got %q)`, s)
	}
	a, okA := parseClock(strings.TrimSpace(start))
	b, okB := windowEnd(strings.TrimSpace(end))
	if !okA || !okB {
		return nil, fmt.Errorf(`must be "HH:MM-HH:MM" on a 24-hour clock (got %q)`, s)
	}
	if a == b {
		return nil, fmt.Errorf("start and end must differ (got %q)", s)
	}
	return &Window{Start: a, End: b}, nil
}

// windowEnd reads a window's end: a time of day, or "24:00" for midnight
// at the end of the day.
func windowEnd(s string) (time.Duration, bool) {
	if s == "24:00" {
		return 24 * time.Hour, true
	}
	return parseClock(s)
}
