package main

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/vigil-iot/vigil/internal/mosquittotest"
)

// End-to-end tests of acknowledging and of LLM alerts that resolve: the
// real daemon, a real mosquitto, a local Bot API and a scripted model.

// ackAlerts decodes the alerts of rule (with source src) that r received.
func ackAlerts(t *testing.T, r *mosquittotest.Subscriber, src, rule string) (firing, resolved []map[string]any) {
	t.Helper()
	for _, m := range r.On(topicAlert) {
		var a map[string]any
		if err := json.Unmarshal([]byte(m.Payload), &a); err != nil {
			t.Fatalf("alert payload %q: %v", m.Payload, err)
		}
		if a["source"] != src || a["rule"] != rule {
			continue
		}
		switch a["state"] {
		case "firing":
			firing = append(firing, a)
		case "resolved":
			resolved = append(resolved, a)
		}
	}
	return firing, resolved
}

// TestAckStopsRenotifyE2E: a firing rule with renotify = "1m" is
// acknowledged over the control socket (vigil ack always); for the next
// 75 s the alert topic gets nothing from it; then it resolves with
// exactly one message, which carries the ack. Meanwhile the ack shows in
// vigil status (text and --json), in the retained problem attributes and
// in vigil fleet.
func TestAckStopsRenotifyE2E(t *testing.T) {
	t.Parallel()
	b := startMosquitto(t)
	live := mosquittotest.Subscribe(t, b.URL(), topicAlert, topicProblem, topicStatus)
	// always fires, critical, two seconds in; reminders every minute.
	cfg := writeConfig(t, t.TempDir(), steadySensors+"renotify = \"1m\"\n"+mqttConfig(b.URL(), "homeassistant = true"))
	d := startDaemon(t, cfg)
	defer func() { d.logIfFailed(t) }()
	live.Wait(topicStatus, 15*time.Second, payloadIs("online"))
	live.Wait(topicAlert, 15*time.Second, func(m mosquittotest.Message) bool {
		return strings.Contains(m.Payload, `"rule":"always"`) && strings.Contains(m.Payload, `"state":"firing"`)
	})

	out, errOut, code := runVigil(t, "-c", cfg, "ack", "always")
	if code != 0 || !strings.HasPrefix(out, "acknowledged always (critical: pressure at ") || !strings.Contains(out, " by socket at ") {
		t.Fatalf("vigil ack always: exit %d\n%s%s", code, out, errOut)
	}
	ackedAt := time.Now()
	firing, _ := ackAlerts(t, live, "rule", "always")
	before := len(firing)

	out, _, _ = runVigil(t, "-c", cfg, "status")
	if !strings.Contains(out, "problems: always  critical  since ") || !strings.Contains(out, "acknowledged by socket at ") {
		t.Errorf("vigil status does not show the ack:\n%s", out)
	}
	if ps := statusJSON(t, cfg).Problems; len(ps) != 1 || ps[0].Rule != "always" || ps[0].AckedBy != "socket" {
		t.Errorf("vigil status --json problems = %+v, want always acknowledged by socket", ps)
	}
	late := mosquittotest.Subscribe(t, b.URL(), topicProblem+"/attributes")
	late.Wait(topicProblem+"/attributes", 10*time.Second, func(m mosquittotest.Message) bool {
		return strings.Contains(m.Payload, `"rule":"always"`) && strings.Contains(m.Payload, `"acked_by":"socket"`) && strings.Contains(m.Payload, `"acked_at":"`)
	})
	if f := fleetOnce(t, b.URL())["e2e"].Firing; len(f) != 1 || f[0].AckedBy != "socket" {
		t.Errorf("vigil fleet: firing %+v, want always acknowledged by socket", f)
	}

	// No reminder for 75 s (renotify is 1m).
	time.Sleep(time.Until(ackedAt.Add(75 * time.Second)))
	if firing, _ := ackAlerts(t, live, "rule", "always"); len(firing) != before {
		t.Fatalf("%d firing alerts of always 75 s after the ack, want still %d: an acknowledged rule sends no reminder", len(firing), before)
	}

	// It resolves: one message, with the ack.
	if out, errOut, code := runVigil(t, "-c", cfg, "set", "rule.always.enabled", "false"); code != 0 {
		t.Fatalf("vigil set rule.always.enabled false: exit %d\n%s%s", code, out, errOut)
	}
	live.Wait(topicProblem, 15*time.Second, payloadIs("OFF"))
	quiet(t, live, topicAlert, 2*time.Second)
	_, resolved := ackAlerts(t, live, "rule", "always")
	if len(resolved) != 1 || resolved[0]["acked_by"] != "socket" || resolved[0]["acked_at"] == nil {
		t.Errorf("resolved alerts of always = %v, want exactly one carrying acked_by socket and acked_at", resolved)
	}
	if ps := statusJSON(t, cfg).Problems; len(ps) != 0 {
		t.Errorf("vigil status --json problems after it resolved = %+v, want none", ps)
	}
}

// TestAckFromTelegramE2E: the alert's message carries an Acknowledge
// button; a press by a user outside allowed_users, posted by the Bot API
// as a callback_query, is refused in its answer and acknowledges nothing;
// the owner's press acknowledges the alert, and the message is edited to
// name who acknowledged it and loses its button.
func TestAckFromTelegramE2E(t *testing.T) {
	t.Parallel()
	const owner, stranger = 1001, 666
	api := newBotAPI(t)
	cfg := writeConfig(t, t.TempDir(), steadySensors+telegramConfig(owner, api.srv.URL)+"allowed_users = [1001]\n")
	d := startDaemon(t, cfg, "VIGIL_E2E_TG_TOKEN="+botToken)
	defer func() { d.logIfFailed(t) }()
	m := api.waitSent(owner, "always", 15*time.Second)
	if !strings.Contains(m.Markup, `"text":"Acknowledge"`) || !strings.Contains(m.Markup, `"callback_data":"ack:`) {
		t.Fatalf("alert message's reply_markup = %q, want an Acknowledge button", m.Markup)
	}
	api.waitPoll(0, 0, 10*time.Second)

	api.addUpdate(botUpdate{ID: 700, Chat: owner, Data: "ack:x", MsgID: m.ID, From: stranger, User: "mallory"})
	if a := api.waitAnswers(1, 10*time.Second); a[0] != "cb700: not allowed: you are not in allowed_users" {
		t.Errorf("answer to the stranger's press = %q", a[0])
	}
	api.waitPoll(0, 701, 10*time.Second)
	if ps := statusJSON(t, cfg).Problems; len(ps) != 1 || ps[0].AckedBy != "" {
		t.Errorf("problems after the stranger's press = %+v, want always unacknowledged", ps)
	}
	if e := api.editsOf(owner, m.ID); len(e) != 0 {
		t.Errorf("the stranger's press edited the message: %+v", e)
	}

	api.addUpdate(botUpdate{ID: 701, Chat: owner, Data: "ack:x", MsgID: m.ID, From: owner, User: "ann"})
	if a := api.waitAnswers(2, 10*time.Second); !strings.HasPrefix(a[1], "cb701: acknowledged always (critical: pressure at ") {
		t.Errorf("answer to the owner's press = %q", a[1])
	}
	const who = "telegram chat 1001 user 1001 (@ann)"
	deadline := time.Now().Add(10 * time.Second)
	for len(api.editsOf(owner, m.ID)) == 0 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	e := api.editsOf(owner, m.ID)
	if len(e) != 1 || !strings.Contains(e[0].Text, "pressure at ") || !strings.Contains(e[0].Text, "acknowledged by "+who+" at ") || e[0].Markup != "" {
		t.Fatalf("edits of the alert message = %+v, want one naming %s, without a button", e, who)
	}
	if ps := statusJSON(t, cfg).Problems; len(ps) != 1 || ps[0].AckedBy != who {
		t.Errorf("problems after the owner's press = %+v, want always acknowledged by %s", ps, who)
	}
}

// TestLLMAlertResolvesE2E: an LLM alert (a scripted model) followed by a
// heartbeat that ends ok gives one resolved alert with source llm on
// MQTT and on Telegram, and turns the problem sensor OFF.
func TestLLMAlertResolvesE2E(t *testing.T) {
	t.Parallel()
	b := startMosquitto(t)
	api := newBotAPI(t)
	live := mosquittotest.Subscribe(t, b.URL(), topicAlert, topicProblem, topicStatus)
	model := newModelScript(t, []string{`heartbeat_respond {"outcome":"alert","severity":"warning","summary":"the greenhouse door is open"}`})
	dir := t.TempDir()
	cfg := writeConfig(t, dir, model.llmSection(dir, "Is the greenhouse door shut?")+`
[[sensor]]
name = "air"
driver = "bme280"
`+mqttConfig(b.URL(), "homeassistant = true")+telegramConfig(botChat, api.srv.URL))
	d := startDaemon(t, cfg, "VIGIL_TEST_KEY=sk-test", "VIGIL_E2E_TG_TOKEN="+botToken)
	defer func() { d.logIfFailed(t) }()
	live.Wait(topicStatus, 15*time.Second, payloadIs("online"))
	// The first heartbeat (this check, or a scheduled one) alerts; every
	// later one ends ok.
	if out, errOut, code := runVigil(t, "-c", cfg, "check"); code != 0 {
		t.Fatalf("vigil check: exit %d\n%s%s", code, out, errOut)
	}
	live.Wait(topicAlert, 15*time.Second, func(m mosquittotest.Message) bool {
		return strings.Contains(m.Payload, `"source":"llm"`) && strings.Contains(m.Payload, `"state":"firing"`)
	})
	live.Wait(topicProblem, 10*time.Second, payloadIs("ON"))
	api.waitSent(botChat, "the greenhouse door is open", 10*time.Second)

	if out, errOut, code := runVigil(t, "-c", cfg, "check"); code != 0 || !strings.Contains(out, "outcome: ok") {
		t.Fatalf("vigil check: exit %d\n%s%s", code, out, errOut)
	}
	live.Wait(topicAlert, 15*time.Second, func(m mosquittotest.Message) bool {
		return strings.Contains(m.Payload, `"source":"llm"`) && strings.Contains(m.Payload, `"state":"resolved"`)
	})
	live.Wait(topicProblem, 10*time.Second, payloadIs("OFF"))
	api.waitSent(botChat, "RESOLVED", 10*time.Second)
	if out, errOut, code := runVigil(t, "-c", cfg, "check"); code != 0 {
		t.Fatalf("vigil check: exit %d\n%s%s", code, out, errOut)
	}
	quiet(t, live, topicAlert, 2*time.Second)
	firing, resolved := ackAlerts(t, live, "llm", "")
	if len(firing) != 1 || len(resolved) != 1 || resolved[0]["summary"] != "the greenhouse door is open" || resolved[0]["severity"] != "warning" {
		t.Errorf("LLM alerts on MQTT: firing %v, resolved %v; want one of each, the resolved one naming the alert", firing, resolved)
	}
	if got := api.sentTo(botChat, "RESOLVED"); len(got) != 1 || !strings.Contains(got[0].Text, "llm") || !strings.Contains(got[0].Text, "the greenhouse door is open") || got[0].Markup != "" {
		t.Errorf("Telegram resolved messages = %+v, want one for llm, without a button", got)
	}
	if state, _ := retainedProblem(t, b.URL()); state != "OFF" {
		t.Errorf("retained problem = %q, want OFF", state)
	}
}

// TestAckOfflineE2E: with no daemon running, vigil ack works on the state
// file (by cli) and says so; the daemon started next keeps the ack.
func TestAckOfflineE2E(t *testing.T) {
	t.Parallel()
	cfg := writeConfig(t, t.TempDir(), steadySensors)
	d := startDaemon(t, cfg)
	d.waitLog(t, regexp.MustCompile(`msg=rule rule=always event=firing`), 15*time.Second)
	d.kill()
	out, errOut, code := runVigil(t, "-c", cfg, "ack")
	if code != 0 || !strings.HasPrefix(out, "acknowledged always (critical: ") || !strings.Contains(out, " by cli at ") || !strings.HasSuffix(out, "(saved; no daemon running)\n") {
		t.Fatalf("vigil ack with no daemon: exit %d\n%s%s", code, out, errOut)
	}
	if _, errOut, code := runVigil(t, "-c", cfg, "ack", "nothing_here"); code != 1 || !strings.Contains(errOut, `nothing firing is named "nothing_here"`) {
		t.Errorf("vigil ack nothing_here: exit %d\n%s", code, errOut)
	}
	d = startDaemon(t, cfg)
	d.waitLog(t, regexp.MustCompile(`msg="vigil starting"`), 10*time.Second)
	if ps := statusJSON(t, cfg).Problems; len(ps) != 1 || ps[0].Rule != "always" || ps[0].AckedBy != "cli" {
		t.Errorf("problems with the daemon started after the ack = %+v, want always acknowledged by cli", ps)
	}
}
