package heartbeat

import (
	"context"
	"fmt"

	"github.com/vigil-iot/vigil/alert"
	"github.com/vigil-iot/vigil/store"
)

// TestAlert queues a clearly marked test alert (a notice: source system,
// rule "test", state "notice") through the real outbox, so a person can watch delivery work end
// to end (vigil test-alert). It needs no LLM and bypasses the flood guard:
// a person asked for it. With only set, only that transport delivers it;
// the others acknowledge it without sending. An engine that does not
// deliver (vigil test-alert with no daemon running) leaves it queued for
// the next `vigil run`. The caller checks that only names a configured
// transport: an engine without a daemon's transports cannot.
func (e *Engine) TestAlert(ctx context.Context, sev alert.Severity, only string) (alert.Alert, error) {
	a, err := e.queueSystem(sev, alert.RuleTest, alert.TestSummary(e.id), only)
	if err != nil {
		return alert.Alert{}, fmt.Errorf("queue test alert: %w", err)
	}
	e.log.Info("test alert queued", "id", a.ID, "severity", sev.String(), "transport", transportText(only))
	e.wakeAll()
	return a, nil
}

func transportText(only string) string {
	if only == "" {
		return "all"
	}
	return only
}

// Notice queues an info notice (source system, rule kind, state "notice")
// through the real outbox, bypassing the flood guard like TestAlert: the
// audit of an accepted change ("heartbeat.interval set to 10m by cli"),
// which every transport delivers and none counts as a problem.
func (e *Engine) Notice(ctx context.Context, kind, summary string) (alert.Alert, error) {
	a, err := e.queueSystem(alert.Info, kind, summary, "")
	if err != nil {
		return alert.Alert{}, fmt.Errorf("queue %s notice: %w", kind, err)
	}
	e.wakeAll()
	return a, nil
}

// queueSystem queues one system notice for every transport (or only the
// one named) in one commit, past the flood guard: events a person asked
// for, one at a time. A notice is no problem: it is counted as a notice,
// and it is not the last alert the model is told of.
func (e *Engine) queueSystem(sev alert.Severity, kind, summary, only string) (alert.Alert, error) {
	a := e.newAlert(sev, alert.SourceSystem, kind, alert.StateNotice, summary)
	a.Transport = only
	return e.queueNotice(a)
}

// ProposalNotice queues the notice that brings a rule the model proposed
// to a person (source llm, rule the proposed name, state notice, with the
// proposal and its backtest), past the flood guard like Notice. It is
// never a problem: only a person's decision changes anything.
func (e *Engine) ProposalNotice(ctx context.Context, p alert.Proposal, summary string) (alert.Alert, error) {
	a := e.newAlert(alert.Info, alert.SourceLLM, p.Name, alert.StateNotice, summary)
	p.Why = e.deps.Redactor.String(p.Why)
	a.Proposal = &p
	a, err := e.queueNotice(a)
	if err != nil {
		return alert.Alert{}, fmt.Errorf("queue the proposal's notice: %w", err)
	}
	e.wakeAll()
	return a, nil
}

// queueNotice queues the notice a for its transports in one commit.
func (e *Engine) queueNotice(a alert.Alert) (alert.Alert, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	st := e.state
	st.Counters = cloneCounters(e.state.Counters)
	st.Counters["notices"]++
	err := e.deps.DB.Update(func(tx *store.Tx) error {
		if err := e.enqueue(tx, []alert.Alert{a}, &st); err != nil {
			return err
		}
		return tx.PutState(st)
	})
	if err != nil {
		return alert.Alert{}, err
	}
	e.state = st
	return a, nil
}
