package heartbeat

import (
	"context"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"

	"github.com/vigil-iot/vigil/agent"
	"github.com/vigil-iot/vigil/alert"
	"github.com/vigil-iot/vigil/device"
	"github.com/vigil-iot/vigil/rule"
	"github.com/vigil-iot/vigil/store"
)

// greenhouse is a sensor whose temperature follows the day: 15 °C at
// 02:00, 30 °C at 14:00, with a little deterministic noise, and 28 °C
// during the event window.
type greenhouse struct {
	now          func() time.Time
	loc          *time.Location
	event, until time.Time
}

func (g *greenhouse) temp(at time.Time) float64 {
	if !at.Before(g.event) && at.Before(g.until) {
		return 28
	}
	lt := at.In(g.loc)
	h := float64(lt.Hour()) + float64(lt.Minute())/60
	return 22.5 - 7.5*math.Cos(2*math.Pi*(h-2)/24) + 0.15*math.Sin(float64(at.Unix()/60)*1.7)
}

func (g *greenhouse) Sense(context.Context) ([]device.Reading, error) {
	return []device.Reading{{Quantity: "temperature", Value: g.temp(g.now()), Unit: device.Celsius}}, nil
}

// usualRig is an engine on a greenhouse, sampled every minute and ticked
// every 30 minutes on a fake clock.
type usualRig struct {
	t     *testing.T
	clock *clockwork.FakeClock
	db    *store.DB
	e     *Engine
	th    *fakeThinker
	runs  []store.Run
}

var usualStart = time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)

func newUsualRig(t *testing.T, cfg Config, g *greenhouse, path string) *usualRig {
	t.Helper()
	clock := clockwork.NewFakeClockAt(usualStart)
	g.now, g.loc = clock.Now, time.UTC
	if path == "" {
		path = filepath.Join(t.TempDir(), "vigil.db")
	}
	db, err := store.Open(path, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	r := &usualRig{t: t, clock: clock, db: db, th: &fakeThinker{dec: agent.Decision{Outcome: agent.OutcomeOK}}}
	var thinker Thinker = r.th
	if cfg.Rules != nil {
		thinker = nil
	}
	r.e, err = New(cfg, Deps{Clock: clock, DB: db, Thinker: thinker, Sensors: []device.Named{{Name: "air", Sensor: g}}})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// run samples every minute for d, ticking every 30 minutes.
func (r *usualRig) run(d time.Duration) {
	r.t.Helper()
	ctx := context.Background()
	for end := r.clock.Now().Add(d); r.clock.Now().Before(end); {
		r.clock.Advance(time.Minute)
		if err := r.e.SampleOnce(ctx); err != nil {
			r.t.Fatal(err)
		}
		if r.clock.Now().Minute()%30 == 0 {
			res, err := r.e.tick(ctx, false, CheckOptions{})
			if err != nil {
				r.t.Fatal(err)
			}
			r.runs = append(r.runs, res.Run)
		}
	}
}

func gateConfig(gate string) Config {
	cfg := defaultConfig()
	cfg.Gate, cfg.Unusual = gate, 3
	cfg.MaxQuiet = 12 * time.Hour
	cfg.Deadbands = map[string]float64{"air.temperature": 0.5}
	cfg.Resolutions = map[string]float64{"air.temperature": 0.01}
	return cfg
}

// TestUnusualGate: over a day after three days of warm-up, the deadband
// gate asks the LLM about the daily cycle again and again; the unusual
// gate asks only about 28 °C at 03:00 (where nights are 15 °C) and once
// for max_quiet, records the reading that was unusual, and skips the rest
// as unchanged.
func TestUnusualGate(t *testing.T) {
	day4 := usualStart.Add(3 * 24 * time.Hour)
	calls := map[string]int{}
	for _, gate := range []string{GateDeadband, GateUnusual} {
		g := &greenhouse{event: day4.Add(3 * time.Hour), until: day4.Add(3*time.Hour + 40*time.Minute)}
		r := newUsualRig(t, gateConfig(gate), g, "")
		r.run(3 * 24 * time.Hour)
		before, runs := r.th.count(), len(r.runs)
		r.run(24 * time.Hour)
		calls[gate] = r.th.count() - before
		if gate != GateUnusual {
			continue
		}
		var eventRuns, unusualSkips []store.Run
		reasons := map[string]int{}
		for _, run := range r.runs[runs:] {
			reasons[run.Outcome+"/"+run.Reason]++
			if run.Reason == ReasonUnusual {
				eventRuns = append(eventRuns, run)
			}
			if run.Outcome == OutcomeSkipped && len(run.Unusual) > 0 {
				unusualSkips = append(unusualSkips, run)
			}
		}
		t.Logf("unusual gate, day 4: %v", reasons)
		if len(eventRuns) != 1 || !eventRuns[0].Start.Equal(g.event) {
			t.Fatalf("runs for an unusual reading = %+v, want one at %s", eventRuns, g.event)
		}
		if u := eventRuns[0].Unusual; len(u) != 1 || !strings.HasPrefix(u[0], "air.temperature=28 °C usual 15.") {
			t.Errorf("the event's run records unusual %q, want air.temperature=28 °C usual 15.x", u)
		}
		// The next tick still sees 28 °C: unusual, but no news.
		if len(unusualSkips) != 1 || unusualSkips[0].Reason != ReasonUnchanged {
			t.Errorf("skipped runs that saw an unusual reading = %+v, want one, unchanged", unusualSkips)
		}
		if reasons[OutcomeSkipped+"/"+ReasonChanged] != 0 || reasons[OutcomeOK+"/"+ReasonChanged] != 0 {
			t.Errorf("the unusual gate let a deadband change through: %v", reasons)
		}
		if in := r.th.last; in.Usual["air.temperature"].Value == 0 {
			t.Errorf("the prompt's input carries no usual value for air.temperature: %+v", in.Usual)
		}
	}
	t.Logf("LLM calls on day 4: deadband %d, unusual %d", calls[GateDeadband], calls[GateUnusual])
	if calls[GateUnusual] > 4 || calls[GateUnusual] < 1 {
		t.Errorf("unusual gate made %d LLM calls on day 4, want 1 to 4", calls[GateUnusual])
	}
	if calls[GateDeadband] < 4*calls[GateUnusual] {
		t.Errorf("deadband gate made %d LLM calls on day 4, want many more than the unusual gate's %d", calls[GateDeadband], calls[GateUnusual])
	}
}

// TestUnusualRule: unusual(air.temperature) > 4 is unknown while warming
// up, then fires on 28 °C at 03:00 and on nothing else.
func TestUnusualRule(t *testing.T) {
	cfg := gateConfig(GateDeadband)
	cfg.Rules = []Rule{{Spec: rule.Spec{Name: "odd", When: rule.MustCompile("unusual(air.temperature) > 4")}, Severity: alert.Warning}}
	day4 := usualStart.Add(3 * 24 * time.Hour)
	g := &greenhouse{event: day4.Add(3 * time.Hour), until: day4.Add(3*time.Hour + 40*time.Minute)}
	r := newUsualRig(t, cfg, g, "")
	r.run(time.Hour)
	st, err := r.e.Status(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if b := st.Baselines["air.temperature"]; b.Ready || !b.ReadyAt.Equal(usualStart.Add(24*time.Hour-10*time.Minute)) {
		t.Errorf("status after an hour: band %+v, want warming up, ready at %s", b, usualStart.Add(24*time.Hour-10*time.Minute))
	}
	if st.Rules[0].State != RuleUnknown {
		t.Errorf("rule while warming up = %s, want unknown", st.Rules[0].State)
	}
	r.run(4 * 24 * time.Hour)
	var fired []time.Time
	for _, en := range outboxOf(t, r.db) {
		if en.Alert.State == alert.StateFiring {
			fired = append(fired, en.Alert.Time)
		}
	}
	if len(fired) != 1 || fired[0].Before(g.event) || !fired[0].Before(g.until) {
		t.Errorf("odd fired at %v, want once, between %s and %s", fired, g.event, g.until)
	}
}

func outboxOf(t *testing.T, db *store.DB) []store.Entry {
	t.Helper()
	var out []store.Entry
	if err := db.View(func(tx *store.Tx) error {
		var err error
		out, err = tx.Pending("x", 0)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestBaselinesSurviveRestart: the baselines are written with each
// heartbeat's commit, never by a sample: an engine started on the same
// state file after a stop (or a power cut) mid-day has them as of the last
// heartbeat, so at most one interval of learning is lost.
func TestBaselinesSurviveRestart(t *testing.T) {
	path := filepath.Join(t.TempDir(), "vigil.db")
	g := &greenhouse{}
	r := newUsualRig(t, gateConfig(GateUnusual), g, path)
	r.run(2*24*time.Hour + 13*time.Hour) // the last tick at 13:00 on day 3
	atTick, err := r.e.Baseline().MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	commits := r.db.Commits()
	r.clock.Advance(-time.Minute) // run() ticks on the half hour: sample 29 more minutes without one
	for range 29 {
		r.clock.Advance(time.Minute)
		if err := r.e.SampleOnce(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	if c := r.db.Commits(); c != commits {
		t.Errorf("29 samples made %d commits, want none", c-commits)
	}
	live, _ := r.e.Baseline().MarshalBinary()
	if string(live) == string(atTick) {
		t.Fatal("29 samples changed no baseline: the test shows nothing")
	}
	r.db.Close() // the process is gone; nothing was flushed

	r2 := newUsualRig(t, gateConfig(GateUnusual), &greenhouse{}, path)
	got, _ := r2.e.Baseline().MarshalBinary()
	if string(got) != string(atTick) {
		t.Errorf("baselines after a restart (%d B) differ from those of the last heartbeat (%d B)", len(got), len(atTick))
	}
	b, ok := r2.e.Baseline().Band("air.temperature", usualStart.Add(3*24*time.Hour+3*time.Hour))
	if !ok || !b.Hourly || math.Abs(b.Usual-15.5) > 1 {
		t.Errorf("03:00 band after a restart = %+v, %v, want hourly about 15.5", b, ok)
	}
	if n := len(got) / len(r2.e.Baseline().Keys()); n > 2048 {
		t.Errorf("baselines take %d B a quantity in the state file, want <= 2048", n)
	}
}

// TestResetBaseline forgets a sensor's baselines and writes that at once.
func TestResetBaseline(t *testing.T) {
	path := filepath.Join(t.TempDir(), "vigil.db")
	r := newUsualRig(t, gateConfig(GateUnusual), &greenhouse{}, path)
	r.run(time.Hour)
	gone, err := r.e.ResetBaseline(context.Background(), "air")
	if err != nil || !slices.Equal(gone, []string{"air.temperature"}) {
		t.Fatalf("ResetBaseline(air) = %v, %v, want [air.temperature]", gone, err)
	}
	if blob, _ := r.db.Baselines(); len(blob) > 2 {
		t.Errorf("state file still holds %d B of baselines after the reset", len(blob))
	}
}

// TestLostNamesBaselines: state_lost says the baselines were lost with a
// file replaced at start, and kept from memory while running.
func TestLostNamesBaselines(t *testing.T) {
	if s := lostSummary(store.Lost{AtOpen: true}); !strings.Contains(s, "what is usual for each reading at each hour (the baselines") {
		t.Errorf("state_lost at open does not name the baselines: %s", s)
	}
	if s := lostSummary(store.Lost{}); !strings.Contains(s, "what is usual at each hour (the baselines) and acknowledgements were kept from memory") {
		t.Errorf("state_lost while running does not say the baselines were kept: %s", s)
	}
}

// TestTimezoneChangeResetsBaselines: the bins are hours of the device's
// day, so a reload into another zone learns them again.
func TestTimezoneChangeResetsBaselines(t *testing.T) {
	r := newUsualRig(t, gateConfig(GateUnusual), &greenhouse{}, "")
	r.run(time.Hour)
	cfg := gateConfig(GateUnusual)
	r.e.Reconfigure(cfg, r.e.deps.Sensors, r.e.deps.Thinker)
	if len(r.e.Baseline().Keys()) == 0 {
		t.Fatal("a reload in the same zone forgot the baselines")
	}
	cfg.Location = time.FixedZone("UTC+5", 5*3600)
	r.e.Reconfigure(cfg, r.e.deps.Sensors, r.e.deps.Thinker)
	if got := r.e.Baseline().Keys(); len(got) != 0 {
		t.Errorf("baselines after a change of zone = %v, want none", got)
	}
}
