package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vigil-iot/vigil/heartbeat"
)

// scriptedLLM is a local OpenAI-compatible server: the first heartbeat gets an
// alert through the heartbeat_respond tool, later ones "ok". It can die
// (connection refused) and come back on the same port.
type scriptedLLM struct {
	t     *testing.T
	mu    sync.Mutex
	calls int
	addr  string
	srv   *http.Server
}

func newScriptedLLM(t *testing.T) *scriptedLLM {
	s := &scriptedLLM{t: t}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s.addr = ln.Addr().String()
	s.serve(ln)
	t.Cleanup(s.stop)
	return s
}

func (s *scriptedLLM) serve(ln net.Listener) {
	s.srv = &http.Server{Handler: http.HandlerFunc(s.handle)}
	go s.srv.Serve(ln)
}

func (s *scriptedLLM) stop() { s.srv.Close() }

func (s *scriptedLLM) start() {
	var ln net.Listener
	var err error
	for i := 0; i < 50; i++ {
		if ln, err = net.Listen("tcp", s.addr); err == nil {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err != nil {
		s.t.Fatalf("relisten on %s: %v", s.addr, err)
	}
	s.serve(ln)
}

func (s *scriptedLLM) count() int { s.mu.Lock(); defer s.mu.Unlock(); return s.calls }

func (s *scriptedLLM) handle(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	if r.URL.Path != "/v1/chat/completions" || r.Header.Get("Authorization") != "Bearer sk-test" {
		http.Error(w, "bad request", http.StatusNotFound)
		return
	}
	var req struct {
		Messages []struct{ Role, Content string }
		Tools    []json.RawMessage
	}
	if err := json.Unmarshal(body, &req); err != nil || len(req.Tools) == 0 {
		http.Error(w, "no tools", http.StatusBadRequest)
		return
	}
	s.mu.Lock()
	s.calls++
	n := s.calls
	s.mu.Unlock()
	args := `{"outcome":"ok","severity":"info","summary":"all fine"}`
	if n == 1 {
		args = `{"outcome":"alert","severity":"warning","summary":"humidity trend looks bad"}`
	}
	w.Header().Set("Content-Type", "application/json")
	fmt.Fprintf(w, `{"id":"c%d","object":"chat.completion","model":"m","choices":[{"index":0,"finish_reason":"tool_calls",
"message":{"role":"assistant","content":null,"tool_calls":[{"id":"call_%d","type":"function","function":{"name":"heartbeat_respond","arguments":%q}}]}}],
"usage":{"prompt_tokens":700,"completion_tokens":20,"total_tokens":720}}`, n, n, args)
}

// TestRunWithLLM runs the real daemon against a scripted LLM: an alert from
// the LLM reaches the log transport, an unchanged snapshot costs no call, a
// dead server gives exactly one llm_unreachable while rules keep alerting, and
// recovery (the next tick retries a failed run) gives one "reachable again".
func TestRunWithLLM(t *testing.T) {
	if testing.Short() {
		t.Skip("takes about two minutes (the heartbeat interval cannot be shorter than 1m)")
	}
	t.Parallel()
	llm := newScriptedLLM(t)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "HEARTBEAT.md"), []byte("- Is the air fine?\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := writeConfig(t, dir, `
[llm]
base_url = "http://`+llm.addr+`/v1"
api_key_env = "VIGIL_TEST_KEY"
timeout = "3s"

[[sensor]]
name = "air"
driver = "bme280"
sim = { every = "0s" }

[[rule]]
name = "always"
when = "air.pressure > 0"
severity = "info"
renotify = "1m"
`)
	d := startDaemon(t, cfg, "VIGIL_TEST_KEY=sk-test")
	d.waitLog(t, regexp.MustCompile(`mode=llm`), 10*time.Second)
	// The first heartbeat comes at the device's phase within the interval.
	d.waitLog(t, regexp.MustCompile(`msg=alert .*source=llm .*summary="humidity trend looks bad"`), heartbeat.Phase("e2e", time.Minute)+30*time.Second)
	if n := llm.count(); n != 1 {
		t.Fatalf("LLM calls after the first heartbeat = %d, want 1", n)
	}
	// Second tick, a minute later: nothing changed beyond the deadbands.
	d.waitLog(t, regexp.MustCompile(`msg=heartbeat outcome=skipped .*reason=unchanged`), 75*time.Second)
	if n := llm.count(); n != 1 {
		t.Fatalf("LLM calls after an unchanged tick = %d, want still 1", n)
	}
	llm.stop()
	// A quiet device does not call the LLM, so nothing notices the outage
	// until something asks: here a user runs `vigil check` (via the socket).
	out, _, code := runVigil(t, "-c", cfg, "check")
	if code != 1 || !strings.Contains(out, "outcome: failed") {
		t.Fatalf("vigil check with the LLM down: exit %d, output:\n%s", code, out)
	}
	d.waitLog(t, regexp.MustCompile(`msg=alert .*rule=llm_unreachable state=firing`), 10*time.Second)
	// Rules keep alerting while the LLM is down.
	// The rule re-notifies every minute (renotify's least): one comes
	// within 65 s.
	before := strings.Count(d.logText(), "rule=always state=firing")
	for deadline := time.Now().Add(65 * time.Second); ; time.Sleep(500 * time.Millisecond) {
		after := strings.Count(d.logText(), "rule=always state=firing")
		if after > before {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no rule alert while the LLM was down (%d before, %d after)", before, after)
		}
	}
	llm.start()
	d.waitLog(t, regexp.MustCompile(`msg=alert .*rule=llm_unreachable state=resolved`), 75*time.Second)
	if n := strings.Count(d.logText(), "rule=llm_unreachable state=firing"); n != 1 {
		t.Fatalf("llm_unreachable alerts = %d, want exactly 1\n%s", n, d.logText())
	}
}
