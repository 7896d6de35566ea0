package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// daemon is a running `vigil run` with its log captured.
type daemon struct {
	cmd     *exec.Cmd
	started time.Time
	mu      sync.Mutex
	log     bytes.Buffer
	done    chan struct{}
	err     error
}

// startDaemon runs `argv... -c cfg run` (argv is the binary, or an emulator
// and the binary) with env added to the environment.
func startDaemon(argv []string, cfg string, env ...string) (*daemon, error) {
	d := &daemon{done: make(chan struct{})}
	args := append(append([]string{}, argv[1:]...), "-c", cfg, "run")
	d.cmd = exec.Command(argv[0], args...)
	d.cmd.Env = append(os.Environ(), "OPENAI_API_KEY=", "NOTIFY_SOCKET=")
	d.cmd.Env = append(d.cmd.Env, env...)
	stderr, err := d.cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	d.started = time.Now()
	if err := d.cmd.Start(); err != nil {
		return nil, err
	}
	go func() {
		sc := bufio.NewScanner(stderr)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			d.mu.Lock()
			d.log.WriteString(sc.Text() + "\n")
			d.mu.Unlock()
		}
		d.err = d.cmd.Wait()
		close(d.done)
	}()
	return d, nil
}

func (d *daemon) pid() int { return d.cmd.Process.Pid }

func (d *daemon) logText() string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.log.String()
}

func (d *daemon) exited() bool {
	select {
	case <-d.done:
		return true
	default:
		return false
	}
}

// kill sends SIGKILL and waits for the process to be gone.
func (d *daemon) kill() {
	d.cmd.Process.Signal(syscall.SIGKILL)
	<-d.done
}

// stop sends SIGTERM and waits up to timeout, then kills.
func (d *daemon) stop(timeout time.Duration) error {
	d.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-d.done:
		return nil
	case <-time.After(timeout):
		d.kill()
		return fmt.Errorf("vigil did not stop within %s of SIGTERM", timeout)
	}
}

// waitLog waits until re matches the log and returns the match.
func (d *daemon) waitLog(ctx context.Context, re *regexp.Regexp, timeout time.Duration) (string, error) {
	deadline := time.Now().Add(timeout)
	for {
		if m := re.FindString(d.logText()); m != "" {
			return m, nil
		}
		if d.exited() {
			return "", fmt.Errorf("vigil exited (%v) while waiting for %s; log tail:\n%s", d.err, re, tail(d.logText(), 20))
		}
		if time.Now().After(deadline) {
			return "", fmt.Errorf("no %s in the log within %s; log tail:\n%s", re, timeout, tail(d.logText(), 20))
		}
		select {
		case <-ctx.Done():
			return "", ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
}

func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// memUse is a process's memory in kB: from /proc/PID/status (VmRSS, VmHWM,
// RssAnon, RssFile) and /proc/PID/smaps_rollup (Pss, Pss_Anon,
// Private_Dirty). RssAnon is the memory the process owns: heap, stacks and
// the runtime's own data, which only it can give back. RssFile counts pages
// of mapped files (the binary's text above all) that the kernel can drop and
// read again at will; VmRSS = RssAnon + RssFile + RssShmem.
type memUse struct {
	rss, hwm, anon, file int64
	pss, pssAnon, dirty  int64
	hasPssAnon           bool // Pss_Anon is in smaps_rollup from Linux 5.7 on
}

// readMem reads the memory figures of pid: status and smaps_rollup, one
// right after the other.
func readMem(pid int) (memUse, error) {
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return memUse{}, err
	}
	rollup, err := os.ReadFile(fmt.Sprintf("/proc/%d/smaps_rollup", pid))
	if err != nil {
		return memUse{}, fmt.Errorf("%w (smaps_rollup needs Linux 4.14)", err)
	}
	m, err := parseMem(string(status), string(rollup))
	if err != nil {
		return m, fmt.Errorf("memory of pid %d: %w", pid, err)
	}
	return m, nil
}

// parseMem takes the figures of memUse from the text of /proc/PID/status
// and /proc/PID/smaps_rollup. Every field but Pss_Anon must be there.
func parseMem(status, rollup string) (memUse, error) {
	var m memUse
	for _, f := range []struct {
		file, text, name string
		dst              *int64
	}{
		{"status", status, "VmRSS", &m.rss},
		{"status", status, "VmHWM", &m.hwm},
		{"status", status, "RssAnon", &m.anon},
		{"status", status, "RssFile", &m.file},
		{"smaps_rollup", rollup, "Pss", &m.pss},
		{"smaps_rollup", rollup, "Private_Dirty", &m.dirty},
	} {
		v, err := parseStatusKB(f.text, f.name)
		if err != nil {
			return m, fmt.Errorf("%s: %w", f.file, err)
		}
		*f.dst = v
	}
	if v, err := parseStatusKB(rollup, "Pss_Anon"); err == nil {
		m.pssAnon, m.hasPssAnon = v, true
	}
	return m, nil
}

// anonUnder reports whether RssAnon is below limit bytes.
func (m memUse) anonUnder(limit int64) bool { return m.anon*1024 < limit }

// parseStatusKB returns the number after "field:" in a /proc file of
// "Key: value [kB]" lines (status, smaps_rollup, meminfo).
func parseStatusKB(text, field string) (int64, error) {
	for _, line := range strings.Split(text, "\n") {
		k, v, ok := strings.Cut(line, ":")
		if !ok || k != field {
			continue
		}
		f := strings.Fields(v)
		if len(f) == 0 {
			return 0, fmt.Errorf("%s: no value", field)
		}
		n, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil {
			return 0, fmt.Errorf("%s: %w", field, err)
		}
		return n, nil
	}
	return 0, fmt.Errorf("no %s line", field)
}

// cpuSample is a process's CPU use and context switches at one instant.
type cpuSample struct {
	at         time.Time
	ticks      int64 // utime+stime of the whole process, in clock ticks
	onCPU      time.Duration
	switches   int64 // voluntary + involuntary context switches over all threads
	threads    int
	involSwtch int64
}

const clkTck = 100 // USER_HZ on Linux

func sampleCPU(pid int) (cpuSample, error) {
	s := cpuSample{at: time.Now()}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return s, err
	}
	if s.ticks, err = parseStatTicks(string(b)); err != nil {
		return s, err
	}
	tasks, err := filepath.Glob(fmt.Sprintf("/proc/%d/task/*", pid))
	if err != nil {
		return s, err
	}
	for _, t := range tasks {
		if ss, err := os.ReadFile(t + "/schedstat"); err == nil {
			if f := strings.Fields(string(ss)); len(f) > 0 {
				ns, _ := strconv.ParseInt(f[0], 10, 64)
				s.onCPU += time.Duration(ns)
			}
		}
		if st, err := os.ReadFile(t + "/status"); err == nil {
			v, _ := parseStatusKB(string(st), "voluntary_ctxt_switches")
			n, _ := parseStatusKB(string(st), "nonvoluntary_ctxt_switches")
			s.switches += v + n
			s.involSwtch += n
		}
		s.threads++
	}
	return s, nil
}

// parseStatTicks returns utime+stime from /proc/PID/stat (fields 14 and 15;
// the command name in parentheses may contain spaces).
func parseStatTicks(stat string) (int64, error) {
	i := strings.LastIndexByte(stat, ')')
	if i < 0 {
		return 0, errors.New("malformed /proc stat")
	}
	f := strings.Fields(stat[i+1:])
	if len(f) < 13 {
		return 0, errors.New("short /proc stat")
	}
	u, err1 := strconv.ParseInt(f[11], 10, 64)
	s, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, errors.New("malformed utime/stime in /proc stat")
	}
	return u + s, nil
}

// ctl sends one request to the daemon's control socket and decodes the reply.
func ctl(sock string, req any, resp any, timeout time.Duration) error {
	c, err := net.DialTimeout("unix", sock, timeout)
	if err != nil {
		return err
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(timeout))
	if err := json.NewEncoder(c).Encode(req); err != nil {
		return err
	}
	line, err := bufio.NewReader(c).ReadBytes('\n')
	if err != nil {
		return fmt.Errorf("read control reply: %w", err)
	}
	var raw struct {
		Error string `json:"error"`
	}
	if json.Unmarshal(line, &raw) == nil && raw.Error != "" {
		return errors.New(raw.Error)
	}
	return json.Unmarshal(line, resp)
}

// waitSocket waits until the control socket answers.
func waitSocket(ctx context.Context, sock string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		if c, err := net.Dial("unix", sock); err == nil {
			c.Close()
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("control socket %s did not answer within %s", sock, timeout)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// logTimes returns the time= of every log line matching re.
func logTimes(log string, re *regexp.Regexp) []time.Time {
	var out []time.Time
	for _, line := range strings.Split(log, "\n") {
		if !re.MatchString(line) {
			continue
		}
		if t, ok := logTime(line); ok {
			out = append(out, t)
		}
	}
	return out
}

func logTime(line string) (time.Time, bool) {
	f, _, _ := strings.Cut(line, " ")
	v, ok := strings.CutPrefix(f, "time=")
	if !ok {
		return time.Time{}, false
	}
	t, err := time.Parse(time.RFC3339Nano, v)
	return t, err == nil
}

func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}
