package heartbeat

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vigil-iot/vigil/agent"
	"github.com/vigil-iot/vigil/alert"
)

// The LLM fault simulation runs the engine on the fake clock with the real
// agent against a local OpenAI-compatible server that, episode by episode,
// is healthy (with the odd transient fault a retry absorbs), in an outage
// (429, 500, 503, hangs, connections closed mid-body) or broken (garbage,
// truncated JSON, endless tool loops, 400). Every request is one the agent
// really makes over HTTP; the heartbeat interval is simulated.
//
//	go test ./heartbeat -run TestLLMFaults                     (short: 2 days)
//	go test ./heartbeat -run TestLLMFaults -llmfault.days=14   (make reliability)
var (
	llmFaultDays = flag.Int("llmfault.days", 2, "simulated days of 30-minute heartbeats against the fault server")
	llmFaultSeed = flag.Uint64("llmfault.seed", 1, "seed of the fault schedule")
)

type faultKind string

const (
	faultNone      faultKind = "ok"
	faultTool      faultKind = "tool" // a read_sensor call before the answer
	fault429       faultKind = "429"
	fault500       faultKind = "500"
	fault503       faultKind = "503"
	faultHang      faultKind = "hang"
	faultMidBody   faultKind = "mid_body_close"
	faultGarbage   faultKind = "garbage"
	faultTruncated faultKind = "truncated_json"
	faultLoop      faultKind = "tool_loop"
	fault400       faultKind = "400"
)

// retryable reports whether the agent must treat the fault as "unreachable".
func (k faultKind) retryable() bool {
	switch k {
	case fault429, fault500, fault503, faultHang, faultMidBody:
		return true
	}
	return false
}

type episode string

const (
	epHealthy episode = "healthy"
	epOutage  episode = "outage"
	epBroken  episode = "broken"
)

// faultServer is the scripted LLM. Its episode is set by the test between
// heartbeats; within an episode each request draws its fault.
type faultServer struct {
	mu       sync.Mutex
	rng      *rand.Rand
	ep       episode
	requests []faultKind
	day      map[string]int // requests per UTC day of the simulated wall clock
	now      func() time.Time
}

func (s *faultServer) draw() faultKind {
	s.mu.Lock()
	defer s.mu.Unlock()
	var k faultKind
	switch s.ep {
	case epHealthy:
		k = []faultKind{faultNone, faultNone, faultNone, faultTool, faultTool, faultNone, faultNone, fault429, fault500, faultMidBody}[s.rng.IntN(10)]
	case epOutage:
		k = []faultKind{fault429, fault500, fault503, faultHang, faultMidBody}[s.rng.IntN(5)]
	case epBroken:
		k = []faultKind{faultGarbage, faultTruncated, faultLoop, fault400}[s.rng.IntN(4)]
	}
	s.requests = append(s.requests, k)
	s.day[s.now().UTC().Format("2006-01-02")]++
	return k
}

func (s *faultServer) count() int { s.mu.Lock(); defer s.mu.Unlock(); return len(s.requests) }

func (s *faultServer) kinds(from int) []faultKind {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]faultKind(nil), s.requests[from:]...)
}

func (s *faultServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	var req struct {
		Messages []json.RawMessage `json:"messages"`
		Tools    []json.RawMessage `json:"tools"`
	}
	if err != nil || json.Unmarshal(body, &req) != nil || len(req.Tools) == 0 {
		http.Error(w, `{"error":{"message":"bad request"}}`, http.StatusBadRequest)
		return
	}
	k := s.draw()
	if k == faultTool && len(req.Messages) > 2 {
		k = faultNone // the tool result came back: answer now
	}
	reply := func(name, args string) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"id":"c","object":"chat.completion","model":"m","choices":[{"index":0,"finish_reason":"tool_calls",
"message":{"role":"assistant","content":null,"tool_calls":[{"id":"call_%d","type":"function","function":{"name":%q,"arguments":%q}}]}}],
"usage":{"prompt_tokens":800,"completion_tokens":20,"total_tokens":820}}`, len(req.Messages), name, args)
	}
	switch k {
	case faultNone:
		reply(agent.ToolRespond, `{"outcome":"ok","severity":"info","summary":"fine"}`)
	case faultTool, faultLoop:
		reply(agent.ToolReadSensor, `{"name":"air"}`)
	case fault429:
		w.Header().Set("Retry-After", "0")
		http.Error(w, `{"error":{"message":"rate limited"}}`, http.StatusTooManyRequests)
	case fault500:
		http.Error(w, `{"error":{"message":"internal"}}`, http.StatusInternalServerError)
	case fault503:
		http.Error(w, `{"error":{"message":"loading model"}}`, http.StatusServiceUnavailable)
	case faultHang:
		select { // until the agent's timeout gives up
		case <-r.Context().Done():
		case <-time.After(10 * time.Second):
		}
	case faultMidBody:
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Length", "4000")
		w.WriteHeader(http.StatusOK)
		io.WriteString(w, `{"id":"c","object":"chat.completion","choices":[{"index":0,`)
		if f, ok := w.(http.Flusher); ok {
			f.Flush()
		}
		if hj, ok := w.(http.Hijacker); ok {
			if c, _, err := hj.Hijack(); err == nil {
				c.Close()
			}
		}
	case faultGarbage:
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, "<html><body>502 Bad Gateway</body></html>\x00\xff")
	case faultTruncated:
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"id":"c","choices":[{"message":{"role":"assistant","tool_calls":[{"function":{"name":"heartbeat_respond","arguments":"{\"outcome\":`)
	case fault400:
		http.Error(w, `{"error":{"message":"context length exceeded"}}`, http.StatusBadRequest)
	}
}

func TestLLMFaults(t *testing.T) {
	const maxCalls = 24 // small enough that healthy days run into it
	rng := rand.New(rand.NewPCG(*llmFaultSeed, 0xfa17))
	h := newHarness(t, func(c *Config) {
		c.MaxQuiet = time.Minute // every heartbeat has something to ask
		c.MaxLLMCallsPerDay = maxCalls
	})
	srv := &faultServer{rng: rand.New(rand.NewPCG(*llmFaultSeed, 0x5e4e)), ep: epHealthy, day: map[string]int{}, now: h.wall.Now}
	ts := httptest.NewServer(srv)
	defer ts.Close()
	h.useAgent(agent.ProviderOpenAI, ts.URL+"/v1", 150*time.Millisecond)

	ticks := *llmFaultDays * 48
	ep, left := epHealthy, 3
	var (
		wantFiring, wantResolved int
		down                     bool
		episodes                 = map[episode]int{}
		outcomes                 = map[string]int{}
		wantRule                 int
		hot                      bool
		maxDay                   int
	)
	for i := 0; i < ticks; i++ {
		if left == 0 {
			ep = []episode{epHealthy, epHealthy, epOutage, epOutage, epBroken}[rng.IntN(5)]
			left = 1 + rng.IntN(8)
			episodes[ep]++
		}
		left--
		srv.mu.Lock()
		srv.ep = ep
		srv.mu.Unlock()
		// The sensor moves every heartbeat and crosses the rule's threshold
		// every fifth: rules must alert whatever the LLM does.
		temp := 20 + float64(i%4)
		if i%5 == 0 {
			hot = !hot
			wantRule++
		}
		if hot {
			temp = 40
		}
		h.sensor.set(temp)
		h.clock.Advance(30 * time.Minute)
		h.sample()
		before := srv.count()
		res := h.tick()
		outcomes[res.Run.Outcome+"/"+res.Run.Reason]++
		kinds := srv.kinds(before)
		if res.Run.LLMCalls != len(kinds) {
			t.Errorf("tick %d: run counted %d LLM calls, the server saw %d", i, res.Run.LLMCalls, len(kinds))
		}
		switch {
		case res.Run.Outcome == OutcomeFailed:
			// A run stopped by the budget is not an outage.
			budget := strings.Contains(res.Run.Error, agent.ErrBudget.Error())
			if len(kinds) > 0 && kinds[len(kinds)-1].retryable() && !budget && !down {
				down = true
				wantFiring++
			}
		case res.Decision != nil:
			if down {
				down = false
				wantResolved++
			}
		}
	}
	var gotFiring, gotResolved, gotRule int
	for _, e := range h.outbox() {
		switch {
		case e.Alert.Rule == "llm_unreachable" && e.Alert.State == alert.StateFiring:
			gotFiring++
		case e.Alert.Rule == "llm_unreachable":
			gotResolved++
		case e.Alert.Rule == "too_hot":
			gotRule++
		}
	}
	st, err := h.e.Status(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range srv.day {
		maxDay = max(maxDay, n)
	}
	var kinds []string
	counts := map[faultKind]int{}
	for _, k := range srv.kinds(0) {
		counts[k]++
	}
	for k, n := range counts {
		kinds = append(kinds, fmt.Sprintf("%s:%d", k, n))
	}
	t.Logf("LLMFAULT ticks=%d requests=%d max_requests_per_day=%d budget=%d episodes_outage=%d episodes_broken=%d llm_unreachable_firing=%d want_firing=%d resolved=%d want_resolved=%d rule_alerts=%d want_rule=%d outbox_dropped=%d faults=%s outcomes=%v",
		ticks, srv.count(), maxDay, maxCalls, episodes[epOutage], episodes[epBroken], gotFiring, wantFiring,
		gotResolved, wantResolved, gotRule, wantRule, st.OutboxDropped, strings.Join(kinds, ","), outcomes)
	if gotFiring != wantFiring || gotResolved != wantResolved {
		t.Errorf("llm_unreachable: %d firing, %d resolved; want %d and %d (one per outage)", gotFiring, gotResolved, wantFiring, wantResolved)
	}
	if wantFiring == 0 {
		t.Error("the schedule produced no outage")
	}
	if gotRule != wantRule {
		t.Errorf("rule alerts = %d, want %d: rules must alert whatever the LLM does", gotRule, wantRule)
	}
	if maxDay > maxCalls {
		t.Errorf("the LLM server saw %d requests in one day, over max_llm_calls_per_day = %d", maxDay, maxCalls)
	}
	if maxDay < maxCalls {
		t.Errorf("at most %d requests in a day: the schedule never ran into the budget of %d", maxDay, maxCalls)
	}
}
