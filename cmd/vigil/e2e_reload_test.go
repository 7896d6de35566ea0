package main

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/vigil-iot/vigil/internal/mosquittotest"
)

// reloadSensor is a sim sensor whose temperature jumps by 20 °C for 3s of
// every 5s, around a base near 21 °C.
const reloadSensor = `
[[sensor]]
name = "air"
driver = "bme280"
sim = { every = "5s", length = "3s", rise = 20 }
`

// writeReloadConfig writes config.toml with the given sample interval and
// rule threshold.
func writeReloadConfig(t *testing.T, dir, sample string, threshold int, extra string) string {
	t.Helper()
	cfg := writeConfig(t, dir, reloadSensor+`
[[rule]]
name = "too_hot"
when = "air.temperature > `+strconv.Itoa(threshold)+`"
severity = "warning"
message = "air at {air.temperature}"
`+extra)
	b, err := os.ReadFile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	b = []byte(strings.Replace(string(b), `sample_interval = "1s"`, `sample_interval = "`+sample+`"`, 1))
	if err := os.WriteFile(cfg, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return cfg
}

// sampleGap polls status until it saw n new samples and returns the
// smallest gap between two of them.
func sampleGap(t *testing.T, cfg string, n int) time.Duration {
	t.Helper()
	var times []time.Time
	deadline := time.Now().Add(time.Duration(n)*4*time.Second + 10*time.Second)
	for len(times) < n+1 && time.Now().Before(deadline) {
		st := statusJSON(t, cfg)
		if st.Snapshot != nil && !slices.ContainsFunc(times, st.Snapshot.Time.Equal) {
			times = append(times, st.Snapshot.Time)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if len(times) < n+1 {
		t.Fatalf("saw %d samples, want %d", len(times), n+1)
	}
	gap := time.Hour
	for i := 2; i < len(times); i++ { // the first gap may straddle the reload
		gap = min(gap, times[i].Sub(times[i-1]))
	}
	return gap
}

func hup(t *testing.T, d *child) {
	t.Helper()
	if err := d.cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
}

// TestReloadAppliesSampleIntervalAndRule: SIGHUP with a changed
// sample_interval and rule applies both at once and logs what changed; the
// process keeps running.
func TestReloadAppliesSampleIntervalAndRule(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cfg := writeReloadConfig(t, dir, "1s", 1000, "")
	d := startDaemon(t, cfg)
	d.waitLog(t, regexp.MustCompile(`vigil starting`), 10*time.Second)
	if gap := sampleGap(t, cfg, 3); gap > 1500*time.Millisecond {
		t.Fatalf("sample gap %v with sample_interval 1s", gap)
	}

	// A threshold the sim's excursion crosses, and a slower cadence.
	writeReloadConfig(t, dir, "3s", 35, "")
	hup(t, d)
	d.waitLog(t, regexp.MustCompile(`msg="config reloaded" changed="heartbeat.sample_interval 1s→3s, rule.too_hot"`), 10*time.Second)
	if gap := sampleGap(t, cfg, 2); gap < 2500*time.Millisecond {
		t.Errorf("sample gap %v after reloading sample_interval 3s", gap)
	}
	d.waitLog(t, regexp.MustCompile(`msg=alert .*rule=too_hot state=firing`), 30*time.Second)

	// An unchanged file: a reload that changes nothing says so.
	hup(t, d)
	d.waitLog(t, regexp.MustCompile(`msg="config reloaded" changed=nothing`), 10*time.Second)
	if strings.Contains(d.logText(), "vigil stopped") {
		t.Fatalf("SIGHUP stopped vigil:\n%s", d.logText())
	}
}

// TestReloadRejectsBrokenConfig: a config with an unknown key is refused
// with its file:line, and the daemon runs on the old config (its rule
// still fires).
func TestReloadRejectsBrokenConfig(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cfg := writeReloadConfig(t, dir, "1s", 35, "")
	d := startDaemon(t, cfg)
	d.waitLog(t, regexp.MustCompile(`msg=alert .*rule=too_hot state=firing`), 30*time.Second)
	d.waitLog(t, regexp.MustCompile(`msg=alert .*rule=too_hot state=resolved`), 30*time.Second)

	good, err := os.ReadFile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	broken := strings.Replace(string(good), `sample_interval = "1s"`, "sample_interval = \"1s\"\nsampel_rate = 3", 1)
	if err := os.WriteFile(cfg, []byte(broken), 0o600); err != nil {
		t.Fatal(err)
	}
	hup(t, d)
	line := lineOf(t, cfg, "sampel_rate")
	d.waitLog(t, regexp.MustCompile(`level=ERROR msg="config reload rejected: still running on the previous config" err=".*config\.toml:`+strconv.Itoa(line)+`:.*sampel_rate`), 10*time.Second)

	// The old rule still fires and resolves: another excursion comes every 5s.
	fired := strings.Count(d.logText(), "state=firing")
	deadline := time.Now().Add(20 * time.Second)
	for strings.Count(d.logText(), "state=firing") == fired {
		if time.Now().After(deadline) {
			t.Fatalf("the rule stopped firing after a rejected reload:\n%s", d.logText())
		}
		time.Sleep(100 * time.Millisecond)
	}
	// Fixed, the file reloads again.
	if err := os.WriteFile(cfg, good, 0o600); err != nil {
		t.Fatal(err)
	}
	hup(t, d)
	d.waitLog(t, regexp.MustCompile(`msg="config reloaded" changed=nothing`), 10*time.Second)
}

// TestStopOnSignalPublishesOffline: SIGTERM and SIGINT stop vigil cleanly:
// "vigil stopped", the socket is gone, and the broker keeps a retained
// "offline". A reload that changes [mqtt] reconnects (offline, online).
func TestStopOnSignalPublishesOffline(t *testing.T) {
	t.Parallel()
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
		t.Run(sig.String(), func(t *testing.T) {
			b := startMosquitto(t)
			rec := mosquittotest.Subscribe(t, b.URL(), topicStatus)
			dir := t.TempDir()
			cfg := writeReloadConfig(t, dir, "1s", 1000, mqttConfig(b.URL(), "homeassistant = false"))
			d := startDaemon(t, cfg)
			rec.WaitPayloadN(topicStatus, "online", 1, 15*time.Second)
			sock := filepath.Join(dir, "state", "vigil.sock")
			if _, err := os.Stat(sock); err != nil {
				t.Fatalf("no control socket: %v", err)
			}
			if sig == syscall.SIGTERM {
				// Changing [mqtt] restarts the transport: offline, then online.
				writeReloadConfig(t, dir, "1s", 1000, mqttConfig(b.URL(), "homeassistant = false", `min_severity = "warning"`))
				hup(t, d)
				d.waitLog(t, regexp.MustCompile(`changed="mqtt.min_severity info→warning"`), 10*time.Second)
				rec.WaitPayloadN(topicStatus, "offline", 1, 10*time.Second)
				rec.WaitPayloadN(topicStatus, "online", 2, 15*time.Second)
			}
			n := 1
			if sig == syscall.SIGTERM {
				n = 2
			}
			d.cmd.Process.Signal(sig)
			select {
			case <-d.done:
			case <-time.After(15 * time.Second):
				t.Fatalf("vigil did not stop on %v", sig)
			}
			if !strings.Contains(d.logText(), "vigil stopped") {
				t.Errorf("no clean shutdown in the log:\n%s", d.logText())
			}
			if code := d.cmd.ProcessState.ExitCode(); code != 0 {
				t.Errorf("exit code %d after %v", code, sig)
			}
			if _, err := os.Stat(sock); !os.IsNotExist(err) {
				t.Errorf("socket still there after %v: %v", sig, err)
			}
			rec.WaitPayloadN(topicStatus, "offline", n, 10*time.Second)
			late := mosquittotest.Subscribe(t, b.URL(), topicStatus)
			if m := late.Wait(topicStatus, 5*time.Second, nil); m.Payload != "offline" || !m.Retained {
				t.Errorf("retained status after %v = %q (retained %v), want offline", sig, m.Payload, m.Retained)
			}
		})
	}
}

// TestSocketBindFailureIsAWarning: a state dir whose socket path is longer
// than sun_path (108 bytes) cannot hold the socket. The daemon warns and
// runs; status says that a daemon holds the state file but its socket is
// unreachable, promptly.
func TestSocketBindFailureIsAWarning(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	long := filepath.Join(dir, strings.Repeat("d", 60), strings.Repeat("e", 60))
	if err := os.MkdirAll(long, 0o700); err != nil {
		t.Fatal(err)
	}
	cfg := writeReloadConfig(t, long, "1s", 35, "")
	if n := len(filepath.Join(long, "state", "vigil.sock")); n <= 108 {
		t.Fatalf("socket path is %d bytes, want more than 108", n)
	}
	d := startDaemon(t, cfg)
	d.waitLog(t, regexp.MustCompile(`level=WARN msg="no control socket: .*socket=\S+vigil.sock`), 10*time.Second)
	d.waitLog(t, regexp.MustCompile(`msg=alert .*rule=too_hot state=firing`), 30*time.Second)

	start := time.Now()
	_, errOut, code := runVigil(t, "-c", cfg, "status")
	if code != 1 || !regexp.MustCompile(`a running vigil \(pid `+strconv.Itoa(d.cmd.Process.Pid)+`\) holds the state file .*vigil.db, but its control socket is unreachable`).MatchString(errOut) {
		t.Errorf("status with an unreachable socket: exit %d, %s", code, errOut)
	}
	if took := time.Since(start); took > 10*time.Second {
		t.Errorf("status took %v", took)
	}
}

// TestSocketInRuntimeDirectory: with $RUNTIME_DIRECTORY the socket goes
// there, not beside the state file, and status reaches it; a second `vigil
// run` on the same state dir exits 1 naming the first, which runs on.
func TestSocketInRuntimeDirectory(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	rt := filepath.Join(dir, "run")
	if err := os.Mkdir(rt, 0o700); err != nil {
		t.Fatal(err)
	}
	cfg := writeReloadConfig(t, dir, "1s", 1000, "")
	d := startDaemon(t, cfg, "RUNTIME_DIRECTORY="+rt)
	d.waitLog(t, regexp.MustCompile(`vigil starting`), 10*time.Second)
	sock := filepath.Join(rt, "vigil.sock")
	deadline := time.Now().Add(10 * time.Second)
	for {
		if _, err := os.Stat(sock); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no socket at %s", sock)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if _, err := os.Stat(filepath.Join(dir, "state", "vigil.sock")); !os.IsNotExist(err) {
		t.Errorf("a socket beside the state file too: %v", err)
	}
	out, errOut, code := runIn(t, dir, []string{"RUNTIME_DIRECTORY=" + rt}, "-c", cfg, "status")
	if code != 0 || !strings.Contains(out, "device:   e2e (daemon running; rules-only mode)") {
		t.Fatalf("status with RUNTIME_DIRECTORY: exit %d\n%s\n%s", code, out, errOut)
	}

	// A second daemon on the same state dir.
	second := startDaemon(t, cfg, "RUNTIME_DIRECTORY="+rt)
	select {
	case <-second.done:
	case <-time.After(15 * time.Second):
		t.Fatal("a second vigil run did not exit")
	}
	want := "another vigil is already running on " + filepath.Join(dir, "state") + " (pid " + strconv.Itoa(d.cmd.Process.Pid) + "); stop it first"
	if code := second.cmd.ProcessState.ExitCode(); code != 1 || !strings.Contains(second.logText(), want) {
		t.Errorf("second instance: exit %d, want 1 and %q:\n%s", code, want, second.logText())
	}
	if strings.Contains(second.logText(), "did not answer") {
		t.Errorf("second instance still says the socket did not answer:\n%s", second.logText())
	}
	if _, err := os.Stat(sock); err != nil {
		t.Fatalf("the second instance removed the first one's socket: %v", err)
	}
	if out, errOut, code := runIn(t, dir, []string{"RUNTIME_DIRECTORY=" + rt}, "-c", cfg, "status"); code != 0 || !strings.Contains(out, "e2e (daemon running; rules-only mode)") {
		t.Fatalf("status after the second instance: exit %d\n%s\n%s", code, out, errOut)
	}
}
