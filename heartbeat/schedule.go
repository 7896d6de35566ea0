package heartbeat

import (
	"hash/fnv"
	"time"
)

// Window is a daily window of local time; End < Start wraps midnight.
type Window struct {
	Start, End time.Duration // offsets from local midnight
}

// Contains reports whether the local time of day of t (in loc) lies in the
// window. It uses the wall-clock fields in loc, so "07:00" stays 07:00 across
// DST changes.
func (w Window) Contains(t time.Time, loc *time.Location) bool {
	lt := t.In(loc)
	tod := time.Duration(lt.Hour())*time.Hour + time.Duration(lt.Minute())*time.Minute +
		time.Duration(lt.Second())*time.Second
	if w.Start <= w.End {
		return tod >= w.Start && tod < w.End
	}
	return tod >= w.Start || tod < w.End
}

// Phase returns the deterministic offset of a device's heartbeat within its
// interval: a hash of the id mapped onto [0, interval/10), so a fleet
// switched on together spreads its LLM calls.
func Phase(id string, interval time.Duration) time.Duration {
	span := interval / 10
	if span <= 0 {
		return 0
	}
	h := fnv.New64a()
	h.Write([]byte(id))
	return time.Duration(h.Sum64() % uint64(span))
}

// nextTick returns the first tick of the schedule (first, first+interval, ...)
// strictly after now. A schedule that fell behind (downtime, suspend, a long
// run) is not replayed: it skips to the next future tick, back on phase.
func nextTick(prev, now time.Time, interval time.Duration) time.Time {
	next := prev.Add(interval)
	if !next.After(now) {
		missed := now.Sub(next)/interval + 1
		next = next.Add(missed * interval)
	}
	return next
}

// Plausible reports whether a wall-clock reading can be trusted: a board
// without an RTC boots in 1970 (or at its last fake-hwclock save), so any time
// before the binary was built means the clock is not yet synced.
func Plausible(wall, buildTime time.Time) bool {
	return !wall.Before(buildTime)
}
