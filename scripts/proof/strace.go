package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// syscallEvent is one traced system call.
type syscallEvent struct {
	at   time.Time
	name string
	ret  int64
}

// tracer is strace attached to a process and its threads.
type tracer struct {
	cmd  *exec.Cmd
	out  string
	done chan struct{}
}

func startTrace(pid int, out string, calls string) (*tracer, error) {
	p, err := exec.LookPath("strace")
	if err != nil {
		return nil, fmt.Errorf("strace not found (apt-get install strace)")
	}
	t := &tracer{out: out, done: make(chan struct{})}
	t.cmd = exec.Command(p, "-f", "-ttt", "-s", "0", "-e", "trace="+calls, "-o", out, "-p", strconv.Itoa(pid))
	var stderr strings.Builder
	t.cmd.Stderr = &stderr
	if err := t.cmd.Start(); err != nil {
		return nil, err
	}
	go func() { t.cmd.Wait(); close(t.done) }()
	// strace prints "Process N attached" on stderr once it is in place.
	deadline := time.Now().Add(5 * time.Second)
	for !strings.Contains(stderr.String(), "attached") {
		select {
		case <-t.done:
			return nil, fmt.Errorf("strace -p %d: %s", pid, stderr.String())
		case <-time.After(10 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			break
		}
	}
	return t, nil
}

// stop detaches strace and returns the calls it saw.
func (t *tracer) stop() ([]syscallEvent, error) {
	t.cmd.Process.Signal(syscall.SIGINT)
	select {
	case <-t.done:
	case <-time.After(10 * time.Second):
		t.cmd.Process.Kill()
		<-t.done
	}
	f, err := os.Open(t.out)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return parseStrace(f)
}

var (
	straceStart   = regexp.MustCompile(`^(?:\[pid\s+)?(\d+)\]?\s+(\d+\.\d+)\s+(\w+)\(`)
	straceRet     = regexp.MustCompile(`\)\s+=\s+(-?\d+)`)
	straceResumed = regexp.MustCompile(`<\.\.\. (\w+) resumed>.*=\s+(-?\d+)`)
)

// parseStrace reads `strace -f -ttt` output: complete calls, and calls split
// into "<unfinished ...>" and "<... name resumed>" lines by another thread.
func parseStrace(r io.Reader) ([]syscallEvent, error) {
	var out []syscallEvent
	pending := map[string]int{} // pid -> index of its unfinished call
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if m := straceResumed.FindStringSubmatch(line); m != nil {
			pid := strings.Fields(line)[0]
			if i, ok := pending[pid]; ok {
				out[i].ret, _ = strconv.ParseInt(m[2], 10, 64)
				delete(pending, pid)
			}
			continue
		}
		m := straceStart.FindStringSubmatch(line)
		if m == nil {
			continue // signals, exits, "+++"
		}
		sec, err := strconv.ParseFloat(m[2], 64)
		if err != nil {
			return nil, fmt.Errorf("strace timestamp %q: %w", m[2], err)
		}
		ev := syscallEvent{at: time.Unix(0, int64(sec*1e9)), name: m[3], ret: -1}
		if strings.Contains(line, "<unfinished ...>") {
			pending[m[1]] = len(out)
		} else if rm := straceRet.FindStringSubmatch(line); rm != nil {
			ev.ret, _ = strconv.ParseInt(rm[1], 10, 64)
		}
		out = append(out, ev)
	}
	return out, sc.Err()
}

// traceFor traces calls of pid for window and returns the events and the
// times the trace started and ended.
func traceFor(ctx context.Context, pid int, out, calls string, window time.Duration) (evs []syscallEvent, t0, t1 time.Time, err error) {
	tr, err := startTrace(pid, out, calls)
	if err != nil {
		return nil, t0, t1, err
	}
	t0 = time.Now()
	if err := sleepCtx(ctx, window); err != nil {
		tr.stop()
		return nil, t0, t1, err
	}
	evs, err = tr.stop()
	return evs, t0, time.Now(), err
}
