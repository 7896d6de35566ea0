package main

import (
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/vigil-iot/vigil/daemon"
)

// notifySocket listens where $NOTIFY_SOCKET would point and returns what
// arrives on it.
func notifySocket(t *testing.T) (string, <-chan string) {
	t.Helper()
	dir, err := os.MkdirTemp("", "vigil-notify") // short: sun_path holds 108 bytes
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	path := filepath.Join(dir, "notify")
	c, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: path, Net: "unixgram"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	msgs := make(chan string, 64)
	go func() {
		buf := make([]byte, 4096)
		for {
			n, err := c.Read(buf)
			if err != nil {
				close(msgs)
				return
			}
			msgs <- string(buf[:n])
		}
	}()
	return path, msgs
}

func waitNotify(t *testing.T, d *child, msgs <-chan string, want string) {
	t.Helper()
	timeout := time.After(20 * time.Second)
	for {
		select {
		case m := <-msgs:
			if strings.Contains(m, want) {
				return
			}
		case <-d.done:
			t.Fatalf("vigil exited before sending %s; log:\n%s", want, d.logText())
		case <-timeout:
			t.Fatalf("no %s on $NOTIFY_SOCKET within 20s; log:\n%s", want, d.logText())
		}
	}
}

// A watchdog stop (systemd's SIGABRT after WatchdogSec without a ping) logs
// one line naming the last progress and exits 1, instead of Go's dump of
// every goroutine's stack; without a watchdog SIGABRT still dumps them.
func TestWatchdogAbortLogsOneLine(t *testing.T) {
	for _, c := range []struct {
		name     string
		watchdog bool
	}{{"under the watchdog", true}, {"no watchdog (control)", false}} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			os.WriteFile(filepath.Join(dir, "HEARTBEAT.md"), []byte("- check\n"), 0o600)
			cfg := writeConfig(t, dir, `
[[sensor]]
name = "air"
driver = "bme280"
`)
			sock, msgs := notifySocket(t)
			env := []string{"NOTIFY_SOCKET=" + sock}
			if c.watchdog {
				env = append(env, "WATCHDOG_USEC=120000000")
			}
			d := startDaemon(t, cfg, env...)
			waitNotify(t, d, msgs, "READY=1")
			if c.watchdog {
				waitNotify(t, d, msgs, "WATCHDOG=1") // a sample round made progress
			} else {
				time.Sleep(1500 * time.Millisecond)
			}
			if err := d.cmd.Process.Signal(syscall.SIGABRT); err != nil {
				t.Fatal(err)
			}
			select {
			case <-d.done:
			case <-time.After(20 * time.Second):
				t.Fatal("vigil did not exit within 20s of SIGABRT")
			}
			code := d.cmd.ProcessState.ExitCode()
			log := d.logText()
			stacks := strings.Count(log, "\ngoroutine ")
			line := regexp.MustCompile(`(?m)^.*level=ERROR msg="watchdog: systemd stopped vigil after WatchdogSec without a ping; last progress at \d{4}-\d\d-\d\dT\S+ \(\d+s ago\)".*$`)

			if !c.watchdog {
				if code != 2 || stacks == 0 {
					t.Errorf("control: plain SIGABRT exited %d with %d goroutine stacks; want Go's dump (exit 2)", code, stacks)
				}
				return
			}
			if code != daemon.ExitWatchdog {
				t.Errorf("exit status %d, want %d (a failure, so Restart=on-failure applies)", code, daemon.ExitWatchdog)
			}
			if stacks > 0 || strings.Contains(log, "SIGABRT") {
				t.Errorf("%d goroutine stacks in the log:\n%s", stacks, log)
			}
			if n := len(line.FindAllString(log, -1)); n != 1 {
				t.Errorf("%d watchdog lines, want 1; log:\n%s", n, log)
			}
			after := log[strings.Index(log, "watchdog: systemd stopped"):]
			if n := strings.Count(strings.TrimSpace(after), "\n"); n != 0 {
				t.Errorf("%d lines after the watchdog line, want none:\n%s", n, after)
			}
		})
	}
}
