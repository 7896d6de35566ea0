package heartbeat

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/vigil-iot/vigil/alert"
	"github.com/vigil-iot/vigil/device"
	"github.com/vigil-iot/vigil/rule"
	"github.com/vigil-iot/vigil/store"
)

// Status is what `vigil status` shows. Its times are in the device's time
// zone (Config.Location), rounded to the second.
type Status struct {
	Device         string            `json:"device"`
	Mode           string            `json:"mode"` // "llm" or "rules-only"
	Now            time.Time         `json:"now"`
	ClockPlausible bool              `json:"clock_plausible"`
	Uptime         time.Duration     `json:"uptime_ns"`
	NextRun        time.Time         `json:"next_run,omitzero"`
	HeartbeatsOff  string            `json:"heartbeats_off,omitempty"` // no interval, no schedule: the setting that turned them off (Config.Off); status.RulesOnly
	PausedUntil    time.Time         `json:"paused_until,omitzero"`
	Failures       int               `json:"consecutive_failures"`
	LLMDown        bool              `json:"llm_down"`
	BudgetCalls    int               `json:"llm_calls_today"`
	BudgetTokens   int               `json:"llm_tokens_today"`
	BudgetMax      int               `json:"llm_calls_per_day"`
	Outbox         map[string]int    `json:"outbox"`
	OutboxDropped  uint64            `json:"outbox_dropped"`
	Held           *Held             `json:"held,omitempty"` // what Telegram holds for its digest
	Firing         []string          `json:"rules_firing"`
	Problems       []alert.Alert     `json:"problems"` // every problem firing (rules, the LLM's alert, system faults), oldest first, with its ack
	Rules          []RuleStatus      `json:"rules"`
	Runs           []store.Run       `json:"runs"`
	Counters       map[string]uint64 `json:"counters"`
	Commands       []Command         `json:"commands"` // accepted remote commands, newest last
	Snapshot       *device.Snapshot  `json:"snapshot,omitempty"`
	// SensorErrors are the sensors that failed in the last sample known,
	// by name ("air" -> "tmp102: i2c bus 7: not found ..."): the daemon's
	// last sample or, with none running, the last one stored in the state
	// file. SensorsAt is when that sample was taken; zero when none is
	// known (then SensorErrors is empty: nothing says the sensors work).
	SensorErrors map[string]string `json:"sensor_errors"`
	SensorsAt    time.Time         `json:"sensors_at,omitzero"`
	// Baselines are what is usual now for each reading of the last sample
	// that has a baseline, by key: the band, whether it is still warming
	// up and when it will be ready, and the reading's z-score.
	Baselines map[string]BandStatus `json:"baselines,omitempty"`
	// Unusual is the |z| that counts as unusual (heartbeat.unusual), the
	// half-width of the bands in spreads.
	Unusual float64 `json:"unusual,omitempty"`
}

// Rule states in `vigil status`.
const (
	RuleOK      = "ok"      // the condition is false
	RulePending = "pending" // the condition holds, waiting for its `for`
	RuleFiring  = "firing"
	RuleUnknown = "unknown" // no sample yet, or a reading it needs is missing
	// RuleDisabled: rule.<name>.enabled is false; it is not evaluated.
	RuleDisabled = "disabled"
)

// RuleStatus is one rule's state and what it last saw.
type RuleStatus struct {
	Name  string    `json:"name"`
	State string    `json:"state"`           // RuleOK, RulePending, RuleFiring, RuleUnknown or RuleDisabled
	Since time.Time `json:"since,omitzero"`  // firing or pending since (wall clock, device time zone)
	Seen  string    `json:"seen,omitempty"`  // the readings it last saw: "air.temperature=38.1 °C"; empty before the first sample
	Error string    `json:"error,omitempty"` // why a sensor it needs gave no reading
}

// Status reports the engine's state for `vigil status`.
func (e *Engine) Status(ctx context.Context) (Status, error) {
	st := Status{Device: e.id, Mode: "rules-only", Outbox: map[string]int{}}
	loc := e.cfg.Location
	if until, ok := e.PausedUntil(); ok {
		st.PausedUntil = until.In(loc).Round(time.Second)
	}
	var stored device.Snapshot
	var ok bool
	err := e.deps.DB.View(func(tx *store.Tx) error {
		var err error
		if st.Runs, err = tx.Runs(10); err != nil {
			return err
		}
		red := e.deps.Redactor // what the ring held from before it was redacted too
		for i := range st.Runs {
			r := &st.Runs[i]
			r.Start = r.Start.In(loc)
			r.Error, r.ToolCalls = red.String(r.Error), red.Strings(r.ToolCalls)
		}
		for _, n := range e.notifierNames() {
			if st.Outbox[n], err = tx.Depth(n); err != nil {
				return err
			}
		}
		if st.OutboxDropped, err = tx.Dropped(); err != nil {
			return err
		}
		held, err := tx.TelegramHeld()
		st.Held = heldStatus(held, loc)
		if err != nil {
			return err
		}
		// Without a sample of its own (the CLI on the state file, a daemon
		// just started) the last stored one says which sensors failed.
		stored, ok, err = tx.LastHistory()
		return err
	})
	if err != nil {
		return st, fmt.Errorf("read status: %w", err)
	}
	if st.Problems, err = e.Problems(ctx); err != nil {
		return st, err
	}
	if st.Problems == nil {
		st.Problems = []alert.Alert{}
	}
	for i := range st.Problems {
		p := &st.Problems[i]
		p.Time = p.Time.In(loc)
		if !p.AckedAt.IsZero() {
			p.AckedAt = p.AckedAt.In(loc)
		}
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.deps.Thinker != nil { // a reload may switch modes
		st.Mode = "llm"
	}
	wall := e.deps.Wall()
	st.Now = wall.In(loc).Round(time.Second)
	st.ClockPlausible = Plausible(wall, e.cfg.BuildTime)
	st.Uptime = e.deps.Clock.Since(e.start).Round(time.Second)
	switch {
	case e.cfg.Interval == 0 && e.cfg.Schedule == nil:
		st.HeartbeatsOff = e.cfg.Off
		if st.HeartbeatsOff == "" {
			st.HeartbeatsOff = "no interval and no schedule"
		}
	case !e.nextAt.IsZero():
		st.NextRun = e.nextAt.In(loc).Round(time.Second)
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
	st.Rules = e.ruleStatus()
	if e.last != nil {
		st.Snapshot = e.last.Clone()
		stored, ok = *st.Snapshot, true
	}
	if ok {
		// The last sample's, or with none the state file's: the CLI
		// without a daemon shows what is usual too.
		st.Baselines = e.bands(stored, wall, loc)
	}
	st.Unusual = e.base.Unusual()
	st.SensorErrors = map[string]string{}
	if ok {
		maps.Copy(st.SensorErrors, stored.Errors)
		st.SensorsAt = stored.Time.In(loc).Round(time.Second)
	}
	return st, nil
}

// ruleStatus reports every rule in config order, evaluated against the last
// sample (its readings and the history as it was then), so nothing is
// computed on quiet samples. Without a sample (a daemon just started, or
// `vigil status` with none running) a rule is unknown unless its persisted
// state says it is firing. Caller holds e.mu.
func (e *Engine) ruleStatus() []RuleStatus {
	var env *snapEnv
	if e.last != nil {
		env = &snapEnv{e: e, snap: *e.last, now: e.lastAt}
	}
	out := make([]RuleStatus, 0, len(e.cfg.Rules))
	for _, r := range e.cfg.Rules {
		rr := e.rules[r.Spec.Name]
		rs := RuleStatus{Name: r.Spec.Name, State: RuleUnknown}
		switch {
		case r.Disabled && !rr.state.Firing:
			rs.State = RuleDisabled
			out = append(out, rs)
			continue
		case rr.state.Firing:
			rs.State, rs.Since = RuleFiring, wallOf(e, rr.state.Since).In(e.cfg.Location)
		case env == nil:
		case !rr.state.PendingSince.IsZero():
			rs.State, rs.Since = RulePending, wallOf(e, rr.state.PendingSince).In(e.cfg.Location)
		default:
			if v, ok := r.Spec.When.Eval(env); ok {
				rs.State = RuleOK
				if v { // held, but not yet recorded as pending or firing
					rs.State = RulePending
				}
			}
		}
		if env != nil {
			rs.Seen, rs.Error = seen(&r.Spec, env)
		}
		out = append(out, rs)
	}
	return out
}

// seen lists the readings a rule's conditions use with their units
// ("air.temperature=38.1 °C", "?" when missing) and the errors of the
// sensors they name.
func seen(spec *rule.Spec, env *snapEnv) (values, errs string) {
	keys := spec.When.Keys()
	sensors := spec.When.Sensors()
	if spec.Clear != nil {
		keys = append(keys, spec.Clear.Keys()...)
		sensors = append(sensors, spec.Clear.Sensors()...)
	}
	slices.Sort(keys)
	slices.Sort(sensors)
	var vs, es []string
	keys = slices.Compact(keys)
	for _, k := range keys {
		v, ok := env.format(k)
		if !ok {
			v = "?"
		}
		vs = append(vs, k+"="+v)
	}
	for _, s := range slices.Compact(sensors) {
		if msg, failed := env.snap.Errors[s]; failed {
			vs = append(vs, "error("+s+")=true")
			es = append(es, msg)
		} else if !slices.ContainsFunc(keys, func(k string) bool { return strings.HasPrefix(k, s+".") }) {
			vs = append(vs, "error("+s+")=false")
		}
	}
	return strings.Join(vs, " "), strings.Join(es, "; ")
}
