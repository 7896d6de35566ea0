// Package schedule reads the device's clock face: heartbeat.schedule and
// its run times (a list of times of day, "07:30", or one five-field cron
// expression, "30 7 * * 1-5"), and the daily windows heartbeat.active_hours
// and telegram.quiet_hours (Window), all read on the local clock face of the
// device's time zone.
//
// Policy for the clock face across DST changes, the same for both forms
// (Debian cron does the same for fixed times):
//   - a time that does not exist on a spring-forward day (02:30 in
//     Europe/Berlin on 2026-03-29) runs once, at the first instant after the
//     gap (03:00 local); several times inside one gap run once between them;
//   - a time that occurs twice on a fall-back day (02:30 in Europe/Berlin on
//     2026-10-25) runs once, at its first occurrence. Each clock face
//     runs once, so "*/30 * * * *" has no runs in the repeated hour's
//     second pass; use heartbeat.interval for a steady cadence.
//
// Cron expressions go through github.com/robfig/cron/v3, which on its own
// skips the first case and runs the second twice: it is asked only for the
// next clock face (in UTC, which has no DST), and this package maps faces to
// instants.
package schedule

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/robfig/cron/v3"
)

// Schedule is a parsed heartbeat.schedule. The zero value has no times.
type Schedule struct {
	text  string
	times []time.Duration // sorted offsets from local midnight (list form)
	cron  cron.Schedule   // cron form
}

// maxSkip bounds the faces Next looks at before it gives up: a face that
// maps to an instant not after t (a repeated or skipped hour) is passed
// over, and no schedule has this many in a row.
const maxSkip = 1000

// Parse parses heartbeat.schedule. Errors name the element:
// `schedule[1]: "25:00" is not a time of day (want "HH:MM", 24-hour clock)`.
func Parse(elems []string) (*Schedule, error) {
	if len(elems) == 0 {
		return nil, errors.New("is empty (give times of day like [\"07:30\", \"19:00\"] or one cron expression like [\"30 7 * * 1-5\"])")
	}
	s := &Schedule{text: strings.Join(elems, ", ")}
	isCron := func(v string) bool {
		return strings.ContainsAny(strings.TrimSpace(v), " \t") || strings.ContainsAny(v, "*@=")
	}
	if isCron(elems[0]) {
		if len(elems) > 1 {
			return nil, fmt.Errorf("schedule[0]: a cron expression must be the only element (got %d elements; write times of day, or one cron expression)", len(elems))
		}
		c, err := parseCron(elems[0])
		if err != nil {
			return nil, fmt.Errorf("schedule[0]: %w", err)
		}
		s.cron = c
		return s, nil
	}
	seen := map[time.Duration]int{}
	for i, v := range elems {
		if isCron(v) {
			return nil, fmt.Errorf("schedule[%d]: %q looks like a cron expression: a cron expression must be the only element, not mixed with times of day", i, v)
		}
		d, ok := parseClock(v)
		if !ok {
			return nil, fmt.Errorf("schedule[%d]: %q is not a time of day (want \"HH:MM\", 24-hour clock)", i, v)
		}
		if j, dup := seen[d]; dup {
			return nil, fmt.Errorf("schedule[%d]: %q is listed twice (also schedule[%d])", i, v, j)
		}
		seen[d] = i
		s.times = append(s.times, d)
	}
	slices.Sort(s.times)
	return s, nil
}

// parseClock reads "HH:MM" (two digits each, 00:00 to 23:59).
func parseClock(v string) (time.Duration, bool) {
	if len(v) != 5 || v[2] != ':' {
		return 0, false
	}
	digit := func(b byte) (int, bool) { return int(b - '0'), b >= '0' && b <= '9' }
	h1, ok1 := digit(v[0])
	h2, ok2 := digit(v[1])
	m1, ok3 := digit(v[3])
	m2, ok4 := digit(v[4])
	h, m := h1*10+h2, m1*10+m2
	if !ok1 || !ok2 || !ok3 || !ok4 || h > 23 || m > 59 {
		return 0, false
	}
	return time.Duration(h)*time.Hour + time.Duration(m)*time.Minute, true
}

var cronParser = cron.NewParser(cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow)

func parseCron(v string) (cron.Schedule, error) {
	v = strings.TrimSpace(v)
	if strings.HasPrefix(v, "TZ=") || strings.HasPrefix(v, "CRON_TZ=") {
		return nil, fmt.Errorf("%q: a time zone prefix is not allowed; the schedule runs in device.timezone", v)
	}
	if strings.HasPrefix(v, "@") {
		return nil, fmt.Errorf("%q: descriptors like @daily are not allowed; write five fields (minute hour day-of-month month day-of-week), as in \"30 7 * * 1-5\"", v)
	}
	c, err := cronParser.Parse(v)
	if err != nil {
		return nil, fmt.Errorf("%q is not a cron expression: %w (want five fields: minute hour day-of-month month day-of-week, as in \"30 7 * * 1-5\")", v, err)
	}
	// A valid expression that never matches ("0 0 30 2 *") would leave the
	// heartbeat silent for good.
	if c.Next(time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)).IsZero() {
		return nil, fmt.Errorf("%q never matches a date", v)
	}
	return c, nil
}

// String returns the schedule as written, elements joined by ", ".
func (s *Schedule) String() string { return s.text }

// Next returns the first scheduled instant strictly after t, reading the
// schedule on the clock face of loc; the zero time if there is none.
func (s *Schedule) Next(t time.Time, loc *time.Location) time.Time {
	if loc == nil {
		loc = time.UTC
	}
	f := face(t.In(loc))
	for range maxSkip {
		f = s.nextFace(f)
		if f.IsZero() {
			return time.Time{}
		}
		if at := resolve(f, loc); at.After(t) {
			return at
		}
	}
	return time.Time{}
}

// face is the clock face of a local time as a UTC time with the same fields.
func face(lt time.Time) time.Time {
	return time.Date(lt.Year(), lt.Month(), lt.Day(), lt.Hour(), lt.Minute(), lt.Second(), lt.Nanosecond(), time.UTC)
}

// nextFace returns the first scheduled clock face strictly after f.
func (s *Schedule) nextFace(f time.Time) time.Time {
	if s.cron != nil {
		return s.cron.Next(f)
	}
	if len(s.times) == 0 {
		return time.Time{}
	}
	day := time.Date(f.Year(), f.Month(), f.Day(), 0, 0, 0, 0, time.UTC)
	for _, d := range s.times {
		if c := day.Add(d); c.After(f) {
			return c
		}
	}
	return day.AddDate(0, 0, 1).Add(s.times[0])
}

// resolve maps a clock face in loc to an instant: the earliest instant
// showing that face, or, for a face inside a spring-forward gap, the first
// instant after the gap.
func resolve(f time.Time, loc *time.Location) time.Time {
	// The offsets in force a day either side of the face cover a DST
	// change near it; each gives a candidate instant.
	_, before := f.Add(-26 * time.Hour).In(loc).Zone()
	_, after := f.Add(26 * time.Hour).In(loc).Zone()
	var best time.Time
	for _, off := range []int{before, after} {
		u := f.Add(-time.Duration(off) * time.Second)
		if face(u.In(loc)).Equal(f) && (best.IsZero() || u.Before(best)) {
			best = u
		}
	}
	if !best.IsZero() {
		return best
	}
	if before < after {
		// In the gap: read with the old offset, the face lies after the
		// change, whose instant starts the zone it falls in.
		start, _ := f.Add(-time.Duration(before) * time.Second).In(loc).ZoneBounds()
		if !start.IsZero() {
			return start
		}
	}
	return time.Date(f.Year(), f.Month(), f.Day(), f.Hour(), f.Minute(), f.Second(), f.Nanosecond(), loc)
}

// LongestGap is the longest time between two consecutive runs over a week
// in UTC: what a watcher should allow between heartbeats before it calls
// the device silent (the interval's counterpart for a schedule).
func (s *Schedule) LongestGap() time.Duration {
	t := s.Next(time.Date(2026, 1, 5, 0, 0, 0, 0, time.UTC), time.UTC) // a Monday
	end := t.Add(8 * 24 * time.Hour)
	var gap time.Duration
	for t.Before(end) {
		n := s.Next(t, time.UTC)
		if !n.After(t) {
			break
		}
		gap = max(gap, n.Sub(t))
		t = n
	}
	return gap
}
