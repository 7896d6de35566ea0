package main

import (
	"encoding/json"
	"fmt"
	"html"
	"net"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/vigil-iot/vigil/heartbeat"
	"github.com/vigil-iot/vigil/internal/mosquittotest"
	"github.com/vigil-iot/vigil/rule"
)

// End to end of issue 31: the model teaches the device a rule. The real
// `vigil run` on the sim board, a real mosquitto, the fake Bot API and a
// scripted model.

// The proposal the scripted model makes on the first excursion.
const (
	proposedWhen = "air.temperature > 34"
	proposedFor  = 10 * time.Second
	proposeCall  = `propose_rule {"name":"too_warm","when":"air.temperature > 34","for":"10s","severity":"warning",` +
		`"message":"air at {air.temperature}","why":"The air went past 34 °C for a while and no local rule caught it."}`
)

// The excursion: every proposeEvery the air climbs by 25 °C over a quarter
// of proposeLength, holds for half and falls back (device.Sim), from about
// 21 °C, so it stays above 34 °C for about 16 s of its 24 s: enough for
// `for = "10s"` and two samples.
const (
	proposeEvery  = 30 * time.Second
	proposeLength = 24 * time.Second
	// proposeTickAt is where in the first excursion the first heartbeat
	// falls: late in the hold, so that what is left above 34 °C after
	// the approval is shorter than `for` and the new rule first fires on
	// the next excursion.
	proposeTickAt = 15 * time.Second
)

// connCounter stands in for a stopped LLM server on its address: it
// accepts and at once closes every connection (the daemon sees the server
// gone), and counts them, so a test can tell that nothing even tried.
type connCounter struct {
	ln net.Listener
	n  atomic.Int64
	wg sync.WaitGroup
}

func countConns(t *testing.T, addr string) *connCounter {
	t.Helper()
	var ln net.Listener
	var err error
	for range 50 {
		if ln, err = net.Listen("tcp", addr); err == nil {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err != nil {
		t.Fatalf("listen on the stopped LLM's address %s: %v", addr, err)
	}
	c := &connCounter{ln: ln}
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			c.n.Add(1)
			conn.Close()
		}
	}()
	t.Cleanup(func() { ln.Close(); c.wg.Wait() })
	return c
}

// proposalAlert is the alert JSON of a notice that brings a proposal.
type proposalAlert struct {
	ID, Source, Rule, State, Summary string
	Proposal                         *struct {
		ID, Name, When, For, Severity, Why, State string
		Backtest                                  struct {
			Samples  int
			Fired    int
			OnPrompt bool `json:"on_prompt"`
			Noisy    bool
		}
	}
}

// sensorSample is one message of the retained sensors topic.
type sensorSample struct {
	Time     time.Time
	Readings map[string]struct{ Value float64 }
}

// samplesAbove returns the sensors messages r received from index from on
// whose air.temperature is above v, from the first that follows one at or
// below v (the next excursion, not the tail of one under way).
func samplesAbove(t *testing.T, r *mosquittotest.Subscriber, from int, v float64) []sensorSample {
	t.Helper()
	var out []sensorSample
	below := false
	for _, m := range r.On(topicSensors)[from:] {
		var s sensorSample
		if err := json.Unmarshal([]byte(m.Payload), &s); err != nil {
			t.Fatalf("sensors payload %q: %v", m.Payload, err)
		}
		switch {
		case s.Readings["air.temperature"].Value <= v:
			below = true
		case below:
			out = append(out, s)
		}
	}
	return out
}

// ruleAlert waits for the next alert of rule in state on r from index
// from on, and returns it with its time.
func ruleAlert(t *testing.T, r *mosquittotest.Subscriber, from int, rule, state string, timeout time.Duration) (map[string]any, time.Time) {
	t.Helper()
	var a map[string]any
	deadline := time.Now().Add(timeout)
	for {
		for _, m := range r.On(topicAlert)[min(from, len(r.On(topicAlert))):] {
			a = nil
			if json.Unmarshal([]byte(m.Payload), &a) == nil && a["rule"] == rule && a["state"] == state && a["source"] == "rule" {
				at, err := time.Parse(time.RFC3339Nano, fmt.Sprint(a["time"]))
				if err != nil {
					t.Fatalf("alert time %v: %v", a["time"], err)
				}
				return a, at
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no %s alert of %s within %v", state, rule, timeout)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// rulesJSON is `vigil rules --json`.
type rulesJSON struct {
	Rules []struct {
		Name, When, For, Origin string
		RunTime                 bool `json:"run_time"`
	}
	Pending []struct{ ID, Name, State string }
}

func vigilRules(t *testing.T, cfg string) rulesJSON {
	t.Helper()
	out, errOut, code := runVigil(t, "-c", cfg, "rules", "--json")
	if code != 0 {
		t.Fatalf("vigil rules --json: exit %d\n%s%s", code, out, errOut)
	}
	var r rulesJSON
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("vigil rules --json: %v\n%s", err, out)
	}
	return r
}

// button returns the callback_data of the inline button labelled text in
// a message's reply_markup.
func button(t *testing.T, markup, text string) string {
	t.Helper()
	var m struct {
		InlineKeyboard [][]struct {
			Text string
			Data string `json:"callback_data"`
		} `json:"inline_keyboard"`
	}
	if err := json.Unmarshal([]byte(markup), &m); err != nil {
		t.Fatalf("reply_markup %q: %v", markup, err)
	}
	for _, row := range m.InlineKeyboard {
		for _, b := range row {
			if b.Text == text {
				return b.Data
			}
		}
	}
	t.Fatalf("reply_markup %s has no %q button", markup, text)
	return ""
}

// TestModelTeachesARuleE2E: on the first excursion the scripted model
// alerts and proposes too_warm (air.temperature > 34 for 10s); the
// proposal reaches Telegram with Approve and Reject buttons and MQTT as a
// notice with its backtest; a stranger's press is refused and changes
// nothing; the owner's press approves it. Then, with the LLM server gone,
// the next excursion fires too_warm within for + 2 × sample_interval of
// the first sample above 34 °C, and resolves, with no connection to the
// LLM's address; after a SIGKILL and a restart the rule is still in
// force and fires on the excursion after.
//
// The first heartbeat comes at the device's phase within the 1m interval
// (42 s for "e2e"), so the waveform is pinned (sim.start) to put that
// heartbeat late in the first excursion's hold.
func TestModelTeachesARuleE2E(t *testing.T) {
	t.Parallel()
	const owner, stranger = 1001, 666
	b := startMosquitto(t)
	api := newBotAPI(t)
	live := mosquittotest.Subscribe(t, b.URL(), topicAlert, topicSensors, topicStatus)
	model := newModelScript(t,
		[]string{proposeCall},
		[]string{`heartbeat_respond {"outcome":"alert","severity":"warning","summary":"the air is above 34 °C and no rule caught it"}`},
	)
	dir := t.TempDir()
	t0 := time.Now()
	phase := heartbeat.Phase("e2e", time.Minute)
	simStart := t0.Add(phase - proposeEvery/5 - proposeTickAt).UTC()
	cfg := writeConfig(t, dir, `sensors_publish_interval = "1s"
`+model.llmSection(dir, "Is the air fine?")+fmt.Sprintf(`
[[sensor]]
name = "air"
driver = "bme280"
sim = { every = %q, length = %q, rise = 25, start = %s }
`, proposeEvery, proposeLength, simStart.Format(time.RFC3339Nano))+
		mqttConfig(b.URL(), "homeassistant = false", "commands = true")+
		telegramConfig(owner, api.srv.URL)+"allowed_users = [1001]\n")
	env := []string{"VIGIL_TEST_KEY=sk-test", "VIGIL_E2E_TG_TOKEN=" + botToken}
	d := startDaemon(t, cfg, env...)
	defer func() { d.logIfFailed(t) }()
	live.Wait(topicStatus, 15*time.Second, payloadIs("online"))

	// 1. The first heartbeat, in the first excursion: the model proposes
	// and alerts.
	m := live.Wait(topicAlert, phase+20*time.Second, func(m mosquittotest.Message) bool {
		return strings.Contains(m.Payload, `"proposal":`)
	})
	var pa proposalAlert
	if err := json.Unmarshal([]byte(m.Payload), &pa); err != nil {
		t.Fatalf("proposal alert %s: %v", m.Payload, err)
	}
	p := pa.Proposal
	if pa.State != "notice" || p == nil || p.Name != "too_warm" || p.When != proposedWhen || p.For != "10s" || p.State != "pending" || p.ID == "" {
		t.Fatalf("the proposal on MQTT = %s, want a notice with too_warm (%s for 10s) pending", m.Payload, proposedWhen)
	}
	if bt := p.Backtest; bt.Samples == 0 || !bt.OnPrompt || bt.Noisy {
		t.Errorf("the proposal's backtest = %+v, want samples replayed, firing on the readings that prompted it, not noisy", bt)
	}
	live.Wait(topicAlert, 10*time.Second, func(m mosquittotest.Message) bool {
		return strings.Contains(m.Payload, `"source":"llm"`) && strings.Contains(m.Payload, `"state":"firing"`)
	})
	reqs := model.requests()
	if len(reqs) < 2 || !strings.Contains(strings.Join(reqs[0].Tools, " "), "propose_rule") {
		t.Fatalf("the model was asked %d times, tools %v; want propose_rule offered by the default model_may", len(reqs), reqs[0].Tools)
	}
	if got := reqs[1].text(); strings.Contains(got, "refused") {
		t.Fatalf("the model's proposal was refused:\n%s", got)
	}

	// 2. Telegram: the proposal with its buttons.
	tm := api.waitSent(owner, "too_warm", 10*time.Second)
	approve, reject := button(t, tm.Markup, "Approve"), button(t, tm.Markup, "Reject")
	if approve == reject || !strings.Contains(tm.Text, html.EscapeString(proposedWhen)) {
		t.Errorf("the proposal's Telegram message = %+v, want the rule and two distinct buttons", tm)
	}
	api.waitPoll(0, 0, 10*time.Second)

	// 3. A stranger's press is refused and changes nothing.
	api.addUpdate(botUpdate{ID: 900, Chat: owner, Data: approve, MsgID: tm.ID, From: stranger, User: "mallory"})
	if a := api.waitAnswers(1, 10*time.Second); a[0] != "cb900: not allowed: you are not in allowed_users" {
		t.Errorf("answer to the stranger's press = %q", a[0])
	}
	api.waitPoll(0, 901, 10*time.Second)
	if r := vigilRules(t, cfg); len(r.Pending) != 1 || r.Pending[0].Name != "too_warm" {
		t.Fatalf("after the stranger's press: pending %+v, want too_warm still pending", r.Pending)
	}

	// 4. The owner's press approves it.
	api.addUpdate(botUpdate{ID: 901, Chat: owner, Data: approve, MsgID: tm.ID, From: owner, User: "ann"})
	a := api.waitAnswers(2, 10*time.Second)
	if !strings.Contains(a[1], "approved") {
		t.Errorf("answer to the owner's press = %q, want it approved", a[1])
	}
	approvedAt := time.Now()
	r := vigilRules(t, cfg)
	var origin string
	for _, rr := range r.Rules {
		if rr.Name == "too_warm" && rr.RunTime && rr.When == proposedWhen {
			origin = rr.Origin
		}
	}
	if !strings.Contains(origin, "proposed by the model at ") || !strings.Contains(origin, "approved by telegram chat 1001 user 1001") || len(r.Pending) != 0 {
		t.Fatalf("vigil rules after the approval: %+v, want too_warm in force, proposed by the model and approved by the owner on Telegram, none pending", r)
	}

	// 5. The LLM server goes away; the next excursion fires the rule
	// with nothing but the sample loop.
	modelAddr := strings.TrimPrefix(model.srv.URL, "http://")
	asked := len(model.requests())
	model.srv.Close()
	conns := countConns(t, modelAddr)
	fromSensors, fromAlerts := len(live.On(topicSensors)), len(live.On(topicAlert))
	fired, firedAt := ruleAlert(t, live, fromAlerts, "too_warm", "firing", proposeEvery+proposeLength+10*time.Second)
	above := samplesAbove(t, live, fromSensors, 34)
	if len(above) == 0 {
		t.Fatalf("too_warm fired (%v) with no sample above 34 °C on the sensors topic", fired)
	}
	if firedAt.Before(approvedAt.Add(-time.Second)) {
		t.Fatalf("too_warm fired at %v, before the approval at %v", firedAt, approvedAt)
	}
	lag := firedAt.Sub(above[0].Time)
	if budget := proposedFor + 2*time.Second; lag < proposedFor-time.Second || lag > budget {
		t.Errorf("too_warm fired %v after the first sample above 34 °C (%v), want within for + 2 × sample_interval = %v", lag, above[0].Time, budget)
	}
	ruleAlert(t, live, fromAlerts, "too_warm", "resolved", proposeLength)
	if n, k := conns.n.Load(), len(model.requests()); n != 0 || k != asked {
		t.Errorf("LLM requests while the rule fired and resolved: %d connections, %d requests; want 0", n, k-asked)
	}
	t.Logf("too_warm fired %v after the first sample above 34 °C and resolved, 0 LLM requests", lag)

	// 6. A power cut: the rule is still in force after the restart, and
	// fires on the next excursion.
	d.kill()
	d = startDaemon(t, cfg, env...)
	defer func() { d.logIfFailed(t) }()
	d.waitLog(t, regexp.MustCompile(`msg="vigil starting"`), 10*time.Second)
	found := false
	for _, rr := range vigilRules(t, cfg).Rules {
		found = found || rr.Name == "too_warm" && rr.RunTime && strings.Contains(rr.Origin, "approved by telegram chat 1001 user 1001")
	}
	if !found {
		t.Fatalf("too_warm is not in force after the restart: %+v", vigilRules(t, cfg))
	}
	fromAlerts = len(live.On(topicAlert))
	ruleAlert(t, live, fromAlerts, "too_warm", "firing", proposeEvery+proposeLength+10*time.Second)
	ruleAlert(t, live, fromAlerts, "too_warm", "resolved", proposeLength)
	if n := conns.n.Load(); n != 0 {
		t.Errorf("%d connections to the LLM's address after the restart, want 0 (the rule runs offline)", n)
	}

	// The Telegram transcript, for docs/alerts.md.
	api.mu.Lock()
	for _, s := range api.sent {
		t.Logf("TRANSCRIPT sent to %d: %q markup %s", s.Chat, s.Text, s.Markup)
	}
	for _, e := range api.edits {
		t.Logf("TRANSCRIPT edit of %d: %q markup %s", e.ID, e.Text, e.Markup)
	}
	for _, a := range api.answers {
		t.Logf("TRANSCRIPT answer %q", a)
	}
	api.mu.Unlock()
}

// TestBadProposalsRefusedE2E: five proposals the model makes in one
// heartbeat are each refused back to it as the tool's error, with the
// parser's or the checker's message: an unknown sensor (with the "did you
// mean"), a syntax error, a name that clashes with a config rule, a
// 100 KB expression, and the repeat of a proposal a person rejected.
// None reaches a person: the one proposal on MQTT and Telegram is the
// first, good one. Before a person rejects that one, two approvals are
// refused cleanly, changing nothing: one over MQTT (cmd/rule) while
// [manage] remote lacks "rule", refused on cmd/result naming the verb to
// add, and one on the command line of an ID that names no proposal.
func TestBadProposalsRefusedE2E(t *testing.T) {
	t.Parallel()
	b := startMosquitto(t)
	api := newBotAPI(t)
	rec := mosquittotest.Subscribe(t, b.URL(), topicStatus, topicAlert, topicResult)
	big := "air.temperature > 34" + strings.Repeat(" || air.temperature > 34", 100<<10/24)
	bad := []struct{ name, call, want string }{
		{"unknown sensor", `{"name":"warm_a","when":"aier.temperature > 34","severity":"warning","message":"m","why":"w"}`, `unknown sensor "aier"`},
		{"syntax error", `{"name":"warm_b","when":"air.temperature > ","severity":"warning","message":"m","why":"w"}`, ""},
		{"name clash", `{"name":"always","when":"air.temperature > 34","severity":"warning","message":"m","why":"w"}`, `always`},
		{"100 KB expression", `{"name":"warm_c","when":"` + big + `","severity":"warning","message":"m","why":"w"}`, "500"},
		{"rejected repeat", strings.TrimPrefix(proposeCall, "propose_rule "), "reject"},
	}
	if _, err := rule.Compile("air.temperature > "); err != nil {
		bad[1].want = err.Error()
	} else {
		t.Fatal("the syntax error compiles")
	}
	var calls []string
	for _, c := range bad {
		calls = append(calls, "propose_rule "+c.call)
	}
	model := newModelScript(t, []string{proposeCall}, []string{`heartbeat_respond {"outcome":"ok","severity":"info","summary":"all fine"}`}, calls)
	dir := t.TempDir()
	cfg := writeConfig(t, dir, model.llmSection(dir, "Is the air fine?")+steadySensors+
		mqttConfig(b.URL(), "homeassistant = false", "commands = true")+telegramConfig(botChat, api.srv.URL)+
		"\n[manage]\nremote = [\"status\", \"check\", \"ack\"]\n")
	d := startDaemon(t, cfg, "VIGIL_TEST_KEY=sk-test", "VIGIL_E2E_TG_TOKEN="+botToken)
	defer func() { d.logIfFailed(t) }()
	rec.WaitPayloadN(topicStatus, "online", 1, 15*time.Second)
	waitCommandsReady(t, rec)

	// The good proposal.
	if out, errOut, code := runVigil(t, "-c", cfg, "check"); code != 0 {
		t.Fatalf("vigil check: exit %d\n%s%s", code, out, errOut)
	}
	rec.Wait(topicAlert, 10*time.Second, func(m mosquittotest.Message) bool { return strings.Contains(m.Payload, `"proposal":`) })
	api.waitSent(botChat, "too_warm", 10*time.Second)

	// Two approvals refused, changing nothing.
	before := vigilRules(t, cfg)
	if len(before.Pending) != 1 || before.Pending[0].Name != "too_warm" {
		t.Fatalf("pending after the check = %+v, want too_warm", before.Pending)
	}
	id := before.Pending[0].ID
	// always (for = 2s) fires on its own time: wait for it.
	rec.Wait(topicAlert, 10*time.Second, func(m mosquittotest.Message) bool { return strings.Contains(m.Payload, `"rule":"always"`) })
	quiet(t, rec, topicAlert, time.Second)
	alerts := len(rec.On(topicAlert))
	ok, msg, errText := waitResult(t, rec, "vigil/e2e/cmd/rule", "approve "+id)
	if ok || !strings.Contains(errText, `not allowed: add "rule" to [manage] remote`) {
		t.Errorf("cmd/rule approve %s without rule in [manage] remote: ok %v, %q %q; want refused, naming the verb", id, ok, msg, errText)
	}
	if out, errOut, code := runVigil(t, "-c", cfg, "rule", "approve", "p404"); code != 1 || !strings.Contains(errOut, "p404") {
		t.Errorf("vigil rule approve p404: exit %d\n%s%s; want exit 1 naming p404", code, out, errOut)
	}
	if b, a := fmt.Sprint(before), fmt.Sprint(vigilRules(t, cfg)); a != b {
		t.Errorf("vigil rules changed after two refused approvals:\nbefore %s\nafter  %s", b, a)
	}
	time.Sleep(time.Second)
	if n := len(rec.On(topicAlert)); n != alerts {
		t.Errorf("%d alerts after two refused approvals, want none: %v", n-alerts, rec.On(topicAlert)[alerts:])
	}

	// A person rejects it.
	if out, errOut, code := runVigil(t, "-c", cfg, "rule", "reject", "too_warm"); code != 0 {
		t.Fatalf("vigil rule reject too_warm: exit %d\n%s%s", code, out, errOut)
	}

	// The five bad ones, in one heartbeat.
	if out, errOut, code := runVigil(t, "-c", cfg, "check"); code != 0 {
		t.Fatalf("second vigil check: exit %d\n%s%s", code, out, errOut)
	}
	reqs := model.requests()
	if len(reqs) != 4 {
		t.Fatalf("%d requests to the model, want 4 (two per heartbeat)", len(reqs))
	}
	answers := reqs[3].Messages[len(reqs[3].Messages)-len(bad):]
	for i, c := range bad {
		got := answers[i].Content
		if answers[i].Role != "tool" || !strings.Contains(got, "rule refused, nothing kept") || !strings.Contains(got, c.want) {
			t.Errorf("%s: the tool's answer is %s %.300q; want a refusal containing %q", c.name, answers[i].Role, got, c.want)
		}
	}
	if !strings.Contains(answers[0].Content, "did you mean") {
		t.Errorf("unknown sensor: %q has no did you mean", answers[0].Content)
	}
	quiet(t, rec, topicAlert, time.Second)
	n := 0
	for _, m := range rec.On(topicAlert) {
		if strings.Contains(m.Payload, `"proposal":`) {
			n++
		}
	}
	if n != 1 {
		t.Errorf("%d proposals on MQTT, want 1 (the good one): a refused proposal reached a person", n)
	}
	for _, w := range []string{"warm_a", "warm_b", "warm_c", "aier"} {
		if got := api.sentTo(botChat, w); len(got) != 0 {
			t.Errorf("Telegram got a refused proposal (%s): %+v", w, got)
		}
	}
	if got := api.sentTo(botChat, "The model proposes"); len(got) != 1 {
		t.Errorf("Telegram got %d proposals, want one (the rejected repeat must not reach a person): %+v", len(got), got)
	}
	if r := vigilRules(t, cfg); len(r.Pending) != 0 {
		t.Errorf("pending after the bad proposals: %+v, want none", r.Pending)
	}
}
