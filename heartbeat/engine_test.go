package heartbeat

import (
	"context"
	"errors"
	"io/fs"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"

	"github.com/vigil-iot/vigil/agent"
	"github.com/vigil-iot/vigil/alert"
	"github.com/vigil-iot/vigil/device"
	"github.com/vigil-iot/vigil/rule"
	"github.com/vigil-iot/vigil/store"
)

var t0 = time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)

// fakeSensor returns whatever temperature the test sets.
type fakeSensor struct {
	mu   sync.Mutex
	temp float64
	err  error
}

func (f *fakeSensor) set(v float64)  { f.mu.Lock(); f.temp = v; f.mu.Unlock() }
func (f *fakeSensor) fail(err error) { f.mu.Lock(); f.err = err; f.mu.Unlock() }

func (f *fakeSensor) Sense(ctx context.Context) ([]device.Reading, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.err != nil {
		return nil, f.err
	}
	return []device.Reading{{Quantity: "temperature", Value: f.temp, Unit: device.Celsius}}, nil
}

// fakeThinker answers with a scripted decision and counts calls.
type fakeThinker struct {
	mu    sync.Mutex
	calls int
	dec   agent.Decision
	err   error
	last  agent.Input
}

func (f *fakeThinker) Think(ctx context.Context, in agent.Input) (agent.Decision, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls++
	f.last = in
	d := f.dec
	d.Calls, d.Tokens = 1, 100
	return d, f.err
}

func (f *fakeThinker) count() int { f.mu.Lock(); defer f.mu.Unlock(); return f.calls }

// wallClock is a wall clock that can jump independently of the monotonic clock.
type wallClock struct {
	mu     sync.Mutex
	clock  clockwork.Clock
	offset time.Duration
}

func (w *wallClock) Now() time.Time {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.clock.Now().Add(w.offset)
}

func (w *wallClock) jump(d time.Duration) { w.mu.Lock(); w.offset += d; w.mu.Unlock() }

// useAgent replaces the harness's fake thinker with the real agent on
// provider at baseURL (test key, model "m", millisecond retries) and
// restarts the engine with it.
func (h *harness) useAgent(provider, baseURL string, timeout time.Duration) {
	h.t.Helper()
	a, err := agent.New(agent.Config{Provider: provider, BaseURL: baseURL, Model: "m", APIKey: "sk-test",
		Timeout: timeout, RetryBase: time.Millisecond, RetryMax: 5 * time.Millisecond},
		nil, clockwork.NewRealClock(), nil)
	if err != nil {
		h.t.Fatal(err)
	}
	h.thinker = nil
	h.restart()
	h.e.deps.Thinker = a
}

type harness struct {
	t       *testing.T
	clock   *clockwork.FakeClock
	wall    *wallClock
	db      *store.DB
	path    string
	sensor  *fakeSensor
	thinker *fakeThinker
	cfg     Config
	e       *Engine
	notes   *recorder
}

func mustCompile(t *testing.T, src string) *rule.Expr {
	t.Helper()
	e, err := rule.Compile(src)
	if err != nil {
		t.Fatalf("Compile(%q): %v", src, err)
	}
	return e
}

func newHarness(t *testing.T, mod func(*Config)) *harness {
	t.Helper()
	h := &harness{t: t, clock: clockwork.NewFakeClockAt(t0), sensor: &fakeSensor{temp: 20}, thinker: &fakeThinker{dec: agent.Decision{Outcome: agent.OutcomeOK}}}
	h.wall = &wallClock{clock: h.clock}
	h.path = filepath.Join(t.TempDir(), "vigil.db")
	h.cfg = Config{
		DeviceID:          "test-dev",
		Interval:          30 * time.Minute,
		SampleInterval:    2 * time.Second,
		MaxQuiet:          6 * time.Hour,
		AlertCooldown:     6 * time.Hour,
		FailureAlertAfter: 3,
		MaxLLMCallsPerDay: 96,
		BuildTime:         time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC),
		Checklist:         func() (string, bool, error) { return "- check the air", false, nil },
		Rules: []Rule{{
			Spec:     rule.Spec{Name: "too_hot", When: mustCompile(t, "air.temperature > 35"), Clear: mustCompile(t, "air.temperature < 33")},
			Severity: alert.Critical,
			Message:  "air at {air.temperature}",
		}},
	}
	if mod != nil {
		mod(&h.cfg)
	}
	h.notes = &recorder{}
	h.open()
	return h
}

func (h *harness) open() {
	h.t.Helper()
	h.openWith(store.Options{Timeout: time.Second})
}

// openWith opens the state file with o and starts a new engine on it.
func (h *harness) openWith(o store.Options) {
	h.t.Helper()
	db, err := store.Open(h.path, o)
	if err != nil {
		h.t.Fatalf("store.Open: %v", err)
	}
	h.db = db
	h.t.Cleanup(func() { db.Close() })
	var th Thinker
	if h.thinker != nil {
		th = h.thinker
	}
	e, err := New(h.cfg, Deps{Clock: h.clock, Wall: h.wall.Now, DB: db, Thinker: th,
		Sensors:   []device.Named{{Name: "air", Sensor: h.sensor}},
		Notifiers: []Notifier{h.notes}})
	if err != nil {
		h.t.Fatalf("New: %v", err)
	}
	h.e = e
}

// restart simulates a process restart on the same state file.
func (h *harness) restart() {
	h.t.Helper()
	h.db.Close()
	h.open()
}

func (h *harness) sample() {
	h.t.Helper()
	if err := h.e.SampleOnce(context.Background()); err != nil {
		h.t.Fatalf("SampleOnce: %v", err)
	}
}

func (h *harness) tick() Result {
	h.t.Helper()
	res, err := h.e.tick(context.Background(), false, CheckOptions{})
	if err != nil {
		h.t.Fatalf("tick: %v", err)
	}
	return res
}

func (h *harness) outbox() []store.Entry {
	h.t.Helper()
	var out []store.Entry
	if err := h.db.View(func(tx *store.Tx) error {
		var err error
		out, err = tx.Pending(h.notes.Name(), 1000)
		return err
	}); err != nil {
		h.t.Fatal(err)
	}
	return out
}

// recorder is a Notifier that records what it acknowledged and can fail.
type recorder struct {
	mu   sync.Mutex
	got  []alert.Alert
	fail error
}

func (r *recorder) Name() string { return "rec" }
func (r *recorder) Notify(ctx context.Context, a alert.Alert) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.fail != nil {
		return r.fail
	}
	r.got = append(r.got, a)
	return nil
}
func (r *recorder) alerts() []alert.Alert {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]alert.Alert(nil), r.got...)
}

func TestRuleFiresWithinOneSampleWithoutNetwork(t *testing.T) {
	h := newHarness(t, func(c *Config) {})
	h.thinker = nil // no LLM at all
	h.restart()
	h.sample()
	if n := len(h.outbox()); n != 0 {
		t.Fatalf("outbox after a cool sample = %d entries, want 0", n)
	}
	h.sensor.set(36)
	h.clock.Advance(h.cfg.SampleInterval)
	h.sample()
	ob := h.outbox()
	if len(ob) != 1 {
		t.Fatalf("outbox after a hot sample = %d entries, want 1", len(ob))
	}
	a := ob[0].Alert
	if a.Rule != "too_hot" || a.State != alert.StateFiring || a.Severity != alert.Critical || a.Source != alert.SourceRule {
		t.Errorf("alert = %+v, want too_hot firing critical from a rule", a)
	}
	if a.Summary != "air at 36 °C" {
		t.Errorf("summary = %q, want %q", a.Summary, "air at 36 °C")
	}
	// Hysteresis: 34 is between clear (33) and when (35): still firing, nothing new.
	h.sensor.set(34)
	h.sample()
	if n := len(h.outbox()); n != 1 {
		t.Fatalf("outbox in the hysteresis band = %d, want 1", n)
	}
	h.sensor.set(30)
	h.sample()
	ob = h.outbox()
	if len(ob) != 2 || ob[1].Alert.State != alert.StateResolved {
		t.Fatalf("outbox after cooling = %+v, want a resolved second entry", ob)
	}
}

func TestNoFlashWritesWhileNothingChanges(t *testing.T) {
	h := newHarness(t, nil)
	h.sample()
	before := h.db.Commits()
	for i := 0; i < 500; i++ {
		h.clock.Advance(h.cfg.SampleInterval)
		h.sensor.set(20 + float64(i%3)*0.1)
		h.sample()
	}
	if got := h.db.Commits() - before; got != 0 {
		t.Errorf("commits during 500 quiet samples = %d, want 0", got)
	}
	// A rule change is written at once, in one commit.
	h.sensor.set(40)
	h.sample()
	if got := h.db.Commits() - before; got != 1 {
		t.Errorf("commits after a rule fired = %d, want 1", got)
	}
}

func TestForDurationMustHold(t *testing.T) {
	h := newHarness(t, func(c *Config) { c.Rules[0].Spec.For = 10 * time.Second })
	h.sensor.set(40)
	h.sample()
	for i := 0; i < 4; i++ {
		h.clock.Advance(2 * time.Second)
		h.sample()
	}
	if n := len(h.outbox()); n != 0 {
		t.Fatalf("fired after 8s of a 10s 'for': outbox = %d", n)
	}
	h.clock.Advance(2 * time.Second)
	h.sample()
	if n := len(h.outbox()); n != 1 {
		t.Fatalf("outbox after 10s = %d, want 1", n)
	}
}

func TestRuleStateSurvivesRestart(t *testing.T) {
	h := newHarness(t, nil)
	h.sensor.set(40)
	h.sample()
	h.restart()
	h.sample() // still hot: no second firing alert after restart
	if n := len(h.outbox()); n != 1 {
		t.Fatalf("outbox after restart while firing = %d, want 1", n)
	}
	h.sensor.set(20)
	h.sample()
	ob := h.outbox()
	if len(ob) != 2 || ob[1].Alert.State != alert.StateResolved {
		t.Fatalf("want the resolved alert after restart, outbox = %+v", ob)
	}
}

func TestGateSkipsUnchangedAndCallsOnChange(t *testing.T) {
	h := newHarness(t, nil)
	h.sample()
	if r := h.tick(); r.Run.Outcome != OutcomeOK || r.Run.Reason != ReasonFirst {
		t.Fatalf("first tick = %s/%s, want ok/first_run", r.Run.Outcome, r.Run.Reason)
	}
	h.clock.Advance(30 * time.Minute)
	h.sensor.set(20.2) // within the 0.5 °C default deadband
	h.sample()
	if r := h.tick(); r.Run.Outcome != OutcomeSkipped || r.Run.Reason != ReasonUnchanged {
		t.Fatalf("quiet tick = %s/%s, want skipped/unchanged", r.Run.Outcome, r.Run.Reason)
	}
	h.sensor.set(22)
	h.sample()
	if r := h.tick(); r.Run.Reason != ReasonChanged {
		t.Fatalf("tick after a 2 °C move = %s/%s, want reason changed", r.Run.Outcome, r.Run.Reason)
	}
	if got := h.thinker.count(); got != 2 {
		t.Errorf("LLM calls = %d, want 2", got)
	}
	// max_quiet: after 6h of nothing, one call.
	for i := 0; i < 11; i++ {
		h.clock.Advance(30 * time.Minute)
		h.sample()
		if r := h.tick(); r.Run.Reason != ReasonUnchanged {
			t.Fatalf("tick %d = %s/%s, want unchanged", i, r.Run.Outcome, r.Run.Reason)
		}
	}
	h.clock.Advance(30 * time.Minute)
	h.sample()
	if r := h.tick(); r.Run.Reason != ReasonMaxQuiet {
		t.Fatalf("tick after 6h quiet = %s/%s, want max_quiet", r.Run.Outcome, r.Run.Reason)
	}
}

// TestEmptyChecklistCostsNothing: an empty checklist never calls the LLM,
// on a scheduled tick or a forced one (vigil check, /check, cmd/check and
// the page's button all run Engine.Check), dry or not; the forced run is
// skipped with the same reason, and spends no budget.
func TestEmptyChecklistCostsNothing(t *testing.T) {
	h := newHarness(t, func(c *Config) { c.Checklist = func() (string, bool, error) { return "", true, nil } })
	h.sample()
	if r := h.tick(); r.Run.Outcome != OutcomeSkipped || r.Run.Reason != ReasonEmptyChecklist {
		t.Fatalf("tick = %s/%s, want skipped/empty_checklist", r.Run.Outcome, r.Run.Reason)
	}
	for _, dry := range []bool{false, true} {
		r, err := h.e.Check(context.Background(), CheckOptions{DryRun: dry})
		if err != nil || r.Run.Outcome != OutcomeSkipped || r.Run.Reason != ReasonEmptyChecklist || r.Decision != nil {
			t.Fatalf("Check(dry run %t) = %s/%s, %+v, %v; want skipped/empty_checklist", dry, r.Run.Outcome, r.Run.Reason, r.Decision, err)
		}
	}
	if h.thinker.count() != 0 {
		t.Fatalf("LLM called %d times with an empty checklist", h.thinker.count())
	}
	if st, _ := h.e.Status(context.Background()); st.BudgetCalls != 0 {
		t.Errorf("budget spent: %d calls", st.BudgetCalls)
	}
	// One that cannot be read fails a forced run, saying why.
	h.e.cfg.Checklist = func() (string, bool, error) { return "", false, fs.ErrPermission }
	r, err := h.e.Check(context.Background(), CheckOptions{})
	if err != nil || r.Run.Outcome != OutcomeFailed || !strings.Contains(r.Run.Error, "read checklist") || h.thinker.count() != 0 {
		t.Errorf("Check with an unreadable checklist = %s %q, %v (%d LLM calls); want failed naming the checklist, no call",
			r.Run.Outcome, r.Run.Error, err, h.thinker.count())
	}
}

func TestOneCommitPerHeartbeat(t *testing.T) {
	h := newHarness(t, nil)
	for i := 0; i < 5; i++ {
		h.clock.Advance(30 * time.Minute)
		before := h.db.Commits()
		for j := 0; j < 100; j++ {
			h.clock.Advance(h.cfg.SampleInterval)
			h.sample()
		}
		h.tick()
		if got := h.db.Commits() - before; got != 1 {
			t.Errorf("heartbeat %d: %d commits, want exactly 1", i, got)
		}
	}
	var hist []device.Snapshot
	h.db.View(func(tx *store.Tx) error { var err error; hist, err = tx.History(time.Time{}); return err })
	if len(hist) == 0 {
		t.Error("no sensor history persisted with the heartbeats")
	}
}

func TestBudget(t *testing.T) {
	h := newHarness(t, func(c *Config) { c.MaxLLMCallsPerDay = 2; c.MaxQuiet = time.Minute })
	var reasons []string
	for i := 0; i < 4; i++ {
		h.clock.Advance(30 * time.Minute)
		h.sample()
		reasons = append(reasons, h.tick().Run.Reason)
	}
	if reasons[2] != ReasonBudget || reasons[3] != ReasonBudget || h.thinker.count() != 2 {
		t.Fatalf("reasons = %v, calls = %d; want the 3rd and 4th skipped for budget after 2 calls", reasons, h.thinker.count())
	}
	h.clock.Advance(24 * time.Hour) // next day
	h.sample()
	if r := h.tick(); r.Run.Reason == ReasonBudget {
		t.Fatal("budget did not reset on a new day")
	}
}

func TestLLMAlertCooldown(t *testing.T) {
	h := newHarness(t, func(c *Config) { c.MaxQuiet = time.Minute })
	h.thinker.dec = agent.Decision{Outcome: agent.OutcomeAlert, Severity: alert.Warning, Summary: "humidity 91 % for 3h"}
	h.sample()
	if r := h.tick(); r.Run.Outcome != OutcomeAlert || len(r.Alerts) != 1 {
		t.Fatalf("first alert run = %+v", r.Run)
	}
	h.thinker.dec.Summary = "humidity 92 % for 4h" // same complaint, other numbers
	h.clock.Advance(30 * time.Minute)
	h.sample()
	if r := h.tick(); r.Run.Reason != ReasonDuplicate || len(r.Alerts) != 0 {
		t.Fatalf("repeat within cooldown = %s/%s with %d alerts, want duplicate with none", r.Run.Outcome, r.Run.Reason, len(r.Alerts))
	}
	h.clock.Advance(7 * time.Hour)
	h.sample()
	if r := h.tick(); len(r.Alerts) != 1 {
		t.Fatalf("after the cooldown: %d alerts, want 1", len(r.Alerts))
	}
}

func TestLLMFailuresBackoffAndAlertOnce(t *testing.T) {
	h := newHarness(t, func(c *Config) { c.MaxQuiet = time.Minute })
	h.thinker.err = errors.Join(agent.ErrUnreachable, errors.New("dial tcp 127.0.0.1:1: connection refused"))
	var reasons []string
	for i := 0; i < 12; i++ {
		h.clock.Advance(30 * time.Minute)
		h.sample()
		r := h.tick()
		reasons = append(reasons, r.Run.Outcome+"/"+r.Run.Reason)
	}
	var unreachable, failed int
	for _, e := range h.outbox() {
		switch e.Alert.Rule {
		case "llm_unreachable":
			unreachable++
		case "heartbeat_failed":
			failed++
		}
	}
	if unreachable != 1 || failed != 1 {
		t.Fatalf("llm_unreachable alerts = %d, heartbeat_failed = %d, want 1 and 1 (runs %v)", unreachable, failed, reasons)
	}
	if calls := h.thinker.count(); calls >= 12 || calls < 3 {
		t.Fatalf("LLM called %d times in 12 ticks while failing: want backoff (runs %v)", calls, reasons)
	}
	// Rules still alert while the LLM is down.
	h.sensor.set(40)
	h.sample()
	found := false
	for _, e := range h.outbox() {
		found = found || e.Alert.Rule == "too_hot"
	}
	if !found {
		t.Fatal("rule alert missing while the LLM is in backoff")
	}
	// Recovery: one resolved notice each.
	h.thinker.err = nil
	for i := 0; i < 10; i++ {
		h.clock.Advance(30 * time.Minute)
		h.sample()
		h.tick()
	}
	var resolved int
	for _, e := range h.outbox() {
		if e.Alert.Source == alert.SourceSystem && e.Alert.State == alert.StateResolved {
			resolved++
		}
	}
	if resolved != 2 {
		t.Fatalf("resolved system notices after recovery = %d, want 2", resolved)
	}
}

func TestFailureCountSurvivesRestart(t *testing.T) {
	h := newHarness(t, func(c *Config) { c.MaxQuiet = time.Minute })
	h.thinker.err = errors.New("bad response")
	h.sample()
	h.tick()
	h.clock.Advance(30 * time.Minute)
	h.sample()
	h.tick()
	h.restart()
	h.clock.Advance(30 * time.Minute)
	for i := 0; i < 6; i++ {
		h.clock.Advance(30 * time.Minute)
		h.sample()
		h.tick()
	}
	n := 0
	for _, e := range h.outbox() {
		if e.Alert.Rule == "heartbeat_failed" {
			n++
		}
	}
	if n != 1 {
		t.Fatalf("heartbeat_failed alerts = %d, want 1 across a restart", n)
	}
}

func TestFailedRunIsRetriedOnUnchangedSnapshot(t *testing.T) {
	h := newHarness(t, nil) // max_quiet 6h: only the failure can justify the next call
	h.sample()
	h.tick()
	h.thinker.err = errors.New("bad gateway")
	h.clock.Advance(30 * time.Minute)
	h.sensor.set(25) // something to think about
	h.sample()
	if r := h.tick(); r.Run.Outcome != OutcomeFailed {
		t.Fatalf("first tick = %s, want failed", r.Run.Outcome)
	}
	h.thinker.err = nil
	h.clock.Advance(30 * time.Minute)
	h.sample()
	if r := h.tick(); r.Run.Outcome != OutcomeOK || r.Run.Reason != ReasonRetry {
		t.Fatalf("tick after a failure = %s/%s, want ok/retry", r.Run.Outcome, r.Run.Reason)
	}
	h.clock.Advance(30 * time.Minute)
	h.sample()
	if r := h.tick(); r.Run.Reason != ReasonUnchanged {
		t.Fatalf("tick after recovery = %s/%s, want skipped/unchanged", r.Run.Outcome, r.Run.Reason)
	}
}

func TestBoardHealthJitterIsNotNews(t *testing.T) {
	h := newHarness(t, nil)
	prev := &device.Snapshot{Readings: map[string]device.Value{
		"board.soc_temperature": {Value: 48.2, Unit: device.Celsius},
		"board.load1":           {Value: 0.12, Unit: device.Count},
		"board.mem_available":   {Value: 310, Unit: device.Megabyte},
		"board.uptime":          {Value: 1000, Unit: device.Second},
		"board.undervoltage":    {Value: 0, Unit: device.Bool},
	}}
	cur := prev.Clone()
	cur.Readings["board.soc_temperature"] = device.Value{Value: 51.0, Unit: device.Celsius}
	cur.Readings["board.load1"] = device.Value{Value: 0.71, Unit: device.Count}
	cur.Readings["board.mem_available"] = device.Value{Value: 290, Unit: device.Megabyte}
	cur.Readings["board.uptime"] = device.Value{Value: 2800, Unit: device.Second}
	if h.e.changed(prev, cur) {
		t.Fatal("ordinary board jitter (SoC +2.8 °C, load +0.6, 20 MB, uptime) counted as a change")
	}
	cur.Readings["board.undervoltage"] = device.Value{Value: 1, Unit: device.Bool}
	if !h.e.changed(prev, cur) {
		t.Fatal("under-voltage appearing did not count as a change")
	}
}

func TestRunIsCappedAtTheRemainingBudget(t *testing.T) {
	h := newHarness(t, func(c *Config) { c.MaxLLMCallsPerDay = 5; c.MaxQuiet = time.Minute })
	h.sample()
	h.tick() // 1 call
	h.clock.Advance(30 * time.Minute)
	h.sample()
	h.tick() // 2 calls
	h.clock.Advance(30 * time.Minute)
	h.sample()
	h.tick()
	if got := h.thinker.last.MaxCalls; got != 3 {
		t.Fatalf("MaxCalls passed to the LLM after 2 of 5 calls = %d, want 3", got)
	}
}
