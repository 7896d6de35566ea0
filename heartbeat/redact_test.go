package heartbeat

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/vigil-iot/vigil/agent"
	"github.com/vigil-iot/vigil/alert"
	"github.com/vigil-iot/vigil/redact"
	"github.com/vigil-iot/vigil/store"
)

// TestRunRecordsAreRedacted: what a Thinker returns passes the engine's
// redactor before it is stored or returned: the run's tool calls and
// error, the decision's text and the alert's summary; and what the state
// file holds from before (a run recorded unredacted) is redacted when
// Status and Alerts read it.
func TestRunRecordsAreRedacted(t *testing.T) {
	const secret = "q7Zt9wLmN3xK2pR8vB4c"
	h := newHarness(t, func(c *Config) { c.MaxLLMCallsPerDay = 0 })
	h.e.deps.Redactor = redact.New(secret)
	h.thinker.dec = agent.Decision{Outcome: agent.OutcomeAlert, Severity: alert.Warning, Summary: "saw " + secret,
		Escalation: "scout saw " + secret, ToolCalls: []string{`read_sensor {"name":"` + secret + `"}`}}
	h.sample()
	res, err := h.e.Check(context.Background(), CheckOptions{})
	if err != nil {
		t.Fatal(err)
	}
	h.thinker.dec, h.thinker.err = agent.Decision{ToolCalls: []string{secret + " {}"}}, errors.New("model said "+secret)
	failed, err := h.e.Check(context.Background(), CheckOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var stored []store.Run
	if err := h.db.View(func(tx *store.Tx) error { stored, err = tx.Runs(2); return err }); err != nil {
		t.Fatal(err)
	}
	if err := h.db.Update(func(tx *store.Tx) error { // written before redaction reached the run ring
		_, err := tx.AppendRun(store.Run{Start: h.wall.Now(), Outcome: OutcomeFailed, Error: "old " + secret, ToolCalls: []string{secret}})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	st, err := h.e.Status(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	alerts, err := h.e.Alerts(context.Background(), 10)
	if err != nil {
		t.Fatal(err)
	}
	var texts []string
	texts = append(texts, res.Decision.Summary, res.Decision.Escalation, failed.Run.Error)
	texts = append(texts, res.Run.ToolCalls...)
	texts = append(texts, res.Decision.ToolCalls...)
	texts = append(texts, failed.Run.ToolCalls...)
	for _, a := range append(res.Alerts, alerts...) {
		texts = append(texts, a.Summary)
	}
	for _, r := range append(st.Runs, stored...) {
		texts = append(texts, r.Error)
		texts = append(texts, r.ToolCalls...)
	}
	for _, e := range h.outbox() {
		texts = append(texts, e.Alert.Summary)
	}
	if len(st.Runs) != 3 || len(alerts) == 0 || len(stored) != 2 {
		t.Fatalf("%d runs in status, %d alerts, %d stored runs; want 3, some, 2", len(st.Runs), len(alerts), len(stored))
	}
	for _, s := range texts {
		if s == "" {
			continue // the alert's run has no error
		}
		if strings.Contains(s, secret) || !strings.Contains(s, redact.Mark) {
			t.Errorf("%q: want the secret shown as %s", s, redact.Mark)
		}
	}
	if got := res.Decision.Summary; got != "saw [redacted]" {
		t.Errorf("decision summary %q, want %q", got, "saw [redacted]")
	}
}

// TestProblemsFromBeforeRedactionAreRedacted: a problem whose alert the
// log holds from before redaction reached it (a reminder of a firing rule,
// logged unredacted) is redacted when Problems reads it, as Alerts does.
func TestProblemsFromBeforeRedactionAreRedacted(t *testing.T) {
	const secret = "q7Zt9wLmN3xK2pR8vB4c"
	h := newHarness(t, nil)
	h.e.deps.Redactor = redact.New(secret)
	h.sensor.set(40)
	h.sample() // too_hot fires
	old := alert.Alert{ID: "old-1", Device: "test-dev", Time: h.wall.Now(), Severity: alert.Critical,
		Source: alert.SourceRule, Rule: "too_hot", State: alert.StateFiring, Summary: "still firing: token " + secret}
	if err := h.db.Update(func(tx *store.Tx) error { _, _, err := tx.Enqueue(old); return err }); err != nil {
		t.Fatal(err)
	}
	ps, err := h.e.Problems(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(ps) != 1 || ps[0].ID != old.ID {
		t.Fatalf("Problems() = %+v, want too_hot shown by its newest logged alert, %s", ps, old.ID)
	}
	if s := ps[0].Summary; strings.Contains(s, secret) || !strings.Contains(s, redact.Mark) {
		t.Errorf("Problems() summary %q: want the secret shown as %s", s, redact.Mark)
	}
}
