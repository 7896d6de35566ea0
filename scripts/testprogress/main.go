// Command testprogress runs `go test -json ARGS...` and prints progress as
// the tests run: each top-level test as it finishes (slow ones, and every
// failure with its output), a line naming what still runs after a quiet
// spell, and go test's own closing lines (`ok  pkg  12.3s`, `FAIL pkg`)
// verbatim, so whatever reads them still finds them. It exits with go
// test's status.
//
//	go run ./scripts/testprogress -count=1 ./cmd/vigil
//
// Use it for one package at a time: go test streams only a single
// package's events as they happen (several packages' are buffered).
package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"time"
)

// event is one line of test2json output.
type event struct {
	Action  string
	Package string
	Test    string
	Elapsed float64
	Output  string
}

// slow: passing tests that took at least this long get a line.
const slow = time.Second

// quiet: after this long without a line, say what is still running.
const quiet = 30 * time.Second

func main() {
	cmd := exec.Command("go", append([]string{"test", "-json"}, os.Args[1:]...)...)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		fmt.Fprintln(os.Stderr, "testprogress:", err)
		os.Exit(1)
	}
	if err := cmd.Start(); err != nil {
		fmt.Fprintln(os.Stderr, "testprogress: go test:", err)
		os.Exit(1)
	}
	p := newPrinter(os.Stdout, time.Now)
	stop := make(chan struct{})
	go p.tick(stop, quiet)
	failed := p.run(out)
	close(stop)
	err = cmd.Wait()
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		os.Exit(ee.ExitCode())
	case err != nil:
		fmt.Fprintln(os.Stderr, "testprogress: go test:", err)
		os.Exit(1)
	case failed:
		os.Exit(1)
	}
}

type printer struct {
	mu      sync.Mutex
	w       io.Writer
	now     func() time.Time
	last    time.Time
	running map[string]time.Time // top-level test -> start
	paused  map[string]bool      // a parallel test waiting for its turn (test2json's pause, until cont)
	output  map[string][]string  // top-level test -> its output so far
}

func newPrinter(w io.Writer, now func() time.Time) *printer {
	return &printer{w: w, now: now, last: now(), running: map[string]time.Time{}, paused: map[string]bool{}, output: map[string][]string{}}
}

func (p *printer) printf(format string, args ...any) {
	fmt.Fprintf(p.w, format, args...)
	p.last = p.now()
}

// run reads test2json events until r ends; it reports whether any test or
// package failed.
func (p *printer) run(r io.Reader) (failed bool) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 4<<20)
	for sc.Scan() {
		var e event
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil || e.Action == "" {
			p.mu.Lock()
			p.printf("%s\n", sc.Text()) // not an event: a build error, say
			p.mu.Unlock()
			continue
		}
		if p.handle(e) {
			failed = true
		}
	}
	return failed
}

func (p *printer) handle(e event) (failed bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	top, _, sub := strings.Cut(e.Test, "/")
	switch {
	case e.Test == "":
		// The package's own lines: go test's closing "ok"/"FAIL" lines,
		// panics and output outside any test.
		if e.Action == "output" && !strings.HasPrefix(e.Output, "=== ") && strings.TrimSpace(e.Output) != "PASS" {
			p.printf("%s", e.Output)
		}
		if e.Action == "fail" {
			p.unfinished()
		}
		return e.Action == "fail"
	case e.Action == "run" && !sub:
		p.running[top] = p.now()
	case e.Action == "pause" && !sub:
		p.paused[top] = true
	case e.Action == "cont" && !sub:
		// Its time counts from when it runs, not from when it waited.
		delete(p.paused, top)
		p.running[top] = p.now()
	case e.Action == "output":
		p.output[top] = append(p.output[top], e.Output)
	case (e.Action == "pass" || e.Action == "fail" || e.Action == "skip") && !sub:
		d := time.Duration(e.Elapsed * float64(time.Second))
		switch {
		case e.Action == "fail":
			p.printf("--- FAIL: %s (%.2fs)\n", top, e.Elapsed)
			for _, l := range p.output[top] {
				if !strings.HasPrefix(l, "=== ") {
					p.printf("%s", l)
				}
			}
			failed = true
		case e.Action == "pass" && d >= slow:
			p.printf("--- PASS: %s (%.2fs)\n", top, e.Elapsed)
		}
		delete(p.running, top)
		delete(p.paused, top)
		delete(p.output, top)
	}
	return failed
}

// unfinished prints, when the package failed, every test that never ended
// (a -timeout panic ends the binary under them) with the tail of its
// output, so a timeout says where each test was.
func (p *printer) unfinished() {
	names := make([]string, 0, len(p.running))
	for n := range p.running {
		if !p.paused[n] {
			names = append(names, n)
		}
	}
	slices.Sort(names)
	for _, n := range names {
		p.printf("--- UNFINISHED: %s (ran %s)\n", n, p.now().Sub(p.running[n]).Round(time.Second))
		out := p.output[n]
		if len(out) > tail {
			out = out[len(out)-tail:]
		}
		for _, l := range out {
			if !strings.HasPrefix(l, "=== ") {
				p.printf("%s", l)
			}
		}
	}
}

// tail: how many of an unfinished test's last output lines to print.
const tail = 20

// tick says what is still running whenever nothing was printed for every.
func (p *printer) tick(stop <-chan struct{}, every time.Duration) {
	t := time.NewTicker(every / 6)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
		}
		p.mu.Lock()
		if now := p.now(); now.Sub(p.last) >= every && len(p.running) > len(p.paused) {
			var names []string
			for n, since := range p.running {
				if !p.paused[n] {
					names = append(names, fmt.Sprintf("%s %s", n, now.Sub(since).Round(time.Second)))
				}
			}
			slices.Sort(names)
			waiting := ""
			if len(p.paused) > 0 {
				waiting = fmt.Sprintf(" (%d more waiting for their turn)", len(p.paused))
			}
			p.printf("    ... still running: %s%s\n", strings.Join(names, ", "), waiting)
		}
		p.mu.Unlock()
	}
}
