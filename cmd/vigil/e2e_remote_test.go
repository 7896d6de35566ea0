package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/vigil-iot/vigil/control"
	"github.com/vigil-iot/vigil/internal/mosquittotest"
)

// TestRemoteCommandsShareBudgetLimitAndAudit drives the real daemon through
// every command channel: the control socket (vigil check), MQTT cmd/check,
// Telegram /check and, with the daemon stopped, the CLI on the state file.
// Twenty forced checks with max_llm_calls_per_day = 2 make exactly two LLM
// requests; the rest are refused with reason budget, whichever channel
// asked. The one pause limit holds on every channel, and the accepted
// commands are logged with their source and listed by vigil status.
func TestRemoteCommandsShareBudgetLimitAndAudit(t *testing.T) {
	t.Parallel()
	const chat = 1001
	llm := newScriptedLLM(t)
	api := newBotAPI(t)
	b := startMosquitto(t)
	rec := mosquittotest.Subscribe(t, b.URL(), topicStatus, "vigil/e2e/cmd/#")
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "HEARTBEAT.md"), []byte("- Is the air fine?\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := writeConfig(t, dir, `max_llm_calls_per_day = 2

[llm]
base_url = "http://`+llm.addr+`/v1"
api_key_env = "VIGIL_TEST_KEY"
timeout = "3s"
`+steadySensors+mqttConfig(b.URL(), "homeassistant = false", "commands = true")+telegramConfig(chat, api.srv.URL))
	d := startDaemon(t, cfg, "VIGIL_TEST_KEY=sk-test", "VIGIL_E2E_TG_TOKEN="+botToken)
	defer func() { d.logIfFailed(t) }()
	rec.WaitPayloadN(topicStatus, "online", 1, 15*time.Second)

	outcomes := map[string][]string{} // channel -> "outcome (reason)" per check
	// 1. The control socket, as `vigil check` with a daemon running.
	for range 5 {
		out, errOut, _ := runVigil(t, "-c", cfg, "check", "--json")
		var cj control.CheckJSON
		if err := json.Unmarshal([]byte(out), &cj); err != nil {
			t.Fatalf("vigil check --json: %v\n%s%s", err, out, errOut)
		}
		outcomes["socket"] = append(outcomes["socket"], cj.Outcome+" ("+cj.Reason+")")
	}
	// 2. MQTT cmd/check.
	waitCommandsReady(t, rec)
	for range 5 {
		ok, msg, errText := waitResult(t, rec, "vigil/e2e/cmd/check", "")
		if !ok {
			t.Fatalf("mqtt check: error %q", errText)
		}
		outcomes["mqtt"] = append(outcomes["mqtt"], firstLine(msg))
	}
	// 3. Telegram /check.
	api.waitPoll(0, 0, 10*time.Second)
	for i := range 5 {
		api.addUpdate(botUpdate{ID: int64(700 + i), Chat: chat, Text: "/check"})
		api.waitPoll(0, int64(701+i), 10*time.Second)
	}
	for _, m := range api.sentTo(chat, "outcome:") {
		outcomes["telegram"] = append(outcomes["telegram"], firstLine(m.Text))
	}

	// The one pause limit, on each channel: 1441 minutes is refused.
	if out, errOut, code := runVigil(t, "-c", cfg, "pause", "1441"); code != exitUsage || !strings.Contains(errOut, "minutes must be 1..1440") {
		t.Errorf("vigil pause 1441 (socket): exit %d, %q %q; want %d and the limit", code, out, errOut, exitUsage)
	}
	if ok, _, errText := waitResult(t, rec, "vigil/e2e/cmd/pause", "1441"); ok || !strings.Contains(errText, "minutes must be 1..1440") {
		t.Errorf("mqtt pause 1441: ok %v, error %q; want refused with the limit", ok, errText)
	}
	api.addUpdate(botUpdate{ID: 705, Chat: chat, Text: "/pause 1441"})
	api.waitSent(chat, "minutes must be 1..1440", 10*time.Second)
	if out, errOut, code := runVigil(t, "-c", cfg, "pause", "1440"); code != 0 || !strings.Contains(out, "paused for 24h0m0s") {
		t.Errorf("vigil pause 1440: exit %d, %q %q", code, out, errOut)
	}

	// Every accepted command is logged with its source and listed in status.
	d.waitLog(t, regexp.MustCompile(`msg="command accepted" command=check source=mqtt topic=vigil/e2e/cmd/check`), 5*time.Second)
	d.waitLog(t, regexp.MustCompile(`msg="command accepted" command=check source=telegram chat=1001 user=1001`), 5*time.Second)
	d.waitLog(t, regexp.MustCompile(`msg="command accepted" command=check source=socket`), 5*time.Second)
	out, errOut, code := runVigil(t, "-c", cfg, "status")
	if code != 0 {
		t.Fatalf("vigil status: exit %d\n%s", code, errOut)
	}
	for _, want := range []string{`commands:`, `\scheck\s+mqtt vigil/e2e/cmd/check\n`, `\scheck\s+telegram chat 1001 user 1001\n`, `\spause 24h0m0s\s+socket\n`} {
		if !regexp.MustCompile(want).MatchString(out) {
			t.Errorf("vigil status does not list %q:\n%s", want, out)
		}
	}
	d.kill()

	// 4. The CLI on the state file, no daemon running.
	if out, errOut, code := runVigil(t, "-c", cfg, "pause", "1441"); code != exitUsage || !strings.Contains(errOut, "minutes must be 1..1440") {
		t.Errorf("vigil pause 1441 (no daemon): exit %d, %q %q", code, out, errOut)
	}
	for range 5 {
		out, errOut, _ := runIn(t, "", []string{"VIGIL_TEST_KEY=sk-test"}, "-c", cfg, "check", "--json")
		var cj control.CheckJSON
		if err := json.Unmarshal([]byte(out), &cj); err != nil {
			t.Fatalf("vigil check --json (no daemon): %v\n%s%s", err, out, errOut)
		}
		outcomes["cli"] = append(outcomes["cli"], cj.Outcome+" ("+cj.Reason+")")
	}

	var ran, refused int
	for _, ch := range []string{"socket", "mqtt", "telegram", "cli"} {
		if len(outcomes[ch]) != 5 {
			t.Errorf("%s: %d check answers, want 5: %q", ch, len(outcomes[ch]), outcomes[ch])
		}
		for _, o := range outcomes[ch] {
			switch {
			case strings.Contains(o, "skipped (budget)"):
				refused++
			case strings.HasPrefix(o, "ok") || strings.HasPrefix(o, "alert") || strings.Contains(o, "outcome: ok") || strings.Contains(o, "outcome: alert"):
				ran++
			default:
				t.Errorf("%s check answered %q, want ok, alert or skipped (budget)", ch, o)
			}
		}
	}
	t.Logf("REMOTE checks=20 llm_requests=%d ran=%d refused_budget=%d outcomes=%v", llm.count(), ran, refused, outcomes)
	if n := llm.count(); n != 2 {
		t.Errorf("20 forced checks over four channels with a budget of 2 made %d LLM requests, want 2", n)
	}
	if ran+refused != 20 || refused < 18 {
		t.Errorf("%d checks ran and %d were refused for budget; want at most 2 to run", ran, refused)
	}
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}
