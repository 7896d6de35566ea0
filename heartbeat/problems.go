package heartbeat

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/vigil-iot/vigil/alert"
	"github.com/vigil-iot/vigil/store"
)

// Policy: what is firing now, for a consumer that rebuilds a problem
// indicator (the MQTT problem sensor after every connect) instead of
// trusting what it published before a restart.
//
//   - a rule: while its durable rule state says firing;
//   - llm_unreachable and heartbeat_failed: while the durable state says
//     they were sent and not resolved;
//   - the LLM's alert: from the run ring, the newest run that queued one,
//     unless a heartbeat ended ok after it (an ok run resolves the LLM's
//     alert, queuing one resolved alert: tick.go);
//   - state_lost, which never resolves: while the process that raised it
//     runs.
//
// Each is the newest alert of its kind in the alert log, so the sensor
// shows what was sent; when the log no longer holds it, one made up from
// the state. A notice is never a problem. An acknowledged problem
// carries its ack (ack.go).

// Problems returns the problems firing now, from the engine's durable
// state (see the policy above), each with its ack (AckedBy, AckedAt) if
// it was acknowledged.
func (e *Engine) Problems(ctx context.Context) ([]alert.Alert, error) {
	ps, _, err := e.problems()
	return ps, err
}

// problems returns the problems firing now and the alert log they were
// read with (newest first), for Ack to look alert ids up in.
func (e *Engine) problems() (ps, logged []alert.Alert, err error) {
	e.mu.Lock()
	open := map[string]alert.Alert{} // by source/rule: made up, replaced by the logged alert
	ruleIDs := map[string]string{}   // a firing rule's key -> the alert that opened the firing
	for name, rr := range e.rules {
		if rr.state.Firing {
			since := wallOf(e, rr.state.Since)
			a := alert.Alert{ID: rr.alertID, Device: e.id, Time: since, Severity: rr.rule.Severity,
				Source: alert.SourceRule, Rule: name, State: alert.StateFiring,
				Summary: fmt.Sprintf("rule %s firing since %s", name, since.Format(time.RFC3339))}
			open[a.Key()] = a
			ruleIDs[a.Key()] = rr.alertID
		}
	}
	for _, f := range []struct {
		on   bool
		rule string
		text string
	}{{e.state.LLMDown, ruleLLMUnreachable, "LLM unreachable"}, {e.state.FailureAlerted, ruleHeartbeatFailed, "heartbeats failing"}} {
		if f.on {
			// Made up: the time of the last failed call, which kept it open.
			a := alert.Alert{Device: e.id, Time: e.state.LastLLMCall, Severity: alert.Warning,
				Source: alert.SourceSystem, Rule: f.rule, State: alert.StateFiring, Summary: f.text}
			open[a.Key()] = a
		}
	}
	raised := slices.Collect(maps.Values(e.raised))
	e.mu.Unlock()

	var llm *alert.Alert
	var acks map[string]store.ProblemAck
	err = e.deps.DB.View(func(tx *store.Tx) error {
		var err error
		if logged, err = tx.Alerts(0); err != nil {
			return err
		}
		if acks, err = tx.ProblemAcks(); err != nil {
			return err
		}
		llm, err = openLLM(tx)
		return err
	})
	if err != nil {
		return nil, nil, fmt.Errorf("read problems: %w", err)
	}
	// The newest logged alert of each open kind, if it is the firing one.
	seen := map[string]bool{}
	for _, a := range logged { // newest first
		k := a.Key()
		if _, ok := open[k]; !ok || seen[k] {
			continue
		}
		seen[k] = true
		if a.IsProblem() {
			open[k] = a
		}
	}
	out := slices.Collect(maps.Values(open))
	if llm != nil {
		out = append(out, *llm)
	}
	out = append(out, raised...)
	for i, p := range out {
		// What the log held from before it was redacted too, as Alerts.
		out[i].Summary = e.deps.Redactor.String(p.Summary)
		// An ack names the firing it acknowledged: a rule's by the alert
		// that opened it (its reminders have ids of their own), the others
		// by their alert. One of an earlier firing (a rule removed while
		// firing and back, a state_lost of an earlier process) is no ack.
		id := p.ID
		if p.Source == alert.SourceRule {
			id = ruleIDs[p.Key()]
		}
		if ack, ok := acks[p.Key()]; ok && ack.AlertID == id {
			out[i].AckedBy, out[i].AckedAt = ack.By, ack.At
		}
	}
	slices.SortFunc(out, func(a, b alert.Alert) int {
		if c := a.Time.Compare(b.Time); c != 0 {
			return c
		}
		return strings.Compare(a.Key(), b.Key())
	})
	return out, logged, nil
}

// openLLM finds the LLM's open alert in the state file: walking the runs
// newest first, none once one ended ok, else the first LLM alert a run
// queued (a run held back as a duplicate or acknowledged queued none, and
// the earlier alert stays open). Usually the newest run settles it.
func openLLM(tx *store.Tx) (*alert.Alert, error) {
	var queued [][]string // the alert ids of each run since the last ok one, newest first
	err := tx.WalkRuns(func(r store.Run) bool {
		if r.Outcome == OutcomeOK {
			return false
		}
		if len(r.Alerts) > 0 {
			queued = append(queued, r.Alerts)
		}
		return true
	})
	if err != nil || len(queued) == 0 {
		return nil, err
	}
	logged, err := tx.Alerts(0)
	if err != nil {
		return nil, err
	}
	for _, ids := range queued {
		for _, a := range logged {
			if a.Source == alert.SourceLLM && a.IsProblem() && slices.Contains(ids, a.ID) {
				return &a, nil
			}
		}
	}
	return nil, nil
}

// noteRaised keeps the system faults that never resolve (state_lost) among
// the problems for the life of the process. Caller holds e.mu, after the
// alerts were committed.
func (e *Engine) noteRaised(as []alert.Alert) {
	for _, a := range as {
		if a.Source == alert.SourceSystem && a.IsProblem() && a.Rule != ruleLLMUnreachable && a.Rule != ruleHeartbeatFailed {
			e.raised[a.Key()] = a
		}
	}
}
