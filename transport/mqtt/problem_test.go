package mqtt

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"

	"github.com/vigil-iot/vigil/alert"
	"github.com/vigil-iot/vigil/internal/mosquittotest"
)

// Tests of the Home Assistant problem sensor against a real mosquitto:
// notices never turn it on, and every connection rebuilds it.

const (
	topicProblem = "vigil/dev1/problem"
	topicAttrs   = "vigil/dev1/problem/attributes"
)

func systemAlert(id, rule, state string, sev alert.Severity) alert.Alert {
	return alert.Alert{ID: id, Device: "dev1", Time: time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC),
		Severity: sev, Source: alert.SourceSystem, Rule: rule, State: state, Summary: rule + " happened"}
}

// firingRules decodes the problem attributes into "source/rule" keys.
func firingRules(t *testing.T, payload string) []string {
	t.Helper()
	var p struct {
		Firing []problemAlert `json:"firing"`
	}
	if err := json.Unmarshal([]byte(payload), &p); err != nil {
		t.Fatalf("problem attributes %q: %v", payload, err)
	}
	out := []string{}
	for _, f := range p.Firing {
		out = append(out, f.Source+"/"+f.Rule)
	}
	return out
}

// retainedProblem reads the retained problem state and its attributes as a
// subscriber that comes now sees them.
func retainedProblem(t *testing.T, url string) (state string, firing []string) {
	t.Helper()
	late := mosquittotest.Subscribe(t, url, topicProblem, topicAttrs)
	return late.Next(topicProblem, wait5).Payload, firingRules(t, late.Wait(topicAttrs, wait5, nil).Payload)
}

// TestNoticesLeaveProblemOff: a setting change, a checklist replaced, notes
// cleared and a test alert are delivered on the alert topic, but the
// problem sensor stays OFF, also for notices written the old way (a firing
// system alert with a notice rule); a firing rule still turns it ON.
func TestNoticesLeaveProblemOff(t *testing.T) {
	b := mosquittotest.Start(t, mosquittotest.Options{})
	sub := mosquittotest.Subscribe(t, b.URL(), "vigil/dev1/alert", topicProblem)
	c := newTestClient(t, b.URL(), Config{HomeAssistant: true}, nil)
	runClient(t, c)
	waitConnected(t, c)

	ctx, cancel := context.WithTimeout(context.Background(), wait5)
	defer cancel()
	notices := []alert.Alert{
		systemAlert("n1", alert.RuleSetting, alert.StateNotice, alert.Info),
		systemAlert("n2", alert.RuleChecklist, alert.StateFiring, alert.Info), // the old form
		systemAlert("n3", alert.RuleNotes, alert.StateNotice, alert.Info),
		systemAlert("n4", alert.RuleTest, alert.StateNotice, alert.Critical),
		systemAlert("n5", alert.RuleSetting, alert.StateFiring, alert.Info), // the old form
	}
	for _, a := range notices {
		if err := c.Notify(ctx, a); err != nil {
			t.Fatalf("Notify(%s) = %v", a.ID, err)
		}
	}
	sub.WaitN("vigil/dev1/alert", len(notices), wait5)
	sub.Maybe(topicProblem, 300*time.Millisecond) // whatever the connection published
	for _, m := range sub.On(topicProblem) {
		if m.Payload != "OFF" {
			t.Errorf("problem = %q after notices only, want never ON", m.Payload)
		}
	}
	if state, firing := retainedProblem(t, b.URL()); state != "OFF" || len(firing) != 0 {
		t.Errorf("retained problem after notices = %q firing %v, want OFF with none", state, firing)
	}

	// A problem still turns it on, and its resolution off.
	a := testAlert("p1", alert.Critical)
	if err := c.Notify(ctx, a); err != nil {
		t.Fatal(err)
	}
	if state, firing := retainedProblem(t, b.URL()); state != "ON" || len(firing) != 1 || firing[0] != "rule/too_hot" {
		t.Errorf("retained problem while too_hot fires = %q firing %v, want ON with rule/too_hot", state, firing)
	}
	if err := c.Notify(ctx, systemAlert("n6", alert.RuleSetting, alert.StateNotice, alert.Info)); err != nil {
		t.Fatal(err)
	}
	a.ID, a.State = "p2", alert.StateResolved
	if err := c.Notify(ctx, a); err != nil {
		t.Fatal(err)
	}
	if state, firing := retainedProblem(t, b.URL()); state != "OFF" || len(firing) != 0 {
		t.Errorf("retained problem after the resolution = %q firing %v, want OFF with none", state, firing)
	}
}

// TestStaleProblemReplacedOnConnect: a retained ON left on the broker by an
// earlier run (a notice that turned it on, a crash) does not outlive the
// next connection: the client publishes what it knows, here nothing firing.
func TestStaleProblemReplacedOnConnect(t *testing.T) {
	b := mosquittotest.Start(t, mosquittotest.Options{})
	old := mosquittotest.Subscribe(t, b.URL())
	old.Publish(topicAttrs, true, `{"firing":[{"severity":"info","source":"system","rule":"setting","summary":"x","time":"2025-03-01T12:00:00Z"}]}`)
	old.Publish(topicProblem, true, "ON")

	c := newTestClient(t, b.URL(), Config{HomeAssistant: true}, nil)
	runClient(t, c)
	waitConnected(t, c)
	sub := mosquittotest.Subscribe(t, b.URL(), topicProblem)
	sub.Wait(topicProblem, wait5, func(m mosquittotest.Message) bool { return m.Payload == "OFF" })
	if state, firing := retainedProblem(t, b.URL()); state != "OFF" || len(firing) != 0 {
		t.Errorf("retained problem after connecting = %q firing %v, want OFF with none", state, firing)
	}
}

// problems is a ProblemSource whose answer a test changes.
type problems struct {
	mu  sync.Mutex
	now []alert.Alert
	err error
}

func (p *problems) set(as []alert.Alert, err error) {
	p.mu.Lock()
	p.now, p.err = as, err
	p.mu.Unlock()
}

func (p *problems) Problems(context.Context) ([]alert.Alert, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]alert.Alert(nil), p.now...), p.err
}

// restartBroker kills the broker, runs meanwhile (if set) once c noticed,
// and starts the broker again, without its retained messages, until c is
// back.
func restartBroker(t *testing.T, b *mosquittotest.Broker, c *Client, meanwhile func()) {
	t.Helper()
	b.Kill()
	waitFor(t, "client to notice the broker is gone", 10*time.Second, func() bool { return !c.Connected() })
	if meanwhile != nil {
		meanwhile()
	}
	b.Start()
	waitConnected(t, c)
}

// TestProblemRebuiltFromSourceOnEveryConnect: the problem sensor is rebuilt
// from the owner's durable state after every connection: a broker that
// restarted without its retained messages gets ON back, with no alert
// delivered meanwhile; one that comes back after the rule resolved gets
// OFF. Notices and alerts below min_severity in the answer are left out.
func TestProblemRebuiltFromSourceOnEveryConnect(t *testing.T) {
	b := mosquittotest.Start(t, mosquittotest.Options{})
	src := &problems{}
	rule := testAlert("r1", alert.Critical)
	src.set([]alert.Alert{rule,
		systemAlert("n1", alert.RuleSetting, alert.StateFiring, alert.Info), // an old-form notice
		systemAlert("w1", "llm_unreachable", alert.StateFiring, alert.Info), // below min_severity
	}, nil)
	c := newTestClient(t, b.URL(), Config{HomeAssistant: true, MinSeverity: alert.Warning, Problems: src}, nil)
	runClient(t, c)
	waitConnected(t, c)
	if state, firing := retainedProblem(t, b.URL()); state != "ON" || !slices.Equal(firing, []string{"rule/too_hot"}) {
		t.Fatalf("retained problem after connecting = %q firing %v, want ON with rule/too_hot only", state, firing)
	}

	// The broker restarts and forgets every retained message.
	restartBroker(t, b, c, nil)
	if state, firing := retainedProblem(t, b.URL()); state != "ON" || !slices.Equal(firing, []string{"rule/too_hot"}) {
		t.Errorf("retained problem after the broker restarted = %q firing %v, want ON with rule/too_hot", state, firing)
	}

	// The rule resolved while the broker was away: OFF on reconnect.
	restartBroker(t, b, c, func() { src.set(nil, nil) })
	sub := mosquittotest.Subscribe(t, b.URL(), topicProblem)
	sub.Wait(topicProblem, wait5, func(m mosquittotest.Message) bool { return m.Payload == "OFF" })

	// A source that fails leaves what the client knows; it does not
	// clear the sensor.
	ctx, cancel := context.WithTimeout(context.Background(), wait5)
	defer cancel()
	if err := c.Notify(ctx, rule); err != nil {
		t.Fatal(err)
	}
	restartBroker(t, b, c, func() { src.set(nil, errors.New("state file busy")) })
	if state, firing := retainedProblem(t, b.URL()); state != "ON" || !slices.Equal(firing, []string{"rule/too_hot"}) {
		t.Errorf("retained problem after a failed rebuild = %q firing %v, want ON with rule/too_hot (what was delivered)", state, firing)
	}
}

// TestReadyAtFirstConnect: Ready is closed once the first connection is
// up, not before.
func TestReadyAtFirstConnect(t *testing.T) {
	b := mosquittotest.New(t, mosquittotest.Options{}) // not started yet
	clock := clockwork.NewFakeClock()
	c := newTestClient(t, b.URL(), Config{Clock: clock}, nil)
	runClient(t, c)
	ctx, cancel := context.WithTimeout(context.Background(), wait5)
	defer cancel()
	if err := clock.BlockUntilContext(ctx, 1); err != nil { // the first attempt was refused
		t.Fatal(err)
	}
	select {
	case <-c.Ready():
		t.Fatal("Ready closed before any connection")
	default:
	}
	b.Start()
	clock.Advance(time.Second)
	select {
	case <-c.Ready():
	case <-time.After(10 * time.Second):
		t.Fatal("Ready not closed 10s after the broker started")
	}
}

// TestAckInProblemAttributes: an ack shows in the problem sensor's
// attributes (id, acked_by, acked_at of the firing problem), from the
// owner's problems, or, without a source, from the problem delivered.
func TestAckInProblemAttributes(t *testing.T) {
	ackedAt := time.Date(2025, 3, 1, 12, 5, 0, 0, time.UTC)
	for _, withSource := range []bool{true, false} {
		t.Run(map[bool]string{true: "source", false: "delivered"}[withSource], func(t *testing.T) {
			b := mosquittotest.Start(t, mosquittotest.Options{})
			rule := testAlert("r1", alert.Critical)
			cfg := Config{HomeAssistant: true}
			src := &problems{}
			if withSource {
				src.set([]alert.Alert{rule}, nil)
				cfg.Problems = src
			}
			c := newTestClient(t, b.URL(), cfg, nil)
			runClient(t, c)
			waitConnected(t, c)
			ctx, cancel := context.WithTimeout(context.Background(), wait5)
			defer cancel()
			if err := c.Notify(ctx, rule); err != nil {
				t.Fatal(err)
			}
			acked := rule
			acked.AckedBy, acked.AckedAt = "telegram chat 1 user 2 (@ann)", ackedAt
			src.set([]alert.Alert{acked}, nil)
			sub := mosquittotest.Subscribe(t, b.URL(), topicAttrs)
			if err := c.Acknowledged(ctx, acked, []string{"r1"}); err != nil {
				t.Fatalf("Acknowledged() = %v", err)
			}
			m := sub.Wait(topicAttrs, wait5, func(m mosquittotest.Message) bool { return strings.Contains(m.Payload, "acked_by") })
			var p struct {
				Firing []problemAlert `json:"firing"`
			}
			if err := json.Unmarshal([]byte(m.Payload), &p); err != nil {
				t.Fatal(err)
			}
			if len(p.Firing) != 1 || p.Firing[0].ID != "r1" || p.Firing[0].AckedBy != acked.AckedBy || !p.Firing[0].AckedAt.Equal(ackedAt) {
				t.Errorf("problem attributes after the ack = %s, want too_hot with id r1, acked_by and acked_at", m.Payload)
			}
		})
	}
}
