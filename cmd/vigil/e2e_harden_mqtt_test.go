package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	paho "github.com/eclipse/paho.mqtt.golang"

	"github.com/vigil-iot/vigil/internal/mosquittotest"
)

// TestFleetRefusesMixedTLS: `vigil fleet` with a TLS node and a plain one
// would fail over to the plain node and send the password in the clear.
// It refuses the list, as the daemon's config check does, before it
// connects anywhere.
func TestFleetRefusesMixedTLS(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	got := make(chan []byte, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
		b := make([]byte, 256)
		n, _ := c.Read(b)
		got <- b[:n]
	}()
	plain := "tcp://" + ln.Addr().String()
	env := []string{"X_PASS=s3cret-fleet-pw"}
	_, errOut, code := runWithin(t, t.TempDir(), 30*time.Second, env, "fleet", "--once",
		"--broker", "ssl://127.0.0.1:1,"+plain, "--username", "viewer", "--password-env", "X_PASS")
	select {
	case b := <-got:
		t.Errorf("vigil fleet connected to the plain node %s and sent %d bytes (password in the clear: %v)", plain, len(b), strings.Contains(string(b), "s3cret-fleet-pw"))
	default:
	}
	if code != exitUsage || !strings.Contains(errOut, plain) || !strings.Contains(errOut, "not TLS") {
		t.Errorf("vigil fleet --broker ssl://…,%s: exit %d, stderr %q; want %d and a message naming the plain node", plain, code, errOut, exitUsage)
	}
}

// TestMQTTFloodMemory measures (and prints) the peak memory (VmHWM) of a
// real `vigil run` while 20 publishes of 50 MB, spread over every topic
// it subscribes to (cmd/+ with known and unknown commands, the roll call,
// homeassistant/status), reach it through a local mosquitto: with no
// limit on the broker, with GOMEMLIMIT, and with the broker's
// max_packet_size as docs/fleet.md sets it. It sends 1 GB through the
// broker; the broker-limited case runs in every `make test` (the broker
// refuses each publish), the others are opt-in: VIGIL_FLOOD=1 (VIGIL_FLOOD_BIN=path measures
// another build, such as the one before the handlers dropped oversized
// messages). It asserts nothing about the figure with no broker limit:
// paho reads each packet whole (twice: the packet, then the payload
// copied out of it) before any handler sees it.
func TestMQTTFloodMemory(t *testing.T) {
	bin := vigilBin
	if b := os.Getenv("VIGIL_FLOOD_BIN"); b != "" {
		bin = b
	}
	const (
		n    = 20
		size = 50 << 20
	)
	topics := []string{"vigil/e2e/cmd/check", "vigil/e2e/cmd/set", "vigil/e2e/cmd/checklist", "vigil/e2e/cmd/x1",
		"vigil/fleet/rollcall", "homeassistant/status", "vigil/e2e/cmd/x2"}
	payload := bytes.Repeat([]byte("x"), size)
	for _, tc := range []struct {
		name, broker string
		env          []string
	}{
		{"no broker limit", "", nil},
		{"no broker limit, GOMEMLIMIT=48MiB", "", []string{"GOMEMLIMIT=48MiB"}},
		{"broker max_packet_size 1048576", "max_packet_size 1048576\n", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.broker == "" && os.Getenv("VIGIL_FLOOD") == "" {
				t.Skip("opt-in: VIGIL_FLOOD=1 sends 20 × 50 MB through a local mosquitto with no limit")
			}
			b := mosquittotest.Start(t, mosquittotest.Options{Config: "listener %d 127.0.0.1\nallow_anonymous true\n" + tc.broker})
			rec := mosquittotest.Subscribe(t, b.URL(), topicStatus, topicResult)
			dir := t.TempDir()
			cfg := writeConfig(t, dir, steadySensors+mqttConfig(b.URL(), "homeassistant = true", "commands = true"))
			d := startProgram(t, dir, tc.env, bin, "-c", cfg, "run")
			d.logIfFailed(t)
			rec.WaitPayloadN(topicStatus, "online", 1, 15*time.Second)
			waitCommandsReady(t, rec)
			pid := d.cmd.Process.Pid
			before := vmHWM(t, pid)

			refused := 0
			for i := range n {
				pub := paho.NewClient(paho.NewClientOptions().AddBroker(b.URL()).SetClientID(fmt.Sprintf("flood-%d", i)).SetAutoReconnect(false))
				if tok := pub.Connect(); !tok.WaitTimeout(10*time.Second) || tok.Error() != nil {
					t.Fatalf("connect the publisher: %v", tok.Error())
				}
				tok := pub.Publish(topics[i%len(topics)], 1, false, payload)
				if !tok.WaitTimeout(60*time.Second) || tok.Error() != nil {
					refused++
				}
				pub.Disconnect(100)
			}
			// Barrier: a command behind the flood is answered once the
			// daemon has read every message before it.
			if ok, _, errText := waitResultWithin(t, rec, "vigil/e2e/cmd/pause", "soon", 2*time.Minute); ok || errText == "" {
				t.Fatalf("barrier cmd/pause soon: ok %v, error %q", ok, errText)
			}
			if err := d.cmd.Process.Signal(syscall.Signal(0)); err != nil {
				t.Fatalf("the daemon is gone after the flood: %v", err)
			}
			after := vmHWM(t, pid)
			t.Logf("VmHWM %s: %.1f MiB before, %.1f MiB after %d × %d MiB publishes (%d refused by the broker)", tc.name, float64(before)/(1<<20), float64(after)/(1<<20), n, size>>20, refused)
			fmt.Printf("FLOOD %s: VmHWM %.1f MiB (%.1f MiB before the flood; %d of %d publishes refused by the broker)\n", tc.name, float64(after)/(1<<20), float64(before)/(1<<20), refused, n)
			if tc.broker != "" && after >= 48<<20 {
				t.Errorf("VmHWM %.1f MiB with the broker's max_packet_size, want under 48 MiB", float64(after)/(1<<20))
			}
		})
	}
}

// vmHWM is the peak resident set of process pid, in bytes.
func vmHWM(t *testing.T, pid int) int64 {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			if err != nil {
				t.Fatalf("VmHWM line %q: %v", line, err)
			}
			return kb << 10
		}
	}
	t.Fatalf("no VmHWM in /proc/%d/status", pid)
	return 0
}

// waitResultWithin publishes a command and returns the next result, within
// timeout.
func waitResultWithin(t *testing.T, rec *mosquittotest.Subscriber, topic, payload string, timeout time.Duration) (ok bool, msg, errText string) {
	t.Helper()
	n := len(rec.On(topicResult))
	rec.Publish(topic, false, payload)
	m := rec.WaitN(topicResult, n+1, timeout)
	var r struct {
		OK      bool
		Message string
		Error   string
	}
	if err := json.Unmarshal([]byte(m.Payload), &r); err != nil {
		t.Fatalf("cmd/result %q: %v", m.Payload, err)
	}
	return r.OK, r.Message, r.Error
}

// TestMQTTSetFloodRateLimited: cmd/set makes at most
// RemoteWritesPerMinute changes a minute; every other command gets a
// cmd/result that says why (the rate, or a full queue: never a silent
// drop), and the burst of refusals queues one notice, not one per
// command. First 30 sets one after the other (each waits for its result),
// then 300 at once.
func TestMQTTSetFloodRateLimited(t *testing.T) {
	b := startMosquitto(t)
	rec := mosquittotest.Subscribe(t, b.URL(), topicStatus, topicResult, topicAlert)
	cfg := writeConfig(t, t.TempDir(), steadySensors+mqttConfig(b.URL(), "homeassistant = false", "commands = true")+"\n[manage]\nremote = [\"status\", \"set\"]\n")
	d := startDaemon(t, cfg)
	d.logIfFailed(t)
	rec.WaitPayloadN(topicStatus, "online", 1, 15*time.Second)
	waitCommandsReady(t, rec)
	const rateErr = "more than 10 changes a minute from mqtt"

	ok, limited := 0, 0
	for i := range 30 {
		okI, _, errText := waitResult(t, rec, "vigil/e2e/cmd/set", fmt.Sprintf("heartbeat.interval %dm", 10+i%2))
		switch {
		case okI:
			ok++
		case strings.Contains(errText, rateErr):
			limited++
		default:
			t.Fatalf("cmd/set #%d: %q", i, errText)
		}
	}
	if ok != 10 || limited != 20 {
		t.Errorf("30 cmd/set one after the other: %d ok, %d refused for the rate; want 10 and 20", ok, limited)
	}

	skip := len(rec.On(topicResult))
	const n = 300
	for i := range n {
		rec.Publish("vigil/e2e/cmd/set", false, fmt.Sprintf("heartbeat.interval %dm", 10+i%2))
	}
	var dropped, other int
	var others []string
	count := func() int {
		ok, limited, dropped, other, others = 0, 0, 0, 0, nil
		for _, m := range rec.On(topicResult)[skip:] {
			var r struct {
				OK    bool
				Error string
			}
			_ = json.Unmarshal([]byte(m.Payload), &r)
			var k int
			switch {
			case r.OK:
				ok++
			case strings.Contains(r.Error, rateErr):
				limited++
			case func() bool { _, err := fmt.Sscanf(r.Error, "%d commands dropped", &k); return err == nil }():
				dropped += k
			default:
				other++
				others = append(others, m.Payload)
			}
		}
		return ok + limited + dropped + other
	}
	deadline := time.Now().Add(60 * time.Second)
	for count() < n && time.Now().Before(deadline) {
		time.Sleep(200 * time.Millisecond)
	}
	t.Logf("%d cmd/set at once: %d ok, %d refused for the rate, %d dropped from a full queue (said so), %d other", n, ok, limited, dropped, other)
	if ok != 0 || limited+dropped != n || other != 0 {
		t.Errorf("%d cmd/set at once: %d ok, %d rate-limited, %d reported dropped, %d other %v; want 0 ok and every one answered", n, ok, limited, dropped, other, others)
	}
	time.Sleep(time.Second) // notices go out after the results
	changes, refusals := 0, 0
	for _, m := range rec.On(topicAlert) {
		switch {
		case strings.Contains(m.Payload, "heartbeat.interval set to"):
			changes++
		case strings.Contains(m.Payload, "changes from mqtt refused"):
			refusals++
		}
	}
	if changes != 10 || refusals != 1 {
		t.Errorf("notices: %d changes and %d about refusals, want 10 and 1", changes, refusals)
	}
}
