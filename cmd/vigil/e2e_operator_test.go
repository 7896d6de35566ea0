package main

import (
	"encoding/json"
	"os"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/vigil-iot/vigil/internal/mosquittotest"
)

// End-to-end tests of what an operator sees: times in the device's zone,
// every transport's queue, test alerts, discovery and a quiet log.

// inZone puts the config in a zone with a half-hour offset, so a time
// printed in UTC or with the wrong offset cannot pass.
func inZoneConfig(cfg string) string {
	return strings.Replace(cfg, `timezone = "UTC"`, `timezone = "America/St_Johns"`, 1)
}

func TestStatusAndPauseAgreeInDeviceZone(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cfg := writeConfig(t, dir, "")
	writeFile(t, cfg, inZoneConfig(readFile(t, cfg)))
	loc, _ := time.LoadLocation("America/St_Johns")
	offset := time.Now().In(loc).Format("-07:00") // -03:30, or -02:30 in summer
	untilRe := regexp.MustCompile(`until (\d{4}-\d\d-\d\d \d\d:\d\d:\d\d [+-]\d\d:\d\d)`)
	// Several rounds: a truncating and a rounding side disagree about half
	// the time.
	for i := 0; i < 4; i++ {
		out, errOut, code := runVigil(t, "-c", cfg, "pause", "10")
		if code != 0 {
			t.Fatalf("pause 10 exit %d: %s", code, errOut)
		}
		m := untilRe.FindStringSubmatch(out)
		if m == nil || !strings.HasSuffix(m[1], offset) {
			t.Fatalf("pause 10 said %q, want 'until YYYY-MM-DD hh:mm:ss %s'", out, offset)
		}
		status, errOut, code := runVigil(t, "-c", cfg, "status")
		if code != 0 {
			t.Fatalf("status exit %d: %s", code, errOut)
		}
		if !strings.Contains(status, "paused:   until "+m[1]+"\n") {
			t.Fatalf("pause said until %s, status says:\n%s", m[1], status)
		}
		if !regexp.MustCompile(`(?m)^clock: +\d{4}-\d\d-\d\d \d\d:\d\d:\d\d ` + regexp.QuoteMeta(offset) + `, `).MatchString(status) {
			t.Errorf("status clock line not in the device zone (%s):\n%s", offset, status)
		}
		time.Sleep(170 * time.Millisecond)
	}
	// The log's time attribute is in the device zone too.
	_, errOut, code := runVigil(t, "-c", cfg, "test-alert")
	if code != 0 || !regexp.MustCompile(`time=\S+`+regexp.QuoteMeta(offset)+` level=INFO msg="test alert queued"`).MatchString(errOut) {
		t.Errorf("test-alert log (exit %d) not stamped in the device zone %s:\n%s", code, offset, errOut)
	}
}

func TestOfflineStatusListsEveryQueue(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeFile(t, dir+"/tg-token", "123:abc\n")
	cfg := writeConfig(t, dir, `
[mqtt]
broker = "tcp://127.0.0.1:`+itoa(mosquittotest.FreePort(t))+`"

[telegram]
token_file = "`+dir+`/tg-token"
chat_id = 42
api_url = "http://127.0.0.1:`+itoa(mosquittotest.FreePort(t))+`"
`)
	for i := 0; i < 2; i++ {
		if out, errOut, code := runVigil(t, "-c", cfg, "test-alert"); code != 0 || !strings.Contains(out, "delivered when 'vigil run' starts") {
			t.Fatalf("offline test-alert exit %d: %s%s", code, out, errOut)
		}
	}
	out, errOut, code := runVigil(t, "-c", cfg, "status")
	if code != 0 || !strings.Contains(out, "outbox:   log 2, mqtt 2, telegram 2 (dropped 0)") {
		t.Fatalf("offline status before a run (exit %d):\n%s%s\nwant outbox: log 2, mqtt 2, telegram 2", code, out, errOut)
	}
	// A daemon delivers to the log; MQTT and Telegram stay unreachable.
	d := startDaemon(t, cfg)
	d.waitLog(t, regexp.MustCompile(`(?s)msg=alert .*msg=alert `), 10*time.Second)
	d.cmd.Process.Signal(syscall.SIGTERM)
	<-d.done
	out, errOut, code = runVigil(t, "-c", cfg, "status")
	if code != 0 || !strings.Contains(out, "outbox:   log 0, mqtt 2, telegram 2 (dropped 0)") {
		t.Fatalf("offline status after a run (exit %d):\n%s%s\nwant outbox: log 0, mqtt 2, telegram 2", code, out, errOut)
	}
}

func TestTestAlertArrivesAtMosquitto(t *testing.T) {
	t.Parallel()
	b := startMosquitto(t)
	live := mosquittotest.Subscribe(t, b.URL(), "vigil/#")
	cfg := writeConfig(t, t.TempDir(), mqttConfig(b.URL()))

	// From a running daemon, through its control socket.
	d := startDaemon(t, cfg)
	live.Wait(topicStatus, 10*time.Second, payloadIs("online"))
	out, errOut, code := runVigil(t, "-c", cfg, "test-alert", "--severity", "warning")
	if code != 0 || !strings.Contains(out, "the daemon is delivering it") {
		t.Fatalf("test-alert exit %d: %s%s", code, out, errOut)
	}
	m := live.Wait(topicAlert, 10*time.Second, nil)
	var a struct{ ID, Source, Rule, Severity, State, Summary string }
	if err := json.Unmarshal([]byte(m.Payload), &a); err != nil {
		t.Fatal(err)
	}
	if a.Source != "system" || a.Rule != "test" || a.Severity != "warning" || a.State != "notice" ||
		a.Summary != "Test alert from vigil on e2e — if you can read this, delivery works" || !strings.Contains(out, a.ID) {
		t.Errorf("test alert at the broker = %+v (CLI said %q)", a, out)
	}
	d.cmd.Process.Signal(syscall.SIGTERM)
	<-d.done

	// With no daemon: queued in the state file, for MQTT only, and
	// delivered when vigil run starts.
	out, errOut, code = runVigil(t, "-c", cfg, "test-alert", "--transport", "mqtt")
	if code != 0 || !strings.Contains(out, "delivered when 'vigil run' starts") || !strings.Contains(out, "mqtt only") {
		t.Fatalf("offline test-alert exit %d: %s%s", code, out, errOut)
	}
	id := regexp.MustCompile(`test alert (\S+) queued`).FindStringSubmatch(out)
	if id == nil {
		t.Fatalf("no alert id in %q", out)
	}
	d = startDaemon(t, cfg)
	live.Wait(topicAlert, 10*time.Second, func(m mosquittotest.Message) bool { return strings.Contains(m.Payload, id[1]) })
	d.waitLog(t, regexp.MustCompile(`msg="rule evaluated"|msg=heartbeat|msg="vigil starting"`), 5*time.Second)
	time.Sleep(300 * time.Millisecond)
	if strings.Contains(d.logText(), "id="+id[1]) {
		t.Errorf("the log transport logged the mqtt-only test alert:\n%s", d.logText())
	}
}

func TestDiscoveryOncePerConnect(t *testing.T) {
	t.Parallel()
	b := startMosquitto(t)
	live := mosquittotest.Subscribe(t, b.URL(), "homeassistant/#", "vigil/#")
	cfg := writeConfig(t, t.TempDir(), steadySensors+mqttConfig(b.URL(), "homeassistant = true"))
	startDaemon(t, cfg)
	m := live.Wait(topicDiscovery, 15*time.Second, nil)
	live.WaitN(topicSensors, 1, 10*time.Second)
	time.Sleep(3 * time.Second) // three more samples
	if n := len(live.On(topicDiscovery)); n != 1 {
		t.Fatalf("%d discovery messages after start, want exactly 1", n)
	}
	if !strings.Contains(m.Payload, "air_temperature") {
		t.Errorf("the one discovery message lacks the sensors of the first sample: %.200s", m.Payload)
	}
}

func TestDefaultLogIsQuietInSteadyState(t *testing.T) {
	t.Parallel()
	cfg := writeConfig(t, t.TempDir(), `
[[sensor]]
name = "air"
driver = "bme280"

[[rule]]
name = "never"
when = "air.temperature > 1000"
severity = "warning"
`)
	d := startDaemon(t, cfg)
	d.waitLog(t, regexp.MustCompile(`msg="vigil starting"`), 10*time.Second)
	start := len(d.logText())
	time.Sleep(4 * time.Second) // four samples at 1 s
	if extra := strings.TrimSpace(d.logText()[start:]); extra != "" {
		t.Errorf("the default log printed during steady state (nothing firing, no heartbeat due):\n%s", extra)
	}

	d.kill()

	// -v shows each sample and rule evaluation.
	dv := startChild(t, nil, "-v", "-c", cfg, "run")
	dv.waitLog(t, regexp.MustCompile(`(?s)msg=sample .*air\.temperature=.*msg="rule evaluated" rule=never event=none`), 10*time.Second)
}

func itoa(n int) string { return strconv.Itoa(n) }

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func writeFile(t *testing.T, path, text string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
}
