package heartbeat

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime/pprof"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"

	"github.com/vigil-iot/vigil/agent"
	"github.com/vigil-iot/vigil/device"
	"github.com/vigil-iot/vigil/store"
	"github.com/vigil-iot/vigil/transport"
)

// TestForcedChecksCountAgainstBudget: a forced check (every remote check
// command ends in Engine.Check) spends the same daily budget as a scheduled
// heartbeat and is refused with reason budget once it is spent. The calls
// are counted where they cost money: at the LLM server.
func TestForcedChecksCountAgainstBudget(t *testing.T) {
	var requests atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"id":"c","object":"chat.completion","model":"m","choices":[{"index":0,"finish_reason":"tool_calls","message":{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"heartbeat_respond","arguments":"{\"outcome\":\"ok\",\"severity\":\"info\",\"summary\":\"fine\"}"}}]}}],"usage":{"prompt_tokens":900,"completion_tokens":20,"total_tokens":920}}`)
	}))
	defer srv.Close()
	a, err := agent.New(agent.Config{Provider: agent.ProviderOpenAI, BaseURL: srv.URL + "/v1", Model: "m", APIKey: "k"},
		nil, clockwork.NewRealClock(), nil)
	if err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, func(c *Config) { c.MaxLLMCallsPerDay = 2 })
	h.e.deps.Thinker = a
	ctx := context.Background()
	var refused int
	for i := range 20 {
		h.sample()
		res, err := h.e.Check(ctx, CheckOptions{})
		if err != nil {
			t.Fatalf("check %d: %v", i+1, err)
		}
		switch {
		case i < 2 && res.Run.Outcome != OutcomeOK:
			t.Errorf("check %d = %s (%s) %s, want ok within the budget", i+1, res.Run.Outcome, res.Run.Reason, res.Run.Error)
		case i >= 2 && (res.Run.Outcome != OutcomeSkipped || res.Run.Reason != ReasonBudget):
			t.Errorf("check %d = %s (%s), want skipped (budget)", i+1, res.Run.Outcome, res.Run.Reason)
		case i >= 2:
			refused++
		}
	}
	if got := requests.Load(); got != 2 {
		t.Errorf("20 forced checks with a budget of 2 made %d LLM requests, want 2", got)
	}
	st, err := h.e.Status(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if st.BudgetCalls != 2 || st.Counters["skip_"+ReasonBudget] != 18 {
		t.Errorf("status: %d calls today, %d budget skips; want 2 and 18", st.BudgetCalls, st.Counters["skip_"+ReasonBudget])
	}
	t.Logf("BUDGET forced_checks=20 llm_requests=%d refused_budget=%d", requests.Load(), refused)

	// A new day opens the budget again, for forced checks too.
	h.clock.Advance(24 * time.Hour)
	h.sample()
	if res, _ := h.e.Check(ctx, CheckOptions{}); res.Run.Outcome != OutcomeOK {
		t.Errorf("first check of the next day = %s (%s), want ok", res.Run.Outcome, res.Run.Reason)
	}
}

// waitFor polls cond (the engine runs on its own goroutines) for up to 10 s
// of real time.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for range 1000 {
		if cond() {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("timed out waiting for %s", what)
}

func (h *harness) nextMono() time.Time {
	h.e.mu.Lock()
	defer h.e.mu.Unlock()
	return h.e.nextMono
}

func (h *harness) runs() []store.Run {
	h.t.Helper()
	var runs []store.Run
	if err := h.db.View(func(tx *store.Tx) error { var err error; runs, err = tx.Runs(100); return err }); err != nil {
		h.t.Fatal(err)
	}
	return runs
}

// TestBusyTickRetriesSoon: a tick that meets a running check tries again
// min(30 s, interval/10) later instead of a whole interval later, and the
// schedule keeps its phase afterwards.
func TestBusyTickRetriesSoon(t *testing.T) {
	for _, tc := range []struct {
		interval, retry time.Duration
	}{
		{30 * time.Minute, 30 * time.Second},
		{2 * time.Minute, 12 * time.Second},
	} {
		t.Run(tc.interval.String(), func(t *testing.T) {
			h := newHarness(t, func(c *Config) { c.Interval = tc.interval; c.SampleInterval = time.Hour })
			h.sample()
			pub := &flakyPublisher{up: true}
			h.e.deps.Publishers = []Publisher{pub}
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error, 1)
			go func() { done <- h.e.Run(ctx) }()
			defer func() { cancel(); <-done }()

			first := h.clock.Now().Add(Phase(h.cfg.DeviceID, tc.interval))
			waitFor(t, "the first tick to be scheduled", func() bool { return h.nextMono().Equal(first) })
			h.e.runMu.Lock() // a forced check is running
			h.clock.Advance(first.Sub(h.clock.Now()))
			want := first.Add(tc.retry)
			waitFor(t, "the busy tick to be recorded", func() bool { return len(h.runs()) > 0 })
			if runs := h.runs(); len(runs) != 1 || runs[0].Reason != ReasonBusy {
				t.Fatalf("runs after the busy tick = %+v, want one skipped (busy)", runs)
			}
			waitFor(t, "the busy retry to be scheduled", func() bool { return h.nextMono().Equal(want) })
			st, err := h.e.Status(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			// The fake wall clock is the monotonic one here.
			if got, want := st.NextRun, want.UTC().Round(time.Second); !got.Equal(want) {
				t.Errorf("status next run after the busy tick = %s, want %s", got, want)
			}
			// The retained heartbeat says when the retry comes, too.
			waitFor(t, "the busy heartbeat to be published", func() bool { _, _, n := pub.counts(); return n > 0 })
			pub.mu.Lock()
			hb := pub.beats[len(pub.beats)-1]
			pub.mu.Unlock()
			if hb.Reason != ReasonBusy || !hb.NextAt.Equal(want.UTC().Round(time.Second)) {
				t.Errorf("published heartbeat = %s (%s) next_at %s, want busy with next_at %s", hb.Outcome, hb.Reason, hb.NextAt, want.UTC())
			}
			h.e.runMu.Unlock() // the check finished

			h.clock.Advance(tc.retry)
			waitFor(t, "the retry to run", func() bool { return h.thinker.count() == 1 })
			if got, want := h.nextMono(), first.Add(tc.interval); !got.Equal(want) {
				t.Errorf("after the retry the next tick is at +%s, want +%s (the original phase)", got.Sub(first), want.Sub(first))
			}
		})
	}
}

// stuckPublisher is a broker that never answers: every publish waits for
// its context.
type stuckPublisher struct{}

func (stuckPublisher) PublishHeartbeat(ctx context.Context, hb transport.Heartbeat) error {
	<-ctx.Done()
	return ctx.Err()
}

func (stuckPublisher) PublishSensors(ctx context.Context, s device.Snapshot) error {
	<-ctx.Done()
	return ctx.Err()
}

// TestShutdownWithChecksInFlight: remote checks and samples keep arriving
// while the publisher is stuck on a dead broker, across shutdown and after
// the publish loop has exited. Run must return and every producer must
// finish: none may wait for a consumer that is busy or gone. Run it with
// -race.
func TestShutdownWithChecksInFlight(t *testing.T) {
	h := newHarness(t, func(c *Config) { c.SensorsPublishInterval = time.Nanosecond; c.Interval = time.Minute })
	h.e.deps.Publishers = []Publisher{stuckPublisher{}}
	ctx, cancel := context.WithCancel(context.Background())
	runDone := make(chan error, 1)
	go func() { runDone <- h.e.Run(ctx) }()

	const producers, after = 8, 25
	var (
		wg      sync.WaitGroup
		stopped = make(chan struct{})
		checks  atomic.Int64
	)
	for i := range producers {
		wg.Go(func() {
			extra := 0
			for extra < after {
				select {
				case <-stopped:
					extra++
				default:
				}
				if i%2 == 0 {
					if _, err := h.e.Check(context.Background(), CheckOptions{}); err != nil {
						t.Errorf("check: %v", err)
						return
					}
					checks.Add(1)
				} else if err := h.e.SampleOnce(context.Background()); err != nil {
					t.Errorf("sample: %v", err)
					return
				}
				h.clock.Advance(time.Millisecond)
			}
		})
	}
	waitFor(t, "checks in flight", func() bool { return checks.Load() >= 4*producers })
	cancel()
	select {
	case err := <-runDone:
		if err != nil {
			t.Errorf("Run = %v", err)
		}
	case <-time.After(10 * time.Second):
		dumpGoroutines(t)
		t.Fatal("Run did not return after cancel")
	}
	close(stopped) // the publish loop is gone; producers keep going
	finished := make(chan struct{})
	go func() { wg.Wait(); close(finished) }()
	select {
	case <-finished:
	case <-time.After(10 * time.Second):
		dumpGoroutines(t)
		t.Fatal("a producer is stuck handing a value to the exited publish loop")
	}
	t.Logf("SHUTDOWN producers=%d checks=%d all returned", producers, checks.Load())
}

func dumpGoroutines(t *testing.T) {
	var b strings.Builder
	pprof.Lookup("goroutine").WriteTo(&b, 1)
	t.Log(b.String())
}

// TestDryRunRespectsTheBudget: a dry run is refused once the day's budget is
// spent, like every other forced check; it still asks the LLM before that.
func TestDryRunRespectsTheBudget(t *testing.T) {
	h := newHarness(t, func(c *Config) { c.MaxLLMCallsPerDay = 1 })
	h.sample()
	if res, err := h.e.Check(context.Background(), CheckOptions{}); err != nil || res.Run.Outcome != OutcomeOK {
		t.Fatalf("first check = %+v, %v", res.Run, err)
	}
	res, err := h.e.Check(context.Background(), CheckOptions{DryRun: true})
	if err != nil || res.Run.Outcome != OutcomeSkipped || res.Run.Reason != ReasonBudget {
		t.Fatalf("dry run after the budget = %s (%s), %v; want skipped (budget)", res.Run.Outcome, res.Run.Reason, err)
	}
	if n := h.thinker.count(); n != 1 {
		t.Fatalf("LLM calls = %d, want 1", n)
	}
}
