package heartbeat

import (
	"context"
	"fmt"
	"time"

	"github.com/vigil-iot/vigil/store"
)

// restorePause turns a persisted pause into a monotonic deadline. The
// remaining time is what the wall clock says, but never more than the pause's
// own duration: a clock that jumped backwards cannot extend it.
func (e *Engine) restorePause(p store.Pause) {
	remaining := p.Until.Sub(e.deps.Wall())
	if remaining > p.Duration {
		remaining = p.Duration
	}
	if remaining <= 0 {
		return // expired; cleared with the next commit
	}
	e.pause = &p
	e.pauseEnd = e.deps.Clock.Now().Add(remaining)
}

// pausedLocked reports whether heartbeats are paused at mono, clearing an
// expired pause. Caller holds e.mu.
func (e *Engine) pausedLocked(mono time.Time) bool {
	if e.pause == nil {
		return false
	}
	if !mono.Before(e.pauseEnd) {
		e.pause = nil
		return false
	}
	return true
}

// setPauseLocked pauses heartbeats for d. Caller holds e.mu. The pause
// lasts exactly d on the monotonic clock; whoever prints its end (the
// answer to `pause`, `status`) rounds Until to the second, so both name the
// same second.
func (e *Engine) setPauseLocked(d time.Duration, by string) store.Pause {
	wall := e.deps.Wall().UTC().Round(time.Millisecond)
	p := store.Pause{Set: wall, Until: wall.Add(d), Duration: d, By: by}
	e.pause = &p
	e.pauseEnd = e.deps.Clock.Now().Add(d)
	return p
}

// Pause pauses heartbeats for d and persists it. Rules keep running.
func (e *Engine) Pause(ctx context.Context, d time.Duration, by string) (store.Pause, error) {
	if d <= 0 {
		return store.Pause{}, fmt.Errorf("pause: duration must be positive, got %s", d)
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	prev, prevEnd := e.pause, e.pauseEnd
	p := e.setPauseLocked(d, by)
	if err := e.deps.DB.Update(func(tx *store.Tx) error { return tx.SetPause(p) }); err != nil {
		e.pause, e.pauseEnd = prev, prevEnd
		return store.Pause{}, fmt.Errorf("persist pause: %w", err)
	}
	return p, nil
}

// Resume ends a pause and persists it.
func (e *Engine) Resume(ctx context.Context) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if err := e.deps.DB.Update(func(tx *store.Tx) error { return tx.ClearPause() }); err != nil {
		return fmt.Errorf("persist resume: %w", err)
	}
	e.pause = nil
	return nil
}

// PausedUntil returns the wall-clock end of the current pause (false when not paused).
func (e *Engine) PausedUntil() (time.Time, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	mono := e.deps.Clock.Now()
	if !e.pausedLocked(mono) {
		return time.Time{}, false
	}
	return e.deps.Wall().Add(e.pauseEnd.Sub(mono)), true
}
