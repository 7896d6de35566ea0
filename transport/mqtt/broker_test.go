package mqtt

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	paho "github.com/eclipse/paho.mqtt.golang"
)

// broker is a real mosquitto on a loopback port, owned by one test.
type broker struct {
	t    *testing.T
	bin  string
	port int
	conf string // config file, or "" for `mosquitto -p PORT`

	mu  sync.Mutex
	cmd *exec.Cmd
	out *bytes.Buffer
}

// mosquittoBin finds the broker binary. Without it the test skips, unless
// CI is set: then a missing broker is a broken environment and fails.
func mosquittoBin(t *testing.T) string {
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
	t.Skip("mosquitto not found: install it (apt-get install mosquitto) to run the MQTT integration tests")
	return ""
}

func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// startBroker starts `mosquitto -p PORT` (loopback only without a config
// file) and stops it when the test ends.
func startBroker(t *testing.T) *broker {
	t.Helper()
	b := &broker{t: t, bin: mosquittoBin(t), port: freePort(t)}
	b.start()
	t.Cleanup(b.stop)
	return b
}

// startBrokerConf starts mosquitto with a config file whose listener is on
// a fresh loopback port; conf gets the port as its only %d verb.
func startBrokerConf(t *testing.T, conf string) *broker {
	t.Helper()
	b := &broker{t: t, bin: mosquittoBin(t), port: freePort(t)}
	b.conf = filepath.Join(t.TempDir(), "mosquitto.conf")
	if err := os.WriteFile(b.conf, fmt.Appendf(nil, conf, b.port), 0o600); err != nil {
		t.Fatal(err)
	}
	b.start()
	t.Cleanup(b.stop)
	return b
}

func (b *broker) addr() string { return "127.0.0.1:" + strconv.Itoa(b.port) }
func (b *broker) url() string  { return "tcp://" + b.addr() }

func (b *broker) start() {
	b.t.Helper()
	b.mu.Lock()
	defer b.mu.Unlock()
	args := []string{"-p", strconv.Itoa(b.port)}
	if b.conf != "" {
		args = []string{"-c", b.conf}
	}
	b.out = new(bytes.Buffer)
	b.cmd = exec.Command(b.bin, args...)
	b.cmd.Stdout, b.cmd.Stderr = b.out, b.out
	if err := b.cmd.Start(); err != nil {
		b.t.Fatalf("start mosquitto: %v", err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", b.addr(), 200*time.Millisecond)
		if err == nil {
			c.Close()
			return
		}
		if time.Now().After(deadline) {
			b.t.Fatalf("mosquitto on %s did not start: %v\n%s", b.addr(), err, b.out)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// stop kills the broker and waits until it is gone.
func (b *broker) stop() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.cmd == nil {
		return
	}
	_ = b.cmd.Process.Kill()
	_ = b.cmd.Wait()
	if b.t.Failed() {
		b.t.Logf("mosquitto output:\n%s", b.out)
	}
	b.cmd = nil
}

// proxy forwards TCP connections to the broker and can cut them all at
// once, as a power cut or a pulled cable would: the broker sees the socket
// close without a DISCONNECT packet.
type proxy struct {
	ln     net.Listener
	target string
	// blackhole drops the client's bytes (a PUBACK never comes) while
	// the connection stays open.
	blackhole atomic.Bool
	mu        sync.Mutex
	conns     []net.Conn
}

func startProxy(t *testing.T, target string) *proxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &proxy{ln: ln, target: target}
	go p.serve()
	t.Cleanup(func() { ln.Close(); p.cut() })
	return p
}

func (p *proxy) url() string { return "tcp://" + p.ln.Addr().String() }

func (p *proxy) serve() {
	for {
		in, err := p.ln.Accept()
		if err != nil {
			return
		}
		out, err := net.Dial("tcp", p.target)
		if err != nil {
			in.Close()
			continue
		}
		p.mu.Lock()
		p.conns = append(p.conns, in, out)
		p.mu.Unlock()
		go func() { p.forward(out, in); out.Close() }()
		go func() { _, _ = io.Copy(in, out); in.Close() }()
	}
}

// forward copies client bytes to the broker, swallowing them while the
// proxy is black-holing.
func (p *proxy) forward(out, in net.Conn) {
	buf := make([]byte, 4096)
	for {
		n, err := in.Read(buf)
		if n > 0 && !p.blackhole.Load() {
			if _, werr := out.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

// cut closes every forwarded connection on both sides and stops
// black-holing.
func (p *proxy) cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	defer p.blackhole.Store(false)
	for _, c := range p.conns {
		if tc, ok := c.(*net.TCPConn); ok {
			_ = tc.SetLinger(0) // RST, no orderly shutdown
		}
		c.Close()
	}
	p.conns = nil
}

// msg is one message seen by a test subscriber.
type msg struct {
	Topic    string
	Payload  string
	Retained bool
	QoS      byte
}

// subscriber is an independent paho client that records what it sees.
type subscriber struct {
	t   *testing.T
	cli paho.Client
	ch  chan msg
}

func subscribe(t *testing.T, url string, topics ...string) *subscriber {
	t.Helper()
	return subscribeWith(t, url, nil, topics...)
}

// subscribeWith is subscribe with extra client options (TLS).
func subscribeWith(t *testing.T, url string, opt func(*paho.ClientOptions), topics ...string) *subscriber {
	t.Helper()
	s := &subscriber{t: t, ch: make(chan msg, 256)}
	opts := paho.NewClientOptions().AddBroker(url).
		SetClientID(fmt.Sprintf("test-sub-%d", time.Now().UnixNano())).
		SetProtocolVersion(4).SetAutoReconnect(false).SetConnectTimeout(5 * time.Second)
	if opt != nil {
		opt(opts)
	}
	s.cli = paho.NewClient(opts)
	if tok := s.cli.Connect(); !tok.WaitTimeout(5*time.Second) || tok.Error() != nil {
		t.Fatalf("subscriber connect to %s: %v", url, tok.Error())
	}
	for _, topic := range topics {
		tok := s.cli.Subscribe(topic, 1, func(_ paho.Client, m paho.Message) {
			s.ch <- msg{m.Topic(), string(m.Payload()), m.Retained(), m.Qos()}
		})
		if !tok.WaitTimeout(5*time.Second) || tok.Error() != nil {
			t.Fatalf("subscribe %s: %v", topic, tok.Error())
		}
	}
	t.Cleanup(func() { s.cli.Disconnect(100) })
	return s
}

// publish sends a message from the test client at QoS 1.
func (s *subscriber) publish(topic string, retained bool, payload string) {
	s.t.Helper()
	tok := s.cli.Publish(topic, 1, retained, payload)
	if !tok.WaitTimeout(5*time.Second) || tok.Error() != nil {
		s.t.Fatalf("publish %s: %v", topic, tok.Error())
	}
}

// next returns the next message on topic, skipping others, or fails.
func (s *subscriber) next(topic string, timeout time.Duration) msg {
	s.t.Helper()
	m, ok := s.maybe(topic, timeout)
	if !ok {
		s.t.Fatalf("no message on %s within %v", topic, timeout)
	}
	return m
}

// maybe is next without failing.
func (s *subscriber) maybe(topic string, timeout time.Duration) (msg, bool) {
	s.t.Helper()
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	for {
		select {
		case m := <-s.ch:
			if m.Topic == topic {
				return m, true
			}
		case <-timer.C:
			return msg{}, false
		}
	}
}

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
