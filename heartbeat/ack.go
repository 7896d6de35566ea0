package heartbeat

// Acknowledge policy (vigil ack, Telegram's /ack and Acknowledge button,
// MQTT cmd/ack, the status page's button; [manage] remote gates the remote
// ones):
//   - An ack names a problem that fires now: a rule by its name, the LLM's
//     alert as "llm", a system fault by its kind (llm_unreachable), or any
//     of them by the id of an alert sent for this firing (the firing alert
//     or one of its reminders: each Telegram message carries one). No name
//     acknowledges the one problem firing unacknowledged; with several it
//     refuses to guess (ErrAmbiguous) and names them. A notice is no
//     problem (ErrNotice); an alert of a firing that resolved since is no
//     longer firing (ErrNotFiring).
//   - An acknowledged problem is not re-notified until it resolves: a
//     rule's renotify, and the LLM's re-sending of its alert once
//     alert_cooldown has passed (the run records reason "acknowledged").
//     A more severe LLM alert is news: it is sent, and the LLM's alert is
//     unacknowledged again. The problem still resolves with one message,
//     which carries who acknowledged it and when (acked_by, acked_at).
//   - The ack is stored (who: the channel and, from Telegram, the chat,
//     the user and the name; when: the wall clock) in the same state file
//     as the problem, and deleted in the transaction that records its
//     resolution: a problem that resolves and fires again is a new alert,
//     unacknowledged. Acknowledging an acknowledged problem changes
//     nothing and says who did it first.

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/vigil-iot/vigil/alert"
	"github.com/vigil-iot/vigil/store"
	"github.com/vigil-iot/vigil/transport"
)

// ReasonAcknowledged is the reason of a run whose LLM alert was held back
// because it is acknowledged.
const ReasonAcknowledged = "acknowledged"

// Errors of Ack, for errors.Is: the refusals every channel shares,
// declared in package transport so that a transport can tell them apart.
var (
	ErrNotFiring = transport.ErrNotFiring // names no problem firing now
	ErrNotice    = transport.ErrNotice    // a notice's id
	ErrAmbiguous = transport.ErrAmbiguous // no name, several firing
)

// Acked is what Ack did.
type Acked struct {
	// Problem is the problem acknowledged, with AckedBy and AckedAt.
	Problem alert.Alert
	// Alerts are the ids of the alerts sent for this firing, newest
	// first (its firing alert and reminders): the messages a transport
	// edits to say it was acknowledged.
	Alerts []string
	// Already: it was acknowledged before, by Problem.AckedBy; nothing
	// changed.
	Already bool
}

// Ack acknowledges the problem target names (see the policy above), as
// the source in ctx (transport.SourceOf), and records it in the state
// file. The returned Problem carries the ack.
func (e *Engine) Ack(ctx context.Context, target string) (Acked, error) {
	ps, logged, err := e.problems()
	if err != nil {
		return Acked{}, err
	}
	p, err := e.ackTarget(target, ps, logged)
	if err != nil {
		return Acked{}, err
	}
	out := Acked{Problem: p, Alerts: firingAlerts(p, logged)}
	if p.AckedBy != "" {
		out.Already = true
		return out, nil
	}
	ack := store.ProblemAck{AlertID: p.ID, By: transport.SourceOf(ctx).Who(),
		At: e.deps.Wall().UTC().Round(time.Millisecond)}
	e.mu.Lock() // the sample loop decides on reminders under it
	defer e.mu.Unlock()
	err = e.deps.DB.Update(func(tx *store.Tx) error {
		id, firing, err := firingNow(tx, p)
		if err != nil {
			return err
		}
		if !firing {
			return notFiring(p.Name() + " resolved just now")
		}
		ack.AlertID = id
		return tx.PutProblemAck(p.Key(), ack)
	})
	if err != nil {
		return Acked{}, fmt.Errorf("ack %s: %w", p.Name(), err)
	}
	e.acks[p.Key()] = ack
	out.Problem.AckedBy, out.Problem.AckedAt = ack.By, ack.At
	return out, nil
}

// notFiring is an ack's refusal of what is not firing now, in its own
// words: it is ErrNotFiring (the control socket's not_firing code), and
// reads as the reason alone, not the reason and then "not firing".
type notFiring string

func (e notFiring) Error() string      { return string(e) }
func (notFiring) Is(target error) bool { return target == ErrNotFiring }

// ackTarget finds the problem target names among the firing ones, ps.
func (e *Engine) ackTarget(target string, ps []alert.Alert, logged []alert.Alert) (alert.Alert, error) {
	if target == "" {
		var open []alert.Alert
		for _, p := range ps {
			if p.AckedBy == "" {
				open = append(open, p)
			}
		}
		switch {
		case len(open) == 1:
			return open[0], nil
		case len(open) > 1:
			names := make([]string, len(open))
			for i, p := range open {
				names[i] = fmt.Sprintf("%s (%s, %s)", p.Name(), p.Severity, p.ID)
			}
			return alert.Alert{}, fmt.Errorf("%w: name the one to acknowledge: %s", ErrAmbiguous, strings.Join(names, ", "))
		case len(ps) > 0:
			return alert.Alert{}, notFiring("nothing to acknowledge: every problem firing is acknowledged already")
		}
		return alert.Alert{}, notFiring("nothing to acknowledge: no problem is firing")
	}
	for _, p := range ps {
		if target == p.Name() || target == p.ID {
			return p, nil
		}
	}
	for _, a := range logged {
		if a.ID != target {
			continue
		}
		if a.IsNotice() {
			return alert.Alert{}, fmt.Errorf("alert %s: %w", target, ErrNotice)
		}
		for _, p := range ps {
			if p.Key() == a.Key() && slices.Contains(firingAlerts(p, logged), target) {
				return p, nil
			}
		}
		return alert.Alert{}, notFiring(fmt.Sprintf("alert %s (%s) is no longer firing: it resolved", target, a.Name()))
	}
	e.mu.Lock()
	_, isRule := e.rules[target]
	e.mu.Unlock()
	if isRule {
		return alert.Alert{}, notFiring("rule " + target + " is not firing")
	}
	return alert.Alert{}, notFiring(fmt.Sprintf("nothing firing is named %q (name a rule, llm, or an alert id: vigil status lists the problems firing)", target))
}

// firingAlerts returns the ids of the alerts sent for p's firing, newest
// first: the logged alerts of its problem since the last one that
// resolved it. The log (newest first) may have lost the oldest.
func firingAlerts(p alert.Alert, logged []alert.Alert) []string {
	var ids []string
	for _, a := range logged {
		if a.Key() != p.Key() {
			continue
		}
		if a.State == alert.StateResolved {
			break
		}
		if a.IsProblem() {
			ids = append(ids, a.ID)
		}
	}
	if p.ID != "" && !slices.Contains(ids, p.ID) {
		ids = append(ids, p.ID)
	}
	return ids
}

// firingNow reports, from the state file in tx, whether p is still firing
// and the id that identifies its firing: a rule's firing alert, the LLM's
// open alert.
func firingNow(tx *store.Tx, p alert.Alert) (id string, firing bool, err error) {
	switch {
	case p.Source == alert.SourceRule:
		rs, err := tx.RuleStates()
		if err != nil {
			return "", false, err
		}
		s, ok := rs[p.Rule]
		return s.AlertID, ok && s.Firing, nil
	case p.Source == alert.SourceLLM:
		open, err := openLLM(tx)
		if err != nil || open == nil {
			return "", false, err
		}
		return open.ID, true, nil
	case p.Rule == ruleLLMUnreachable || p.Rule == ruleHeartbeatFailed:
		st, err := tx.State()
		if err != nil {
			return "", false, err
		}
		return p.ID, (p.Rule == ruleLLMUnreachable && st.LLMDown) || (p.Rule == ruleHeartbeatFailed && st.FailureAlerted), nil
	}
	return p.ID, true, nil // state_lost: firing while the process that raised it runs
}

// ruleAck returns the ack of a firing rule, if it has one for this firing
// (alertID: the alert that opened it). Caller holds e.mu.
func (e *Engine) ruleAck(name, alertID string) (store.ProblemAck, bool) {
	a, ok := e.acks[ruleKey(name)]
	return a, ok && a.AlertID == alertID
}

// ruleKey is the problem key (alert.Alert.Key) of the rule name, under
// which its ack is kept.
func ruleKey(name string) string {
	return alert.Alert{Source: alert.SourceRule, Rule: name}.Key()
}
