package main

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

// A recorded `go test -json` stream: a fast pass, a slow pass with a
// subtest, a failure with output, and the package's closing lines.
const stream = `{"Action":"start","Package":"p"}
{"Action":"run","Package":"p","Test":"TestFast"}
{"Action":"output","Package":"p","Test":"TestFast","Output":"=== RUN   TestFast\n"}
{"Action":"pass","Package":"p","Test":"TestFast","Elapsed":0.01}
{"Action":"run","Package":"p","Test":"TestSlow"}
{"Action":"run","Package":"p","Test":"TestSlow/sub"}
{"Action":"fail","Package":"p","Test":"TestSlow/sub","Elapsed":0.5}
{"Action":"pass","Package":"p","Test":"TestSlow","Elapsed":3.25}
{"Action":"run","Package":"p","Test":"TestBad"}
{"Action":"output","Package":"p","Test":"TestBad","Output":"=== RUN   TestBad\n"}
{"Action":"output","Package":"p","Test":"TestBad","Output":"    bad_test.go:9: want 1, got 2\n"}
{"Action":"output","Package":"p","Test":"TestBad","Output":"--- FAIL: TestBad (0.00s)\n"}
{"Action":"fail","Package":"p","Test":"TestBad","Elapsed":0}
# a line that is not JSON
{"Action":"output","Package":"p","Output":"FAIL\n"}
{"Action":"output","Package":"p","Output":"FAIL\tp\t3.300s\n"}
{"Action":"fail","Package":"p","Elapsed":3.3}
`

func TestPrinter(t *testing.T) {
	var b bytes.Buffer
	p := newPrinter(&b, time.Now)
	failed := p.run(strings.NewReader(stream))
	want := `--- PASS: TestSlow (3.25s)
--- FAIL: TestBad (0.00s)
    bad_test.go:9: want 1, got 2
--- FAIL: TestBad (0.00s)
# a line that is not JSON
FAIL
FAIL	p	3.300s
`
	if b.String() != want {
		t.Errorf("printed:\n%s\nwant:\n%s", b.String(), want)
	}
	if !failed {
		t.Error("a failed test and package: run reported no failure")
	}

	b.Reset()
	ok := `{"Action":"run","Package":"p","Test":"TestA"}
{"Action":"pass","Package":"p","Test":"TestA","Elapsed":0.1}
{"Action":"output","Package":"p","Output":"PASS\n"}
{"Action":"output","Package":"p","Output":"ok  \tp\t0.2s\n"}
{"Action":"pass","Package":"p","Elapsed":0.2}
`
	if newPrinter(&b, time.Now).run(strings.NewReader(ok)) {
		t.Error("a passing package reported as failed")
	}
	if b.String() != "ok  \tp\t0.2s\n" {
		t.Errorf("passing package printed %q, want only go test's closing line", b.String())
	}
}

func TestTickNamesWhatRuns(t *testing.T) {
	var b bytes.Buffer
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	p := newPrinter(&b, func() time.Time { return now })
	p.handle(event{Action: "run", Package: "p", Test: "TestLong"})
	now = now.Add(45 * time.Second)
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() { p.tick(stop, 60*time.Millisecond); close(done) }()
	time.Sleep(100 * time.Millisecond) // clock pinned 45s on: quiet long enough
	close(stop)
	<-done
	if !strings.Contains(b.String(), "... still running: TestLong 45s\n") {
		t.Errorf("tick printed %q, want the running test and its time", b.String())
	}
}

// A -timeout panic ends the test binary under the tests still running:
// their output is printed with the package's failure, so the log says
// where each one was.
func TestTimeoutNamesUnfinished(t *testing.T) {
	const timedOut = `{"Action":"run","Package":"p","Test":"TestLong"}
{"Action":"output","Package":"p","Test":"TestLong","Output":"=== RUN   TestLong\n"}
{"Action":"output","Package":"p","Test":"TestLong","Output":"    long_test.go:5: waiting for the second heartbeat\n"}
{"Action":"run","Package":"p","Test":"TestDone"}
{"Action":"pass","Package":"p","Test":"TestDone","Elapsed":0.1}
{"Action":"output","Package":"p","Output":"panic: test timed out after 10m0s\n"}
{"Action":"output","Package":"p","Output":"FAIL\tp\t600.9s\n"}
{"Action":"fail","Package":"p","Elapsed":600.9}
`
	var b bytes.Buffer
	if !newPrinter(&b, time.Now).run(strings.NewReader(timedOut)) {
		t.Fatal("a timed-out package reported as passed")
	}
	for _, want := range []string{"panic: test timed out", "--- UNFINISHED: TestLong", "waiting for the second heartbeat"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("printed:\n%s\nwant a line with %q", b.String(), want)
		}
	}
	if strings.Contains(b.String(), "UNFINISHED: TestDone") {
		t.Errorf("a finished test named unfinished:\n%s", b.String())
	}
}

// TestTickLeavesOutWaitingTests: a parallel test paused for its turn is
// not running: the line names only those that run, counts the others,
// and a test's time counts from when it continued.
func TestTickLeavesOutWaitingTests(t *testing.T) {
	var b bytes.Buffer
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	p := newPrinter(&b, func() time.Time { return now })
	for _, e := range []event{
		{Action: "run", Test: "TestA"}, {Action: "pause", Test: "TestA"},
		{Action: "run", Test: "TestB"}, {Action: "pause", Test: "TestB"},
		{Action: "run", Test: "TestC"}, {Action: "pause", Test: "TestC"},
	} {
		p.handle(e)
	}
	now = now.Add(20 * time.Second)
	p.handle(event{Action: "cont", Test: "TestA"})
	now = now.Add(40 * time.Second)
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() { p.tick(stop, 60*time.Millisecond); close(done) }()
	time.Sleep(100 * time.Millisecond)
	close(stop)
	<-done
	if !strings.Contains(b.String(), "... still running: TestA 40s (2 more waiting for their turn)\n") {
		t.Errorf("tick printed %q, want TestA alone, from when it continued, and the 2 waiting counted", b.String())
	}
}
