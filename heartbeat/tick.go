package heartbeat

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/vigil-iot/vigil/agent"
	"github.com/vigil-iot/vigil/alert"
	"github.com/vigil-iot/vigil/device"
	"github.com/vigil-iot/vigil/store"
	"github.com/vigil-iot/vigil/transport"
)

// Outcomes and skip reasons recorded in the run ring.
const (
	OutcomeOK      = "ok"
	OutcomeAlert   = "alert"
	OutcomeSkipped = "skipped"
	OutcomeFailed  = "failed"
	OutcomePaused  = "paused"

	ReasonEmptyChecklist = "empty_checklist"
	ReasonUnchanged      = "unchanged"
	ReasonBudget         = "budget"
	ReasonPaused         = "paused"
	ReasonInactiveHours  = "inactive_hours"
	ReasonClockUnsynced  = "clock_unsynced"
	ReasonBusy           = "busy"
	ReasonLLMBackoff     = "llm_backoff"
	ReasonRulesOnly      = "rules_only" // no LLM configured
	ReasonDuplicate      = "duplicate"  // the alert was sent within alert_cooldown
	ReasonForced         = "forced"     // vigil check
	ReasonMaxQuiet       = "max_quiet"
	ReasonChanged        = "changed"
	ReasonRuleChanged    = "rule_changed"
	ReasonFirst          = "first_run"
	ReasonRetry          = "retry" // the last LLM run failed
)

// Result is one heartbeat run: the recorded run plus the decision and alerts.
type Result struct {
	Run      store.Run
	Decision *agent.Decision
	Alerts   []alert.Alert
}

// CheckOptions modify a forced run (vigil check).
type CheckOptions struct {
	DryRun bool // deliver nothing

	due time.Time // wall time the tick was scheduled for (heartbeat loop only)
}

// busyRetry is how soon a tick that met a running check (a forced check
// from a command) tries again: min(30 s, interval/10), so a busy tick costs
// seconds, not a whole interval.
func busyRetry(interval time.Duration) time.Duration {
	return min(30*time.Second, interval/10)
}

// heartbeatLoop runs the interval loop or the schedule loop, whichever the
// config asks for, and switches when a reload changes it.
func (e *Engine) heartbeatLoop(ctx context.Context) error {
	for ctx.Err() == nil {
		e.mu.Lock()
		scheduled := e.cfg.Schedule != nil
		e.mu.Unlock()
		if scheduled {
			e.scheduleLoop(ctx)
		} else {
			e.intervalLoop(ctx)
		}
	}
	return nil
}

// intervalLoop ticks every interval on the monotonic clock until ctx is
// done or a reload sets a schedule.
func (e *Engine) intervalLoop(ctx context.Context) {
	// sched keeps the device's phase; next is sched or, after a busy tick,
	// the earlier retry. A reload that changes the interval starts a new
	// schedule at the device's phase.
	var (
		sched, next time.Time
		interval    time.Duration
	)
	for {
		e.mu.Lock()
		if e.cfg.Schedule != nil {
			e.mu.Unlock()
			return
		}
		if cur := e.cfg.Interval; cur != interval {
			interval = cur
			sched = e.deps.Clock.Now().Add(Phase(e.id, interval))
			next = sched
		}
		reconf := e.reconf
		e.setNextLocked(next, interval > 0)
		e.mu.Unlock()
		if interval <= 0 {
			if e.wait(ctx, reconf, -1) == wakeDone {
				return
			}
			continue
		}
		if wait := next.Sub(e.deps.Clock.Now()); wait > 0 {
			switch e.wait(ctx, reconf, wait) {
			case wakeDone:
				return
			case wakeReconf:
				continue
			}
		}
		now := e.deps.Clock.Now()
		due := e.deps.Wall().Add(next.Sub(now)) // this tick's scheduled time, for the prompt
		if !now.Before(sched) {
			sched = nextTick(sched, now, interval)
		}
		next = sched
		e.mu.Lock()
		e.setNextLocked(next, true)
		e.mu.Unlock()
		res, err := e.tick(ctx, false, CheckOptions{due: due})
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			e.log.Error("heartbeat", "err", err)
			continue
		}
		if res.Run.Reason == ReasonBusy {
			if retry := now.Add(busyRetry(interval)); retry.Before(sched) {
				next = retry
			}
		}
		e.progress()
		e.logRun(res)
	}
}

// wake says why wait returned.
type wake int

const (
	wakeTimer  wake = iota // the time waited for came
	wakeReconf             // a reload changed the config (reconf closed)
	wakeDone               // ctx ended
)

// wait waits d on the engine's clock, or with d < 0 with no time limit,
// until a reload closes reconf or ctx ends: the one wait of the interval
// and the schedule loops.
func (e *Engine) wait(ctx context.Context, reconf <-chan struct{}, d time.Duration) wake {
	var timer <-chan time.Time
	if d >= 0 {
		t := e.deps.Clock.NewTimer(d)
		defer t.Stop()
		timer = t.Chan()
	}
	select {
	case <-ctx.Done():
		return wakeDone
	case <-reconf:
		return wakeReconf
	case <-timer:
		return wakeTimer
	}
}

// nextRun is the monotonic time of the next scheduled tick.
func (e *Engine) nextRun() time.Time {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.nextMono
}

// setNext publishes the next tick's time for status and the heartbeat topic.
func (e *Engine) setNext(next time.Time) {
	e.mu.Lock()
	e.setNextLocked(next, true)
	e.mu.Unlock()
}

// setNextLocked records when the next heartbeat runs (a monotonic time);
// none when on is false (the interval is 0, the clock is not synced).
// Caller holds e.mu.
func (e *Engine) setNextLocked(next time.Time, on bool) {
	if !on || next.IsZero() {
		e.nextMono, e.nextAt = time.Time{}, time.Time{}
		return
	}
	e.nextMono = next
	e.nextAt = e.deps.Wall().Add(next.Sub(e.deps.Clock.Now()))
}

// busyRetryLocked is how soon a tick that met a running check tries again.
// Caller holds e.mu.
func (e *Engine) busyRetryLocked() time.Duration {
	if e.cfg.Schedule != nil {
		return 30 * time.Second
	}
	return busyRetry(e.cfg.Interval)
}

func (e *Engine) logRun(res Result) {
	r := res.Run
	attrs := []any{"outcome", r.Outcome, "duration_ms", r.DurationMS}
	if r.Reason != "" {
		attrs = append(attrs, "reason", r.Reason)
	}
	if r.Tokens > 0 {
		attrs = append(attrs, "tokens", r.Tokens, "llm_calls", r.LLMCalls)
	}
	if r.Error != "" {
		attrs = append(attrs, "err", r.Error)
	}
	e.log.Info("heartbeat", attrs...)
}

// Check runs one heartbeat now (vigil check and the remote check
// commands): it ignores the change gate, active hours and pause, and counts
// against the day's budget; once the budget is spent it asks no LLM and
// returns outcome skipped, reason budget. It queues its alerts, except with
// DryRun, which asks the model the same way and writes nothing at all: no
// alert, fingerprint, run, history, budget or counter, and the engine's
// in-memory state stays as it was.
func (e *Engine) Check(ctx context.Context, opts CheckOptions) (Result, error) {
	return e.tick(ctx, true, opts)
}

// tick runs one heartbeat and records it in one write transaction.
func (e *Engine) tick(ctx context.Context, forced bool, opts CheckOptions) (Result, error) {
	startMono := e.deps.Clock.Now()
	startWall := e.deps.Wall().UTC().Round(time.Millisecond)
	run := store.Run{Start: startWall}
	if !e.runMu.TryLock() {
		run.Outcome, run.Reason = OutcomeSkipped, ReasonBusy
		if !forced {
			// The heartbeat loop retries soon (see heartbeatLoop): say so
			// in the heartbeat's next_at and in status.
			e.mu.Lock()
			retry := startMono.Add(e.busyRetryLocked())
			e.mu.Unlock()
			if retry.Before(e.nextRun()) {
				e.setNext(retry)
			}
		}
		return e.finish(ctx, Result{Run: run}, startMono, opts)
	}
	defer e.runMu.Unlock()

	reason, think := e.gate(forced, startMono, startWall)
	e.mu.Lock()
	unusualKeys, unusual := e.unusualLocked()
	if e.cfg.Gate == GateUnusual {
		run.Unusual = unusual
	}
	e.mu.Unlock()
	if !think {
		run.Outcome, run.Reason = OutcomeSkipped, reason
		if reason == ReasonPaused {
			run.Outcome = OutcomePaused
		}
		return e.finish(ctx, Result{Run: run}, startMono, opts)
	}
	run.Reason = reason

	in, err := e.input(startWall)
	if err != nil {
		run.Outcome, run.Error = OutcomeFailed, err.Error()
		return e.finish(ctx, Result{Run: run}, startMono, opts)
	}
	e.mu.Lock()
	in.Meta = agent.Meta{Trigger: reason, Interval: e.cfg.Interval,
		FailureStreak: e.state.ConsecutiveFailures, LastErrorClass: e.lastErrClass}
	e.mu.Unlock()
	if !forced {
		in.Meta.ScheduledAt = opts.due
	}
	in.Notes = e.notes()
	in.Proposed = e.proposed(startWall)
	dec, err := e.deps.Thinker.Think(ctx, in)
	if ctx.Err() != nil && !forced {
		return Result{}, ctx.Err()
	}
	run.Tokens, run.LLMCalls, run.ToolCalls = dec.Tokens, dec.Calls, dec.ToolCalls
	res := Result{Run: run, Decision: &dec}
	if err == nil && !opts.DryRun {
		// Only a run the model answered counts as "seen": after a failure the
		// same snapshot is still news for the next try. A dry run changes
		// nothing the next real run decides on.
		e.mu.Lock()
		e.llmSnap = in.Snapshot.Clone()
		e.ruleChanged = false
		e.llmUnusual = map[string]bool{}
		for _, k := range unusualKeys {
			e.llmUnusual[k] = true
		}
		e.mu.Unlock()
	}
	if err != nil {
		res.Run.Outcome, res.Run.Error = OutcomeFailed, err.Error()
		res.Decision = nil
		if errors.Is(err, agent.ErrBudget) {
			// The day's budget ran out mid-run: not the LLM's failure.
			res.Run.Reason = ReasonBudget
			return e.finish(ctx, res, startMono, opts)
		}
		return e.finishFailure(ctx, res, err, startMono, opts)
	}
	switch dec.Outcome {
	case agent.OutcomePaused:
		res.Run.Outcome, res.Run.Pause = OutcomePaused, dec.Pause
	case agent.OutcomeAlert:
		res.Run.Outcome = OutcomeAlert
		sev := dec.Severity
		if sev == 0 {
			sev = alert.Warning
		}
		res.Alerts = append(res.Alerts, e.newAlert(sev, alert.SourceLLM, "", alert.StateFiring, dec.Summary))
	default:
		res.Run.Outcome = OutcomeOK
	}
	return e.finish(ctx, res, startMono, opts)
}

// gate decides whether this run asks the LLM, and why or why not.
//
// Policy: a forced run (vigil check, with or without --dry-run, the control
// socket, MQTT cmd/check, Telegram /check) skips the change gate, active
// hours and pause, but not the day's budget: max_llm_calls_per_day is the
// one limit on what anyone who can send a command may spend. Nor does it
// skip an empty checklist: with nothing to ask, no run calls the LLM.
func (e *Engine) gate(forced bool, mono, wall time.Time) (reason string, think bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if !forced && e.cfg.Schedule != nil && !Plausible(wall, e.cfg.BuildTime) {
		// No scheduled run on an unsynced clock: its times of day mean
		// nothing yet (see scheduleLoop).
		return ReasonClockUnsynced, false
	}
	if e.deps.Thinker == nil {
		return ReasonRulesOnly, false
	}
	if forced {
		if e.budgetSpentLocked(wall) {
			return ReasonBudget, false
		}
		if _, empty, err := e.cfg.Checklist(); err == nil && empty {
			// One that cannot be read fails the run, saying why.
			return ReasonEmptyChecklist, false
		}
		return ReasonForced, true
	}
	if e.pausedLocked(mono) {
		return ReasonPaused, false
	}
	if e.cfg.Active != nil {
		if !Plausible(wall, e.cfg.BuildTime) {
			return ReasonClockUnsynced, false
		}
		if !e.cfg.Active.Contains(wall, e.cfg.Location) {
			return ReasonInactiveHours, false
		}
	}
	if e.budgetSpentLocked(wall) {
		return ReasonBudget, false
	}
	// Backoff skips interval ticks only: a schedule is sparse already, and
	// skipping 7 of 3 runs a day would leave the LLM silent for days.
	if e.backoffTicks > 0 && e.cfg.Schedule == nil {
		e.backoffTicks--
		return ReasonLLMBackoff, false
	}
	if _, empty, err := e.cfg.Checklist(); err != nil || empty {
		if err != nil {
			e.log.Error("checklist", "err", err)
		}
		return ReasonEmptyChecklist, false
	}
	switch {
	case e.llmSnap == nil:
		return ReasonFirst, true
	case e.state.ConsecutiveFailures > 0:
		return ReasonRetry, true
	case e.ruleChanged:
		return ReasonRuleChanged, true
	case e.cfg.Gate == GateUnusual:
		if e.unusualNews() {
			return ReasonUnusual, true
		}
	case e.changed(e.llmSnap, e.last):
		return ReasonChanged, true
	}
	if e.cfg.MaxQuiet > 0 && (e.state.LastLLMCall.IsZero() || wall.Sub(e.state.LastLLMCall) >= e.cfg.MaxQuiet ||
		wall.Before(e.state.LastLLMCall)) {
		return ReasonMaxQuiet, true
	}
	return ReasonUnchanged, false
}

// budgetSpentLocked reports whether today's LLM calls reached
// max_llm_calls_per_day (0: no limit). Caller holds e.mu.
func (e *Engine) budgetSpentLocked(wall time.Time) bool {
	if e.cfg.MaxLLMCallsPerDay <= 0 {
		return false
	}
	e.rollBudget(wall)
	return e.state.BudgetCalls >= e.cfg.MaxLLMCallsPerDay
}

// rollBudget resets the daily budget when the local date changed. Caller holds e.mu.
func (e *Engine) rollBudget(wall time.Time) {
	day := wall.In(e.cfg.Location).Format("2006-01-02")
	if e.state.BudgetDay != day {
		e.state.BudgetDay, e.state.BudgetCalls, e.state.BudgetTokens = day, 0, 0
	}
}

// input assembles what the model sees.
func (e *Engine) input(wall time.Time) (agent.Input, error) {
	text, _, err := e.cfg.Checklist()
	if err != nil {
		return agent.Input{}, fmt.Errorf("read checklist: %w", err)
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	in := agent.Input{
		Checklist:   text,
		Stale:       map[string]time.Duration{},
		Now:         wall,
		Location:    e.cfg.Location,
		LastAlert:   e.state.LastAlert,
		LastAlertAt: e.state.LastAlertAt,
		LastSuccess: e.state.LastSuccess,
		Facts:       &facts{e: e},
	}
	if e.last != nil {
		in.Snapshot = *e.last.Clone()
		in.Usual = e.usualForPrompt(in.Snapshot)
	}
	in.Previous = e.llmSnap
	if e.cfg.MaxLLMCallsPerDay > 0 {
		e.rollBudget(wall)
		// A run makes several requests (tool steps, retries): cap it at
		// what is left of the day, so the budget holds exactly (gate
		// refused the run if nothing is left).
		if left := e.cfg.MaxLLMCallsPerDay - e.state.BudgetCalls; left > 0 {
			in.MaxCalls = left
		}
	}
	now := e.deps.Clock.Now()
	env := &snapEnv{e: e, now: now}
	for _, n := range e.deps.Sensors {
		if s := env.Stale(n.Name); s > 2*e.cfg.SampleInterval {
			in.Stale[n.Name] = s.Round(time.Second)
		}
	}
	names := make([]string, 0, len(e.rules))
	for n := range e.rules {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		rr := e.rules[n]
		if rr.rule.Disabled && !rr.state.Firing {
			continue // not watched: nothing for the model to weigh
		}
		rs := agent.RuleStatus{Name: n, When: rr.rule.Spec.When.String(), Firing: rr.state.Firing}
		if rr.state.Firing {
			rs.Since = wallOf(e, rr.state.Since)
		}
		in.Rules = append(in.Rules, rs)
	}
	return in, nil
}

// notes returns the model's notes from the state file for the prompt. A
// note that cannot be read costs the run its notes, never the run.
func (e *Engine) notes() []agent.Note {
	stored, err := e.deps.DB.Notes()
	if err != nil {
		e.log.Warn("heartbeat notes unreadable; this run goes without them", "err", err)
		return nil
	}
	out := make([]agent.Note, 0, len(stored))
	for _, n := range stored {
		out = append(out, agent.Note{Time: n.Time, Text: e.deps.Redactor.String(n.Text)})
	}
	return out
}

// proposed names the rules the model proposed for the prompt: those
// pending, and those approved or rejected in the last 30 days. Unreadable,
// the run goes without them.
func (e *Engine) proposed(now time.Time) []agent.Proposed {
	ps, err := e.deps.DB.Proposals()
	if err != nil {
		e.log.Warn("rule proposals unreadable; this run goes without them", "err", err)
		return nil
	}
	var out []agent.Proposed
	for _, p := range ps {
		if p.State == alert.ProposalPending || (p.State != alert.ProposalDropped && now.Sub(p.DecidedAt) <= store.ProposalMemory) {
			out = append(out, agent.Proposed{Name: p.Name, State: p.State})
		}
	}
	return out
}

// finishFailure handles a failed LLM run: backoff, llm_unreachable and
// heartbeat_failed alerts, then records it.
func (e *Engine) finishFailure(ctx context.Context, res Result, err error, mono time.Time, opts CheckOptions) (Result, error) {
	e.mu.Lock()
	st := &e.state
	if opts.DryRun { // report what a real run would raise, change nothing
		cp := e.state
		st = &cp
	}
	st.ConsecutiveFailures++
	n := st.ConsecutiveFailures
	skips := 1<<min(n-1, 3) - 1 // 0, 1, 3, 7 ticks
	if !opts.DryRun {
		e.backoffTicks = skips
		e.lastErrClass = agent.ErrorClass(err)
	}
	if errors.Is(err, agent.ErrUnreachable) && !st.LLMDown {
		st.LLMDown = true
		res.Alerts = append(res.Alerts, e.newAlert(alert.Warning, alert.SourceSystem, ruleLLMUnreachable,
			alert.StateFiring, "LLM unreachable: "+err.Error()+"; local rules keep running"))
	}
	if e.cfg.FailureAlertAfter > 0 && n >= e.cfg.FailureAlertAfter && !st.FailureAlerted {
		st.FailureAlerted = true
		res.Alerts = append(res.Alerts, e.newAlert(alert.Warning, alert.SourceSystem, ruleHeartbeatFailed,
			alert.StateFiring, fmt.Sprintf("%d heartbeats in a row failed; last error: %v", n, err)))
	}
	e.mu.Unlock()
	return e.finish(ctx, res, mono, opts)
}

// finish records the run, the pending history, state changes and alerts in
// one write transaction, then publishes the heartbeat.
func (e *Engine) finish(ctx context.Context, res Result, mono time.Time, opts CheckOptions) (Result, error) {
	e.redactResult(&res) // every run passes here before it is stored or returned
	run := &res.Run
	run.DurationMS = e.deps.Clock.Since(mono).Milliseconds()
	if run.DurationMS < 0 {
		run.DurationMS = 0
	}
	wall := e.deps.Wall()
	e.mu.Lock()
	st := e.state
	st.Counters = cloneCounters(e.state.Counters)
	st.Counters["runs_"+run.Outcome]++
	if run.Reason != "" && run.Outcome == OutcomeSkipped {
		st.Counters["skip_"+run.Reason]++
	}
	if run.LLMCalls > 0 {
		e.rollBudget(wall)
		st.BudgetDay = e.state.BudgetDay
		st.BudgetCalls, st.BudgetTokens = e.state.BudgetCalls+run.LLMCalls, e.state.BudgetTokens+run.Tokens
		st.LastLLMCall = wall.UTC()
	}
	if run.Outcome == OutcomeOK || run.Outcome == OutcomeAlert || (run.Outcome == OutcomePaused && res.Decision != nil) {
		st.LastSuccess = wall.UTC()
		st.ConsecutiveFailures = 0
		if !opts.DryRun {
			e.backoffTicks = 0
		}
		if st.LLMDown {
			st.LLMDown = false
			res.Alerts = append(res.Alerts, e.newAlert(alert.Info, alert.SourceSystem, ruleLLMUnreachable,
				alert.StateResolved, "LLM reachable again"))
		}
		if st.FailureAlerted {
			st.FailureAlerted = false
			res.Alerts = append(res.Alerts, e.newAlert(alert.Info, alert.SourceSystem, ruleHeartbeatFailed,
				alert.StateResolved, "heartbeats succeed again"))
		}
	}
	// Cooldown: an identical LLM alert within alert_cooldown is not re-sent.
	queue := res.Alerts
	pending := e.pending
	var pause *store.Pause
	if run.Outcome == OutcomePaused && run.Pause > 0 && !opts.DryRun {
		p := e.setPauseLocked(run.Pause, "llm")
		pause = &p
	}
	clearPause := e.pause == nil
	e.mu.Unlock()

	if opts.DryRun {
		return e.finishDry(res, queue, wall)
	}
	baselines := e.baselineBlob() // with the run: at most one interval of learning is lost
	var ended []string            // the keys of the acks this run ends, to drop from e.acks too
	err := e.deps.DB.Update(func(tx *store.Tx) error {
		open, err := openLLM(tx) // the LLM's alert this run may hold back or resolve
		if err != nil {
			return err
		}
		endAck := func(key string) error {
			ended = append(ended, key)
			return tx.DeleteProblemAck(key)
		}
		var kept []alert.Alert
		for _, a := range queue {
			if a.Source == alert.SourceLLM {
				reason, escalates, err := e.holdLLM(tx, a, open, wall)
				if err != nil {
					return err
				}
				if escalates { // news: the LLM's alert is unacknowledged again
					if err := endAck(open.Key()); err != nil {
						return err
					}
				}
				if reason != "" {
					run.Outcome, run.Reason = OutcomeAlert, reason
					continue
				}
				if err := tx.PutFingerprint(fingerprint(a), wall.UTC()); err != nil {
					return err
				}
			}
			kept = append(kept, a)
		}
		if run.Outcome == OutcomeOK && open != nil {
			// An ok heartbeat resolves the LLM's alert, with one message.
			kept = append(kept, e.newAlert(open.Severity, alert.SourceLLM, open.Rule, alert.StateResolved, open.Summary))
		}
		for i, a := range kept {
			if a.State != alert.StateResolved {
				continue
			}
			// A resolution carries the problem's ack and ends it.
			ack, ok, err := tx.ProblemAck(a.Key())
			if err != nil {
				return err
			}
			if ok {
				kept[i].AckedBy, kept[i].AckedAt = ack.By, ack.At
				if err := endAck(a.Key()); err != nil {
					return err
				}
			}
		}
		for _, a := range kept {
			run.Alerts = append(run.Alerts, a.ID)
			st.Counters["alerts"]++
			st.LastAlert, st.LastAlertAt = a.Summary, a.Time
		}
		if err := e.enqueue(tx, kept, &st); err != nil {
			return err
		}
		res.Alerts = kept
		if _, err := tx.AppendRun(*run); err != nil {
			return err
		}
		if len(pending) > 0 {
			if err := tx.AppendHistory(pending); err != nil {
				return err
			}
		}
		if baselines != nil {
			if err := tx.PutBaselines(baselines); err != nil {
				return err
			}
		}
		if pause != nil {
			if err := tx.SetPause(*pause); err != nil {
				return err
			}
		} else if clearPause {
			if err := tx.ClearPause(); err != nil {
				return err
			}
		}
		return tx.PutState(st)
	})
	if err != nil {
		return res, fmt.Errorf("record run: %w", err)
	}
	e.mu.Lock()
	e.state = st
	for _, k := range ended {
		delete(e.acks, k)
	}
	if len(e.pending) >= len(pending) {
		e.pending = append(e.pending[:0], e.pending[len(pending):]...)
	}
	nextAt := e.nextAt
	e.mu.Unlock()
	if len(res.Alerts) > 0 {
		e.wakeAll()
	}
	hb := transport.Heartbeat{Time: run.Start, Outcome: run.Outcome, Reason: run.Reason,
		DurationMS: run.DurationMS, NextAt: nextAt.UTC().Round(time.Second), Tokens: run.Tokens}
	e.heartbeatOut.put(hb)
	return res, nil
}

// redactResult replaces the secrets in what the model wrote and in the
// error: the run record's and the decision's (alerts are redacted as they
// are made, in newAlert).
func (e *Engine) redactResult(res *Result) {
	red := e.deps.Redactor
	res.Run.Error, res.Run.ToolCalls = red.String(res.Run.Error), red.Strings(res.Run.ToolCalls)
	if d := res.Decision; d != nil {
		dec := *d
		dec.Summary, dec.Escalation, dec.ToolCalls = red.String(d.Summary), red.String(d.Escalation), red.Strings(d.ToolCalls)
		res.Decision = &dec
	}
}

// holdLLM decides whether the LLM's alert a is held back, with the reason
// the run records, given the LLM's alert open before this run (nil: none).
//
// Policy: the LLM's alert is firing until a heartbeat ends ok (which
// resolves it). While it fires, the same alert (fingerprint: source,
// severity and summary with the digits folded) within alert_cooldown of
// its last sending is a duplicate, not sent; past the cooldown it is sent
// again as a reminder, unless the open alert was acknowledged
// (ReasonAcknowledged: until it resolves). A more severe alert escalates:
// it is sent whatever the cooldown, and the ack ends (escalates). Once resolved, the next alert
// is a new one, sent whatever the cooldown.
func (e *Engine) holdLLM(tx *store.Tx, a alert.Alert, open *alert.Alert, wall time.Time) (reason string, escalates bool, err error) {
	if open == nil {
		return "", false, nil
	}
	ack, acked, err := tx.ProblemAck(open.Key())
	if err != nil {
		return "", false, err
	}
	if acked && ack.AlertID == open.ID {
		if a.Severity <= open.Severity {
			return ReasonAcknowledged, false, nil
		}
		return "", true, nil
	}
	at, ok, err := tx.Fingerprint(fingerprint(a))
	if err != nil {
		return "", false, err
	}
	if ok && e.cfg.AlertCooldown > 0 && wall.Sub(at) < e.cfg.AlertCooldown && !wall.Before(at) {
		return ReasonDuplicate, false, nil
	}
	return "", false, nil
}

// finishDry reports what a run would have queued and writes nothing: no
// fingerprint, no run, no history, no state, no published heartbeat. An LLM
// alert within the cooldown of a sent one is reported as a duplicate, as a
// real run would.
func (e *Engine) finishDry(res Result, queue []alert.Alert, wall time.Time) (Result, error) {
	run := &res.Run
	res.Alerts = nil // delivered nowhere, queued nowhere
	err := e.deps.DB.View(func(tx *store.Tx) error {
		open, err := openLLM(tx)
		if err != nil {
			return err
		}
		for _, a := range queue {
			if a.Source == alert.SourceLLM {
				reason, _, err := e.holdLLM(tx, a, open, wall)
				if err != nil {
					return err
				}
				if reason != "" {
					run.Outcome, run.Reason = OutcomeAlert, reason
				}
			}
		}
		return nil
	})
	if err != nil {
		return res, fmt.Errorf("dry run: %w", err)
	}
	return res, nil
}

func cloneCounters(m map[string]uint64) map[string]uint64 {
	c := make(map[string]uint64, len(m)+2)
	for k, v := range m {
		c[k] = v
	}
	return c
}

// fingerprint identifies "the same alert": its source, severity and
// normalised summary (case, whitespace and digits folded, so "21.4 °C" and
// "21.5 °C" are the same complaint).
func fingerprint(a alert.Alert) string {
	var b strings.Builder
	for _, r := range strings.ToLower(a.Summary) {
		switch {
		case r >= '0' && r <= '9':
			b.WriteByte('#')
		case r == ' ' || r == '\t' || r == '\n':
			if s := b.String(); len(s) > 0 && s[len(s)-1] != ' ' {
				b.WriteByte(' ')
			}
		default:
			b.WriteRune(r)
		}
	}
	sum := sha256.Sum256([]byte(a.Source + "|" + a.Severity.String() + "|" + a.Rule + "|" + strings.TrimSpace(b.String())))
	return hex.EncodeToString(sum[:12])
}

// facts implements agent.Facts for the tools.
type facts struct{ e *Engine }

func (f *facts) History(ctx context.Context, key string, window time.Duration) ([]agent.Point, device.Unit, error) {
	e := f.e
	since := e.deps.Wall().Add(-window)
	var pts []agent.Point
	var unit device.Unit
	seen := map[int64]bool{}
	add := func(s device.Snapshot) {
		if v, ok := s.Readings[key]; ok && !s.Time.Before(since) && !seen[s.Time.UnixMilli()] {
			seen[s.Time.UnixMilli()] = true
			pts = append(pts, agent.Point{Time: s.Time, Value: v.Value})
			unit = v.Unit
		}
	}
	if err := e.eachSnapshot(since, add); err != nil {
		return nil, "", err
	}
	if unit == "" && len(pts) == 0 {
		return nil, "", fmt.Errorf("no history for %q", key)
	}
	return pts, unit, nil
}

func (f *facts) SystemStatus(ctx context.Context) (map[string]any, error) {
	st, err := f.e.Status(ctx)
	if err != nil {
		return nil, err
	}
	m := map[string]any{
		"uptime_s":        int64(st.Uptime.Seconds()),
		"clock_synced":    st.ClockPlausible,
		"llm_calls_today": st.BudgetCalls,
		"llm_budget":      st.BudgetMax,
		"rules_firing":    st.Firing,
	}
	f.e.mu.Lock()
	if f.e.last != nil {
		for k, v := range f.e.last.Readings {
			if strings.HasPrefix(k, "board.") {
				m[strings.TrimPrefix(k, "board.")] = v.Value
			}
		}
	}
	f.e.mu.Unlock()
	for name, d := range st.Outbox {
		m["outbox_"+name] = d
	}
	return m, nil
}
