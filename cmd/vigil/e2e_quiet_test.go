package main

import (
	"encoding/json"
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/vigil-iot/vigil/daemon"
	"github.com/vigil-iot/vigil/heartbeat"
	"github.com/vigil-iot/vigil/internal/mosquittotest"
)

// End-to-end tests of Telegram's quiet hours and cap with a real daemon, a
// real mosquitto and a local Bot API, on the real clock.

// botChat is the Telegram chat of these tests.
const botChat = 3003

// mqttAlerts decodes the alerts rec received, each id once.
func mqttAlerts(t *testing.T, rec *mosquittotest.Subscriber) map[string]string {
	t.Helper()
	out := map[string]string{} // id -> summary
	for _, m := range rec.On(topicAlert) {
		var a struct{ ID, Summary string }
		if err := json.Unmarshal([]byte(m.Payload), &a); err != nil {
			t.Fatalf("alert payload %q: %v", m.Payload, err)
		}
		out[a.ID] = a.Summary
	}
	return out
}

// waitMQTTAlerts waits until rec has n distinct alerts.
func waitMQTTAlerts(t *testing.T, rec *mosquittotest.Subscriber, n int, timeout time.Duration) map[string]string {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		got := mqttAlerts(t, rec)
		if len(got) >= n {
			return got
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d alerts on MQTT within %v, want %d: %v", len(got), timeout, n, got)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// waitHeld waits until `vigil status --json` shows n alerts held for
// Telegram's digest.
func waitHeld(t *testing.T, cfg string, n int, timeout time.Duration) *heartbeat.Held {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		held := statusJSON(t, cfg).Held
		if held != nil && len(held.Alerts) == n {
			return held
		}
		if time.Now().After(deadline) {
			t.Fatalf("held for Telegram within %v: %+v, want %d alerts", timeout, held, n)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// heldStatus runs `vigil status` (text and --json) and returns both.
func heldStatus(t *testing.T, cfg string) (string, *heartbeat.Held) {
	t.Helper()
	out, errOut, code := runVigil(t, "-c", cfg, "status")
	if code != 0 {
		t.Fatalf("vigil status: exit %d: %s", code, errOut)
	}
	return out, statusJSON(t, cfg).Held
}

// TestQuietHoursEndToEnd: a real daemon whose quiet hours (in the device
// zone, a half-hour offset) end a minute or so after it starts. Warnings
// during quiet hours reach MQTT at once but Telegram only as one digest at
// the end; a critical reaches Telegram at once; `vigil status` shows what
// is held and when it goes out; a SIGKILL during quiet hours loses nothing
// held: the restarted daemon's digest names the alerts held before the
// kill and after it.
func TestQuietHoursEndToEnd(t *testing.T) {
	t.Parallel()
	loc, err := time.LoadLocation("America/St_Johns")
	if err != nil {
		t.Fatal(err)
	}
	// Quiet hours that began minutes ago and end at the first full minute
	// at least 30 s from now (30..90 s).
	now := time.Now().In(loc)
	end := now.Add(30 * time.Second).Truncate(time.Minute).Add(time.Minute)
	quiet := end.Add(-3*time.Minute).Format("15:04") + "-" + end.Format("15:04")

	b := startMosquitto(t)
	rec := mosquittotest.Subscribe(t, b.URL(), topicAlert)
	api := newBotAPI(t)
	rules := `
[[sensor]]
name = "air"
driver = "bme280"
sim = { every = "0s" }
`
	for _, r := range []struct{ name, sev, forDur string }{
		{"w1", "warning", "0s"}, {"c1", "critical", "2s"}, {"w2", "warning", "4s"}, {"w3", "warning", "10s"},
	} {
		rules += fmt.Sprintf("\n[[rule]]\nname = %q\nwhen = \"air.pressure > 0\"\nseverity = %q\nfor = %q\nmessage = \"%s at {air.pressure}\"\n", r.name, r.sev, r.forDur, r.name)
	}
	cfg := writeConfig(t, t.TempDir(), rules+mqttConfig(b.URL(), "homeassistant = false")+
		telegramConfig(botChat, api.srv.URL)+fmt.Sprintf("quiet_hours = %q\n", quiet))
	writeFile(t, cfg, inZoneConfig(readFile(t, cfg)))
	env := "VIGIL_E2E_TG_TOKEN=" + botToken
	d := startDaemon(t, cfg, env)
	defer func() {
		if t.Failed() {
			t.Logf("quiet hours %s (end %v); daemon log:\n%s", quiet, end, d.logText())
		}
	}()

	// w1, c1 and w2 reach MQTT at once; Telegram gets the critical only.
	got := waitMQTTAlerts(t, rec, 3, 20*time.Second)
	api.waitSent(botChat, "c1 at ", 10*time.Second)
	waitHeld(t, cfg, 2, 10*time.Second)
	if n := len(api.sentTo(botChat, " at ")); n != 1 {
		t.Errorf("Telegram got %d alert messages during quiet hours, want 1 (the critical): %+v", n, api.sentTo(botChat, ""))
	}
	out, held := heldStatus(t, cfg)
	t.Logf("vigil status during quiet hours:\n%s", out)
	dueText := end.Format(daemon.TimeLayout)
	if want := "held:     telegram 2 alerts, one digest at " + dueText + " (quiet hours end)\n"; !strings.Contains(out, want) {
		t.Errorf("vigil status lacks %q:\n%s", want, out)
	}
	if held == nil || len(held.Alerts) != 2 || !held.Due.Equal(end) {
		t.Errorf("status --json held = %+v, want 2 alerts due %v", held, end)
	}

	// A power cut in quiet hours, then w3 fires after the restart.
	d.kill()
	d = startDaemon(t, cfg, env)
	got = waitMQTTAlerts(t, rec, 4, 20*time.Second)
	waitHeld(t, cfg, 3, 20*time.Second)
	if time.Now().After(end) {
		t.Fatalf("the test was too slow: quiet hours ended before the last alert was held")
	}
	for _, s := range []string{"w1 at ", "c1 at ", "w2 at ", "w3 at "} {
		if n := countSummaries(got, s); n != 1 {
			t.Errorf("MQTT got %d alerts %q before the end of quiet hours, want 1: %v", n, s, got)
		}
	}
	if digests := api.sentTo(botChat, "DIGEST"); len(digests) != 0 {
		t.Fatalf("a digest before quiet hours end: %+v", digests)
	}
	if _, held := heldStatus(t, cfg); held == nil || len(held.Alerts) != 3 {
		t.Errorf("held after the restart: %+v, want 3", held)
	}

	// At the end, one digest names every held alert.
	dg := api.waitSent(botChat, "DIGEST", time.Until(end)+20*time.Second)
	t.Logf("the digest:\n%s", dg.Text)
	if time.Now().Before(end) {
		t.Errorf("the digest came before %v", end)
	}
	for _, s := range []string{"WARNING w1: w1 at ", "WARNING w2: w2 at ", "WARNING w3: w3 at ", "📋 DIGEST · 3 held alerts", "quiet hours " + quiet} {
		if !strings.Contains(dg.Text, s) {
			t.Errorf("the digest lacks %q:\n%s", s, dg.Text)
		}
	}
	if strings.Contains(dg.Text, "c1 at ") {
		t.Errorf("the digest names the critical, which went out at once:\n%s", dg.Text)
	}
	if n := len(api.sentTo(botChat, "DIGEST")); n != 1 {
		t.Errorf("%d digests, want 1", n)
	}
	// Nothing is held any more.
	deadline := time.Now().Add(5 * time.Second)
	for {
		_, held := heldStatus(t, cfg)
		if held == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("still held after the digest: %+v", held)
		}
		time.Sleep(100 * time.Millisecond)
	}
	d.cmd.Process.Signal(syscall.SIGTERM)
	<-d.done
}

func countSummaries(alerts map[string]string, prefix string) int {
	n := 0
	for _, s := range alerts {
		if strings.HasPrefix(s, prefix) {
			n++
		}
	}
	return n
}

// TestTelegramCapEndToEnd: 50 rule alerts in one minute with max_per_hour
// = 10 give 10 Telegram messages plus one digest naming the other 40; MQTT
// gets all 50. The 50th is a critical: past the cap it sends the digest at
// once (the hour-end digest of warnings is tested on the fake clock in
// transport/telegram). Before it, `vigil status` shows the 39 held
// warnings due an hour after the first message.
func TestTelegramCapEndToEnd(t *testing.T) {
	t.Parallel()
	b := startMosquitto(t)
	rec := mosquittotest.Subscribe(t, b.URL(), topicAlert)
	api := newBotAPI(t)
	rules := `max_alerts_per_hour = 100

[[sensor]]
name = "air"
driver = "bme280"
sim = { every = "0s" }
`
	for i := 1; i <= 49; i++ {
		rules += fmt.Sprintf("\n[[rule]]\nname = \"w%02d\"\nwhen = \"air.pressure > 0\"\nseverity = \"warning\"\nmessage = \"warning %02d at {air.pressure}\"\n", i, i)
	}
	rules += "\n[[rule]]\nname = \"c50\"\nwhen = \"air.pressure > 0\"\nfor = \"8s\"\nseverity = \"critical\"\nmessage = \"critical 50 at {air.pressure}\"\n"
	cfg := writeConfig(t, t.TempDir(), rules+mqttConfig(b.URL(), "homeassistant = false")+
		telegramConfig(botChat, api.srv.URL)+"max_per_hour = 10\n")
	start := time.Now()
	d := startDaemon(t, cfg, "VIGIL_E2E_TG_TOKEN="+botToken)
	defer func() { d.logIfFailed(t) }()

	// The 49 warnings: 10 messages, 39 held, due an hour after the first.
	waitMQTTAlerts(t, rec, 49, 20*time.Second)
	waitHeld(t, cfg, 39, 10*time.Second)
	if n := len(api.sentTo(botChat, "warning ")); n != 10 {
		t.Fatalf("%d Telegram messages for 49 warnings, want 10", n)
	}
	out, held := heldStatus(t, cfg)
	t.Logf("vigil status past the cap:\n%s", out)
	if !strings.Contains(out, "held:     telegram 39 alerts, one digest at ") || !strings.Contains(out, "(max_per_hour frees a slot)") ||
		!strings.Contains(out, "… and 29 more") {
		t.Errorf("vigil status:\n%s", out)
	}
	if held == nil || len(held.Alerts) != 39 || held.Due.Before(start.Add(time.Hour-time.Second)) || held.Due.After(time.Now().Add(time.Hour)) {
		t.Errorf("status --json held = %+v, want 39 due an hour after the first message", held)
	}

	// The critical, past the cap, sends the digest at once.
	dg := api.waitSent(botChat, "DIGEST", 20*time.Second)
	t.Logf("the digest:\n%s", dg.Text)
	got := waitMQTTAlerts(t, rec, 50, 10*time.Second)
	if len(got) != 50 {
		t.Errorf("MQTT got %d alerts, want 50", len(got))
	}
	if !strings.Contains(dg.Text, "📋 DIGEST · 40 held alerts") || !strings.Contains(dg.Text, "CRITICAL c50: critical 50 at ") {
		t.Errorf("digest:\n%s", dg.Text)
	}
	all := api.sentTo(botChat, "")
	if len(all) != 11 {
		t.Errorf("Telegram got %d messages, want 11 (10 alerts and one digest)", len(all))
	}
	for i := 1; i <= 49; i++ {
		s := fmt.Sprintf("warning %02d at ", i)
		if n := len(api.sentTo(botChat, s)); n != 1 {
			t.Errorf("%q is in %d Telegram messages, want exactly 1", s, n)
		}
	}
}
