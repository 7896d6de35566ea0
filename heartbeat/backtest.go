package heartbeat

import (
	"context"
	"time"

	"github.com/vigil-iot/vigil/alert"
	"github.com/vigil-iot/vigil/baseline"
	"github.com/vigil-iot/vigil/device"
	"github.com/vigil-iot/vigil/rule"
)

// Backtest replays spec over the device's own history (the kept one-minute
// rows, the rows not yet kept and the last sample), through the sample
// loop's evaluator (Replay), and marks it noisy beyond maxPerDay firings
// a day.
func (e *Engine) Backtest(ctx context.Context, spec *rule.Spec, maxPerDay int) (alert.Backtest, error) {
	var snaps []device.Snapshot
	err := e.eachSnapshot(time.Time{}, func(s device.Snapshot) {
		if n := len(snaps); n == 0 || s.Time.After(snaps[n-1].Time) {
			snaps = append(snaps, s)
		}
	})
	if err != nil {
		return alert.Backtest{}, err
	}
	if err := ctx.Err(); err != nil {
		return alert.Backtest{}, err
	}
	e.mu.Lock() // e.cfg, which a reload replaces
	defer e.mu.Unlock()
	return e.Replay(spec, snaps, maxPerDay), nil
}

// Replay feeds snaps (oldest first) through the sample loop's evaluator
// for spec alone, as the loop would have seen them (each at its own time:
// delta() over the snapshots before it, stale() since the sensor's last
// good read), and sums up what the rule would have done. The last
// snapshot is the one that prompted the proposal: OnPrompt says the rule
// fires on it, or would once its `for` has passed. Replay changes
// nothing of e's; the caller holds e.mu when e is running (e.cfg).
func (e *Engine) Replay(spec *rule.Spec, snaps []device.Snapshot, maxPerDay int) alert.Backtest {
	var bt alert.Backtest
	if len(snaps) == 0 {
		return bt
	}
	// The replay learns what is usual as it goes, from the replayed
	// samples, as the loop learned it: judging an old reading against
	// today's baselines, which learned from that very reading, would
	// not be what the loop did.
	r := &Engine{id: e.id, cfg: e.cfg, deps: Deps{Sensors: e.deps.Sensors}, hist: newHistory(e.cfg.MemHistory),
		lastGood: map[string]time.Time{}, start: snaps[0].Time, floors: &floorTable{m: map[string]float64{}}}
	r.base = baseline.New(e.cfg.Location, r.floors.get)
	r.base.SetUnusual(e.cfg.Unusual)
	var st rule.State
	var since time.Time
	for _, s := range snaps {
		r.remember(s.Time, s)
		switch rule.Step(spec, &st, &snapEnv{e: r, snap: s, now: s.Time}, s.Time) {
		case rule.Fire:
			bt.Fired++
			if bt.First.IsZero() {
				bt.First = s.Time
			}
			bt.Last, since = s.Time, s.Time
		case rule.Resolve:
			bt.FiringS += s.Time.Sub(since).Seconds()
		}
		r.observe(s) // after the rules, as in the loop
	}
	bt.From, bt.To, bt.Samples = snaps[0].Time, snaps[len(snaps)-1].Time, len(snaps)
	if st.Firing {
		bt.FiringS += bt.To.Sub(since).Seconds()
	}
	bt.OnPrompt = st.Firing || !st.PendingSince.IsZero()
	bt.PerDay = float64(bt.Fired) / max(bt.To.Sub(bt.From).Hours()/24, 1)
	bt.Noisy = maxPerDay > 0 && bt.PerDay > float64(maxPerDay)
	return bt
}
