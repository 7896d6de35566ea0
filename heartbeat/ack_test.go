package heartbeat

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/vigil-iot/vigil/agent"
	"github.com/vigil-iot/vigil/alert"
	"github.com/vigil-iot/vigil/transport"
)

// renotifyEvery sets too_hot's renotify.
func renotifyEvery(d time.Duration) func(*Config) {
	return func(c *Config) { c.Rules[0].Spec.Renotify = d }
}

// ack acknowledges target as the control socket does.
func (h *harness) ack(target string) (Acked, error) {
	h.t.Helper()
	ctx := transport.WithSource(context.Background(), transport.Source{Channel: transport.ChannelSocket})
	return h.e.Ack(ctx, target)
}

// ruleAlerts returns too_hot's alerts in the outbox by state.
func (h *harness) ruleAlerts() (firing, resolved []alert.Alert) {
	h.t.Helper()
	for _, e := range h.outbox() {
		if e.Alert.Rule != "too_hot" {
			continue
		}
		switch e.Alert.State {
		case alert.StateFiring:
			firing = append(firing, e.Alert)
		case alert.StateResolved:
			resolved = append(resolved, e.Alert)
		}
	}
	return firing, resolved
}

// samples advances the clocks by d, one sample interval at a time, sampling each.
func (h *harness) samples(d time.Duration) {
	h.t.Helper()
	for end := h.clock.Now().Add(d); h.clock.Now().Before(end); {
		h.clock.Advance(h.cfg.SampleInterval)
		h.sample()
	}
}

// TestAckStopsRenotify: a firing rule with renotify = 1m re-notifies until
// it is acknowledged; then it sends nothing until it resolves, with one
// resolved alert that carries who acknowledged it and when. The ack is in
// Problems and Status. A restart keeps it. Firing again is a new alert,
// unacknowledged, that re-notifies again.
func TestAckStopsRenotify(t *testing.T) {
	h := newHarness(t, renotifyEvery(time.Minute))
	h.sensor.set(40)
	h.sample()
	h.samples(130 * time.Second)
	firing, _ := h.ruleAlerts()
	if len(firing) != 3 {
		t.Fatalf("%d firing alerts over 2m10s with renotify 1m, want 3 (the firing and two reminders)", len(firing))
	}
	ackAt := h.wall.Now()
	got, err := h.ack("too_hot")
	if err != nil {
		t.Fatalf("Ack(too_hot) = %v", err)
	}
	if got.Problem.Rule != "too_hot" || got.Problem.AckedBy != "socket" || !got.Problem.AckedAt.Equal(ackAt) || got.Already {
		t.Errorf("Ack(too_hot) = %+v, want too_hot acknowledged by socket at %v", got.Problem, ackAt)
	}
	if len(got.Alerts) != 3 {
		t.Errorf("Ack(too_hot) names %d alerts sent for the firing, want 3 (the firing and its reminders): %v", len(got.Alerts), got.Alerts)
	}
	h.samples(75 * time.Second)
	h.restart()
	h.samples(5 * time.Minute)
	if firing, _ := h.ruleAlerts(); len(firing) != 3 {
		t.Fatalf("%d firing alerts after the ack, 6m15s and a restart later, want still 3: no reminder after an ack", len(firing))
	}
	_, ps := problemKeys(t, h.e)
	if len(ps) != 1 || ps[0].AckedBy != "socket" || !ps[0].AckedAt.Equal(ackAt) {
		t.Errorf("Problems() after the restart = %+v, want too_hot acknowledged by socket", ps)
	}
	st, err := h.e.Status(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Problems) != 1 || st.Problems[0].AckedBy != "socket" {
		t.Errorf("Status().Problems = %+v, want too_hot acknowledged by socket", st.Problems)
	}
	if again, err := h.ack("too_hot"); err != nil || !again.Already || again.Problem.AckedBy != "socket" {
		t.Errorf("a second Ack(too_hot) = %+v, %v; want already acknowledged, by socket", again, err)
	}

	h.sensor.set(20)
	h.sample()
	h.samples(time.Minute)
	_, resolved := h.ruleAlerts()
	if len(resolved) != 1 {
		t.Fatalf("%d resolved alerts, want exactly 1", len(resolved))
	}
	if r := resolved[0]; r.AckedBy != "socket" || !r.AckedAt.Equal(ackAt) {
		t.Errorf("resolved alert = %+v, want acked_by socket and acked_at %v", r, ackAt)
	}

	// A new firing: unacknowledged, reminded again.
	h.sensor.set(40)
	h.sample()
	h.samples(65 * time.Second)
	firing, _ = h.ruleAlerts()
	if len(firing) != 5 {
		t.Fatalf("%d firing alerts after firing again for 1m5s, want 5 (3 before, a new firing and a reminder)", len(firing))
	}
	if _, ps := problemKeys(t, h.e); len(ps) != 1 || ps[0].AckedBy != "" {
		t.Errorf("Problems() after firing again = %+v, want too_hot unacknowledged", ps)
	}
	if _, err := h.ack(got.Alerts[0]); !errors.Is(err, ErrNotFiring) {
		t.Errorf("Ack(an alert of the earlier firing) = %v, want ErrNotFiring: it resolved", err)
	}
}

// TestAckTargets: what `vigil ack` may name. No argument acknowledges the
// one problem firing unacknowledged and refuses to guess among several;
// a rule, "llm" or the id of any alert sent for the firing (a reminder's
// too) names it; a notice, an unknown name and a rule that is not firing
// are refused with their own errors.
func TestAckTargets(t *testing.T) {
	h := newHarness(t, func(c *Config) { renotifyEvery(time.Minute)(c); c.MaxQuiet = time.Minute })
	if _, err := h.ack(""); !errors.Is(err, ErrNotFiring) {
		t.Errorf("Ack() with nothing firing = %v, want ErrNotFiring", err)
	}
	if _, err := h.ack("too_hot"); !errors.Is(err, ErrNotFiring) || !strings.Contains(err.Error(), "too_hot is not firing") {
		t.Errorf("Ack(too_hot) while it is not firing = %v, want ErrNotFiring saying so", err)
	}
	h.sensor.set(40)
	h.sample()
	h.samples(65 * time.Second)
	h.thinker.dec = agent.Decision{Outcome: agent.OutcomeAlert, Severity: alert.Warning, Summary: "door left open"}
	h.tick()
	_, err := h.ack("")
	if !errors.Is(err, ErrAmbiguous) || !strings.Contains(err.Error(), "too_hot") || !strings.Contains(err.Error(), "llm") {
		t.Errorf("Ack() with two problems firing = %v, want ErrAmbiguous naming both", err)
	}
	firing, _ := h.ruleAlerts()
	reminder := firing[len(firing)-1]
	if !strings.HasPrefix(reminder.Summary, "still firing") {
		t.Fatalf("last too_hot alert = %+v, want a reminder", reminder)
	}
	got, err := h.ack(reminder.ID)
	if err != nil || got.Problem.Rule != "too_hot" {
		t.Errorf("Ack(a reminder's id) = %+v, %v; want too_hot", got.Problem, err)
	}
	got, err = h.ack("")
	if err != nil || got.Problem.Source != alert.SourceLLM {
		t.Errorf("Ack() with too_hot acknowledged = %+v, %v; want the LLM's alert, the one left", got.Problem, err)
	}
	if _, err := h.ack(""); !errors.Is(err, ErrNotFiring) {
		t.Errorf("Ack() with every problem acknowledged = %v, want ErrNotFiring", err)
	}
	n, err := h.e.Notice(context.Background(), alert.RuleSetting, "heartbeat.interval set to 10m by cli")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.ack(n.ID); !errors.Is(err, ErrNotice) {
		t.Errorf("Ack(a notice) = %v, want ErrNotice", err)
	}
	if _, err := h.ack("no_such_thing"); !errors.Is(err, ErrNotFiring) {
		t.Errorf("Ack(no_such_thing) = %v, want ErrNotFiring", err)
	}
}

// TestAckHoldsLLMAlert: an acknowledged LLM alert is not sent again when
// the cooldown has passed (the run says acknowledged), until a heartbeat
// ends ok: then it resolves with one alert carrying the ack. A more
// severe alert meanwhile is news: it is sent, unacknowledged.
func TestAckHoldsLLMAlert(t *testing.T) {
	h := newHarness(t, func(c *Config) { c.MaxQuiet = time.Minute })
	h.thinker.dec = agent.Decision{Outcome: agent.OutcomeAlert, Severity: alert.Warning, Summary: "humidity 91 % for 3h"}
	h.sample()
	h.tick()
	if _, err := h.ack("llm"); err != nil {
		t.Fatalf("Ack(llm) = %v", err)
	}
	h.clock.Advance(7 * time.Hour) // past alert_cooldown
	h.sample()
	if r := h.tick(); r.Run.Reason != ReasonAcknowledged || len(r.Alerts) != 0 {
		t.Fatalf("the same alert past the cooldown, acknowledged = %s/%s with %d alerts, want held (acknowledged)", r.Run.Outcome, r.Run.Reason, len(r.Alerts))
	}
	if n := len(h.llmAlerts()); n != 1 {
		t.Fatalf("%d LLM alerts queued, want 1", n)
	}
	h.thinker.dec = agent.Decision{Outcome: agent.OutcomeOK}
	h.clock.Advance(time.Minute)
	h.sample()
	h.tick()
	as := h.llmAlerts()
	if len(as) != 2 || as[1].State != alert.StateResolved || as[1].AckedBy != "socket" {
		t.Fatalf("LLM alerts = %+v, want the firing one and one resolved carrying the ack", as)
	}

	// Escalation: acknowledged warning, then a critical.
	h.thinker.dec = agent.Decision{Outcome: agent.OutcomeAlert, Severity: alert.Warning, Summary: "door left open"}
	h.clock.Advance(time.Minute)
	h.sample()
	h.tick()
	if _, err := h.ack("llm"); err != nil {
		t.Fatalf("Ack(llm) = %v", err)
	}
	h.thinker.dec = agent.Decision{Outcome: agent.OutcomeAlert, Severity: alert.Critical, Summary: "smoke in the greenhouse"}
	h.clock.Advance(time.Minute)
	h.sample()
	if r := h.tick(); len(r.Alerts) != 1 || r.Alerts[0].Severity != alert.Critical {
		t.Fatalf("a critical after an acknowledged warning = %s/%s with %+v, want it sent", r.Run.Outcome, r.Run.Reason, r.Alerts)
	}
	if _, ps := problemKeys(t, h.e); len(ps) != 1 || ps[0].AckedBy != "" || ps[0].Severity != alert.Critical {
		t.Errorf("Problems() after the critical = %+v, want it firing unacknowledged", ps)
	}
}

// TestAckSystemFault: llm_unreachable may be acknowledged by its kind; it
// re-notifies nothing anyway, and its resolution carries the ack and ends
// it, so the next outage is unacknowledged.
func TestAckSystemFault(t *testing.T) {
	h := newHarness(t, func(c *Config) { c.MaxQuiet = time.Minute; c.FailureAlertAfter = 0 })
	down := func() {
		h.thinker.err = errors.Join(agent.ErrUnreachable, errors.New("connection refused"))
		h.clock.Advance(time.Hour)
		h.sample()
		h.tick()
	}
	down()
	if got, err := h.ack("llm_unreachable"); err != nil || got.Problem.Source != alert.SourceSystem {
		t.Fatalf("Ack(llm_unreachable) = %+v, %v", got.Problem, err)
	}
	h.thinker.err = nil
	h.clock.Advance(time.Hour)
	h.sample()
	h.tick()
	var resolved []alert.Alert
	for _, e := range h.outbox() {
		if e.Alert.Rule == "llm_unreachable" && e.Alert.State == alert.StateResolved {
			resolved = append(resolved, e.Alert)
		}
	}
	if len(resolved) != 1 || resolved[0].AckedBy != "socket" {
		t.Fatalf("resolved llm_unreachable = %+v, want one carrying the ack", resolved)
	}
	down()
	if _, ps := problemKeys(t, h.e); len(ps) != 1 || ps[0].Rule != "llm_unreachable" || ps[0].AckedBy != "" {
		t.Errorf("Problems() in the next outage = %+v, want llm_unreachable unacknowledged", ps)
	}
}

// TestAckRefusalsSayItOnce: an ack of what is not firing says why in its
// own words, which reach a person as they are (the CLI, cmd/result, a
// Telegram reply), without the sentinel's text tacked on; it is still
// ErrNotFiring, which the control socket carries as its code.
func TestAckRefusalsSayItOnce(t *testing.T) {
	h := newHarness(t, nil)
	for _, target := range []string{"", "too_hot", "nosuch"} {
		_, err := h.ack(target)
		if !errors.Is(err, ErrNotFiring) {
			t.Errorf("Ack(%q) = %v, want ErrNotFiring", target, err)
			continue
		}
		if strings.HasSuffix(err.Error(), ": "+ErrNotFiring.Error()) {
			t.Errorf("Ack(%q) says %q: the sentinel's %q tacked on after the reason", target, err, ErrNotFiring.Error())
		}
	}
}
