package heartbeat

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"

	"github.com/vigil-iot/vigil/agent"
	"github.com/vigil-iot/vigil/device"
	"github.com/vigil-iot/vigil/schedule"
	"github.com/vigil-iot/vigil/store"
)

// The schedule's clock-fault simulation drives the real heartbeat loop with
// heartbeat.schedule on a fake monotonic clock and a wall clock the test
// steps: a boot in 1970 and an NTP sync, forward and backward steps, both
// DST changes in Europe/Berlin, skips, and reloads between interval and
// schedule. Every run the loop makes is captured and compared with the
// exact list of runs the policy in schedule.go allows.
//
//	go test ./heartbeat -run TestScheduleClockFaults -v

// schedSim is the loop under test and what it did.
type schedSim struct {
	t       *testing.T
	clock   *clockwork.FakeClock
	wall    *skewWall
	loc     *time.Location
	e       *Engine
	cfg     Config
	thinker *fakeThinker
	cancel  context.CancelFunc
	done    chan struct{}

	mu   sync.Mutex
	runs []store.Run // captured by the Progress hook, in order
}

func newSchedSim(t *testing.T, sched []string, loc *time.Location, wallStart time.Time, mod func(*Config)) *schedSim {
	t.Helper()
	clock := clockwork.NewFakeClockAt(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)) // mono is not wall
	s := &schedSim{t: t, clock: clock, wall: &skewWall{clock: clock}, loc: loc,
		thinker: &fakeThinker{dec: agent.Decision{Outcome: agent.OutcomeOK}}}
	s.wall.set(wallStart)
	s.cfg = Config{
		DeviceID:       "sched-sim",
		SampleInterval: 30 * time.Second,
		Location:       loc,
		MaxQuiet:       time.Nanosecond, // every eligible run asks the LLM
		AlertCooldown:  6 * time.Hour,
		BuildTime:      time.Date(2025, 12, 1, 0, 0, 0, 0, time.UTC),
		Checklist:      func() (string, bool, error) { return "- is the air fine?", false, nil },
	}
	if sched != nil {
		p, err := schedule.Parse(sched)
		if err != nil {
			t.Fatalf("schedule.Parse(%q): %v", sched, err)
		}
		s.cfg.Schedule = p
	}
	if mod != nil {
		mod(&s.cfg)
	}
	db, err := store.Open(filepath.Join(t.TempDir(), "vigil.db"), store.Options{Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	s.e, err = New(s.cfg, Deps{Clock: clock, Wall: s.wall.Now, DB: db, Thinker: s.thinker,
		Sensors: []device.Named{{Name: "air", Sensor: &fakeSensor{temp: 20}}},
		Progress: func() {
			var runs []store.Run
			if err := db.View(func(tx *store.Tx) error { var err error; runs, err = tx.Runs(1); return err }); err != nil || len(runs) == 0 {
				panic(fmt.Sprintf("read last run: %v", err))
			}
			s.mu.Lock()
			s.runs = append(s.runs, runs[0])
			s.mu.Unlock()
		}})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.e.SampleOnce(context.Background()); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	s.cancel, s.done = cancel, make(chan struct{})
	go func() { s.e.heartbeatLoop(ctx); close(s.done) }()
	t.Cleanup(s.stop)
	s.settle()
	return s
}

func (s *schedSim) stop() {
	if s.cancel != nil {
		s.cancel()
		<-s.done
		s.cancel = nil
	}
}

// settle waits until the loop sleeps again.
func (s *schedSim) settle() {
	s.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := s.clock.BlockUntilContext(ctx, 1); err != nil {
		s.t.Fatalf("the heartbeat loop did not go back to sleep at wall %s: %v", s.local(s.wall.Now()), err)
	}
}

// advance moves both clocks on by d in one-minute steps, letting the loop
// run after each, so runs land on the minute they are due.
func (s *schedSim) advance(d time.Duration) {
	s.t.Helper()
	for d > 0 {
		step := min(d, time.Minute)
		s.clock.Advance(step)
		s.settle()
		d -= step
	}
}

// until advances until the wall clock reads local (in the sim's zone).
func (s *schedSim) until(local time.Time) {
	s.t.Helper()
	d := local.Sub(s.wall.Now())
	if d < 0 {
		s.t.Fatalf("until %s: the wall clock is already at %s", s.local(local), s.local(s.wall.Now()))
	}
	s.advance(d)
}

// step sets the wall clock (an NTP step, a person with `date -s`) and lets
// the loop notice it within its one-minute recheck.
func (s *schedSim) step(to time.Time) {
	s.t.Helper()
	s.wall.set(to)
}

// take returns the runs captured since the last call, as "15:04 MST
// outcome/reason" lines in the sim's zone, dated.
func (s *schedSim) take() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for _, r := range s.runs {
		line := s.local(r.Start) + " " + r.Outcome
		if r.Reason != "" {
			line += "/" + r.Reason
		}
		out = append(out, line)
	}
	s.runs = nil
	return out
}

func (s *schedSim) local(t time.Time) string { return t.In(s.loc).Format("2006-01-02 15:04 MST") }

// expect compares the runs since the last call with want, exactly.
func (s *schedSim) expect(what string, want ...string) {
	s.t.Helper()
	got := s.take()
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		s.t.Fatalf("%s: runs\n\t%s\nwant\n\t%s", what, strings.Join(append([]string{fmt.Sprint(len(got), " runs")}, got...), "\n\t"),
			strings.Join(append([]string{fmt.Sprint(len(want), " runs")}, want...), "\n\t"))
	}
}

// nextRun is what status shows as the next run ("" for none).
func (s *schedSim) nextRun() string {
	s.t.Helper()
	st, err := s.e.Status(context.Background())
	if err != nil {
		s.t.Fatal(err)
	}
	if st.NextRun.IsZero() {
		return ""
	}
	return s.local(st.NextRun)
}

// expectNext checks what status shows as the next run.
func (s *schedSim) expectNext(want string) {
	s.t.Helper()
	if got := s.nextRun(); got != want {
		s.t.Fatalf("status next run at wall %s = %q, want %q", s.local(s.wall.Now()), got, want)
	}
}

// reload reconfigures the engine and waits until the loop has taken the
// new config up (its next run changed) and sleeps again.
func (s *schedSim) reload(cfg Config) {
	s.t.Helper()
	before := s.nextRun()
	s.e.Reconfigure(cfg, s.e.deps.Sensors, s.e.deps.Thinker)
	deadline := time.Now().Add(5 * time.Second)
	for s.nextRun() == before {
		if time.Now().After(deadline) {
			s.t.Fatalf("the loop kept its next run %q after the reload", before)
		}
		time.Sleep(time.Millisecond)
	}
	s.settle()
}

func TestScheduleClockFaults(t *testing.T) {
	berlin, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		t.Fatal(err)
	}
	at := func(y int, m time.Month, d, hh, mm int) time.Time { return time.Date(y, m, d, hh, mm, 0, 0, berlin) }
	day := []string{"07:30", "12:00", "19:00"}

	t.Run("boot in 1970: no run until NTP, then the next time, no catch-up", func(t *testing.T) {
		s := newSchedSim(t, day, berlin, time.Date(1970, 1, 1, 0, 0, 0, 0, time.UTC), nil)
		s.advance(3 * time.Hour) // 07:30 and 12:00 on the 1970 clock face pass
		s.expect("3 h on the 1970 clock", "1970-01-01 01:00 CET skipped/clock_unsynced")
		s.expectNext("")
		s.step(at(2026, 6, 1, 9, 10)) // NTP: 07:30 of the true day has passed
		s.advance(time.Minute)
		s.expect("right after the NTP step")
		s.expectNext("2026-06-01 12:00 CEST")
		s.until(at(2026, 6, 2, 8, 0))
		s.expect("the first day after sync",
			"2026-06-01 12:00 CEST ok/first_run",
			"2026-06-01 19:00 CEST ok/max_quiet",
			"2026-06-02 07:30 CEST ok/max_quiet")
		if n := s.thinker.count(); n != 3 {
			t.Errorf("LLM calls = %d, want 3", n)
		}
		s.step(time.Date(1970, 1, 1, 0, 0, 0, 0, time.UTC)) // the clock is lost again
		s.advance(10 * time.Hour)
		// The loop notices at its next look, within a minute.
		s.expect("unsynced again", "1970-01-01 01:01 CET skipped/clock_unsynced")
	})

	t.Run("a failing LLM: every scheduled time is an attempt, no backoff skips", func(t *testing.T) {
		s := newSchedSim(t, day, berlin, at(2026, 6, 1, 11, 0), nil)
		s.thinker.mu.Lock()
		s.thinker.err = fmt.Errorf("llm: %w", agent.ErrUnreachable)
		s.thinker.mu.Unlock()
		s.until(at(2026, 6, 2, 13, 0))
		s.expect("four times of day with the LLM down",
			"2026-06-01 12:00 CEST failed/first_run",
			"2026-06-01 19:00 CEST failed/first_run",
			"2026-06-02 07:30 CEST failed/first_run",
			"2026-06-02 12:00 CEST failed/first_run")
		if n := s.thinker.count(); n != 4 {
			t.Errorf("LLM attempts = %d, want 4 (one per scheduled time)", n)
		}
	})

	t.Run("forward step of three days: one run, no burst", func(t *testing.T) {
		s := newSchedSim(t, day, berlin, at(2026, 6, 1, 8, 0), nil)
		s.expectNext("2026-06-01 12:00 CEST")
		s.advance(time.Hour)
		s.expect("09:00, waiting for 12:00")
		s.step(at(2026, 6, 4, 13, 0)) // nine times of day jumped over
		s.advance(time.Minute)
		s.expect("after the step", "2026-06-04 13:01 CEST ok/first_run")
		s.expectNext("2026-06-04 19:00 CEST")
		s.until(at(2026, 6, 4, 20, 0))
		s.expect("the rest of the day", "2026-06-04 19:00 CEST ok/max_quiet")
	})

	t.Run("backward step: a time runs once; a step back of days restarts", func(t *testing.T) {
		s := newSchedSim(t, day, berlin, at(2026, 6, 1, 11, 50), nil)
		s.until(at(2026, 6, 1, 12, 5))
		s.expect("12:00", "2026-06-01 12:00 CEST ok/first_run")
		s.step(at(2026, 6, 1, 11, 40)) // NTP corrects a fast clock by 25 minutes
		s.until(at(2026, 6, 1, 19, 30))
		s.expect("after stepping back over 12:00", "2026-06-01 19:00 CEST ok/max_quiet")
		s.step(at(2026, 5, 28, 19, 30)) // three days back: the clock was wrong
		s.advance(time.Minute)
		s.expectNext("2026-05-29 07:30 CEST")
		s.until(at(2026, 5, 29, 8, 0))
		s.expect("three days back", "2026-05-29 07:30 CEST ok/max_quiet")
	})

	for _, sched := range [][]string{{"02:30", "07:30"}, {"30 2,7 * * *"}} {
		t.Run(fmt.Sprintf("spring forward %q: 02:30 runs once, at 03:00", sched), func(t *testing.T) {
			// 2026-03-29: 02:00 CET → 03:00 CEST.
			s := newSchedSim(t, sched, berlin, at(2026, 3, 28, 22, 0), nil)
			s.expectNext("2026-03-29 03:00 CEST")
			s.until(at(2026, 3, 30, 5, 0))
			s.expect("over the change",
				"2026-03-29 03:00 CEST ok/first_run",
				"2026-03-29 07:30 CEST ok/max_quiet",
				"2026-03-30 02:30 CEST ok/max_quiet")
		})
		t.Run(fmt.Sprintf("fall back %q: 02:30 runs once, at its first occurrence", sched), func(t *testing.T) {
			// 2026-10-25: 03:00 CEST → 02:00 CET; 02:30 happens twice.
			s := newSchedSim(t, sched, berlin, at(2026, 10, 24, 22, 0), nil)
			s.until(time.Date(2026, 10, 26, 4, 0, 0, 0, time.UTC))
			s.expect("over the change",
				"2026-10-25 02:30 CEST ok/first_run",
				"2026-10-25 07:30 CET ok/max_quiet",
				"2026-10-26 02:30 CET ok/max_quiet")
		})
	}

	t.Run("skipped scheduled runs are recorded", func(t *testing.T) {
		s := newSchedSim(t, day, berlin, at(2026, 6, 1, 7, 0), func(c *Config) {
			c.Active = &Window{Start: 10 * time.Hour, End: 18 * time.Hour}
		})
		s.until(at(2026, 6, 1, 8, 0))
		s.expect("07:30 outside active hours", "2026-06-01 07:30 CEST skipped/inactive_hours")
		if _, err := s.e.Pause(context.Background(), 5*time.Hour, "test"); err != nil {
			t.Fatal(err)
		}
		s.until(at(2026, 6, 1, 13, 0))
		s.expect("12:00 while paused", "2026-06-01 12:00 CEST paused/paused")
		st, err := s.e.Status(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if st.Counters["skip_inactive_hours"] != 1 || st.Counters["runs_paused"] != 1 {
			t.Errorf("counters = %v, want skip_inactive_hours 1 and runs_paused 1", st.Counters)
		}
		if n := s.thinker.count(); n != 0 {
			t.Errorf("LLM calls = %d, want 0", n)
		}
	})

	t.Run("a time that meets a running check retries it once, soon", func(t *testing.T) {
		s := newSchedSim(t, day, berlin, at(2026, 6, 1, 11, 50), nil)
		s.e.runMu.Lock() // a forced check (vigil check) is running
		s.until(at(2026, 6, 1, 12, 0))
		s.expect("12:00 during the check", "2026-06-01 12:00 CEST skipped/busy")
		s.expectNext("2026-06-01 12:00 CEST") // the retry at 12:00:30
		s.e.runMu.Unlock()
		s.until(at(2026, 6, 1, 19, 30))
		s.expect("after the check", "2026-06-01 12:01 CEST ok/first_run", "2026-06-01 19:00 CEST ok/max_quiet")
	})

	t.Run("reload switches between interval and schedule", func(t *testing.T) {
		s := newSchedSim(t, nil, berlin, at(2026, 6, 1, 8, 0), func(c *Config) { c.Interval = 30 * time.Minute })
		s.advance(time.Hour)
		if got := s.take(); len(got) != 2 {
			t.Fatalf("interval runs in 1 h = %q, want 2", got)
		}
		cfg := s.cfg
		cfg.Interval = 0
		cfg.Schedule, _ = schedule.Parse([]string{"12:00"})
		s.reload(cfg)
		s.expectNext("2026-06-01 12:00 CEST")
		s.until(at(2026, 6, 1, 12, 30))
		s.expect("after switching to a schedule", "2026-06-01 12:00 CEST ok/max_quiet")
		cfg.Interval, cfg.Schedule = 30*time.Minute, nil
		s.reload(cfg)
		if st, _ := s.e.Status(context.Background()); st.NextRun.IsZero() || st.NextRun.After(s.wall.Now().Add(30*time.Minute)) {
			t.Fatalf("next run after switching back to the interval = %v, want within 30m", st.NextRun)
		}
		s.advance(time.Hour)
		if got := s.take(); len(got) != 2 {
			t.Fatalf("interval runs in 1 h after switching back = %q, want 2", got)
		}
	})
}
