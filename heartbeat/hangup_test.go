package heartbeat

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/vigil-iot/vigil/agent"
	"github.com/vigil-iot/vigil/alert"
)

// TestHeartbeatFailsWhenServerHangsUpAfterReading: an LLM server that
// reads the whole request and closes the connection without answering
// sees that request exactly once, and the heartbeat is a failed run with
// llm_unreachable, never a decision or a second bill.
func TestHeartbeatFailsWhenServerHangsUpAfterReading(t *testing.T) {
	var requests atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, err := io.ReadAll(r.Body); err != nil {
			t.Errorf("read request: %v", err)
		}
		requests.Add(1)
		c, _, err := w.(http.Hijacker).Hijack()
		if err != nil {
			t.Errorf("hijack: %v", err)
			return
		}
		c.Close()
	}))
	defer srv.Close()
	h := newHarness(t, func(c *Config) { c.MaxQuiet = time.Minute })
	h.useAgent(agent.ProviderOpenAI, srv.URL+"/v1", 5*time.Second)

	h.clock.Advance(30 * time.Minute)
	h.sample()
	res := h.tick()
	t.Logf("run error: %s", res.Run.Error)
	if n := requests.Load(); n != 1 {
		t.Errorf("server saw %d requests, want exactly 1", n)
	}
	if res.Run.Outcome != OutcomeFailed || res.Decision != nil || res.Run.LLMCalls != 1 {
		t.Errorf("run = %s with %d LLM calls (decision %v), want failed after 1 call", res.Run.Outcome, res.Run.LLMCalls, res.Decision)
	}
	if !strings.Contains(res.Run.Error, "openai: post 127.0.0.1:") || !strings.HasSuffix(res.Run.Error, "EOF") {
		t.Errorf("run error = %q, want the closed connection", res.Run.Error)
	}
	var firing int
	for _, e := range h.outbox() {
		if e.Alert.Rule == "llm_unreachable" && e.Alert.State == alert.StateFiring {
			firing++
		}
	}
	if firing != 1 {
		t.Errorf("llm_unreachable firing alerts = %d, want 1", firing)
	}
}
