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
// broker, so it is opt-in: VIGIL_FLOOD=1 (VIGIL_FLOOD_BIN=path measures
// another build, such as the one before the handlers dropped oversized
// messages). It asserts nothing about the figure with no broker limit:
// paho reads each packet whole (twice: the packet, then the payload
// copied out of it) before any handler sees it.
func TestMQTTFloodMemory(t *testing.T) {
	if os.Getenv("VIGIL_FLOOD") == "" {
		t.Skip("opt-in: VIGIL_FLOOD=1 sends 20 × 50 MB through a local mosquitto")
	}
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
