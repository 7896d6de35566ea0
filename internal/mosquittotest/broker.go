// Package mosquittotest runs a real mosquitto for tests: a broker on a free
// loopback port that a test can stop, restart and freeze, a TCP proxy in
// front of it that can cut or black-hole the connections, a paho
// subscriber that records what it receives, and a throwaway PKI for a TLS
// listener and its clients.
//
// The transport/mqtt integration tests, setup's broker checks and the
// end-to-end tests of cmd/vigil share it. It is test support only: nothing outside _test.go
// files imports it.
package mosquittotest

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Bin finds the mosquitto binary on PATH or in the usual sbin directories.
// Without it the test skips, unless CI is set: there a missing broker is a
// broken environment and fails.
func Bin(t testing.TB) string {
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
	t.Skip("mosquitto not found: install it (apt-get install mosquitto) to run the tests against a real broker")
	return ""
}

// FreePort returns a TCP port on 127.0.0.1 that was free a moment ago.
func FreePort(t testing.TB) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// Options configure a Broker.
type Options struct {
	// Config is the text of a mosquitto.conf whose only verb, %d, gets
	// the listener port. Empty means `mosquitto -p PORT`, which listens
	// on loopback only when no config file is given.
	Config string
	// Persist makes the broker keep its sessions and retained messages
	// across Stop and Start: Stop is a SIGTERM, on which mosquitto saves
	// its database in the broker's directory, and Start loads it again. A
	// subscriber with a persistent session then misses nothing across a
	// restart. Without Config it listens on 127.0.0.1 and allows
	// anonymous clients.
	Persist bool
}

// Broker is a mosquitto on a loopback port, owned by one test. Its output
// goes to a log file in its own directory, kept across restarts.
type Broker struct {
	t    testing.TB
	bin  string
	dir  string
	port int
	conf string // config file, or "" for `mosquitto -p PORT`

	mu  sync.Mutex
	cmd *exec.Cmd
}

// New prepares a broker on a fresh loopback port without starting it, and
// stops it when the test ends.
func New(t testing.TB, o Options) *Broker {
	t.Helper()
	b := &Broker{t: t, bin: Bin(t), dir: t.TempDir(), port: FreePort(t)}
	conf := o.Config
	if o.Persist {
		if conf == "" {
			conf = "listener %d 127.0.0.1\nallow_anonymous true\n"
		}
		// As root, mosquitto drops to the user "mosquitto", which could
		// not write the database here; "user" is ignored when not root.
		me, err := user.Current()
		if err != nil {
			t.Fatal(err)
		}
		conf += "user " + me.Username + "\npersistence true\npersistence_location " + b.dir + "/\n"
	}
	if conf != "" {
		b.conf = filepath.Join(b.dir, "mosquitto.conf")
		if err := os.WriteFile(b.conf, fmt.Appendf(nil, conf, b.port), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() {
		b.Stop()
		if t.Failed() {
			t.Logf("mosquitto log:\n%s", b.Log())
		}
	})
	return b
}

// Start starts a broker on a fresh loopback port and stops it when the
// test ends.
func Start(t testing.TB, o Options) *Broker {
	t.Helper()
	b := New(t, o)
	b.Start()
	return b
}

// Addr is the broker's host:port.
func (b *Broker) Addr() string { return "127.0.0.1:" + strconv.Itoa(b.port) }

// URL is the broker's address as a paho broker URL.
func (b *Broker) URL() string { return "tcp://" + b.Addr() }

// Log returns what the broker wrote so far, over all its runs.
func (b *Broker) Log() string {
	out, _ := os.ReadFile(b.logPath())
	return string(out)
}

func (b *Broker) logPath() string { return filepath.Join(b.dir, "mosquitto.log") }

// Start starts the broker on its port (again) and waits until it accepts
// connections.
func (b *Broker) Start() {
	b.t.Helper()
	b.mu.Lock()
	defer b.mu.Unlock()
	logf, err := os.OpenFile(b.logPath(), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		b.t.Fatal(err)
	}
	defer logf.Close()
	args := []string{"-p", strconv.Itoa(b.port)}
	if b.conf != "" {
		args = []string{"-c", b.conf}
	}
	b.cmd = exec.Command(b.bin, args...)
	b.cmd.Stdout, b.cmd.Stderr = logf, logf
	if err := b.cmd.Start(); err != nil {
		b.t.Fatalf("start mosquitto: %v", err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", b.Addr(), 200*time.Millisecond)
		if err == nil {
			c.Close()
			return
		}
		if time.Now().After(deadline) {
			b.t.Fatalf("mosquitto on %s did not start: %v\n%s", b.Addr(), err, b.Log())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Stop stops the broker cleanly (SIGTERM, on which it saves its database
// if it persists) and waits until it is gone; after 5 s it kills it.
func (b *Broker) Stop() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.cmd == nil {
		return
	}
	_ = b.cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() { _ = b.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		_ = b.cmd.Process.Kill()
		<-done
	}
	b.cmd = nil
}

// Kill kills the broker (SIGKILL: it saves nothing and says goodbye to no
// client) and waits until it is gone.
func (b *Broker) Kill() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.cmd == nil {
		return
	}
	_ = b.cmd.Process.Kill()
	_ = b.cmd.Wait()
	b.cmd = nil
}

// Freeze stops the running broker (SIGSTOP) with its connections open: it
// reads and acknowledges nothing until Thaw.
func (b *Broker) Freeze() { b.signal(syscall.SIGSTOP) }

// Thaw resumes a frozen broker (SIGCONT).
func (b *Broker) Thaw() { b.signal(syscall.SIGCONT) }

func (b *Broker) signal(sig syscall.Signal) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.cmd != nil {
		_ = b.cmd.Process.Signal(sig)
	}
}
