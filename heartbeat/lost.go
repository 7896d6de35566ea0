package heartbeat

import (
	"fmt"
	"maps"
	"strings"

	"github.com/vigil-iot/vigil/alert"
	"github.com/vigil-iot/vigil/store"
)

// RuleStateLost names the critical system alert raised when the state file
// was found corrupt, moved aside and replaced by an empty one.
const RuleStateLost = "state_lost"

// Rules of the system faults the LLM heartbeat raises and resolves.
const (
	ruleLLMUnreachable  = "llm_unreachable"
	ruleHeartbeatFailed = "heartbeat_failed"
)

// noteLost raises state_lost once after the store replaced a corrupt file,
// at start or while running. A reset while running loses only what was on
// disk alone (the outbox, fingerprints, the run ring, history, the stored
// settings, the notes, the Telegram offset): the engine writes what it
// holds in memory (counters, pause, rule states, acks) to the new file in
// the same transaction. Called at the start of every sample, so the alert is
// queued within one sample interval and rules keep running.
func (e *Engine) noteLost() {
	if e.lost == nil {
		l, ok := e.deps.DB.TakeLost()
		if !ok {
			return
		}
		e.lost = &l
		e.log.Error("state file was corrupt: moved aside, started a fresh one", "path", l.Path,
			"moved_to", l.MovedTo, "cause", l.Cause)
	}
	l := *e.lost
	e.mu.Lock()
	a := e.newAlert(alert.Critical, alert.SourceSystem, RuleStateLost, alert.StateFiring, lostSummary(l))
	st := e.state
	st.Counters = cloneCounters(e.state.Counters)
	st.Counters["state_lost"]++
	st.Counters["alerts"]++
	st.LastAlert, st.LastAlertAt = a.Summary, a.Time
	rules := map[string]store.RuleState{}
	for name, rr := range e.rules {
		if rr.state.Firing {
			rules[name] = store.RuleState{Firing: true, Since: wallOf(e, rr.state.Since),
				LastNotified: wallOf(e, rr.state.LastNotified), AlertID: rr.alertID}
		}
	}
	var pause *store.Pause
	if e.pause != nil {
		p := *e.pause
		pause = &p
	}
	acks := maps.Clone(e.acks)
	e.mu.Unlock()
	baselines := e.baselineBlob()
	err := e.deps.DB.Update(func(tx *store.Tx) error {
		if baselines != nil {
			if err := tx.PutBaselines(baselines); err != nil {
				return err
			}
		}
		for name, rs := range rules {
			if err := tx.PutRuleState(name, rs); err != nil {
				return err
			}
		}
		for key, ack := range acks {
			if err := tx.PutProblemAck(key, ack); err != nil {
				return err
			}
		}
		if pause != nil {
			if err := tx.SetPause(*pause); err != nil {
				return err
			}
		}
		if err := e.enqueue(tx, []alert.Alert{a}, &st); err != nil {
			return err
		}
		return tx.PutState(st)
	})
	if err != nil {
		e.log.Error("queue state_lost alert", "err", err) // tried again next sample
		return
	}
	e.lost = nil
	e.mu.Lock()
	e.state = st
	e.noteRaised([]alert.Alert{a})
	e.mu.Unlock()
	e.wakeAll()
}

// lostSummary says what the reset cost.
func lostSummary(l store.Lost) string {
	var b strings.Builder
	fmt.Fprintf(&b, "state file %s was corrupt and was replaced by an empty one; ", l.Path)
	// What lives only in the file, whichever way it was lost.
	const telegram = "the Telegram update offset, alerts held for the Telegram digest (quiet hours, max_per_hour) and the Telegram cap's count, " +
		"Telegram's alert messages (an ack no longer edits them)"
	if l.AtOpen {
		b.WriteString("lost: queued alerts not yet delivered, pause, counters, rule states, acknowledgements, alert cooldowns, run and sensor history, " +
			"what is usual for each reading at each hour (the baselines: learnt again over two days), " +
			"run-time settings (vigil set: the config file's values apply again), the model's notes, " + telegram)
	} else {
		b.WriteString("lost: queued alerts not yet delivered, alert cooldowns, run and sensor history, the model's notes, " + telegram + ", " +
			"and the stored run-time settings (vigil set: still in force until the daemon restarts, then the config file's values apply; set them again) " +
			"(pause, counters, rule states, what is usual at each hour (the baselines) and acknowledgements were kept from memory)")
	}
	if l.MovedTo != "" {
		fmt.Fprintf(&b, "; the damaged file is %s", l.MovedTo)
	}
	fmt.Fprintf(&b, " (%s)", l.Cause)
	return b.String()
}
