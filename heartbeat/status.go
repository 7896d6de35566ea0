package heartbeat

import (
	"context"
	"fmt"
	"sort"
	"time"

	"github.com/vigil-iot/vigil/device"
	"github.com/vigil-iot/vigil/store"
)

// Status is what `vigil status` shows.
type Status struct {
	Device         string            `json:"device"`
	Mode           string            `json:"mode"` // "llm" or "rules-only"
	Now            time.Time         `json:"now"`
	ClockPlausible bool              `json:"clock_plausible"`
	Uptime         time.Duration     `json:"uptime_ns"`
	NextRun        time.Time         `json:"next_run,omitzero"`
	PausedUntil    time.Time         `json:"paused_until,omitzero"`
	Failures       int               `json:"consecutive_failures"`
	LLMDown        bool              `json:"llm_down"`
	BudgetCalls    int               `json:"llm_calls_today"`
	BudgetTokens   int               `json:"llm_tokens_today"`
	BudgetMax      int               `json:"llm_calls_per_day"`
	Outbox         map[string]int    `json:"outbox"`
	OutboxDropped  uint64            `json:"outbox_dropped"`
	Firing         []string          `json:"rules_firing"`
	Runs           []store.Run       `json:"runs"`
	Counters       map[string]uint64 `json:"counters"`
	Commands       []Command         `json:"commands"` // accepted remote commands, newest last
	Snapshot       *device.Snapshot  `json:"snapshot,omitempty"`
}

// Status reports the engine's state for `vigil status`.
func (e *Engine) Status(ctx context.Context) (Status, error) {
	st := Status{Device: e.cfg.DeviceID, Mode: "rules-only", Outbox: map[string]int{}}
	if e.deps.Thinker != nil {
		st.Mode = "llm"
	}
	if until, ok := e.PausedUntil(); ok {
		st.PausedUntil = until.UTC().Round(time.Second)
	}
	err := e.deps.DB.View(func(tx *store.Tx) error {
		var err error
		if st.Runs, err = tx.Runs(10); err != nil {
			return err
		}
		for _, n := range e.notifierNames() {
			if st.Outbox[n], err = tx.Depth(n); err != nil {
				return err
			}
		}
		st.OutboxDropped, err = tx.Dropped()
		return err
	})
	if err != nil {
		return st, fmt.Errorf("read status: %w", err)
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	wall := e.deps.Wall()
	st.Now = wall.UTC().Round(time.Second)
	st.ClockPlausible = Plausible(wall, e.cfg.BuildTime)
	st.Uptime = e.deps.Clock.Since(e.start).Round(time.Second)
	if e.cfg.Interval > 0 && !e.nextAt.IsZero() {
		st.NextRun = e.nextAt.UTC().Round(time.Second)
	}
	st.Failures, st.LLMDown = e.state.ConsecutiveFailures, e.state.LLMDown
	e.rollBudget(wall)
	st.BudgetCalls, st.BudgetTokens, st.BudgetMax = e.state.BudgetCalls, e.state.BudgetTokens, e.cfg.MaxLLMCallsPerDay
	st.Counters = cloneCounters(e.state.Counters)
	st.Commands = append([]Command{}, e.commands...)
	for name, rr := range e.rules {
		if rr.state.Firing {
			st.Firing = append(st.Firing, name)
		}
	}
	sort.Strings(st.Firing)
	if e.last != nil {
		st.Snapshot = e.last.Clone()
	}
	return st, nil
}
