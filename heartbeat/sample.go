package heartbeat

import (
	"context"
	"fmt"
	"log/slog"
	"math"
	"slices"
	"strconv"
	"time"

	"github.com/vigil-iot/vigil/alert"
	"github.com/vigil-iot/vigil/device"
	"github.com/vigil-iot/vigil/rule"
	"github.com/vigil-iot/vigil/store"
)

func (e *Engine) sampleLoop(ctx context.Context) error {
	for {
		if err := e.SampleOnce(ctx); err != nil {
			if ctx.Err() != nil {
				return nil
			}
			e.log.Error("sample", "err", err)
		} else {
			e.progress()
		}
		e.mu.Lock()
		every, reconf := e.cfg.SampleInterval, e.reconf
		e.mu.Unlock()
		select {
		case <-ctx.Done():
			return nil
		case <-e.deps.Clock.After(every):
		case <-reconf: // a reload: sample now, then at the new interval
		}
	}
}

// SampleOnce reads every sensor, evaluates the rules and queues their alerts.
// It commits to the store only when a rule changed state or an alert was
// queued.
func (e *Engine) SampleOnce(ctx context.Context) error {
	return e.sample(ctx, false)
}

// SampleDry reads every sensor and steps the rules in memory only: nothing
// is written and no alert is queued (vigil check --dry-run).
func (e *Engine) SampleDry(ctx context.Context) error {
	return e.sample(ctx, true)
}

func (e *Engine) sample(ctx context.Context, dry bool) error {
	e.sampleMu.Lock()
	defer e.sampleMu.Unlock()
	if !dry {
		e.noteLost()
	}
	mono := e.deps.Clock.Now()
	snap := device.Sense(ctx, e.deps.Sensors, e.deps.Wall().UTC().Round(time.Millisecond))
	if ctx.Err() != nil {
		return ctx.Err()
	}

	debug := e.log.Enabled(ctx, slog.LevelDebug)
	if debug {
		e.logSample(snap)
	}
	e.mu.Lock()
	e.record(mono, snap)
	env := &snapEnv{e: e, snap: snap, now: mono}

	type change struct {
		rr      *ruleRun
		next    rule.State
		alertID string
		event   rule.Event
		sent    string // id of the alert queued for this change ("held" by the flood guard)
	}
	var changes []change
	var alerts []alert.Alert
	var mark *floodMark // the flood guard before this sample, to undo on a failed commit
	for _, r := range e.cfg.Rules {
		rr := e.rules[r.Spec.Name]
		next := rr.state
		var ev rule.Event
		switch {
		case r.Disabled && !rr.state.Firing:
			rr.state.PendingSince = time.Time{}
			continue
		case r.Disabled:
			next, ev = rule.State{}, rule.Resolve
		default:
			ev = rule.Step(&rr.rule.Spec, &next, env, mono)
		}
		if debug {
			e.log.Debug("rule evaluated", "rule", r.Spec.Name, "event", eventName(ev),
				"firing", next.Firing, "pending", !next.PendingSince.IsZero())
		}
		if ev == rule.None {
			rr.state.PendingSince = next.PendingSince // in-memory only
			continue
		}
		if _, acked := e.ruleAck(r.Spec.Name, rr.alertID); acked && ev == rule.Renotify {
			continue // acknowledged: no reminder until it resolves (ack.go)
		}
		c := change{rr: rr, next: next, alertID: rr.alertID, event: ev}
		summary := rule.Render(r.Message, env.format)
		if r.Message == "" {
			summary = fmt.Sprintf("%s: %s", r.Spec.Name, r.Spec.When.String())
		}
		if r.Disabled {
			summary = fmt.Sprintf("%s disabled while firing: no longer watched (%s)", r.Spec.Name, summary)
		}
		var a alert.Alert
		switch ev {
		case rule.Fire:
			a = e.newAlert(r.Severity, alert.SourceRule, r.Spec.Name, alert.StateFiring, summary)
			c.alertID = a.ID
		case rule.Renotify:
			a = e.newAlert(r.Severity, alert.SourceRule, r.Spec.Name, alert.StateFiring, "still firing: "+summary)
		case rule.Resolve:
			a = e.newAlert(r.Severity, alert.SourceRule, r.Spec.Name, alert.StateResolved, summary)
			if ack, ok := e.ruleAck(r.Spec.Name, rr.alertID); ok {
				a.AckedBy, a.AckedAt = ack.By, ack.At
			}
			c.alertID = ""
		}
		if mark == nil {
			mark = e.markFlood()
		}
		admitted := e.admit(a, mono)
		c.sent = "held"
		if len(admitted) > 0 {
			c.sent = admitted[0].ID
		}
		alerts = append(alerts, admitted...)
		changes = append(changes, c)
	}
	if !dry {
		// After the rules: a reading is judged against what was usual
		// before it, not against a band it has already moved.
		e.observe(snap)
	}
	if len(changes) == 0 {
		e.mu.Unlock()
		e.maybePublishSensors(mono)
		return nil
	}
	if dry {
		for _, c := range changes {
			c.rr.state = c.next
			c.rr.alertID = c.alertID
			e.ruleChanged = true
		}
		e.mu.Unlock()
		return nil
	}
	// The counters change in a copy that replaces e.state only once the
	// commit succeeded: a failed commit is retried by the next sample,
	// which counts the same alerts again.
	st := e.state
	st.Counters = cloneCounters(e.state.Counters)
	for _, a := range alerts {
		if a.IsNotice() { // the flood guard's
			st.Counters["notices"]++
			continue
		}
		st.Counters["alerts"]++
		st.LastAlert, st.LastAlertAt = a.Summary, a.Time
	}
	err := e.deps.DB.Update(func(tx *store.Tx) error {
		for _, c := range changes {
			name := c.rr.rule.Spec.Name
			if c.next.Firing {
				if err := tx.PutRuleState(name, store.RuleState{Firing: true, Since: wallOf(e, c.next.Since),
					LastNotified: wallOf(e, c.next.LastNotified), AlertID: c.alertID}); err != nil {
					return err
				}
			} else if err := tx.DeleteRuleState(name); err != nil {
				return err
			}
			if c.event != rule.Renotify { // a firing or a resolution ends an ack
				if err := tx.DeleteProblemAck(ruleKey(name)); err != nil {
					return err
				}
			}
		}
		if err := e.enqueue(tx, alerts, &st); err != nil {
			return err
		}
		return tx.PutState(st)
	})
	if err != nil {
		// Keep the old rule states: the next sample sees the same transition
		// and tries again, so no alert is lost to a failed write. Undo what
		// the flood guard counted, so the retry is not a second alert.
		e.undoFlood(mark)
		e.mu.Unlock()
		return fmt.Errorf("commit rule changes: %w", err)
	}
	e.state = st
	e.noteRaised(alerts)
	for _, c := range changes {
		c.rr.state = c.next
		c.rr.alertID = c.alertID
		if c.event != rule.Renotify { // a reminder is not news for the LLM
			e.ruleChanged = true
			delete(e.acks, ruleKey(c.rr.rule.Spec.Name))
		}
		e.log.Info("rule", "rule", c.rr.rule.Spec.Name, "event", eventName(c.event), "alert", c.sent)
	}
	e.mu.Unlock()
	e.wakeAll()
	e.maybePublishSensors(mono)
	return nil
}

// floodMark is the flood guard's state (admit) and the alerts_held count,
// as they were before a sample admitted its alerts.
type floodMark struct {
	times    []time.Time
	held     bool
	counters map[string]uint64
}

// markFlood returns the flood guard's state now. Caller holds e.mu.
func (e *Engine) markFlood() *floodMark {
	return &floodMark{times: slices.Clone(e.floodTimes), held: e.floodHeld, counters: cloneCounters(e.state.Counters)}
}

// undoFlood puts the flood guard back to m (nil: nothing to undo). Caller
// holds e.mu.
func (e *Engine) undoFlood(m *floodMark) {
	if m == nil {
		return
	}
	e.floodTimes, e.floodHeld, e.state.Counters = m.times, m.held, m.counters
}

// logSample logs one sample's readings and sensor errors at DEBUG (-v).
func (e *Engine) logSample(snap device.Snapshot) {
	attrs := make([]any, 0, 2*(len(snap.Readings)+len(snap.Errors)))
	for _, k := range snap.Keys() {
		attrs = append(attrs, k, FormatValue(snap.Readings[k]))
	}
	for name, msg := range snap.Errors {
		attrs = append(attrs, "error."+name, msg)
	}
	e.log.Debug("sample", attrs...)
}

// wallOf converts an engine (monotonic clock) time to wall-clock time for
// persistence.
func wallOf(e *Engine, mono time.Time) time.Time {
	if mono.IsZero() {
		return time.Time{}
	}
	return e.deps.Wall().Add(mono.Sub(e.deps.Clock.Now())).UTC().Round(time.Millisecond)
}

func eventName(ev rule.Event) string {
	switch ev {
	case rule.Fire:
		return "firing"
	case rule.Renotify:
		return "still_firing"
	case rule.Resolve:
		return "resolved"
	}
	return "none"
}

// enqueue puts alerts into the outbox within tx and counts drops.
func (e *Engine) enqueue(tx *store.Tx, alerts []alert.Alert, st *store.State) error {
	for _, a := range alerts {
		_, dropped, err := tx.Enqueue(a)
		if err != nil {
			return fmt.Errorf("enqueue alert %s: %w", a.ID, err)
		}
		if dropped > 0 {
			st.Counters["outbox_dropped"] += uint64(dropped)
			e.log.Warn("outbox full: dropped oldest alerts", "dropped", dropped)
		}
	}
	return nil
}

// record adds a snapshot to the in-memory history and to the samples the
// next heartbeat persists. Caller holds e.mu.
func (e *Engine) record(mono time.Time, snap device.Snapshot) {
	e.last, e.lastAt = &snap, mono
	e.remember(mono, snap)
	if e.lastPending.IsZero() || mono.Sub(e.lastPending) >= e.cfg.HistoryStep || mono.Before(e.lastPending) {
		e.pending = append(e.pending, snap)
		e.lastPending = mono
		if max := e.cfg.MemHistory; len(e.pending) > max {
			e.pending = append(e.pending[:0], e.pending[len(e.pending)-max:]...)
		}
	}
}

// remember is what a rule's evaluation remembers of a sample: the good
// reads of each sensor (stale()) and the readings (delta()). The sample
// loop and the backtest (backtest.go) share it.
func (e *Engine) remember(mono time.Time, snap device.Snapshot) {
	for _, n := range e.deps.Sensors {
		if _, failed := snap.Errors[n.Name]; !failed {
			e.lastGood[n.Name] = mono
		}
	}
	e.hist.add(mono, snap.Readings)
}

// snapEnv evaluates rule expressions against the latest snapshot and the
// in-memory history. Caller holds e.mu.
type snapEnv struct {
	e    *Engine
	snap device.Snapshot
	now  time.Time
}

func (s *snapEnv) Value(key string) (float64, bool) {
	v, ok := s.snap.Readings[key]
	return v.Value, ok
}

func (s *snapEnv) Delta(key string, window time.Duration) (float64, bool) {
	cur, ok := s.snap.Readings[key]
	if !ok {
		return 0, false
	}
	old, ok := s.e.hist.first(key, s.now.Add(-window))
	if !ok {
		return 0, false
	}
	return cur.Value - old, true
}

func (s *snapEnv) Stale(sensor string) time.Duration {
	t, ok := s.e.lastGood[sensor]
	if !ok {
		t = s.e.start
	}
	if d := s.now.Sub(t); d > 0 {
		return d
	}
	return 0
}

func (s *snapEnv) Failed(sensor string) bool {
	_, failed := s.snap.Errors[sensor]
	return failed
}

func (s *snapEnv) format(key string) (string, bool) {
	v, ok := s.snap.Readings[key]
	if !ok {
		return "", false
	}
	return FormatValue(v), true
}

// FormatValue renders a value with its unit: "21.4 °C".
func FormatValue(v device.Value) string {
	num := strconv.FormatFloat(v.Value, 'f', -1, 64)
	if math.Abs(v.Value) >= 100 || v.Value != math.Trunc(v.Value*100)/100 {
		num = strconv.FormatFloat(v.Value, 'f', 1, 64)
	}
	if v.Unit == "" || v.Unit == device.Bool {
		return num
	}
	return num + " " + string(v.Unit)
}

// defaultDeadband is the change below which a reading of this unit counts as
// unchanged when no deadband is configured.
func defaultDeadband(u device.Unit) float64 {
	switch u {
	case device.Celsius:
		return 0.5
	case device.Percent:
		return 2
	case device.HectoPascal:
		return 1
	case device.Volt:
		return 0.1
	case device.Ampere:
		return 0.05
	case device.Watt:
		return 0.5
	case device.Lux:
		return 50
	case device.PPM:
		return 50
	case device.PPB:
		return 50
	case device.Megabyte:
		return 100
	case device.Second:
		return math.Inf(1) // uptime always moves
	}
	return 0
}

// boardDeadbands are the defaults for the board's own health readings, which
// jitter far more than a room does: without them a healthy board would look
// "changed" on every tick and cost an LLM call each time.
var boardDeadbands = map[string]float64{
	"board.soc_temperature": 5,   // °C
	"board.load1":           1,   // runnable tasks
	"board.mem_available":   200, // MB
	"board.disk_free":       500, // MB
}

func (e *Engine) deadband(key string, u device.Unit) float64 {
	if d, ok := e.cfg.Deadbands[key]; ok {
		return d
	}
	if d, ok := boardDeadbands[key]; ok {
		return d
	}
	return defaultDeadband(u)
}

// changed reports whether cur differs from prev beyond the deadbands: a
// reading moved by more than its deadband, appeared, disappeared, or a
// sensor's error state changed.
func (e *Engine) changed(prev, cur *device.Snapshot) bool {
	if prev == nil || cur == nil {
		return prev != cur
	}
	for k, v := range cur.Readings {
		p, ok := prev.Readings[k]
		if !ok || math.Abs(v.Value-p.Value) > e.deadband(k, v.Unit) {
			return true
		}
	}
	for k := range prev.Readings {
		if _, ok := cur.Readings[k]; !ok {
			return true
		}
	}
	if len(prev.Errors) != len(cur.Errors) {
		return true
	}
	for k := range cur.Errors {
		if _, ok := prev.Errors[k]; !ok {
			return true
		}
	}
	return false
}
