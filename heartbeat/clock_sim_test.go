package heartbeat

import (
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"

	"github.com/vigil-iot/vigil/agent"
	"github.com/vigil-iot/vigil/device"
	"github.com/vigil-iot/vigil/store"
)

// The clock-fault simulation drives the real heartbeat loop on a fake
// monotonic clock and an independent, misbehaving wall clock: skew, forward
// and backward steps, a boot in 1970 followed by an NTP sync, suspends, DST
// changes, pauses and process restarts, all drawn from a seeded generator. A
// model computes, for every instant the loop could tick, whether it must run
// and what the run must decide; every run is compared with it.
//
//	go test ./heartbeat -run TestClockFaults                      (short: 40 seeds)
//	go test ./heartbeat -run TestClockFaults -clocksim.runs=1000  (make reliability)
//	go test ./heartbeat -run TestClockFaults -clocksim.seed=1234  (replay one seed)
var (
	clockSimRuns  = flag.Int("clocksim.runs", 40, "clock-fault simulations to run (seeds 1..N)")
	clockSimSeed  = flag.Uint64("clocksim.seed", 0, "run only this seed (0: seeds 1..clocksim.runs)")
	clockSimSteps = flag.Int("clocksim.steps", 150, "events per simulation")
)

func TestClockFaults(t *testing.T) {
	seeds := make([]uint64, 0, *clockSimRuns)
	if *clockSimSeed != 0 {
		seeds = append(seeds, *clockSimSeed)
	} else {
		for s := 1; s <= *clockSimRuns; s++ {
			seeds = append(seeds, uint64(s))
		}
	}
	var total simStats
	for _, seed := range seeds {
		st, err := runClockSim(t, seed, *clockSimSteps)
		if err != nil {
			t.Fatalf("seed %d: %v\nreplay: go test ./heartbeat -run 'TestClockFaults$' -clocksim.seed=%d -v", seed, err, seed)
		}
		total.add(st)
	}
	// A machine-readable summary for the reliability report.
	t.Logf("CLOCKSIM seeds=%d steps=%d runs=%d llm_calls=%d paused=%d inactive=%d unsynced=%d wall_jumps=%d suspends=%d restarts=%d pauses=%d dst_crossings=%d",
		len(seeds), total.steps, total.runs, total.thinks, total.paused, total.inactive, total.unsynced,
		total.jumps, total.suspends, total.restarts, total.pauses, total.dst)
	if len(seeds) >= 20 {
		// The generator must actually exercise what it claims to.
		for name, n := range map[string]int{"wall jumps": total.jumps, "suspends": total.suspends, "restarts": total.restarts,
			"pauses": total.pauses, "inactive_hours skips": total.inactive, "clock_unsynced skips": total.unsynced,
			"DST crossings": total.dst, "LLM calls": total.thinks} {
			if n == 0 {
				t.Errorf("%d simulations produced no %s: the generator does not cover it", len(seeds), name)
			}
		}
	}
}

type simStats struct {
	steps, runs, thinks, paused, inactive, unsynced int
	jumps, suspends, restarts, pauses, dst          int
}

func (s *simStats) add(o simStats) {
	s.steps += o.steps
	s.runs += o.runs
	s.thinks += o.thinks
	s.paused += o.paused
	s.inactive += o.inactive
	s.unsynced += o.unsynced
	s.jumps += o.jumps
	s.suspends += o.suspends
	s.restarts += o.restarts
	s.pauses += o.pauses
	s.dst += o.dst
}

// skewWall is a wall clock that runs at its own rate and can be stepped.
type skewWall struct {
	mu     sync.Mutex
	clock  clockwork.Clock
	base   time.Time     // mono time the current rate started
	offset time.Duration // wall - mono at base
	ppm    float64
}

func (w *skewWall) at(mono time.Time) time.Time {
	d := mono.Sub(w.base)
	return mono.Add(w.offset + time.Duration(float64(d)*w.ppm/1e6))
}

func (w *skewWall) Now() time.Time {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.at(w.clock.Now())
}

// set makes the wall clock read wall now (an NTP step).
func (w *skewWall) set(wall time.Time) {
	w.mu.Lock()
	defer w.mu.Unlock()
	now := w.clock.Now()
	w.base, w.offset = now, wall.Sub(now)
}

func (w *skewWall) setRate(ppm float64) {
	w.mu.Lock()
	defer w.mu.Unlock()
	now := w.clock.Now()
	w.offset = w.at(now).Sub(now)
	w.base, w.ppm = now, ppm
}

// simThinker answers ok, or pauses heartbeats (the pause tool) now and then.
type simThinker struct {
	mu     sync.Mutex
	rng    *rand.Rand
	calls  int
	pauses []time.Duration // the pause each call returned (0: none)
}

func (s *simThinker) Think(ctx context.Context, in agent.Input) (agent.Decision, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls++
	d := agent.Decision{Outcome: agent.OutcomeOK, Calls: 1, Tokens: 100}
	var p time.Duration
	if s.rng.IntN(12) == 0 {
		p = time.Duration(1+s.rng.IntN(60)) * time.Minute
		d.Outcome, d.Pause = agent.OutcomePaused, p
	}
	s.pauses = append(s.pauses, p)
	return d, nil
}

// simRun is what the loop did at one tick, captured by the Progress hook.
type simRun struct {
	mono, wall time.Time
	run        store.Run
	thought    bool
	llmPause   time.Duration
}

// zones with and without DST, and a DST change near which a simulation starts.
var simZones = []struct {
	name string
	dst  []time.Time // UTC instants of DST changes in 2026/2027
}{
	{"Europe/Berlin", []time.Time{time.Date(2026, 3, 29, 1, 0, 0, 0, time.UTC), time.Date(2026, 10, 25, 1, 0, 0, 0, time.UTC), time.Date(2027, 3, 28, 1, 0, 0, 0, time.UTC)}},
	{"America/New_York", []time.Time{time.Date(2026, 3, 8, 7, 0, 0, 0, time.UTC), time.Date(2026, 11, 1, 6, 0, 0, 0, time.UTC), time.Date(2027, 3, 14, 7, 0, 0, 0, time.UTC)}},
	{"Australia/Sydney", []time.Time{time.Date(2026, 4, 4, 16, 0, 0, 0, time.UTC), time.Date(2026, 10, 3, 16, 0, 0, 0, time.UTC)}},
	{"Europe/London", []time.Time{time.Date(2026, 3, 29, 1, 0, 0, 0, time.UTC), time.Date(2026, 10, 25, 1, 0, 0, 0, time.UTC)}},
	{"Asia/Kolkata", nil},
	{"UTC", nil},
}

// simWindows are active_hours settings as written in config.toml; "" is none.
// 02:00-03:00 and 01:30-02:30 hit the hour that DST skips or repeats.
var simWindows = []string{"", "", "07:00-22:00", "22:00-06:00", "02:00-03:00", "01:30-02:30", "00:00-23:59", "12:00-12:30"}

func parseSimWindow(s string) *Window {
	if s == "" {
		return nil
	}
	var w Window
	for i, part := range strings.Split(s, "-") {
		tod, err := time.Parse("15:04", part)
		if err != nil {
			panic(err)
		}
		d := time.Duration(tod.Hour())*time.Hour + time.Duration(tod.Minute())*time.Minute
		if i == 0 {
			w.Start = d
		} else {
			w.End = d
		}
	}
	return &w
}

// inSimWindow is the model's own reading of active hours: the local clock
// face as text, compared with the window's bounds.
func inSimWindow(win string, wall time.Time, loc *time.Location) bool {
	if win == "" {
		return true
	}
	start, end, _ := strings.Cut(win, "-")
	face := wall.In(loc).Format("15:04:05")
	if start <= end {
		return face >= start+":00" && face < end+":00"
	}
	return face >= start+":00" || face < end+":00"
}

// simModel is what the engine must do, kept independently of it.
type simModel struct {
	next       time.Time // mono time of the next tick
	pauseEnd   time.Time // mono end of the current pause (zero: none)
	pauseSaved bool      // a pause record is in the state file
}

func runClockSim(t *testing.T, seed uint64, steps int) (simStats, error) {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 0x5eed))
	var st simStats

	zone := simZones[rng.IntN(len(simZones))]
	loc, err := time.LoadLocation(zone.name)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(rng.Int64N(int64(700 * 24 * time.Hour))))
	if len(zone.dst) > 0 && rng.IntN(3) > 0 {
		// Start within two days before a DST change.
		start = zone.dst[rng.IntN(len(zone.dst))].Add(-time.Duration(rng.Int64N(int64(48 * time.Hour))))
	}
	interval := []time.Duration{time.Minute, 5 * time.Minute, 30 * time.Minute, 2 * time.Hour}[rng.IntN(4)]
	winText := simWindows[rng.IntN(len(simWindows))]
	buildTime := time.Date(2025, 12, 1, 0, 0, 0, 0, time.UTC)
	id := fmt.Sprintf("sim-%d", rng.IntN(1000))
	desc := fmt.Sprintf("zone %s, start %s, interval %s, active_hours %q, device %s", zone.name,
		start.In(loc).Format(time.RFC3339), interval, winText, id)

	clock := clockwork.NewFakeClockAt(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)) // mono is not wall
	wall := &skewWall{clock: clock}
	wall.set(start)
	synced := true
	if rng.IntN(3) == 0 {
		// A board without an RTC: it boots in 1970 and NTP sets the clock later.
		wall.set(time.Date(1970, 1, 1, 0, 0, 5, 0, time.UTC))
		synced = false
	}
	if rng.IntN(2) == 0 {
		wall.setRate(float64(rng.IntN(1001) - 500)) // ±500 ppm, a cheap crystal
	}

	cfg := Config{
		DeviceID:       id,
		Interval:       interval,
		SampleInterval: 30 * time.Second,
		Active:         parseSimWindow(winText),
		Location:       loc,
		MaxQuiet:       time.Nanosecond, // every eligible tick asks the LLM
		AlertCooldown:  6 * time.Hour,
		BuildTime:      buildTime,
		Checklist:      func() (string, bool, error) { return "- is the air fine?", false, nil },
	}
	path := filepath.Join(t.TempDir(), "vigil.db")
	sensor := &fakeSensor{temp: 0}
	thinker := &simThinker{rng: rand.New(rand.NewPCG(seed, 0x7417))}

	var (
		mu       sync.Mutex
		captured []simRun
		db       *store.DB
		e        *Engine
		cancel   context.CancelFunc
		done     chan struct{}
	)
	thinks := 0
	open := func() error {
		var err error
		if db, err = store.Open(path, store.Options{Timeout: time.Second}); err != nil {
			return err
		}
		var curDB = db
		e, err = New(cfg, Deps{Clock: clock, Wall: wall.Now, DB: db, Thinker: thinker,
			Sensors: []device.Named{{Name: "air", Sensor: sensor}},
			Progress: func() {
				// Runs only in the heartbeat loop (SampleOnce does not call it).
				var runs []store.Run
				if err := curDB.View(func(tx *store.Tx) error { var err error; runs, err = tx.Runs(1); return err }); err != nil || len(runs) == 0 {
					panic(fmt.Sprintf("read last run: %v", err))
				}
				thinker.mu.Lock()
				r := simRun{mono: clock.Now(), wall: wall.Now(), run: runs[0], thought: thinker.calls > thinks}
				if r.thought {
					r.llmPause = thinker.pauses[len(thinker.pauses)-1]
				}
				thinks = thinker.calls
				thinker.mu.Unlock()
				mu.Lock()
				captured = append(captured, r)
				mu.Unlock()
			}})
		if err != nil {
			db.Close()
			return err
		}
		ctx, c := context.WithCancel(context.Background())
		cancel, done = c, make(chan struct{})
		go func() { e.heartbeatLoop(ctx); close(done) }()
		return nil
	}
	stop := func() {
		cancel()
		<-done
		db.Close()
	}
	if err := open(); err != nil {
		return st, err
	}
	defer func() { stop() }()

	mono0 := clock.Now()
	m := simModel{next: mono0.Add(Phase(id, interval))}
	ctx := context.Background()
	temp := 0.0

	// settle waits until the loop sleeps again and checks every run it made
	// since the last call against the model.
	settle := func(step int, what string) error {
		bctx, bcancel := context.WithTimeout(ctx, 10*time.Second)
		defer bcancel()
		if err := clock.BlockUntilContext(bctx, 1); err != nil {
			return fmt.Errorf("step %d (%s): the heartbeat loop did not go back to sleep: %w", step, what, err)
		}
		mu.Lock()
		got := captured
		captured = nil
		mu.Unlock()
		now := clock.Now()
		want := 0
		if !now.Before(m.next) {
			want = 1
		}
		if len(got) != want {
			return fmt.Errorf("step %d (%s) at mono %s: %d runs, want %d (next tick was due at mono %s): %s",
				step, what, now.Format(time.RFC3339), len(got), want, m.next.Format(time.RFC3339), desc)
		}
		if want == 0 {
			return nil
		}
		for !m.next.After(now) { // on phase, no replay
			m.next = m.next.Add(interval)
		}
		r := got[0]
		st.runs++
		w := wall.at(now).UTC().Round(time.Millisecond) // the engine's resolution
		var wantOutcome, wantReason string
		switch {
		case !m.pauseEnd.IsZero() && now.Before(m.pauseEnd):
			wantOutcome, wantReason = OutcomePaused, ReasonPaused
		case winText != "" && w.Before(buildTime):
			wantOutcome, wantReason = OutcomeSkipped, ReasonClockUnsynced
		case !inSimWindow(winText, w, loc):
			wantOutcome, wantReason = OutcomeSkipped, ReasonInactiveHours
		}
		if m.pauseEnd.IsZero() || !now.Before(m.pauseEnd) {
			// Not paused (expired, or found expired at a restart): this
			// run's commit clears any pause left in the state file.
			m.pauseEnd, m.pauseSaved = time.Time{}, false
		}
		if wantOutcome == "" {
			if !r.thought {
				return fmt.Errorf("step %d (%s): run at wall %s (%s local) = %s/%s without asking the LLM, want an LLM run: %s",
					step, what, w.Format(time.RFC3339), w.In(loc).Format("15:04:05 MST"), r.run.Outcome, r.run.Reason, desc)
			}
			st.thinks++
			if r.llmPause > 0 {
				m.pauseEnd, m.pauseSaved = now.Add(r.llmPause), true
				st.pauses++
			}
			return nil
		}
		if r.thought {
			return fmt.Errorf("step %d (%s): the LLM was asked at wall %s (%s local), want %s/%s: %s",
				step, what, w.Format(time.RFC3339), w.In(loc).Format("15:04:05 MST"), wantOutcome, wantReason, desc)
		}
		if r.run.Outcome != wantOutcome || r.run.Reason != wantReason {
			return fmt.Errorf("step %d (%s): run at wall %s (%s local) = %s/%s, want %s/%s: %s",
				step, what, w.Format(time.RFC3339), w.In(loc).Format("15:04:05 MST"), r.run.Outcome, r.run.Reason,
				wantOutcome, wantReason, desc)
		}
		switch wantReason {
		case ReasonPaused:
			st.paused++
		case ReasonInactiveHours:
			st.inactive++
		case ReasonClockUnsynced:
			st.unsynced++
		}
		return nil
	}

	if err := settle(0, "start"); err != nil {
		return st, err
	}
	for step := 1; step <= steps; step++ {
		st.steps++
		temp++ // every sample differs from the last one the LLM saw
		sensor.set(temp)
		if err := e.SampleOnce(ctx); err != nil {
			return st, fmt.Errorf("step %d: SampleOnce: %w", step, err)
		}
		var what string
		switch r := rng.IntN(100); {
		case !synced && r < 15:
			wall.set(start.Add(clock.Now().Sub(mono0))) // the true time
			synced = true
			what = "NTP sync from 1970"
			st.jumps++
		case r < 8:
			d := time.Duration(rng.Int64N(int64(48*time.Hour))) - 24*time.Hour
			if rng.IntN(2) == 0 {
				d /= 1000 // a small step: up to ±86 s
			}
			wall.set(wall.Now().Add(d))
			what = fmt.Sprintf("wall step %s", d)
			st.jumps++
		case r < 11:
			ppm := float64(rng.IntN(2001) - 1000)
			if rng.IntN(4) == 0 {
				ppm *= 50 // a badly broken clock: ±5 %
			}
			wall.setRate(ppm)
			what = fmt.Sprintf("skew %.0f ppm", ppm)
		case r < 15:
			d := time.Duration(1+rng.IntN(90)) * time.Minute
			if _, err := e.Pause(ctx, d, "test"); err != nil {
				return st, err
			}
			m.pauseEnd, m.pauseSaved = clock.Now().Add(d), true
			what = fmt.Sprintf("pause %s", d)
			st.pauses++
		case r < 16:
			if err := e.Resume(ctx); err != nil {
				return st, err
			}
			m.pauseEnd, m.pauseSaved = time.Time{}, false
			what = "resume"
		case r < 18:
			// Process restart: only the state file survives. The pause is
			// restored from the wall clock, capped at its own duration.
			stop()
			var p store.Pause
			var ok bool
			vdb, err := store.Open(path, store.Options{Timeout: time.Second, ReadOnly: true})
			if err != nil {
				return st, err
			}
			err = vdb.View(func(tx *store.Tx) error { var err error; p, ok, err = tx.Pause(); return err })
			vdb.Close()
			if err != nil {
				return st, err
			}
			if ok != m.pauseSaved {
				return st, fmt.Errorf("step %d: pause in the state file = %v, want %v: %s", step, ok, m.pauseSaved, desc)
			}
			m.pauseEnd = time.Time{}
			if ok {
				if rem := min(p.Until.Sub(wall.Now()), p.Duration); rem > 0 {
					m.pauseEnd = clock.Now().Add(rem)
				}
			}
			if err := open(); err != nil {
				return st, err
			}
			m.next = clock.Now().Add(Phase(id, interval))
			what = "restart"
			st.restarts++
			if err := settle(step, what); err != nil {
				return st, err
			}
			continue
		}
		// Advance the monotonic clock: mostly within an interval, sometimes
		// a few intervals, sometimes a suspend of hours or days.
		var adv time.Duration
		switch r := rng.IntN(100); {
		case r < 10:
			adv = time.Duration(1 + rng.Int64N(int64(2*time.Second)))
		case r < 60:
			adv = time.Duration(1 + rng.Int64N(int64(interval)))
		case r < 95:
			adv = interval + time.Duration(rng.Int64N(int64(3*interval)))
		default:
			adv = time.Duration(rng.Int64N(int64(72 * time.Hour)))
			st.suspends++
			what += " suspend"
		}
		w0 := wall.Now()
		clock.Advance(adv)
		if _, off0 := w0.In(loc).Zone(); true {
			if _, off1 := wall.Now().In(loc).Zone(); off0 != off1 {
				st.dst++
			}
		}
		if err := settle(step, strings.TrimSpace(what+" advance "+adv.String())); err != nil {
			return st, err
		}
	}
	return st, nil
}
