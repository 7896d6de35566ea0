package main

import (
	"encoding/json"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/vigil-iot/vigil/internal/mosquittotest"
)

// alertsOn decodes every alert r received on topic.
func alertsOn(t *testing.T, r *mosquittotest.Subscriber, topic string) []struct{ ID, Source, Rule, State, Summary string } {
	t.Helper()
	var out []struct{ ID, Source, Rule, State, Summary string }
	for _, m := range r.On(topic) {
		var a struct{ ID, Source, Rule, State, Summary string }
		if err := json.Unmarshal([]byte(m.Payload), &a); err != nil {
			t.Fatalf("alert payload %q: %v", m.Payload, err)
		}
		out = append(out, a)
	}
	return out
}

// retainedProblem reads <p>/e2e/problem and its attributes as a subscriber
// that comes now sees them.
func retainedProblem(t *testing.T, url string) (state, attrs string) {
	t.Helper()
	late := mosquittotest.Subscribe(t, url, topicProblem, topicProblem+"/attributes")
	return late.Next(topicProblem, 5*time.Second).Payload, late.Wait(topicProblem+"/attributes", 5*time.Second, nil).Payload
}

// TestNoticesLeaveProblemOffAndRuleSurvivesRestart: the real daemon with
// homeassistant = true against a real mosquitto. `vigil set`, `vigil
// checklist set` and a model's set_interval are delivered as notices on the
// alert topic, while the retained problem stays OFF and `vigil fleet` lists
// nothing firing. A rule that fires turns it ON; after a SIGKILL and a
// retained value overwritten on the broker meanwhile, the restarted daemon
// republishes ON from its durable rule state (with no new alert), and the
// rule's resolution turns it OFF.
func TestNoticesLeaveProblemOffAndRuleSurvivesRestart(t *testing.T) {
	t.Parallel()
	b := startMosquitto(t)
	live := mosquittotest.Subscribe(t, b.URL(), topicAlert, topicProblem, topicStatus)
	model := newModelScript(t,
		[]string{`set_interval {"interval":"20m"}`},
		[]string{`heartbeat_respond {"outcome":"ok","severity":"info","summary":"all fine"}`},
	)
	dir := t.TempDir()
	cfg := writeConfig(t, dir, `model_may = ["pause", "interval"]
interval_min = "10m"
interval_max = "2h"
`+model.llmSection(dir, "Is the air fine?")+
		alwaysFires+"enabled = false\n"+ // the rule "always", disabled
		mqttConfig(b.URL(), "homeassistant = true"))
	d := startDaemon(t, cfg, "VIGIL_TEST_KEY=sk-test")
	defer func() { d.logIfFailed(t) }()
	live.Wait(topicStatus, 15*time.Second, payloadIs("online"))

	// Three notices: a person's set, a checklist, the model's set_interval.
	if out, errOut, code := runVigil(t, "-c", cfg, "set", "heartbeat.interval", "15m"); code != 0 {
		t.Fatalf("vigil set: exit %d\n%s%s", code, out, errOut)
	}
	list := filepath.Join(dir, "new.md")
	writeFile(t, list, "- Is the air still fine?\n")
	if out, errOut, code := runVigil(t, "-c", cfg, "checklist", "set", list); code != 0 {
		t.Fatalf("vigil checklist set: exit %d\n%s%s", code, out, errOut)
	}
	if out, errOut, code := runVigil(t, "-c", cfg, "check"); code != 0 {
		t.Fatalf("vigil check: exit %d\n%s%s", code, out, errOut)
	}
	notice := func(rule, text string) func(mosquittotest.Message) bool {
		return func(m mosquittotest.Message) bool {
			return strings.Contains(m.Payload, `"rule":"`+rule+`"`) && strings.Contains(m.Payload, text)
		}
	}
	live.Wait(topicAlert, 10*time.Second, notice("setting", "heartbeat.interval set to 15m"))
	live.Wait(topicAlert, 10*time.Second, notice("checklist", "checklist set by"))
	live.Wait(topicAlert, 20*time.Second, notice("setting", "heartbeat.interval set to 20m by model"))
	for _, a := range alertsOn(t, live, topicAlert) {
		if a.Source != "system" || a.State != "notice" {
			t.Errorf("alert %s/%s %q: state %q, want a system notice", a.Source, a.Rule, a.Summary, a.State)
		}
	}
	quiet(t, live, topicProblem, time.Second)
	for _, m := range live.On(topicProblem) {
		if m.Payload != "OFF" {
			t.Errorf("problem = %q while only notices were sent, want never ON", m.Payload)
		}
	}
	if state, attrs := retainedProblem(t, b.URL()); state != "OFF" || attrs != `{"firing":[]}` {
		t.Errorf("retained problem after three notices = %q %s, want OFF with nothing firing", state, attrs)
	}
	if f := fleetOnce(t, b.URL())["e2e"]; len(f.Firing) != 0 || f.LastAlert != nil {
		t.Errorf("vigil fleet after notices: firing %+v, last alert %+v; want none", f.Firing, f.LastAlert)
	}
	out, _, _ := runVigil(t, "-c", cfg, "status", "--json")
	var st struct {
		Firing   []string          `json:"rules_firing"`
		Counters map[string]uint64 `json:"counters"`
	}
	if err := json.Unmarshal([]byte(out), &st); err != nil || len(st.Firing) != 0 || st.Counters["alerts"] != 0 || st.Counters["notices"] < 3 {
		t.Errorf("vigil status after notices: firing %v, counters %v (%v); want nothing firing, no alerts, at least 3 notices", st.Firing, st.Counters, err)
	}

	// A rule fires: ON.
	if out, errOut, code := runVigil(t, "-c", cfg, "set", "rule.always.enabled", "true"); code != 0 {
		t.Fatalf("vigil set rule.always.enabled true: exit %d\n%s%s", code, out, errOut)
	}
	live.Wait(topicProblem, 15*time.Second, payloadIs("ON"))
	if f := fleetOnce(t, b.URL())["e2e"].Firing; len(f) != 1 || f[0].Rule != "always" {
		t.Errorf("vigil fleet while always fires: firing %+v, want always", f)
	}
	firings := func() int {
		n := 0
		for _, a := range alertsOn(t, live, topicAlert) {
			if a.Rule == "always" && a.State == "firing" {
				n++
			}
		}
		return n
	}
	before := firings()

	// SIGKILL; meanwhile the broker's retained value goes stale (here: OFF).
	d.kill()
	live.Wait(topicStatus, 15*time.Second, payloadIs("offline"))
	n := len(live.On(topicProblem))
	other := mosquittotest.Subscribe(t, b.URL())
	other.Publish(topicProblem+"/attributes", true, `{"firing":[]}`)
	other.Publish(topicProblem, true, "OFF")
	n++
	live.WaitN(topicProblem, n, 5*time.Second)
	if state, _ := retainedProblem(t, b.URL()); state != "OFF" {
		t.Fatalf("retained problem after overwriting it = %q, want OFF", state)
	}
	d = startDaemon(t, cfg, "VIGIL_TEST_KEY=sk-test")
	d.waitLog(t, regexp.MustCompile(`msg="mqtt connected"`), 15*time.Second)
	m := live.WaitN(topicProblem, n+1, 15*time.Second)
	if m.Payload != "ON" {
		t.Errorf("problem after the restart = %q, want ON from the durable rule state", m.Payload)
	}
	if state, attrs := retainedProblem(t, b.URL()); state != "ON" || !strings.Contains(attrs, `"rule":"always"`) {
		t.Errorf("retained problem after the restart = %q %s, want ON with always", state, attrs)
	}
	if after := firings(); after != before {
		t.Errorf("%d firing alerts for always after the restart, want %d: the ON must come from the state, not a new alert", after, before)
	}

	// Its resolution: OFF.
	quiet(t, live, topicProblem, time.Second)
	n = len(live.On(topicProblem))
	if out, errOut, code := runVigil(t, "-c", cfg, "set", "rule.always.enabled", "false"); code != 0 {
		t.Fatalf("vigil set rule.always.enabled false: exit %d\n%s%s", code, out, errOut)
	}
	live.Wait(topicAlert, 15*time.Second, func(m mosquittotest.Message) bool {
		return strings.Contains(m.Payload, `"rule":"always"`) && strings.Contains(m.Payload, `"state":"resolved"`)
	})
	if m := live.WaitN(topicProblem, n+1, 15*time.Second); m.Payload != "OFF" {
		t.Errorf("problem after the rule resolved = %q, want OFF", m.Payload)
	}
	quiet(t, live, topicProblem, time.Second)
	if state, attrs := retainedProblem(t, b.URL()); state != "OFF" || attrs != `{"firing":[]}` {
		t.Errorf("retained problem after the rule resolved = %q %s, want OFF with nothing firing", state, attrs)
	}
	if f := fleetOnce(t, b.URL())["e2e"].Firing; len(f) != 0 {
		t.Errorf("vigil fleet after the rule resolved: firing %+v, want none", f)
	}
}
