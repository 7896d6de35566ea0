package heartbeat

import (
	"context"

	"github.com/vigil-iot/vigil/agent"
	"testing"
	"time"
)

func TestWindowAcrossMidnightAndDST(t *testing.T) {
	berlin, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		t.Fatal(err)
	}
	day := Window{Start: 7 * time.Hour, End: 22 * time.Hour}
	night := Window{Start: 22 * time.Hour, End: 6 * time.Hour}
	tests := []struct {
		w    Window
		at   time.Time
		want bool
	}{
		{day, time.Date(2026, 6, 1, 6, 59, 0, 0, berlin), false},
		{day, time.Date(2026, 6, 1, 7, 0, 0, 0, berlin), true},
		{day, time.Date(2026, 6, 1, 21, 59, 59, 0, berlin), true},
		{day, time.Date(2026, 6, 1, 22, 0, 0, 0, berlin), false},
		{night, time.Date(2026, 6, 1, 23, 30, 0, 0, berlin), true},
		{night, time.Date(2026, 6, 2, 0, 30, 0, 0, berlin), true},
		{night, time.Date(2026, 6, 2, 5, 59, 0, 0, berlin), true},
		{night, time.Date(2026, 6, 2, 6, 0, 0, 0, berlin), false},
		{night, time.Date(2026, 6, 2, 12, 0, 0, 0, berlin), false},
		// DST starts 2026-03-29 02:00 → 03:00 in Berlin: 07:00 local is 05:00 UTC after, 06:00 UTC before.
		{day, time.Date(2026, 3, 28, 6, 0, 0, 0, time.UTC), true},   // 07:00 CET
		{day, time.Date(2026, 3, 29, 5, 0, 0, 0, time.UTC), true},   // 07:00 CEST
		{day, time.Date(2026, 3, 29, 4, 59, 0, 0, time.UTC), false}, // 06:59 CEST
		// DST ends 2026-10-25 03:00 → 02:00: 22:00 local is 21:00 UTC after.
		{day, time.Date(2026, 10, 25, 20, 59, 0, 0, time.UTC), true},  // 21:59 CET
		{day, time.Date(2026, 10, 25, 21, 0, 0, 0, time.UTC), false},  // 22:00 CET
		{night, time.Date(2026, 10, 25, 1, 30, 0, 0, time.UTC), true}, // 02:30 CET (the repeated hour)
	}
	for _, tt := range tests {
		if got := tt.w.Contains(tt.at, berlin); got != tt.want {
			t.Errorf("%v.Contains(%s) = %v, want %v", tt.w, tt.at.In(berlin), got, tt.want)
		}
	}
}

func TestNextTickNoBacklog(t *testing.T) {
	iv := 30 * time.Minute
	first := t0.Add(Phase("x", iv))
	if got := nextTick(first, first.Add(time.Second), iv); !got.Equal(first.Add(iv)) {
		t.Errorf("nextTick on time = %v, want %v", got, first.Add(iv))
	}
	// Five intervals of downtime: one run now, then back on phase.
	late := first.Add(5*iv + 7*time.Minute)
	got := nextTick(first, late, iv)
	if want := first.Add(6 * iv); !got.Equal(want) {
		t.Errorf("nextTick after downtime = %v, want %v (on phase, no replay)", got, want)
	}
}

func TestHeartbeatLoopNoBurstAfterStall(t *testing.T) {
	h := newHarness(t, func(c *Config) { c.MaxQuiet = time.Minute })
	h.sample()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- h.e.heartbeatLoop(ctx) }()
	countRuns := func() int {
		st, err := h.e.Status(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return int(st.Counters["runs_ok"] + st.Counters["runs_skipped"])
	}
	waitRuns := func(want int) {
		t.Helper()
		deadline := time.Now().Add(5 * time.Second)
		for countRuns() < want {
			if time.Now().After(deadline) {
				t.Fatalf("runs = %d, want %d", countRuns(), want)
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	h.clock.BlockUntilContext(ctx, 1)
	h.clock.Advance(Phase(h.cfg.DeviceID, h.cfg.Interval)) // the first tick
	waitRuns(1)
	// The machine stalls for 5 intervals (suspend, a long I/O hang): one run, not five.
	h.clock.BlockUntilContext(ctx, 1)
	h.clock.Advance(5*h.cfg.Interval + time.Minute)
	waitRuns(2)
	time.Sleep(50 * time.Millisecond)
	if n := countRuns(); n != 2 {
		t.Fatalf("runs after a 5-interval stall = %d, want 2 (no backlog replay)", n)
	}
	cancel()
	<-done
}

func TestActiveHoursAndClockSync(t *testing.T) {
	berlin, _ := time.LoadLocation("Europe/Berlin")
	h := newHarness(t, func(c *Config) {
		c.Active = &Window{Start: 7 * time.Hour, End: 22 * time.Hour}
		c.Location = berlin
		c.MaxQuiet = time.Minute
	})
	// Boot in 1970: the wall clock is not plausible, active-hours runs wait.
	h.wall.jump(time.Date(1970, 1, 1, 0, 0, 10, 0, time.UTC).Sub(t0))
	h.sample()
	if r := h.tick(); r.Run.Reason != ReasonClockUnsynced {
		t.Fatalf("tick at 1970 = %s/%s, want clock_unsynced", r.Run.Outcome, r.Run.Reason)
	}
	// NTP syncs: jump to 2026-11-22 12:00 Berlin time is 11:00 UTC; t0 is 12:00 UTC = 13:00 Berlin.
	h.wall.jump(-time.Date(1970, 1, 1, 0, 0, 10, 0, time.UTC).Sub(t0))
	h.clock.Advance(30 * time.Minute)
	h.sample()
	if r := h.tick(); r.Run.Outcome != OutcomeOK {
		t.Fatalf("tick after sync at 13:30 local = %s/%s, want ok", r.Run.Outcome, r.Run.Reason)
	}
	// 23:30 local: inactive.
	h.clock.Advance(10 * time.Hour)
	h.sample()
	if r := h.tick(); r.Run.Reason != ReasonInactiveHours {
		t.Fatalf("tick at 23:30 local = %s/%s, want inactive_hours", r.Run.Outcome, r.Run.Reason)
	}
	if h.thinker.count() != 1 {
		t.Fatalf("LLM calls = %d, want 1", h.thinker.count())
	}
}

func TestPauseBackwardJumpNeverExtends(t *testing.T) {
	h := newHarness(t, func(c *Config) { c.MaxQuiet = time.Minute })
	h.sample()
	if _, err := h.e.Pause(context.Background(), 10*time.Minute, "test"); err != nil {
		t.Fatal(err)
	}
	if r := h.tick(); r.Run.Outcome != OutcomePaused || r.Run.Reason != ReasonPaused {
		t.Fatalf("tick while paused = %s/%s, want paused", r.Run.Outcome, r.Run.Reason)
	}
	h.wall.jump(-24 * time.Hour) // NTP steps the clock back a day
	h.clock.Advance(10*time.Minute + time.Second)
	h.sample()
	if r := h.tick(); r.Run.Outcome == OutcomePaused {
		t.Fatal("a backward wall-clock jump extended the pause")
	}
}

func TestPauseSurvivesRestartAndIsClamped(t *testing.T) {
	h := newHarness(t, func(c *Config) { c.MaxQuiet = time.Minute })
	h.sample()
	if _, err := h.e.Pause(context.Background(), 30*time.Minute, "test"); err != nil {
		t.Fatal(err)
	}
	h.clock.Advance(10 * time.Minute)
	h.restart()
	h.sample()
	if r := h.tick(); r.Run.Outcome != OutcomePaused {
		t.Fatalf("tick after restart during a pause = %s/%s, want paused", r.Run.Outcome, r.Run.Reason)
	}
	until, ok := h.e.PausedUntil()
	if !ok || until.Sub(h.wall.Now()) > 20*time.Minute+time.Second {
		t.Fatalf("paused until %v (now %v), want about 20 minutes left", until, h.wall.Now())
	}
	// Restart with the wall clock set back a year: remaining is capped at the pause's duration.
	h.wall.jump(-365 * 24 * time.Hour)
	h.restart()
	until, ok = h.e.PausedUntil()
	if !ok || until.Sub(h.wall.Now()) > 30*time.Minute {
		t.Fatalf("after a backward jump across restart: paused until %v, now %v: extended beyond 30m", until, h.wall.Now())
	}
	h.clock.Advance(31 * time.Minute)
	h.sample()
	if r := h.tick(); r.Run.Outcome == OutcomePaused {
		t.Fatal("pause did not expire on monotonic time")
	}
}

func TestLLMPauseTool(t *testing.T) {
	h := newHarness(t, func(c *Config) { c.MaxQuiet = time.Minute })
	h.thinker.dec = agentPaused(2 * time.Minute)
	h.sample()
	if r := h.tick(); r.Run.Outcome != OutcomePaused || r.Run.Pause != 2*time.Minute {
		t.Fatalf("run = %+v, want paused for 2m", r.Run)
	}
	h.thinker.dec = agentOK()
	h.clock.Advance(time.Minute)
	h.sample()
	if r := h.tick(); r.Run.Reason != ReasonPaused {
		t.Fatalf("tick 1m into the LLM's pause = %s/%s, want paused", r.Run.Outcome, r.Run.Reason)
	}
	h.restart()
	h.sample()
	if r := h.tick(); r.Run.Reason != ReasonPaused {
		t.Fatalf("LLM pause not persisted across restart: %s/%s", r.Run.Outcome, r.Run.Reason)
	}
	h.clock.Advance(2 * time.Minute)
	h.sample()
	if r := h.tick(); r.Run.Outcome == OutcomePaused {
		t.Fatal("LLM pause did not expire")
	}
}

func agentPaused(d time.Duration) agent.Decision {
	return agent.Decision{Outcome: agent.OutcomePaused, Pause: d}
}

func agentOK() agent.Decision { return agent.Decision{Outcome: agent.OutcomeOK} }
