package heartbeat

import (
	"context"
	"fmt"
	"path/filepath"
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

// The scripted week (device.SimWeek) on the fake clock: the sim board's air
// sensor on sim.script = "week" (nights 15 °C, afternoons 30 °C, a little
// noise, and on day SimEventDay 28 °C at 3 a.m.) plus the board's health,
// fed through the real sample loop, rules and heartbeat gate, 30 s samples
// and 30 m heartbeats as config.toml's defaults.

// weekStart is midnight of day 0 in the device's zone (June: no DST change
// within the week).
func weekStart(t testing.TB) (time.Time, *time.Location) {
	t.Helper()
	loc, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		t.Fatal(err)
	}
	return time.Date(2026, 6, 1, 0, 0, 0, 0, loc), loc
}

// weekBoard is the sim board on the scripted week: air (a BME280's
// temperature and humidity) and the board's own health.
func weekBoard(t testing.TB, start time.Time, loc *time.Location, now func() time.Time) []device.Named {
	t.Helper()
	air, err := device.NewSim("air", "bme280", start, now)
	if err != nil {
		t.Fatal(err)
	}
	air.Script, air.Location = device.SimWeek, loc
	return []device.Named{{Name: "air", Sensor: air}, {Name: "board", Sensor: device.NewSimHealth(start, now)}}
}

// The injected event on day SimEventDay: it leaves the night's value at
// 02:30 local (from), holds SimEventTemp from 02:45 to 03:30 (hold, held)
// and is back at 03:45 (to).
type weekEventTimes struct{ from, hold, held, to time.Time }

func weekEvent(start time.Time) weekEventTimes {
	day := start.AddDate(0, 0, device.SimEventDay)
	return weekEventTimes{day.Add(2*time.Hour + 30*time.Minute), day.Add(2*time.Hour + 45*time.Minute),
		day.Add(3*time.Hour + 30*time.Minute), day.Add(3*time.Hour + 45*time.Minute)}
}

// catches reports whether a firing is the event caught: it began within
// the event and was firing while the event held.
func (ev weekEventTimes) catches(f firing) bool {
	return !f.from.Before(ev.from) && f.from.Before(ev.held) && (f.to.IsZero() || f.to.After(ev.hold))
}

// firing is one stretch of a rule firing.
type firing struct{ from, to time.Time }

// weekThinker counts LLM calls and keeps what each was asked.
type weekThinker struct {
	calls []agent.Input
}

func (w *weekThinker) Think(ctx context.Context, in agent.Input) (agent.Decision, error) {
	w.calls = append(w.calls, in)
	return agent.Decision{Outcome: agent.OutcomeOK, Calls: 1, Tokens: 100}, nil
}

// weekEngine is one engine on the week, with its own state file.
type weekEngine struct {
	name     string
	e        *Engine
	th       *weekThinker // nil: rules-only
	episodes map[string][]firing
	runs     []store.Run
}

func newWeekEngine(t *testing.T, name string, cfg Config, clock clockwork.Clock, sensors []device.Named, llm bool) *weekEngine {
	t.Helper()
	db, err := store.Open(filepath.Join(t.TempDir(), "vigil.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	w := &weekEngine{name: name, episodes: map[string][]firing{}}
	deps := Deps{Clock: clock, DB: db, Sensors: sensors}
	if llm {
		w.th = &weekThinker{}
		deps.Thinker = w.th
	}
	if w.e, err = New(cfg, deps); err != nil {
		t.Fatal(err)
	}
	return w
}

// watch notes which rules fire after a sample.
func (w *weekEngine) watch(now time.Time) {
	w.e.mu.Lock()
	defer w.e.mu.Unlock()
	for name, rr := range w.e.rules {
		eps := w.episodes[name]
		open := len(eps) > 0 && eps[len(eps)-1].to.IsZero()
		switch {
		case rr.state.Firing && !open:
			w.episodes[name] = append(eps, firing{from: now})
		case !rr.state.Firing && open:
			eps[len(eps)-1].to = now
		}
	}
}

// runWeek drives the engines through days of the week: a sample every
// 30 s, a heartbeat every 30 m on the engines that have an LLM.
func runWeek(t *testing.T, clock *clockwork.FakeClock, days int, engines ...*weekEngine) {
	t.Helper()
	ctx := context.Background()
	for step := 1; step <= days*24*120; step++ {
		clock.Advance(30 * time.Second)
		now := clock.Now()
		for _, w := range engines {
			if err := w.e.SampleOnce(ctx); err != nil {
				t.Fatal(err)
			}
			w.watch(now)
			if w.th != nil && step%60 == 0 {
				res, err := w.e.tick(ctx, false, CheckOptions{})
				if err != nil {
					t.Fatal(err)
				}
				res.Run.Start = now
				w.runs = append(w.runs, res.Run)
			}
		}
	}
}

// thresholdRule is one rule of the fixed-threshold sweep.
type thresholdRule struct {
	name, when string
	caught     bool     // a firing began within the event
	cried      []firing // episodes that began outside it
}

func (r thresholdRule) errors() int {
	n := len(r.cried)
	if !r.caught {
		n++
	}
	return n
}

func (r thresholdRule) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: ", r.when)
	if r.caught {
		b.WriteString("caught the event")
	} else {
		b.WriteString("missed the event")
	}
	days := map[string]bool{}
	for _, c := range r.cried {
		days[c.from.Format("2006-01-02")] = true
	}
	fmt.Fprintf(&b, ", %d false alarms on %d of 7 days", len(r.cried), len(days))
	if len(r.cried) > 0 {
		var at []string
		for i, c := range r.cried {
			if i == 4 {
				at = append(at, "…")
				break
			}
			at = append(at, c.from.Format("Mon 15:04"))
		}
		fmt.Fprintf(&b, " (%s)", strings.Join(at, ", "))
	}
	return b.String()
}

// sweep returns the fixed-threshold rules: air.temperature above and below
// every half degree from 10 to 35 °C.
func sweep(t *testing.T) ([]thresholdRule, []Rule) {
	t.Helper()
	var trs []thresholdRule
	var rules []Rule
	for i := 0; i <= 50; i++ {
		T := 10 + 0.5*float64(i)
		for _, op := range []struct{ sym, word string }{{">", "above"}, {"<", "below"}} {
			// Hysteresis of 1 °C, as a careful rule would have: the
			// noise does not make it flap.
			clear := fmt.Sprintf("air.temperature < %.1f", T-1)
			if op.sym == "<" {
				clear = fmt.Sprintf("air.temperature > %.1f", T+1)
			}
			tr := thresholdRule{name: fmt.Sprintf("%s_%03d", op.word, int(T*10)), when: fmt.Sprintf("air.temperature %s %.1f", op.sym, T)}
			trs = append(trs, tr)
			rules = append(rules, Rule{Spec: rule.Spec{Name: tr.name, When: mustCompile(t, tr.when), Clear: mustCompile(t, clear)},
				Severity: alert.Warning, Message: "x"})
		}
	}
	return trs, rules
}

// judge fills in what each rule caught and cried about.
func judge(trs []thresholdRule, episodes map[string][]firing, ev weekEventTimes) []thresholdRule {
	for i := range trs {
		for _, ep := range episodes[trs[i].name] {
			if ev.catches(ep) {
				trs[i].caught = true
			} else {
				trs[i].cried = append(trs[i].cried, ep)
			}
		}
	}
	return trs
}

// TestSimWeekThresholds: on the scripted week no fixed threshold on the air
// temperature can both catch the injected event and stay silent the rest
// of the week. The best ones are logged (WEEK lines) for the closing note.
func TestSimWeekThresholds(t *testing.T) {
	start, loc := weekStart(t)
	clock := clockwork.NewFakeClockAt(start)
	cfg := defaultConfig()
	cfg.Location = loc
	trs, rules := sweep(t)
	cfg.Rules = rules
	w := newWeekEngine(t, "rules", cfg, clock, weekBoard(t, start, loc, clock.Now), false)
	runWeek(t, clock, 7, w)

	trs = judge(trs, w.episodes, weekEvent(start))
	// The best that catches the event (fewest false alarms) and the
	// highest that stays silent (it misses the event).
	var bestCatch, bestSilent thresholdRule
	for _, r := range trs {
		if r.caught && len(r.cried) == 0 {
			t.Errorf("the fixed threshold %s: want no threshold to both catch the event and stay silent", r)
		}
		if r.caught && (bestCatch.name == "" || len(r.cried) < len(bestCatch.cried) ||
			len(r.cried) == len(bestCatch.cried) && r.name > bestCatch.name) { // of equals, the nearest the event
			bestCatch = r
		}
		if !r.caught && len(r.cried) == 0 && strings.HasPrefix(r.name, "above") && (bestSilent.name == "" || r.name < bestSilent.name) {
			bestSilent = r
		}
	}
	if bestCatch.name == "" || bestSilent.name == "" {
		t.Fatalf("no threshold caught the event (%v) or none stayed silent (%v): the week is not what it should be", bestCatch, bestSilent)
	}
	t.Logf("WEEK best_catching=%q", bestCatch)
	t.Logf("WEEK best_silent=%q", bestSilent)
}
