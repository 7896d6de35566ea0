package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/vigil-iot/vigil/internal/mosquittotest"
)

// TestRemoteSetFollowsManageRemote drives a real daemon over MQTT (a real
// mosquitto) and Telegram (a fake Bot API): with the default [manage]
// remote, set, unset and /toggle are refused on both and nothing changes;
// after a reload that allows them, they work, the daemon applies them at
// once (vigil get shows the value and who set it), and each accepted
// change arrives at the broker as an info alert naming the change and its
// source.
func TestRemoteSetFollowsManageRemote(t *testing.T) {
	t.Parallel()
	const chat = 1001
	api := newBotAPI(t)
	b := startMosquitto(t)
	rec := mosquittotest.Subscribe(t, b.URL(), topicStatus, topicAlert, topicInfo, "vigil/e2e/cmd/#")
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "HEARTBEAT.md"), []byte("- Is the air fine?\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	base := steadySensors + mqttConfig(b.URL(), "homeassistant = false", "commands = true") + telegramConfig(chat, api.srv.URL)
	cfg := writeConfig(t, dir, base)
	d := startDaemon(t, cfg, "VIGIL_E2E_TG_TOKEN="+botToken)
	defer func() { d.logIfFailed(t) }()
	rec.WaitPayloadN(topicStatus, "online", 1, 15*time.Second)
	waitCommandsReady(t, rec)
	api.waitPoll(0, 0, 10*time.Second)

	// 1. The default [manage] remote allows neither set nor unset.
	if ok, msg, errText := waitResult(t, rec, "vigil/e2e/cmd/set", "heartbeat.interval 10m"); ok || !strings.Contains(errText, "not allowed") {
		t.Errorf("mqtt set with the default remote: ok=%v %q %q, want refused as not allowed", ok, msg, errText)
	}
	if ok, msg, errText := waitResult(t, rec, "vigil/e2e/cmd/unset", "heartbeat.interval"); ok || !strings.Contains(errText, "not allowed") {
		t.Errorf("mqtt unset with the default remote: ok=%v %q %q, want refused as not allowed", ok, msg, errText)
	}
	api.addUpdate(botUpdate{ID: 800, Chat: chat, Text: "/set heartbeat.interval 10m"})
	api.waitPoll(0, 801, 10*time.Second)
	api.waitSent(chat, "not allowed", 10*time.Second)
	api.addUpdate(botUpdate{ID: 801, Chat: chat, Text: "/toggle always"})
	api.waitPoll(0, 802, 10*time.Second)
	if n := len(api.sentTo(chat, "not allowed")); n < 2 {
		t.Errorf("/toggle with the default remote: %d refusals sent, want 2 (set and toggle)", n)
	}
	out, errOut, code := runVigil(t, "-c", cfg, "get", "heartbeat.interval")
	if code != 0 || !strings.Contains(out, "1m") || !strings.Contains(out, "config.toml:") {
		t.Fatalf("vigil get after refused sets: exit %d, %q %q; want the file's 1m", code, out, errOut)
	}
	if n := infoAlerts(t, rec, "heartbeat.interval"); n != 0 {
		t.Errorf("%d info alerts about heartbeat.interval after refused sets, want 0", n)
	}

	// 2. Allow set and unset, reload, and try again.
	writeConfig(t, dir, base+`
[manage]
remote = ["status", "pause", "resume", "check", "get", "set", "unset"]
`)
	if err := d.cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	d.waitLog(t, regexp.MustCompile(`msg="config reloaded" changed=.*manage\.remote`), 10*time.Second)

	ok, msg, errText := waitResult(t, rec, "vigil/e2e/cmd/set", "heartbeat.interval 10m")
	if !ok || !strings.Contains(msg, "10m") {
		t.Fatalf("mqtt set with set allowed: ok=%v %q %q", ok, msg, errText)
	}
	waitInfoAlert(t, rec, "heartbeat.interval", "10m", "mqtt vigil/e2e/cmd/set")
	// Watchers (vigil fleet) learn the new interval from the retained info topic.
	rec.Wait(topicInfo, 10*time.Second, func(m mosquittotest.Message) bool { return strings.Contains(m.Payload, `"interval":"10m0s"`) })
	if ok, msg, _ := waitResult(t, rec, "vigil/e2e/cmd/get", "heartbeat.interval"); !ok || !strings.Contains(msg, "10m") || !strings.Contains(msg, "mqtt") {
		t.Errorf("mqtt get: ok=%v %q; want 10m set by mqtt", ok, msg)
	}
	// A bad value is refused with the validator's words, over MQTT too.
	if ok, _, errText := waitResult(t, rec, "vigil/e2e/cmd/set", "heartbeat.interval 30s"); ok || !strings.Contains(errText, `heartbeat.interval: must be at least 1m (got "30s")`) {
		t.Errorf("mqtt set 30s: ok=%v %q; want the validator's message", ok, errText)
	}
	// Even with set allowed, a remote channel may not raise the daily LLM
	// budget, nor set a model name that is a path; each refusal says why.
	if ok, _, errText := waitResult(t, rec, "vigil/e2e/cmd/set", "heartbeat.max_llm_calls_per_day 2000000000"); ok ||
		!strings.Contains(errText, "a remote channel may lower the daily LLM budget, not raise it: at most 96, the configured value (got 2000000000)") {
		t.Errorf("mqtt set max_llm_calls_per_day 2000000000: ok=%v %q; want refused: a remote may not raise the budget", ok, errText)
	}
	if ok, _, errText := waitResult(t, rec, "vigil/e2e/cmd/set", "llm.model ../../etc/passwd"); ok ||
		!strings.Contains(errText, `llm.model: must be a model name, not a path with . or .. in it (got "../../etc/passwd")`) {
		t.Errorf("mqtt set llm.model ../../etc/passwd: ok=%v %q; want the validator's refusal", ok, errText)
	}

	api.addUpdate(botUpdate{ID: 802, Chat: chat, Text: "/set heartbeat.interval 15m"})
	api.waitPoll(0, 803, 10*time.Second)
	waitInfoAlert(t, rec, "heartbeat.interval", "15m", "telegram chat 1001 user 1001")
	api.addUpdate(botUpdate{ID: 803, Chat: chat, Text: "/toggle always"})
	api.waitPoll(0, 804, 10*time.Second)
	waitInfoAlert(t, rec, "rule.always.enabled", "false", "telegram chat 1001 user 1001")

	out, errOut, code = runVigil(t, "-c", cfg, "get", "heartbeat.interval")
	if code != 0 || !strings.Contains(out, "15m") || !strings.Contains(out, "by telegram chat 1001 user 1001") {
		t.Errorf("vigil get after the Telegram set: exit %d, %q %q; want 15m set by telegram", code, out, errOut)
	}
	d.waitLog(t, regexp.MustCompile(`command accepted.*source=telegram`), 5*time.Second)

	if ok, msg, errText := waitResult(t, rec, "vigil/e2e/cmd/unset", "heartbeat.interval"); !ok {
		t.Errorf("mqtt unset: ok=%v %q %q", ok, msg, errText)
	}
	waitInfoAlert(t, rec, "heartbeat.interval", "unset", "mqtt vigil/e2e/cmd/unset")
	out, _, _ = runVigil(t, "-c", cfg, "get", "heartbeat.interval")
	if !strings.Contains(out, "1m") || !strings.Contains(out, "config.toml:") {
		t.Errorf("vigil get after unset: %q; want the file's 1m again", out)
	}
}

const topicInfo = "vigil/e2e/info"

// alertText is the part of an alert payload these tests look at.
type alertText struct {
	Severity string `json:"severity"`
	Source   string `json:"source"`
	Summary  string `json:"summary"`
}

// infoAlerts counts the info alerts received so far whose summary names key.
func infoAlerts(t *testing.T, rec *mosquittotest.Subscriber, key string) int {
	t.Helper()
	n := 0
	for _, m := range rec.On(topicAlert) {
		var a alertText
		if json.Unmarshal([]byte(m.Payload), &a) == nil && a.Severity == "info" && strings.Contains(a.Summary, key) {
			n++
		}
	}
	return n
}

// waitInfoAlert waits for an info alert whose summary names every word.
func waitInfoAlert(t *testing.T, rec *mosquittotest.Subscriber, words ...string) alertText {
	t.Helper()
	var got alertText
	rec.Wait(topicAlert, 15*time.Second, func(m mosquittotest.Message) bool {
		var a alertText
		if json.Unmarshal([]byte(m.Payload), &a) != nil || a.Severity != "info" {
			return false
		}
		for _, w := range words {
			if !strings.Contains(a.Summary, w) {
				return false
			}
		}
		got = a
		return true
	})
	return got
}
