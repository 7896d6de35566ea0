package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	paho "github.com/eclipse/paho.mqtt.golang"
)

// Helpers for the end-to-end MQTT tests: a real mosquitto owned by one test,
// and a paho client that records everything it receives.

// mosquitto is a broker on a loopback port. It persists its sessions, so a
// subscriber with a persistent session misses nothing across stop/start
// (stop is SIGTERM, on which mosquitto saves its database).
type mosquitto struct {
	t    *testing.T
	bin  string
	dir  string
	port int

	mu  sync.Mutex
	cmd *exec.Cmd
}

// mosquittoPath finds the broker. Without it the test skips, unless CI is
// set: there a missing broker is a broken environment and fails.
func mosquittoPath(t *testing.T) string {
	t.Helper()
	if p, err := exec.LookPath("mosquitto"); err == nil {
		return p
	}
	for _, p := range []string{"/usr/sbin/mosquitto", "/usr/local/sbin/mosquitto"} {
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	if os.Getenv("CI") != "" {
		t.Fatal("mosquitto not found and CI is set: install mosquitto (apt-get install mosquitto)")
	}
	t.Skip("mosquitto not found: apt-get install mosquitto to run the MQTT end-to-end tests")
	return ""
}

func loopbackPort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// startMosquitto starts a broker and stops it when the test ends.
func startMosquitto(t *testing.T) *mosquitto {
	t.Helper()
	m := &mosquitto{t: t, bin: mosquittoPath(t), dir: t.TempDir(), port: loopbackPort(t)}
	// As root, mosquitto drops to the user "mosquitto", which could not
	// write the database here; "user" is ignored when not root.
	me, err := user.Current()
	if err != nil {
		t.Fatal(err)
	}
	conf := fmt.Sprintf("listener %d 127.0.0.1\nallow_anonymous true\nuser %s\npersistence true\npersistence_location %s/\n"+
		"log_dest stderr\nlog_type error\nlog_type warning\nlog_type notice\nlog_type information\nlog_timestamp_format %%T\n",
		m.port, me.Username, m.dir)
	if err := os.WriteFile(filepath.Join(m.dir, "mosquitto.conf"), []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	m.start()
	t.Cleanup(func() {
		m.stop()
		if t.Failed() {
			t.Logf("mosquitto log:\n%s", m.log())
		}
	})
	return m
}

// log returns what the broker logged so far.
func (m *mosquitto) log() string {
	b, _ := os.ReadFile(filepath.Join(m.dir, "mosquitto.log"))
	return string(b)
}

func (m *mosquitto) addr() string { return "127.0.0.1:" + strconv.Itoa(m.port) }
func (m *mosquitto) url() string  { return "tcp://" + m.addr() }

// start starts the broker on its port (again) and waits until it accepts.
func (m *mosquitto) start() {
	m.t.Helper()
	m.mu.Lock()
	defer m.mu.Unlock()
	logf, err := os.OpenFile(filepath.Join(m.dir, "mosquitto.log"), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		m.t.Fatal(err)
	}
	defer logf.Close()
	m.cmd = exec.Command(m.bin, "-c", filepath.Join(m.dir, "mosquitto.conf"))
	m.cmd.Stdout, m.cmd.Stderr = logf, logf
	if err := m.cmd.Start(); err != nil {
		m.t.Fatalf("start mosquitto: %v", err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", m.addr(), 200*time.Millisecond)
		if err == nil {
			c.Close()
			return
		}
		if time.Now().After(deadline) {
			m.t.Fatalf("mosquitto on %s did not start: %v", m.addr(), err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// stop stops the broker cleanly (SIGTERM) and waits until it is gone.
func (m *mosquitto) stop() {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.cmd == nil {
		return
	}
	m.cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() { m.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		m.cmd.Process.Kill()
		<-done
	}
	m.cmd = nil
}

// signal sends sig to the running broker (SIGSTOP freezes it with its
// connections open: nothing is acknowledged; SIGCONT resumes it).
func (m *mosquitto) signal(sig syscall.Signal) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.cmd != nil {
		m.cmd.Process.Signal(sig)
	}
}

// mqttMsg is one message a recorder received.
type mqttMsg struct {
	Topic    string
	Payload  string
	Retained bool
	QoS      byte
}

// recorder is an independent paho client that keeps every message it sees.
type recorder struct {
	t   *testing.T
	cli paho.Client
	mu  sync.Mutex
	got []mqttMsg
}

// record connects a recorder to url and subscribes to topics at QoS 1. With
// a non-empty session it uses a persistent session under that client id and
// reconnects on its own, so it receives what the broker queued meanwhile.
func record(t *testing.T, url, session string, topics ...string) *recorder {
	t.Helper()
	r := &recorder{t: t}
	id := session
	if id == "" {
		id = fmt.Sprintf("e2e-rec-%d", time.Now().UnixNano())
	}
	opts := paho.NewClientOptions().AddBroker(url).SetClientID(id).SetProtocolVersion(4).
		SetCleanSession(session == "").SetAutoReconnect(session != "").
		SetMaxReconnectInterval(500 * time.Millisecond).SetConnectTimeout(5 * time.Second).
		SetDefaultPublishHandler(func(_ paho.Client, m paho.Message) {
			r.mu.Lock()
			r.got = append(r.got, mqttMsg{m.Topic(), string(m.Payload()), m.Retained(), m.Qos()})
			r.mu.Unlock()
		})
	r.cli = paho.NewClient(opts)
	for attempt := 1; ; attempt++ {
		tok := r.cli.Connect()
		if tok.WaitTimeout(5*time.Second) && tok.Error() == nil {
			break
		}
		if attempt == 3 {
			t.Fatalf("recorder connect to %s: %v", url, tok.Error())
		}
		t.Logf("recorder connect to %s: %v; retrying", url, tok.Error())
		time.Sleep(200 * time.Millisecond)
	}
	for _, topic := range topics {
		if tok := r.cli.Subscribe(topic, 1, nil); !tok.WaitTimeout(5*time.Second) || tok.Error() != nil {
			t.Fatalf("recorder subscribe %s: %v", topic, tok.Error())
		}
	}
	t.Cleanup(func() { r.cli.Disconnect(100) })
	return r
}

// publish sends a message from the recorder's client at QoS 1.
func (r *recorder) publish(topic string, retained bool, payload string) {
	r.t.Helper()
	if tok := r.cli.Publish(topic, 1, retained, payload); !tok.WaitTimeout(5*time.Second) || tok.Error() != nil {
		r.t.Fatalf("publish %s: %v", topic, tok.Error())
	}
}

// on returns the messages received so far on topic, oldest first.
func (r *recorder) on(topic string) []mqttMsg {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []mqttMsg
	for _, m := range r.got {
		if m.Topic == topic {
			out = append(out, m)
		}
	}
	return out
}

// wait waits until a message on topic satisfies ok (nil: any message) and
// returns the first that does.
func (r *recorder) wait(topic string, timeout time.Duration, ok func(mqttMsg) bool) mqttMsg {
	r.t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		for _, m := range r.on(topic) {
			if ok == nil || ok(m) {
				return m
			}
		}
		if time.Now().After(deadline) {
			r.t.Fatalf("no matching message on %s within %v; got %d messages there: %v", topic, timeout, len(r.on(topic)), r.on(topic))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// payloadIs matches a message by its exact payload.
func payloadIs(p string) func(mqttMsg) bool { return func(m mqttMsg) bool { return m.Payload == p } }

// alertIDs returns the ids of the alerts received on topic, in arrival
// order, each once, and fails if one id arrived with different payloads.
func (r *recorder) alertIDs(topic string) []string {
	r.t.Helper()
	seen := map[string]string{}
	var ids []string
	for _, m := range r.on(topic) {
		var a struct{ ID string }
		if err := json.Unmarshal([]byte(m.Payload), &a); err != nil || a.ID == "" {
			r.t.Fatalf("alert payload %q: no id (%v)", m.Payload, err)
		}
		if prev, ok := seen[a.ID]; ok {
			if prev != m.Payload {
				r.t.Fatalf("alert %s redelivered with a different payload:\n%s\n%s", a.ID, prev, m.Payload)
			}
			continue
		}
		seen[a.ID] = m.Payload
		ids = append(ids, a.ID)
	}
	return ids
}

// reCommitted matches a rule change committed with an alert queued.
var reCommitted = regexp.MustCompile(`msg=rule rule=\S+ event=\S+ alert=(\S+)`)

// committed returns the ids of the alerts a daemon's log says it queued, in
// commit order (alerts held by the flood guard have none).
func committed(log string) []string {
	var ids []string
	for _, m := range reCommitted.FindAllStringSubmatch(log, -1) {
		if m[1] != "held" {
			ids = append(ids, m[1])
		}
	}
	return ids
}

// mqttConfig is the [mqtt] section for a test broker, keepalive 5s.
func mqttConfig(url string, extra ...string) string {
	return "\n[mqtt]\nbroker = \"" + url + "\"\nkeepalive = \"5s\"\n" + strings.Join(extra, "\n") + "\n"
}

// blackhole forwards TCP connections to a broker. While swallowing, the
// client's bytes go nowhere and the connection stays open: a publish is
// lost on the wire and its PUBACK never comes, as on a dead link.
type blackhole struct {
	ln         net.Listener
	target     string
	swallowing atomic.Bool
}

func startBlackhole(t *testing.T, target string) *blackhole {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &blackhole{ln: ln, target: target}
	var wg sync.WaitGroup
	t.Cleanup(func() { ln.Close(); wg.Wait() })
	wg.Go(func() {
		for {
			in, err := ln.Accept()
			if err != nil {
				return
			}
			out, err := net.Dial("tcp", target)
			if err != nil {
				in.Close()
				continue
			}
			go func() {
				defer out.Close()
				buf := make([]byte, 4096)
				for {
					n, err := in.Read(buf)
					if n > 0 && !p.swallowing.Load() {
						if _, werr := out.Write(buf[:n]); werr != nil {
							return
						}
					}
					if err != nil {
						return
					}
				}
			}()
			go func() { defer in.Close(); io.Copy(in, out) }()
		}
	})
	return p
}

func (p *blackhole) url() string { return "tcp://" + p.ln.Addr().String() }
