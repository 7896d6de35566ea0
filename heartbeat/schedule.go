// Scheduling policy. Interval ticks run on the monotonic clock: wall-clock
// steps never move them. Scheduled runs (heartbeat.schedule) are times on
// the wall clock in the device's time zone, so they distrust that clock:
//   - no scheduled run while the wall clock is not plausible (before the
//     build time: a board without an RTC booting in 1970). One run is
//     recorded as skipped, reason clock_unsynced, per unsynced spell; once
//     the clock is plausible the first run is the next scheduled time after
//     it, never a catch-up of the times missed;
//   - a forward step (a suspend, an NTP step of days) past the awaited time
//     runs that time once, late, and then the next time after the new
//     wall clock: at most one run, never a burst;
//   - a slot runs at most once: after a backward step the schedule resumes
//     after the last time that ran. A step back of more than a day is taken
//     as a correction of a clock that was wrong, and the schedule restarts
//     from the new reading rather than waiting that long;
//   - DST is the schedule package's: a time in the spring-forward gap runs
//     once at the gap's end, a time in the fall-back overlap once, at its
//     first occurrence;
//   - the loop sleeps at most wallRecheck at a time on the monotonic clock
//     and reads the wall clock again, so a step is noticed within that.
// A scheduled run that is skipped (paused, budget, inactive hours,
// unchanged, ...) is recorded exactly as an interval tick is.

package heartbeat

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"time"

	"github.com/vigil-iot/vigil/schedule"
)

// Schedule says when scheduled heartbeats run (heartbeat.schedule; see
// package schedule).
type Schedule interface {
	// Next returns the first run strictly after t, read on the clock face
	// of loc; the zero time if there is none.
	Next(t time.Time, loc *time.Location) time.Time
}

// wallRecheck is the longest the schedule loop sleeps before it reads the
// wall clock again.
const wallRecheck = time.Minute

// forgetBack is how far back the wall clock may step before the schedule
// forgets the last time that ran (see the policy above).
const forgetBack = 24 * time.Hour

// scheduleLoop runs heartbeats at the times of e.cfg.Schedule until ctx is
// done or a reload goes back to the interval.
func (e *Engine) scheduleLoop(ctx context.Context) {
	var (
		sched      Schedule
		slot, last time.Time // wall: the awaited run, the last that ran
		prevWall   time.Time // the wall clock at the last look
		hold       time.Time // mono: after a busy run, no retry before this
		unsynced   bool      // the clock_unsynced skip of this spell is recorded
	)
	for {
		e.mu.Lock()
		cur, loc, build := e.cfg.Schedule, e.cfg.Location, e.cfg.BuildTime
		reconf := e.reconf
		e.mu.Unlock()
		if cur == nil {
			return
		}
		sched = cur
		mono, wall := e.deps.Clock.Now(), e.deps.Wall()
		if wall.Before(prevWall) {
			slot = time.Time{} // stepped back: find the awaited time again
		}
		prevWall = wall
		var wait time.Duration
		switch {
		case !Plausible(wall, build):
			slot = time.Time{}
			e.setNext(time.Time{})
			if !unsynced {
				unsynced = true
				if !e.scheduledRun(ctx) {
					return
				}
				continue
			}
			wait = wallRecheck
		default:
			unsynced = false
			if slot.IsZero() {
				from := wall
				if last.After(from) && last.Sub(from) <= forgetBack {
					from = last // a slot runs at most once
				}
				slot = sched.Next(from, loc)
			}
			if slot.IsZero() {
				e.setNext(time.Time{}) // a schedule that never runs: wait for a reload
				wait = -1
				break
			}
			if !wall.Before(slot) && !mono.Before(hold) {
				following := sched.Next(maxTime(wall, slot), loc)
				e.mu.Lock()
				e.setNextWallLocked(following, mono, wall)
				e.mu.Unlock()
				busy, ok := e.scheduledRunBusy(ctx)
				if !ok {
					return
				}
				if busy {
					hold = mono.Add(30 * time.Second) // the same slot again soon
					e.setNext(hold)
					continue
				}
				last, slot = slot, following
				continue
			}
			if !wall.Before(slot) {
				wait = hold.Sub(mono)
			} else {
				e.mu.Lock()
				e.setNextWallLocked(slot, mono, wall)
				e.mu.Unlock()
				wait = min(slot.Sub(wall), wallRecheck)
			}
		}
		switch e.wait(ctx, reconf, wait) {
		case wakeDone:
			return
		case wakeReconf:
			slot = time.Time{} // perhaps a new schedule or time zone
		}
	}
}

// scheduledRun runs one scheduled heartbeat; false when ctx is done.
func (e *Engine) scheduledRun(ctx context.Context) bool {
	_, ok := e.scheduledRunBusy(ctx)
	return ok
}

// scheduledRunBusy runs one scheduled heartbeat and reports whether it met
// a running check (busy); ok is false when ctx is done.
func (e *Engine) scheduledRunBusy(ctx context.Context) (busy, ok bool) {
	res, err := e.tick(ctx, false, CheckOptions{})
	if err != nil {
		if ctx.Err() != nil {
			return false, false
		}
		e.log.Error("heartbeat", "err", err)
		return false, true
	}
	e.progress()
	e.logRun(res)
	return res.Run.Reason == ReasonBusy, true
}

// setNextWallLocked publishes a scheduled run at wall time at (zero: none),
// given the clocks' readings now. Caller holds e.mu.
func (e *Engine) setNextWallLocked(at, mono, wall time.Time) {
	if at.IsZero() {
		e.nextMono, e.nextAt = time.Time{}, time.Time{}
		return
	}
	e.nextAt, e.nextMono = at, mono.Add(at.Sub(wall))
}

func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// Window is a daily window of local time; End < Start wraps midnight.
type Window = schedule.Window

// Phase returns the deterministic offset of a device's heartbeat within its
// interval: the first tick comes Phase after the daemon starts (or the
// interval changes), the later ones every interval after it. It maps a
// SHA-256 of the id onto the whole of [0, interval), so the phases of a
// fleet are spread evenly whatever its ids look like (greenhouse-001,
// greenhouse-002, …, or random hostnames), and a fleet switched on together
// asks its LLM server at an even pace from the first run on: in any 5 s at
// most 2× the fleet's average, wherever that average is large enough for
// chance to matter little (TestPhaseSpreadsFleet). A schedule
// (heartbeat.schedule) does not use it: its times are exact.
func Phase(id string, interval time.Duration) time.Duration {
	if interval <= 0 {
		return 0
	}
	sum := sha256.Sum256([]byte(id))
	return time.Duration(binary.BigEndian.Uint64(sum[:8]) % uint64(interval))
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
