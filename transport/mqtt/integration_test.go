package mqtt

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	paho "github.com/eclipse/paho.mqtt.golang"
	"github.com/jonboulle/clockwork"

	"github.com/vigil-iot/vigil/alert"
	"github.com/vigil-iot/vigil/device"
	"github.com/vigil-iot/vigil/internal/mosquittotest"
	"github.com/vigil-iot/vigil/internal/transporttest"
	"github.com/vigil-iot/vigil/transport"
)

// Integration tests against a real mosquitto on a loopback port.

const wait5 = 5 * time.Second

// waitFor polls cond until it holds or fails the test.
func waitFor(t *testing.T, what string, timeout time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", timeout, what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// runClient starts c.Run and stops it when the test ends, failing the test
// if Run returns an error.
func runClient(t *testing.T, c *Client) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx) }()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			select {
			case err := <-done:
				if err != nil {
					t.Errorf("Run() = %v, want nil", err)
				}
			case <-time.After(15 * time.Second):
				t.Errorf("Run did not return within 15s of cancel")
			}
		})
	}
	t.Cleanup(stop)
	return stop
}

// testLogger logs to t until the test's cleanups have run; paho goroutines
// that outlive the test write nowhere.
func testLogger(t *testing.T) *slog.Logger {
	w := &testWriter{t: t}
	t.Cleanup(func() { w.mu.Lock(); w.done = true; w.mu.Unlock() })
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

type testWriter struct {
	t    *testing.T
	mu   sync.Mutex
	done bool
}

func (w *testWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.done {
		w.t.Log(string(bytes.TrimRight(p, "\n")))
	}
	return len(p), nil
}

func newTestClient(t *testing.T, url string, cfg Config, cmds CmdHandler) *Client {
	t.Helper()
	cfg.Broker = url
	if cfg.DeviceID == "" {
		cfg.DeviceID = "dev1"
	}
	cfg.ClientID = "vigil-" + strings.ReplaceAll(t.Name(), "/", "-")
	if cfg.ReconnectMax == 0 {
		cfg.ReconnectMax = time.Second
	}
	if cfg.Keepalive == 0 {
		cfg.Keepalive = 5 * time.Second
	}
	return New(cfg, cmds, testLogger(t))
}

func waitConnected(t *testing.T, c *Client) {
	t.Helper()
	waitFor(t, "client connected", 10*time.Second, c.Connected)
}

func testAlert(id string, sev alert.Severity) alert.Alert {
	return alert.Alert{
		ID: id, Device: "dev1", Time: time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC),
		Severity: sev, Source: alert.SourceRule, Rule: "too_hot", State: alert.StateFiring,
		Summary: "Greenhouse at 36.2 °C <hot> & \"dry\"",
	}
}

func TestAlertDeliveredAtQoS1(t *testing.T) {
	b := mosquittotest.Start(t, mosquittotest.Options{})
	sub := mosquittotest.Subscribe(t, b.URL(), "vigil/dev1/alert")
	c := newTestClient(t, b.URL(), Config{MinSeverity: alert.Warning}, nil)
	runClient(t, c)
	waitConnected(t, c)

	ctx, cancel := context.WithTimeout(context.Background(), wait5)
	defer cancel()
	if err := c.Notify(ctx, testAlert("a-info", alert.Info)); err != nil {
		t.Fatalf("Notify(info below min) = %v, want nil", err)
	}
	want := testAlert("a-crit", alert.Critical)
	if err := c.Notify(ctx, want); err != nil {
		t.Fatalf("Notify() = %v", err)
	}
	m := sub.Next("vigil/dev1/alert", wait5)
	if m.QoS != 1 || m.Retained {
		t.Errorf("alert qos=%d retained=%v, want qos 1, not retained", m.QoS, m.Retained)
	}
	var got alert.Alert
	if err := json.Unmarshal([]byte(m.Payload), &got); err != nil {
		t.Fatalf("alert payload %q: %v", m.Payload, err)
	}
	if got != want {
		t.Errorf("alert = %+v, want %+v (the info alert must not have been sent)", got, want)
	}
	// SPEC §5 field names, severity as text.
	var raw map[string]any
	_ = json.Unmarshal([]byte(m.Payload), &raw)
	for _, k := range []string{"id", "device", "time", "severity", "source", "rule", "state", "summary"} {
		if _, ok := raw[k]; !ok {
			t.Errorf("alert JSON lacks %q: %s", k, m.Payload)
		}
	}
	if raw["severity"] != "critical" {
		t.Errorf(`alert severity = %v, want "critical"`, raw["severity"])
	}
}

func TestRetainedState(t *testing.T) {
	b := mosquittotest.Start(t, mosquittotest.Options{})
	c := newTestClient(t, b.URL(), Config{Board: "pi4", Version: "v1.2.3", Interval: 30 * time.Minute, SampleInterval: 30 * time.Second}, nil)
	stop := runClient(t, c)
	waitConnected(t, c)

	ctx, cancel := context.WithTimeout(context.Background(), wait5)
	defer cancel()
	hb := transport.Heartbeat{Time: time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC), Outcome: "ok", DurationMS: 1234,
		NextAt: time.Date(2025, 3, 1, 12, 30, 0, 0, time.UTC), Tokens: 321}
	if err := c.PublishHeartbeat(ctx, hb); err != nil {
		t.Fatalf("PublishHeartbeat() = %v", err)
	}
	snap := device.Snapshot{Time: hb.Time, Readings: map[string]device.Value{
		"air.temperature": {Value: 21.4, Unit: device.Celsius},
	}, Errors: map[string]string{"soil": "ads1x15: nack"}}
	if err := c.PublishSensors(ctx, snap); err != nil {
		t.Fatalf("PublishSensors() = %v", err)
	}

	// A subscriber that arrives later gets the retained state.
	late := mosquittotest.Subscribe(t, b.URL(), "vigil/dev1/+")
	got := map[string]mosquittotest.Message{}
	for len(got) < 4 {
		m, ok := late.Maybe("", wait5)
		if !ok {
			t.Fatalf("retained messages seen: %v, want status, info, heartbeat and sensors", got)
		}
		got[m.Topic] = m
	}
	var info Info
	if m := got["vigil/dev1/info"]; !m.Retained || json.Unmarshal([]byte(m.Payload), &info) != nil ||
		info.Board != "pi4" || info.Version != "v1.2.3" || info.Interval != "30m0s" || info.SampleInterval != "30s" || info.Time.IsZero() {
		t.Errorf("info = %+v (%+v), want retained board pi4, version v1.2.3, interval 30m0s, sample_interval 30s and a time", m, info)
	}
	if m := got["vigil/dev1/status"]; m.Payload != "online" || !m.Retained {
		t.Errorf("status = %+v, want retained online", m)
	}
	var gotHB transport.Heartbeat
	if m := got["vigil/dev1/heartbeat"]; !m.Retained || json.Unmarshal([]byte(m.Payload), &gotHB) != nil || gotHB != hb {
		t.Errorf("heartbeat = %+v (%+v), want retained %+v", m, gotHB, hb)
	}
	var gotSnap struct {
		Readings map[string]struct {
			Value float64 `json:"value"`
			Unit  string  `json:"unit"`
		} `json:"readings"`
		Errors map[string]string `json:"errors"`
	}
	if m := got["vigil/dev1/sensors"]; !m.Retained || json.Unmarshal([]byte(m.Payload), &gotSnap) != nil {
		t.Fatalf("sensors = %+v, want retained JSON", m)
	}
	if r := gotSnap.Readings["air.temperature"]; r.Value != 21.4 || r.Unit != "°C" || gotSnap.Errors["soil"] != "ads1x15: nack" {
		t.Errorf("sensors payload = %+v", gotSnap)
	}

	// A clean shutdown leaves "offline" retained.
	stop()
	m := late.Next("vigil/dev1/status", wait5)
	if m.Payload != "offline" {
		t.Errorf("status after shutdown = %q, want offline", m.Payload)
	}
	again := mosquittotest.Subscribe(t, b.URL(), "vigil/dev1/status")
	if m := again.Next("vigil/dev1/status", wait5); m.Payload != "offline" || !m.Retained {
		t.Errorf("retained status after shutdown = %+v, want retained offline", m)
	}
}

func TestLastWillOnAbruptDisconnect(t *testing.T) {
	b := mosquittotest.Start(t, mosquittotest.Options{})
	p := mosquittotest.StartProxy(t, b.Addr())
	sub := mosquittotest.Subscribe(t, b.URL(), "vigil/dev1/status")
	c := newTestClient(t, p.URL(), Config{}, nil)
	runClient(t, c)
	waitConnected(t, c)
	if m := sub.Next("vigil/dev1/status", wait5); m.Payload != "online" {
		t.Fatalf("status = %q, want online", m.Payload)
	}

	p.Cut() // the network goes away without a DISCONNECT packet

	if m := sub.Next("vigil/dev1/status", 10*time.Second); m.Payload != "offline" {
		t.Fatalf("status after cut = %q, want offline (Last Will)", m.Payload)
	}
	// paho reconnects through the proxy and says online again.
	if m := sub.Next("vigil/dev1/status", 15*time.Second); m.Payload != "online" {
		t.Fatalf("status after reconnect = %q, want online", m.Payload)
	}
}

func TestNotifyInFlightWhenConnectionDrops(t *testing.T) {
	b := mosquittotest.Start(t, mosquittotest.Options{})
	p := mosquittotest.StartProxy(t, b.Addr())
	sub := mosquittotest.Subscribe(t, b.URL(), "vigil/dev1/alert")
	c := newTestClient(t, p.URL(), Config{}, nil)
	runClient(t, c)
	waitConnected(t, c)

	p.Blackhole(true) // the PUBLISH goes nowhere, no PUBACK comes back
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- c.Notify(ctx, testAlert("inflight", alert.Critical)) }()
	select {
	case err := <-done:
		t.Fatalf("Notify() = %v before any PUBACK could arrive", err)
	case <-time.After(300 * time.Millisecond):
	}
	p.Cut()
	select {
	case err := <-done:
		t.Logf("Notify() after the cut = %v", err)
		// Either paho resent it on the new connection and it was
		// acknowledged, or Notify reported the loss; never a hang.
		if err == nil {
			if m := sub.Next("vigil/dev1/alert", wait5); !strings.Contains(m.Payload, `"inflight"`) {
				t.Errorf("Notify() = nil but the subscriber saw %s", m.Payload)
			}
		} else if !errors.Is(err, ErrConnectionLost) {
			t.Errorf("Notify() = %v, want nil or ErrConnectionLost", err)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("Notify() still blocked 15s after the connection dropped")
	}
	// The client works normally afterwards.
	waitConnected(t, c)
	if err := c.Notify(ctx, testAlert("after", alert.Critical)); err != nil {
		t.Errorf("Notify() after reconnect = %v", err)
	}
}

func TestBrokerRestart(t *testing.T) {
	b := mosquittotest.Start(t, mosquittotest.Options{})
	c := newTestClient(t, b.URL(), Config{}, nil)
	runClient(t, c)
	waitConnected(t, c)

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := c.Notify(ctx, testAlert("before", alert.Critical)); err != nil {
		t.Fatalf("Notify() before stop = %v", err)
	}

	b.Kill()
	waitFor(t, "client to notice the broker is gone", 10*time.Second, func() bool { return !c.Connected() })
	start := time.Now()
	err := c.Notify(ctx, testAlert("during", alert.Critical))
	if !errors.Is(err, ErrNotConnected) {
		t.Fatalf("Notify() while broker down = %v, want ErrNotConnected", err)
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("Notify() while broker down took %v; it must fail fast", d)
	}
	if err := c.PublishSensors(ctx, device.Snapshot{}); !errors.Is(err, ErrNotConnected) {
		t.Errorf("PublishSensors() while broker down = %v, want ErrNotConnected", err)
	}

	b.Start()
	waitConnected(t, c)
	sub := mosquittotest.Subscribe(t, b.URL(), "vigil/dev1/alert")
	ids := []string{"q1", "q2", "q3"}
	for _, id := range ids {
		if err := c.Notify(ctx, testAlert(id, alert.Critical)); err != nil {
			t.Fatalf("Notify(%s) after restart = %v", id, err)
		}
	}
	var got []string
	for range ids {
		var a alert.Alert
		_ = json.Unmarshal([]byte(sub.Next("vigil/dev1/alert", wait5).Payload), &a)
		got = append(got, a.ID)
	}
	if !slices.Equal(got, ids) {
		t.Errorf("alerts after restart = %v, want %v in order", got, ids)
	}
}

func TestFirstConnectRetriesWithBackoff(t *testing.T) {
	b := mosquittotest.New(t, mosquittotest.Options{}) // not started yet
	clock := clockwork.NewFakeClock()
	c := newTestClient(t, b.URL(), Config{Clock: clock, ReconnectMax: time.Minute}, nil)
	runClient(t, c)

	ctx, cancel := context.WithTimeout(context.Background(), wait5)
	defer cancel()
	// First attempt refused; Run waits 1s on the clock.
	if err := clock.BlockUntilContext(ctx, 1); err != nil {
		t.Fatalf("Run did not wait for a retry after a refused connection: %v", err)
	}
	clock.Advance(time.Second)
	// Second attempt refused too; now it waits 2s.
	if err := clock.BlockUntilContext(ctx, 1); err != nil {
		t.Fatalf("no second retry wait: %v", err)
	}
	clock.Advance(time.Second)
	time.Sleep(100 * time.Millisecond)
	if c.Connected() {
		t.Fatal("connected before the broker started")
	}
	b.Start()
	clock.Advance(time.Second) // 2s total: the backoff doubled
	waitConnected(t, c)
}

// discoveryMsg decodes a discovery payload loosely, as Home Assistant does.
type discoveryMsg struct {
	Dev  map[string]any            `json:"dev"`
	O    map[string]any            `json:"o"`
	Cmps map[string]map[string]any `json:"cmps"`
}

var entityID = regexp.MustCompile(`^([a-z_]+)\.[a-z0-9_]+$`)
var objectID = regexp.MustCompile(`^[a-zA-Z0-9_-]+$`)
var templateKey = regexp.MustCompile(`value_json\.readings\['([^']+)'\]\.value`)

// validateDiscovery checks the device discovery payload against the
// documented schema: dev with identifiers and name, o with name, and per
// component p, unique_id, default_entity_id (domain.object_id of p), the
// availability topic, and the options each platform needs.
func validateDiscovery(t *testing.T, payload string, sensors map[string]any) discoveryMsg {
	t.Helper()
	var d discoveryMsg
	if err := json.Unmarshal([]byte(payload), &d); err != nil {
		t.Fatalf("discovery payload is not JSON: %v\n%s", err, payload)
	}
	if ids, _ := d.Dev["ids"].([]any); len(ids) == 0 {
		t.Errorf("dev.ids missing: %v", d.Dev)
	}
	if name, _ := d.Dev["name"].(string); name == "" {
		t.Errorf("dev.name missing: %v", d.Dev)
	}
	if name, _ := d.O["name"].(string); name == "" {
		t.Errorf("o.name missing (origin is required for device discovery): %v", d.O)
	}
	if len(d.Cmps) == 0 {
		t.Fatalf("cmps empty")
	}
	seen := map[string]bool{}
	for key, c := range d.Cmps {
		if !objectID.MatchString(key) {
			t.Errorf("cmps key %q is not [a-zA-Z0-9_-]+", key)
		}
		p, _ := c["p"].(string)
		if p != "sensor" && p != "binary_sensor" {
			t.Errorf("cmps[%s].p = %q", key, p)
		}
		uid, _ := c["unique_id"].(string)
		if uid == "" || seen[uid] {
			t.Errorf("cmps[%s].unique_id = %q (missing or duplicate)", key, uid)
		}
		seen[uid] = true
		eid, _ := c["default_entity_id"].(string)
		if m := entityID.FindStringSubmatch(eid); m == nil || m[1] != p {
			t.Errorf("cmps[%s].default_entity_id = %q, want %s.<object_id>", key, eid, p)
		}
		if _, ok := c["object_id"]; ok {
			t.Errorf("cmps[%s] uses deprecated object_id", key)
		}
		if c["availability_topic"] != "vigil/dev1/status" {
			t.Errorf("cmps[%s].availability_topic = %v", key, c["availability_topic"])
		}
		st, _ := c["state_topic"].(string)
		if !strings.HasPrefix(st, "vigil/dev1/") {
			t.Errorf("cmps[%s].state_topic = %q", key, st)
		}
		if st == "vigil/dev1/sensors" {
			tmpl, _ := c["value_template"].(string)
			m := templateKey.FindStringSubmatch(tmpl)
			if m == nil {
				t.Errorf("cmps[%s].value_template = %q does not pick a reading", key, tmpl)
			} else if sensors != nil {
				if _, ok := sensors[m[1]]; !ok {
					t.Errorf("cmps[%s].value_template picks %q, not in the sensors payload", key, m[1])
				}
			}
			if p == "sensor" && c["state_class"] != "measurement" {
				t.Errorf("cmps[%s].state_class = %v, want measurement", key, c["state_class"])
			}
		}
	}
	return d
}

func TestHomeAssistantDiscovery(t *testing.T) {
	b := mosquittotest.Start(t, mosquittotest.Options{})
	sub := mosquittotest.Subscribe(t, b.URL(), "homeassistant/device/+/config", "vigil/dev1/sensors", "vigil/dev1/problem", "vigil/dev1/problem/attributes")
	c := newTestClient(t, b.URL(), Config{HomeAssistant: true, Version: "0.1.0"}, nil)
	runClient(t, c)
	waitConnected(t, c)

	const topic = "homeassistant/device/dev1/config"
	m := sub.Next(topic, wait5)
	if m.QoS != 1 {
		t.Errorf("discovery qos = %d, want 1", m.QoS)
	}
	d := validateDiscovery(t, m.Payload, nil)
	prob := d.Cmps["dev1_problem"]
	if prob["p"] != "binary_sensor" || prob["device_class"] != "problem" ||
		prob["state_topic"] != "vigil/dev1/problem" || prob["json_attributes_topic"] != "vigil/dev1/problem/attributes" {
		t.Errorf("problem component = %v", prob)
	}

	// The first snapshot announces its sensors.
	ctx, cancel := context.WithTimeout(context.Background(), wait5)
	defer cancel()
	snap := device.Snapshot{Time: time.Now(), Readings: map[string]device.Value{
		"air.temperature": {Value: 21.4, Unit: device.Celsius},
		"air.humidity":    {Value: 55, Unit: device.Percent},
		"board.throttled": {Value: 0, Unit: device.Bool},
		"board.load1":     {Value: 0.3, Unit: device.Count},
	}}
	if err := c.PublishSensors(ctx, snap); err != nil {
		t.Fatalf("PublishSensors() = %v", err)
	}
	var sensors struct {
		Readings map[string]any `json:"readings"`
	}
	_ = json.Unmarshal([]byte(sub.Next("vigil/dev1/sensors", wait5).Payload), &sensors)
	d = validateDiscovery(t, sub.Next(topic, wait5).Payload, sensors.Readings)
	if len(d.Cmps) != 6 {
		t.Errorf("cmps has %d components, want 6 (problem, heartbeat, 4 readings): %v", len(d.Cmps), d.Cmps)
	}
	temp := d.Cmps["dev1_air_temperature"]
	if temp["unit_of_measurement"] != "°C" || temp["device_class"] != "temperature" {
		t.Errorf("air temperature component = %v", temp)
	}
	if hum := d.Cmps["dev1_air_humidity"]; hum["device_class"] != "humidity" || hum["unit_of_measurement"] != "%" {
		t.Errorf("air humidity component = %v", hum)
	}

	// The same keys again do not re-announce; Home Assistant's birth does.
	if err := c.PublishSensors(ctx, snap); err != nil {
		t.Fatalf("PublishSensors() = %v", err)
	}
	sub.Publish("homeassistant/status", false, "online")
	d = validateDiscovery(t, sub.Next(topic, wait5).Payload, sensors.Readings)
	if got := len(d.Cmps); got != 6 {
		t.Errorf("re-announced cmps = %d, want 6", got)
	}
	if extra, ok := sub.Maybe(topic, 300*time.Millisecond); ok {
		t.Errorf("unexpected extra discovery message (unchanged sensors must not re-announce): %.80s", extra.Payload)
	}

	// The problem sensor follows firing and resolved alerts.
	a := testAlert("p1", alert.Critical)
	if err := c.Notify(ctx, a); err != nil {
		t.Fatalf("Notify() = %v", err)
	}
	attrs := sub.Next("vigil/dev1/problem/attributes", wait5)
	if m := sub.Next("vigil/dev1/problem", wait5); m.Payload != "ON" || !strings.Contains(attrs.Payload, "too_hot") {
		t.Errorf("problem = %q attrs %s, want ON with too_hot", m.Payload, attrs.Payload)
	}
	a.ID, a.State = "p2", alert.StateResolved
	if err := c.Notify(ctx, a); err != nil {
		t.Fatalf("Notify(resolved) = %v", err)
	}
	if m := sub.Next("vigil/dev1/problem", wait5); m.Payload != "OFF" {
		t.Errorf("problem after resolved = %q, want OFF", m.Payload)
	}
}

func TestCommandsDisabled(t *testing.T) {
	b := mosquittotest.Start(t, mosquittotest.Options{})
	sub := mosquittotest.Subscribe(t, b.URL(), "vigil/dev1/cmd/result", "homeassistant/device/+/config")
	cmds := &transporttest.Recorder{}
	c := newTestClient(t, b.URL(), Config{HomeAssistant: true, Commands: false}, cmds)
	runClient(t, c)
	waitConnected(t, c)
	sub.Next("homeassistant/device/dev1/config", wait5)

	sub.Publish("vigil/dev1/cmd/pause", false, "30")
	sub.Publish("vigil/dev1/cmd/check", false, "")
	// Barrier: the broker forwards one publisher's messages in order, so
	// once the client reacted to this, it would have seen the commands.
	sub.Publish("homeassistant/status", false, "online")
	sub.Next("homeassistant/device/dev1/config", wait5)
	if m, ok := sub.Maybe("vigil/dev1/cmd/result", 300*time.Millisecond); ok {
		t.Errorf("got a command result with commands disabled: %s", m.Payload)
	}
	if calls := cmds.Calls(); len(calls) != 0 {
		t.Errorf("commands ran while disabled: %v", calls)
	}
}

func TestCommandsEnabled(t *testing.T) {
	b := mosquittotest.Start(t, mosquittotest.Options{})
	sub := mosquittotest.Subscribe(t, b.URL(), "vigil/dev1/cmd/result", "homeassistant/device/+/config")
	cmds := &transporttest.Recorder{}
	c := newTestClient(t, b.URL(), Config{HomeAssistant: true, Commands: true}, cmds)
	runClient(t, c)
	waitConnected(t, c)
	// After a connection the client subscribes to commands before it
	// announces discovery, so the announcement means the SUBACK came.
	sub.Next("homeassistant/device/dev1/config", wait5)

	tests := []struct {
		leaf, payload string
		wantOK        bool
		wantCall      string
		wantText      string
	}{
		{"pause", "30", true, "pause 30m0s", "paused for 30m0s"},
		{"pause", `{"minutes": 5}`, true, "pause 5m0s", "paused for 5m0s"},
		{"pause", "0", false, "", "1..1440"},
		{"pause", "soon", false, "", "want minutes"},
		{"check", "", true, "check", "ok"},
		{"check", "please", false, "", "no arguments"},
		{"resume", "{}", true, "resume", "resumed"},
		{"reboot", "", false, "", "unknown command"},
	}
	for _, tt := range tests {
		t.Run(tt.leaf+"/"+tt.payload, func(t *testing.T) {
			before := len(cmds.Calls())
			sub.Publish("vigil/dev1/cmd/"+tt.leaf, false, tt.payload)
			var res commandResult
			m := sub.Next("vigil/dev1/cmd/result", wait5)
			if err := json.Unmarshal([]byte(m.Payload), &res); err != nil {
				t.Fatalf("result %q: %v", m.Payload, err)
			}
			if res.OK != tt.wantOK || res.Command != tt.leaf || !strings.Contains(res.Message+res.Error, tt.wantText) {
				t.Errorf("result = %+v, want ok=%v command=%s text containing %q", res, tt.wantOK, tt.leaf, tt.wantText)
			}
			checkCalls(t, cmds, before, tt.leaf, tt.wantCall)
		})
	}
}

// startCommands runs a client with commands on and returns the subscriber
// that publishes them and reads cmd/result, once the client is subscribed.
func startCommands(t *testing.T, cmds *transporttest.Recorder) *mosquittotest.Subscriber {
	t.Helper()
	b := mosquittotest.Start(t, mosquittotest.Options{})
	sub := mosquittotest.Subscribe(t, b.URL(), "vigil/dev1/cmd/result", "homeassistant/device/+/config")
	c := newTestClient(t, b.URL(), Config{HomeAssistant: true, Commands: true}, cmds)
	runClient(t, c)
	waitConnected(t, c)
	// The client subscribes to commands before it announces discovery.
	sub.Next("homeassistant/device/dev1/config", wait5)
	return sub
}

// roundTrip publishes payload on cmd/<leaf> and returns the result.
func roundTrip(t *testing.T, sub *mosquittotest.Subscriber, leaf, payload string) commandResult {
	t.Helper()
	sub.Publish("vigil/dev1/cmd/"+leaf, false, payload)
	m := sub.Next("vigil/dev1/cmd/result", wait5)
	var res commandResult
	if err := json.Unmarshal([]byte(m.Payload), &res); err != nil {
		t.Fatalf("result %q: %v", m.Payload, err)
	}
	return res
}

// TestManagementCommands: cmd/get, cmd/set, cmd/unset and cmd/checklist
// reach the commands with what their payload says, and a bad payload is
// answered on cmd/result without running anything.
func TestManagementCommands(t *testing.T) {
	cmds := &transporttest.Recorder{}
	sub := startCommands(t, cmds)
	checklist := strings.Repeat("- Is the greenhouse fan running? \"ok\"\n", 400) // 15.6 KiB, escaped in JSON
	body, _ := json.Marshal(map[string]string{"op": "set", "text": checklist})
	tests := []struct {
		leaf, payload string
		wantOK        bool
		wantCall      string
		wantText      string
		wantKey       string
	}{
		{"get", "", true, "get ", "heartbeat.interval = 30m", ""},
		{"get", "heartbeat.interval", true, "get heartbeat.interval", "30m", "heartbeat.interval"},
		{"get", `{"key":"llm.model"}`, true, "get llm.model", "", "llm.model"},
		{"get", "two words", false, "", `cmd/get: key "two words" is not one word`, ""},
		{"set", "heartbeat.interval 10m", true, "set heartbeat.interval 10m", "heartbeat.interval set to 10m", "heartbeat.interval"},
		{"set", "heartbeat.active_hours 07:00-12:00 14:00-22:00", true, "set heartbeat.active_hours 07:00-12:00 14:00-22:00", "07:00-12:00 14:00-22:00", "heartbeat.active_hours"},
		{"set", `{"key":"rule.too_hot.enabled","value":"false"}`, true, "set rule.too_hot.enabled false", "set to false", "rule.too_hot.enabled"},
		{"set", "heartbeat.interval", false, "", `cmd/set: want "KEY VALUE" or {"key": "...", "value": "..."}`, ""},
		{"set", `{"key":"heartbeat.interval"}`, false, "", `want both "key" and "value"`, ""},
		{"unset", "heartbeat.interval", true, "unset heartbeat.interval", "heartbeat.interval unset", "heartbeat.interval"},
		{"unset", "", false, "", "cmd/unset: no key", ""},
		{"checklist", "show", true, "checklist show", "checklist: show", ""},
		{"checklist", `{"op":"reset"}`, true, "checklist reset", "checklist: reset", ""},
		{"checklist", string(body), true, "checklist set " + strconv.Itoa(len(checklist)), "checklist set", ""},
		{"checklist", "- Is the fan on?", false, "", "cmd/checklist: want", ""},
		{"checklist", `{"op":"set","text":"` + strings.Repeat("x", 17<<10) + `"}`, false, "", "more than the checklist's 16 KiB", ""},
		{"ack", "too_hot", true, "ack too_hot", "acknowledged too_hot", ""},
		{"ack", `{"target":"llm"}`, true, "ack llm", "acknowledged llm", ""},
		{"ack", "", true, "ack ", "acknowledged", ""},
		{"ack", "too hot", false, "", `cmd/ack: key "too hot" is not one word`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.leaf+"/"+truncate(tt.payload, 40), func(t *testing.T) {
			before := len(cmds.Calls())
			res := roundTrip(t, sub, tt.leaf, tt.payload)
			if res.OK != tt.wantOK || res.Command != tt.leaf || !strings.Contains(res.Message+res.Error, tt.wantText) {
				t.Errorf("result = %+v, want ok=%v command=%s text containing %q", res, tt.wantOK, tt.leaf, tt.wantText)
			}
			if tt.wantOK && res.Key != tt.wantKey {
				t.Errorf("result key = %q, want %q", res.Key, tt.wantKey)
			}
			checkCalls(t, cmds, before, tt.leaf, tt.wantCall)
		})
	}
	if got := cmds.ChecklistText(); got != checklist {
		t.Errorf("checklist set over MQTT arrived as %d bytes, want the %d sent", len(got), len(checklist))
	}
}

// TestManagementNotAllowed: when [manage] remote does not allow a verb the
// commands refuse it, and cmd/result says which key would allow it; with
// the verb allowed the same command works.
func TestManagementNotAllowed(t *testing.T) {
	var allowSet atomic.Bool // the client's goroutine reads it
	defaults := transporttest.NotAllowed("status", "pause", "resume", "check")
	cmds := &transporttest.Recorder{Err: func(verb string) error {
		if verb == "set" && allowSet.Load() {
			return nil
		}
		return defaults(verb)
	}}
	sub := startCommands(t, cmds)
	for _, tt := range []struct{ leaf, payload, verb string }{
		{"set", "heartbeat.interval 10m", "set"},
		{"get", "", "get"},
		{"unset", "heartbeat.interval", "unset"},
		{"checklist", "show", "checklist"},
		{"ack", "too_hot", "ack"},
	} {
		res := roundTrip(t, sub, tt.leaf, tt.payload)
		want := `not allowed: add "` + tt.verb + `" to [manage] remote`
		if res.OK || res.Command != tt.leaf || res.Error != want {
			t.Errorf("cmd/%s %q: result = %+v, want ok=false error %q", tt.leaf, tt.payload, res, want)
		}
	}
	if calls := cmds.Calls(); len(calls) != 0 {
		t.Errorf("refused commands ran: %v", calls)
	}
	res := roundTrip(t, sub, "pause", "30")
	if !res.OK {
		t.Errorf("an allowed pause: result = %+v, want ok", res)
	}

	allowSet.Store(true) // remote = ["status", "pause", "resume", "check", "set"]
	res = roundTrip(t, sub, "set", "heartbeat.interval 10m")
	if !res.OK || res.Message != "heartbeat.interval set to 10m" {
		t.Errorf("set allowed: result = %+v, want ok with the commands' answer", res)
	}
	if calls := cmds.Calls(); !slices.Equal(calls, []string{"pause 30m0s", "set heartbeat.interval 10m"}) {
		t.Errorf("calls = %v, want the pause and the allowed set", calls)
	}
}

func TestRetainedCommandIgnored(t *testing.T) {
	b := mosquittotest.Start(t, mosquittotest.Options{})
	sub := mosquittotest.Subscribe(t, b.URL(), "vigil/dev1/cmd/result", "homeassistant/device/+/config")
	// Someone left a retained pause on the broker; replaying it on every
	// reconnect would pause the device forever.
	sub.Publish("vigil/dev1/cmd/pause", true, "60")
	cmds := &transporttest.Recorder{}
	c := newTestClient(t, b.URL(), Config{HomeAssistant: true, Commands: true}, cmds)
	runClient(t, c)
	waitConnected(t, c)
	sub.Next("homeassistant/device/dev1/config", wait5)
	sub.Publish("vigil/dev1/cmd/check", false, "")
	var res commandResult
	if err := json.Unmarshal([]byte(sub.Next("vigil/dev1/cmd/result", wait5).Payload), &res); err != nil || res.Command != "check" {
		t.Errorf("first result = %+v, %v; want the check (the retained pause must not run)", res, err)
	}
	if calls := cmds.Calls(); !slices.Equal(calls, []string{"check"}) {
		t.Errorf("calls = %v, want [check]", calls)
	}
	sub.Publish("vigil/dev1/cmd/pause", true, "") // clear the retained message
}

// startTLSBroker starts a mosquitto with a TLS listener whose certificate
// pki's CA signed, requiring a client certificate.
func startTLSBroker(t *testing.T, pki mosquittotest.PKI) *mosquittotest.Broker {
	t.Helper()
	dir := t.TempDir()
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	ca, cert, key := write("ca.pem", pki.CA), write("server.pem", pki.ServerCert), write("server.key", pki.ServerKey)
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return mosquittotest.Start(t, mosquittotest.Options{Config: "user root\nlistener %d 127.0.0.1\nallow_anonymous true\n" +
		"cafile " + ca + "\ncertfile " + cert + "\nkeyfile " + key + "\nrequire_certificate true\n"})
}

func TestTLSWithClientCertificate(t *testing.T) {
	pki := mosquittotest.NewPKI(t)
	b := startTLSBroker(t, pki)

	tlsc, err := TLSConfig(pki.CA, pki.ClientCert, pki.ClientKey)
	if err != nil {
		t.Fatal(err)
	}
	// ssl:// and mqtts:// are the same thing to paho; both are documented.
	for _, scheme := range []string{"ssl", "mqtts"} {
		t.Run(scheme, func(t *testing.T) {
			url := scheme + "://" + b.Addr()
			sub := mosquittotest.SubscribeWith(t, url, mosquittotest.SubscriberOptions{Configure: func(o *paho.ClientOptions) { o.SetTLSConfig(tlsc.Clone()) }}, "vigil/dev1/alert")
			c := newTestClient(t, url, Config{TLS: tlsc}, nil)
			runClient(t, c)
			waitConnected(t, c)
			ctx, cancel := context.WithTimeout(context.Background(), wait5)
			defer cancel()
			if err := c.Notify(ctx, testAlert(scheme+"1", alert.Warning)); err != nil {
				t.Fatalf("Notify() over TLS = %v", err)
			}
			if m := sub.Next("vigil/dev1/alert", wait5); !strings.Contains(m.Payload, `"`+scheme+`1"`) {
				t.Errorf("alert over TLS = %s", m.Payload)
			}
		})
	}

	// Without the client certificate the broker refuses the handshake.
	url := "mqtts://" + b.Addr()
	noCert, _ := TLSConfig(pki.CA, nil, nil)
	o := paho.NewClientOptions().AddBroker(url).SetClientID("nocert").SetTLSConfig(noCert).SetConnectTimeout(3 * time.Second)
	tok := paho.NewClient(o).Connect()
	if tok.WaitTimeout(wait5) && tok.Error() == nil {
		t.Error("connected without a client certificate; require_certificate is not being tested")
	}
	// Nor does vigil connect with a CA that did not sign the broker's certificate.
	other := mosquittotest.NewPKI(t)
	wrongCA, _ := TLSConfig(other.CA, pki.ClientCert, pki.ClientKey)
	c := newTestClient(t, url, Config{TLS: wrongCA}, nil)
	runClient(t, c)
	time.Sleep(2 * time.Second)
	if c.Connected() {
		t.Error("connected to a broker whose certificate the configured CA did not sign")
	}
}

// TestWebSocketBroker reaches mosquitto through a WebSocket bridge, over
// ws:// and over wss:// with the test CA: the alert, the retained status
// and the Last Will all travel over WebSockets.
func TestWebSocketBroker(t *testing.T) {
	pki := mosquittotest.NewPKI(t)
	serverCert, err := tls.X509KeyPair(pki.ServerCert, pki.ServerKey)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		server *tls.Config
	}{
		{"ws", nil},
		{"wss", &tls.Config{Certificates: []tls.Certificate{serverCert}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := mosquittotest.Start(t, mosquittotest.Options{})
			bridge := mosquittotest.StartWSBridge(t, b.Addr(), tc.server)
			if !strings.HasPrefix(bridge.URL(), tc.name+"://") {
				t.Fatalf("bridge URL = %s", bridge.URL())
			}
			sub := mosquittotest.Subscribe(t, b.URL(), "vigil/dev1/#")
			var clientTLS *tls.Config
			if tc.server != nil {
				clientTLS, _ = TLSConfig(pki.CA, nil, nil)
			}
			c := newTestClient(t, bridge.URL(), Config{TLS: clientTLS}, nil)
			runClient(t, c)
			waitConnected(t, c)
			if m := sub.Wait("vigil/dev1/status", wait5, func(m mosquittotest.Message) bool { return m.Payload == "online" }); !m.Retained && m.Payload != "online" {
				t.Errorf("status = %+v", m)
			}
			ctx, cancel := context.WithTimeout(context.Background(), wait5)
			defer cancel()
			if err := c.Notify(ctx, testAlert(tc.name+"-alert", alert.Critical)); err != nil {
				t.Fatalf("Notify() over %s = %v", tc.name, err)
			}
			if m := sub.Wait("vigil/dev1/alert", wait5, func(mosquittotest.Message) bool { return true }); !strings.Contains(m.Payload, `"`+tc.name+`-alert"`) {
				t.Errorf("alert over %s = %s", tc.name, m.Payload)
			}
			// A cut WebSocket is a lost connection: the broker sends the will.
			bridge.Cut()
			sub.Wait("vigil/dev1/status", 10*time.Second, func(m mosquittotest.Message) bool { return m.Payload == "offline" })
			// And paho redials over WebSockets on its own.
			waitFor(t, "reconnect over "+tc.name, 15*time.Second, c.Connected)
		})
	}
}

// TestKeepaliveFindsHalfOpenConnection freezes the broker: the TCP
// connection stays open but nothing answers, as when a broker's host loses
// power. paho's keepalive must notice within about twice the keepalive and
// redial once the broker is back.
func TestKeepaliveFindsHalfOpenConnection(t *testing.T) {
	b := mosquittotest.Start(t, mosquittotest.Options{})
	const keepalive = 5 * time.Second
	c := newTestClient(t, b.URL(), Config{Keepalive: keepalive}, nil)
	runClient(t, c)
	waitConnected(t, c)

	b.Freeze()
	frozen := time.Now()
	waitFor(t, "keepalive to find the frozen broker", 2*keepalive+3*time.Second, func() bool { return !c.Connected() })
	t.Logf("half-open connection noticed after %v (keepalive %v)", time.Since(frozen).Round(100*time.Millisecond), keepalive)
	b.Thaw()
	waitConnected(t, c)
	ctx, cancel := context.WithTimeout(context.Background(), wait5)
	defer cancel()
	if err := c.Notify(ctx, testAlert("after-thaw", alert.Critical)); err != nil {
		t.Errorf("Notify() after the broker came back = %v", err)
	}
}

// checkCalls checks what the commands ran since call number before: the
// one call wantCall (none when it is empty, a rejected command), and that
// it learnt who sent it, the cmd/<leaf> topic, for the audit log.
func checkCalls(t *testing.T, cmds *transporttest.Recorder, before int, leaf, wantCall string) {
	t.Helper()
	calls := cmds.Calls()[before:]
	switch {
	case wantCall == "" && len(calls) != 0:
		t.Errorf("rejected command ran: %v", calls)
	case wantCall != "" && (len(calls) != 1 || calls[0] != wantCall):
		t.Errorf("calls = %v, want [%s]", calls, wantCall)
	}
	want := transport.Source{Channel: transport.ChannelMQTT, Topic: "vigil/dev1/cmd/" + leaf}
	if srcs := cmds.Sources()[before:]; wantCall != "" && (len(srcs) != 1 || srcs[0] != want) {
		t.Errorf("sources = %+v, want [%+v]", srcs, want)
	}
}
