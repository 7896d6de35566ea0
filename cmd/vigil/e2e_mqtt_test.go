package main

import (
	"encoding/json"
	"maps"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/vigil-iot/vigil/heartbeat"
	"github.com/vigil-iot/vigil/internal/mosquittotest"
)

// End-to-end tests of the real `vigil run` against a real mosquitto: what a
// subscriber sees, and that no alert is lost when the broker or vigil dies.

const (
	// steadySensors fires one critical alert two seconds in and then
	// nothing: the simulated readings hardly move. (The delay leaves the
	// first sample without a commit, so it is taken and published at once,
	// before the broker connection is up.)
	steadySensors = `
[[sensor]]
name = "air"
driver = "bme280"
sim = { every = "0s" }

[[rule]]
name = "always"
when = "air.pressure > 0"
for = "2s"
severity = "critical"
message = "pressure at {air.pressure}"
`
	// flappingSensors queues about one alert a second.
	flappingSensors = `max_alerts_per_hour = 100000

[[sensor]]
name = "air"
driver = "bme280"
sim = { every = "2s", length = "1s", rise = 20 }

[[rule]]
name = "flap"
when = "air.temperature > 30"
severity = "warning"
`
	topicStatus    = "vigil/e2e/status"
	topicAlert     = "vigil/e2e/alert"
	topicHeartbeat = "vigil/e2e/heartbeat"
	topicSensors   = "vigil/e2e/sensors"
	topicProblem   = "vigil/e2e/problem"
	topicResult    = "vigil/e2e/cmd/result"
	topicDiscovery = "homeassistant/device/e2e/config"
)

// jsonKeys returns the sorted top-level keys of a JSON object.
func jsonKeys(t *testing.T, payload string) []string {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal([]byte(payload), &m); err != nil {
		t.Fatalf("payload %q is not a JSON object: %v", payload, err)
	}
	return slices.Sorted(maps.Keys(m))
}

func TestMQTTAlertRetainedStateAndDiscovery(t *testing.T) {
	t.Parallel()
	b := startMosquitto(t)
	live := mosquittotest.Subscribe(t, b.URL(), "vigil/#", "homeassistant/#")
	cfg := writeConfig(t, t.TempDir(), steadySensors+mqttConfig(b.URL(), "homeassistant = true"))
	d := startDaemon(t, cfg)

	// The alert, at QoS 1, not retained, as SPEC §5 spells it.
	m := live.Wait(topicAlert, 15*time.Second, nil)
	if m.QoS != 1 || m.Retained {
		t.Errorf("alert qos %d retained %v, want qos 1, not retained", m.QoS, m.Retained)
	}
	wantKeys := []string{"device", "id", "rule", "severity", "source", "state", "summary", "time"}
	if got := jsonKeys(t, m.Payload); !slices.Equal(got, wantKeys) {
		t.Errorf("alert keys = %v, want %v", got, wantKeys)
	}
	var a struct{ ID, Device, Time, Severity, Source, Rule, State, Summary string }
	if err := json.Unmarshal([]byte(m.Payload), &a); err != nil {
		t.Fatal(err)
	}
	if a.Device != "e2e" || a.Severity != "critical" || a.Source != "rule" || a.Rule != "always" ||
		a.State != "firing" || !strings.HasPrefix(a.Summary, "pressure at ") {
		t.Errorf("alert = %+v", a)
	}
	if ts, err := time.Parse(time.RFC3339, a.Time); err != nil || time.Since(ts) > time.Minute || time.Since(ts) < 0 {
		t.Errorf("alert time %q: %v (not within the last minute)", a.Time, err)
	}
	d.waitLog(t, regexp.MustCompile(`msg=rule rule=always event=firing alert=`+regexp.QuoteMeta(a.ID)+`\b`), time.Second)

	// Retained state, as a subscriber that comes later sees it. The
	// first heartbeat comes at the device's phase within the interval.
	live.Wait(topicHeartbeat, heartbeat.Phase("e2e", time.Minute)+15*time.Second, nil)
	live.Wait(topicSensors, 15*time.Second, nil)
	live.Wait(topicProblem, 15*time.Second, payloadIs("ON"))
	late := mosquittotest.Subscribe(t, b.URL(), "vigil/e2e/+", topicDiscovery)
	for _, topic := range []string{topicStatus, topicHeartbeat, topicSensors, topicProblem, topicDiscovery} {
		if m := late.Wait(topic, 5*time.Second, nil); !m.Retained || m.QoS != 1 {
			t.Errorf("%s: retained %v qos %d, want retained at qos 1", topic, m.Retained, m.QoS)
		}
	}
	if got := late.On(topicStatus)[0].Payload; got != "online" {
		t.Errorf("retained status = %q, want online", got)
	}
	if got := late.On(topicProblem)[0].Payload; got != "ON" {
		t.Errorf("retained problem = %q, want ON while the rule fires", got)
	}
	if len(late.On(topicAlert)) != 0 {
		t.Errorf("a late subscriber got an alert: alerts must not be retained")
	}
	hb := late.On(topicHeartbeat)[0].Payload
	if got, want := jsonKeys(t, hb), []string{"duration_ms", "next_at", "outcome", "reason", "time", "tokens"}; !slices.Equal(got, want) {
		t.Errorf("heartbeat keys = %v, want %v", got, want)
	}
	var h struct{ Outcome, Reason string }
	if json.Unmarshal([]byte(hb), &h); h.Outcome != "skipped" || h.Reason != "rules_only" {
		t.Errorf("heartbeat = %s, want outcome skipped, reason rules_only", hb)
	}
	var snap struct {
		Time     string
		Readings map[string]struct {
			Value float64
			Unit  string
		}
	}
	sp := late.On(topicSensors)[0].Payload
	if err := json.Unmarshal([]byte(sp), &snap); err != nil {
		t.Fatalf("sensors payload %s: %v", sp, err)
	}
	if r, ok := snap.Readings["air.temperature"]; !ok || r.Unit != "°C" || r.Value < -40 || r.Value > 85 {
		t.Errorf("sensors air.temperature = %+v (present %v), want a value in °C", r, ok)
	}
	if _, err := time.Parse(time.RFC3339, snap.Time); err != nil {
		t.Errorf("sensors time %q: %v", snap.Time, err)
	}
	checkDiscovery(t, late.On(topicDiscovery)[0].Payload, snap.Readings)

	// Home Assistant restarted: the device is announced again, live. An
	// "offline" from Home Assistant is not a reason to announce.
	quiet(t, live, topicDiscovery, 1500*time.Millisecond)
	n := len(live.On(topicDiscovery))
	late.Publish("homeassistant/status", false, "offline")
	time.Sleep(1500 * time.Millisecond)
	if got := len(live.On(topicDiscovery)); got != n {
		t.Errorf("homeassistant/status offline re-announced the device (%d discovery messages, want %d)", got, n)
	}
	late.Publish("homeassistant/status", false, "online")
	m = live.WaitN(topicDiscovery, n+1, 5*time.Second)
	if m.Retained {
		t.Errorf("re-announcement arrived as a retained message, want a live one")
	}
	checkDiscovery(t, m.Payload, snap.Readings)
}

// quiet waits until no message arrived on topic for d.
func quiet(t *testing.T, r *mosquittotest.Subscriber, topic string, d time.Duration) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	n := len(r.On(topic))
	for since := time.Now(); time.Since(since) < d; {
		time.Sleep(50 * time.Millisecond)
		if k := len(r.On(topic)); k != n {
			n, since = k, time.Now()
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s never went quiet", topic)
		}
	}
}

// checkDiscovery validates a device discovery message against Home
// Assistant's documented schema (device-based discovery, HA 2025.10+ for default_entity_id): dev
// with identifiers, o with a name, and components each with a platform, a
// unique_id, a default_entity_id of the platform's domain, the status topic
// as availability; a problem binary_sensor; every reading a sensor.
func checkDiscovery(t *testing.T, payload string, readings map[string]struct {
	Value float64
	Unit  string
}) {
	t.Helper()
	var d struct {
		Dev struct {
			IDs  []string `json:"ids"`
			Name string   `json:"name"`
		} `json:"dev"`
		O struct {
			Name string `json:"name"`
		} `json:"o"`
		Cmps map[string]map[string]any `json:"cmps"`
	}
	if err := json.Unmarshal([]byte(payload), &d); err != nil {
		t.Fatalf("discovery payload %s: %v", payload, err)
	}
	if len(d.Dev.IDs) == 0 || d.Dev.Name == "" || d.O.Name == "" {
		t.Errorf("discovery dev/o incomplete: %+v %+v", d.Dev, d.O)
	}
	str := func(c map[string]any, k string) string { s, _ := c[k].(string); return s }
	uniq := map[string]bool{}
	problems := 0
	states := map[string]bool{}
	for id, c := range d.Cmps {
		p, uid := str(c, "p"), str(c, "unique_id")
		if p != "sensor" && p != "binary_sensor" {
			t.Errorf("component %s: platform %q", id, p)
		}
		if uid == "" || uniq[uid] {
			t.Errorf("component %s: unique_id %q missing or not unique", id, uid)
		}
		uniq[uid] = true
		if !strings.HasPrefix(str(c, "default_entity_id"), p+".") {
			t.Errorf("component %s: default_entity_id %q, want %s.<object_id>", id, str(c, "default_entity_id"), p)
		}
		if _, ok := c["object_id"]; ok {
			t.Errorf("component %s uses the deprecated object_id", id)
		}
		if str(c, "availability_topic") != topicStatus {
			t.Errorf("component %s: availability_topic %q, want %s", id, str(c, "availability_topic"), topicStatus)
		}
		if str(c, "state_topic") == "" {
			t.Errorf("component %s: no state_topic", id)
		}
		if p == "binary_sensor" && str(c, "device_class") == "problem" {
			problems++
			if str(c, "state_topic") != topicProblem || str(c, "json_attributes_topic") == "" {
				t.Errorf("problem sensor %s: state_topic %q, json_attributes_topic %q", id, str(c, "state_topic"), str(c, "json_attributes_topic"))
			}
		}
		if str(c, "state_topic") == topicSensors {
			if p == "sensor" && str(c, "state_class") != "measurement" {
				t.Errorf("component %s: state_class %q, want measurement", id, str(c, "state_class"))
			}
			for k := range readings {
				if strings.Contains(str(c, "value_template"), "'"+k+"'") {
					states[k] = true
				}
			}
		}
	}
	if problems != 1 {
		t.Errorf("%d problem binary sensors, want 1", problems)
	}
	for k := range readings {
		if !states[k] {
			t.Errorf("reading %s has no entity in the discovery message", k)
		}
	}
}

func TestMQTTLastWill(t *testing.T) {
	t.Parallel()
	b := startMosquitto(t)
	rec := mosquittotest.Subscribe(t, b.URL(), topicStatus)
	cfg := writeConfig(t, t.TempDir(), steadySensors+mqttConfig(b.URL(), "homeassistant = false"))
	d := startDaemon(t, cfg)
	rec.WaitPayloadN(topicStatus, "online", 1, 15*time.Second)
	if log := b.Log(); !regexp.MustCompile(`as vigil-e2e \(p\d, c1, k5\)`).MatchString(log) {
		t.Errorf("the broker did not see a clean session with keepalive 5s from vigil-e2e:\n%s", log)
	}

	// A frozen or powered-off board sends nothing and closes nothing: the
	// broker gives up 1.5 × keepalive (5s) after the last packet it got,
	// which was at most one keepalive before the freeze.
	d.cmd.Process.Signal(syscall.SIGSTOP)
	frozen := time.Now()
	rec.WaitPayloadN(topicStatus, "offline", 1, 20*time.Second)
	if took := time.Since(frozen); took < 2*time.Second {
		t.Errorf("offline %v after the freeze, before the keepalive could expire", took)
	} else {
		t.Logf("broker published the will %v after the freeze", took.Round(100*time.Millisecond))
	}
	d.kill()

	// SIGKILL closes the socket without a DISCONNECT: the will goes out at once.
	d = startDaemon(t, cfg)
	rec.WaitPayloadN(topicStatus, "online", 2, 15*time.Second)
	d.kill()
	rec.WaitPayloadN(topicStatus, "offline", 2, 10*time.Second)
	late := mosquittotest.Subscribe(t, b.URL(), topicStatus)
	if m := late.Wait(topicStatus, 5*time.Second, nil); m.Payload != "offline" || !m.Retained {
		t.Errorf("retained status after the kill = %q (retained %v), want offline", m.Payload, m.Retained)
	}
}

// deliveredInOrder waits until every id in want was received on the alert
// topic and checks that they arrived in commit order (duplicates allowed).
func deliveredInOrder(t *testing.T, rec *mosquittotest.Subscriber, want []string, timeout time.Duration) []string {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		got := alertIDs(t, rec, topicAlert)
		have := map[string]bool{}
		for _, id := range got {
			have[id] = true
		}
		var missing []string
		for _, id := range want {
			if !have[id] {
				missing = append(missing, id)
			}
		}
		if len(missing) == 0 {
			if !slices.Equal(got[:len(want)], want) {
				t.Fatalf("alerts arrived out of order:\n got %v\nwant %v", got[:len(want)], want)
			}
			return got
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d committed alerts never arrived: %v", len(missing), len(want), missing)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// waitCommitted waits until the daemon's log shows at least n committed alerts.
func waitCommitted(t *testing.T, d *child, n int, timeout time.Duration) []string {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		if ids := committed(d.logText()); len(ids) >= n {
			return ids
		}
		if time.Now().After(deadline) {
			t.Fatalf("fewer than %d alerts committed within %v; log:\n%s", n, timeout, d.logText())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func TestMQTTBrokerRestartLosesNothing(t *testing.T) {
	t.Parallel()
	b := startMosquitto(t)
	rec := mosquittotest.SubscribeWith(t, b.URL(), mosquittotest.SubscriberOptions{Session: "e2e-outage-recorder"}, topicAlert)
	cfg := writeConfig(t, t.TempDir(), flappingSensors+mqttConfig(b.URL(), "homeassistant = false"))
	d := startDaemon(t, cfg)
	rec.WaitN(topicAlert, 2, 20*time.Second)

	b.Stop()
	down := len(committed(d.logText()))
	waitCommitted(t, d, down+3, 15*time.Second) // alerts keep coming while the broker is away
	time.Sleep(2 * time.Second)
	b.Start()
	want := committed(d.logText())
	got := deliveredInOrder(t, rec, want, 30*time.Second)
	t.Logf("%d alerts committed (%d while the broker was down), %d distinct received, %d messages",
		len(want), len(want)-down, len(got), len(rec.On(topicAlert)))
}

func TestMQTTKilledWithAlertsInFlight(t *testing.T) {
	t.Parallel()
	b := startMosquitto(t)
	link := mosquittotest.StartProxy(t, b.Addr())
	rec := mosquittotest.Subscribe(t, b.URL(), topicAlert)
	cfg := writeConfig(t, t.TempDir(), flappingSensors+mqttConfig(link.URL(), "homeassistant = false"))
	d := startDaemon(t, cfg)
	rec.WaitN(topicAlert, 1, 20*time.Second)

	// The link goes dead without closing: the daemon dies with an alert
	// published but never acknowledged, and more queued behind it.
	link.Blackhole(true)
	waitCommitted(t, d, len(committed(d.logText()))+3, 15*time.Second)
	d.kill()
	link.Blackhole(false)
	want := committed(d.logText())
	have := map[string]bool{}
	for _, id := range alertIDs(t, rec, topicAlert) {
		have[id] = true
	}
	unacked := 0
	for _, id := range want {
		if !have[id] {
			unacked++
		}
	}
	if unacked == 0 {
		t.Fatal("every committed alert was delivered before the kill: the test did not exercise alerts in flight")
	}

	d = startDaemon(t, cfg)
	got := deliveredInOrder(t, rec, want, 20*time.Second)
	t.Logf("%d alerts committed before the kill, %d of them undelivered; after the restart %d distinct received",
		len(want), unacked, len(got))

	// Now the broker freezes after the publish reached it: it delivers the
	// alert when it thaws, and the restarted daemon, which never saw the
	// PUBACK, sends it again. Same id, same payload (alertIDs checks): a
	// consumer drops the duplicate.
	waitCommitted(t, d, len(committed(d.logText()))+1, 10*time.Second)
	b.Freeze()
	waitCommitted(t, d, len(committed(d.logText()))+3, 15*time.Second)
	d.kill()
	b.Thaw()
	want = append(want, committed(d.logText())...)
	startDaemon(t, cfg)
	got = deliveredInOrder(t, rec, want, 20*time.Second)
	dups := len(rec.On(topicAlert)) - len(got)
	if dups == 0 {
		t.Errorf("no alert arrived twice after the frozen broker: the test did not exercise redelivery")
	}
	t.Logf("%d alerts committed in all, %d distinct received, %d duplicates", len(want), len(got), dups)
}

// waitCommandsReady waits until the daemon answers on cmd/result: it
// subscribes right after "online", so an invalid command is sent until one
// is answered, and then the answers to the extra pokes are let through.
func waitCommandsReady(t *testing.T, rec *mosquittotest.Subscriber) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for len(rec.On(topicResult)) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("no cmd/result within 10s of online")
		}
		rec.Publish("vigil/e2e/cmd/pause", false, "soon")
		time.Sleep(200 * time.Millisecond)
	}
	quiet(t, rec, topicResult, 500*time.Millisecond)
}

// waitResult publishes a command and returns the next result.
func waitResult(t *testing.T, rec *mosquittotest.Subscriber, topic, payload string) (ok bool, msg, errText string) {
	t.Helper()
	return waitResultWithin(t, rec, topic, payload, 10*time.Second)
}

func TestMQTTCommands(t *testing.T) {
	t.Run("disabled", func(t *testing.T) {
		t.Parallel()
		b := startMosquitto(t)
		rec := mosquittotest.Subscribe(t, b.URL(), topicStatus, "vigil/e2e/cmd/#")
		cfg := writeConfig(t, t.TempDir(), steadySensors+mqttConfig(b.URL(), "homeassistant = false", "commands = false"))
		d := startDaemon(t, cfg)
		rec.WaitPayloadN(topicStatus, "online", 1, 15*time.Second)
		time.Sleep(time.Second) // a daemon that subscribes does so right after "online"
		rec.Publish("vigil/e2e/cmd/pause", false, "5")
		rec.Publish("vigil/e2e/cmd/check", false, "")
		time.Sleep(2 * time.Second)
		if got := rec.On(topicResult); len(got) != 0 {
			t.Errorf("commands are disabled but got results: %v", got)
		}
		out, errOut, code := runVigil(t, "-c", cfg, "status")
		if code != 0 || !strings.Contains(out, "paused:   no") {
			t.Errorf("status after an ignored pause command: exit %d\n%s%s", code, out, errOut)
		}
		if strings.Contains(d.logText(), "mqtt command") {
			t.Errorf("the daemon looked at a command although commands are disabled:\n%s", d.logText())
		}
	})
	t.Run("enabled", func(t *testing.T) {
		t.Parallel()
		b := startMosquitto(t)
		rec := mosquittotest.Subscribe(t, b.URL(), topicStatus, "vigil/e2e/cmd/#")
		cfg := writeConfig(t, t.TempDir(), steadySensors+mqttConfig(b.URL(), "homeassistant = false", "commands = true"))
		startDaemon(t, cfg)
		rec.WaitPayloadN(topicStatus, "online", 1, 15*time.Second)
		waitCommandsReady(t, rec)

		for _, c := range []struct{ topic, payload, wantErr string }{
			{"vigil/e2e/cmd/pause", "abc", "minutes"},
			{"vigil/e2e/cmd/pause", "0", "1..1440"},
			{"vigil/e2e/cmd/pause", `{"minutes": 5, "extra": 1}`, "unknown field"},
			{"vigil/e2e/cmd/resume", "now", "no arguments"},
			{"vigil/e2e/cmd/reboot", "", "unknown command"},
		} {
			ok, _, errText := waitResult(t, rec, c.topic, c.payload)
			if ok || !strings.Contains(errText, c.wantErr) {
				t.Errorf("%s %q: ok %v, error %q; want rejected with %q", c.topic, c.payload, ok, errText, c.wantErr)
			}
		}
		out, _, _ := runVigil(t, "-c", cfg, "status")
		if !strings.Contains(out, "paused:   no") {
			t.Fatalf("rejected commands changed the pause:\n%s", out)
		}

		ok, msg, errText := waitResult(t, rec, "vigil/e2e/cmd/pause", "5")
		if !ok || !strings.Contains(msg, "paused for 5m0s") {
			t.Fatalf("pause 5: ok %v, message %q, error %q", ok, msg, errText)
		}
		out, errOut, code := runVigil(t, "-c", cfg, "status")
		if code != 0 || !strings.Contains(out, "paused:   until") {
			t.Fatalf("status after cmd/pause: exit %d\n%s%s", code, out, errOut)
		}
		if ok, msg, errText := waitResult(t, rec, "vigil/e2e/cmd/resume", ""); !ok {
			t.Fatalf("resume: ok %v, message %q, error %q", ok, msg, errText)
		}
		if out, _, _ := runVigil(t, "-c", cfg, "status"); !strings.Contains(out, "paused:   no") {
			t.Fatalf("status after cmd/resume:\n%s", out)
		}
	})
}
