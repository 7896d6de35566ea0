// Package replaytest replays config rules on the simulated board: a
// heartbeat engine on a fake clock, a state file in the test's temporary
// directory, sampled one step at a time. The daemon's week test and the
// packaging demo test share it. It is test support only: nothing outside
// _test.go files imports it.
package replaytest

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"

	"github.com/vigil-iot/vigil/board"
	"github.com/vigil-iot/vigil/device"
	"github.com/vigil-iot/vigil/heartbeat"
	"github.com/vigil-iot/vigil/store"
)

// OnlyRule keeps ec's rule name and drops the others; the test fails
// unless there is exactly one.
func OnlyRule(t testing.TB, ec *heartbeat.Config, name string) {
	t.Helper()
	rules := ec.Rules[:0]
	for _, r := range ec.Rules {
		if r.Spec.Name == name {
			rules = append(rules, r)
		}
	}
	if len(rules) != 1 {
		t.Fatalf("no %s rule", name)
	}
	ec.Rules = rules
}

// Replay is an engine on the simulated board whose clock a test moves.
type Replay struct {
	clock  *clockwork.FakeClock
	engine *heartbeat.Engine
}

// Start opens specs on the simulated board and an engine running ec on a
// fake clock at start, with its state in t.TempDir(); the state file
// closes when the test ends.
func Start(t testing.TB, ec heartbeat.Config, specs []device.Spec, start time.Time) *Replay {
	t.Helper()
	clock := clockwork.NewFakeClockAt(start)
	sensors, _, problems := device.OpenSensors(specs, device.Host{Board: board.Profile{Name: "sim"}, Now: clock.Now})
	if len(problems) > 0 {
		t.Fatalf("open the sim board: %v", problems)
	}
	db, err := store.Open(filepath.Join(t.TempDir(), "vigil.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	e, err := heartbeat.New(ec, heartbeat.Deps{Clock: clock, DB: db, Sensors: sensors})
	if err != nil {
		t.Fatal(err)
	}
	return &Replay{clock: clock, engine: e}
}

// Firing moves the clock to at, takes one sample and says whether rule
// is firing then.
func (r *Replay) Firing(t testing.TB, at time.Time, rule string) bool {
	t.Helper()
	ctx := context.Background()
	r.clock.Advance(at.Sub(r.clock.Now()))
	if err := r.engine.SampleOnce(ctx); err != nil {
		t.Fatal(err)
	}
	ps, err := r.engine.Problems(ctx)
	if err != nil {
		t.Fatal(err)
	}
	firing := false
	for _, p := range ps {
		firing = firing || p.Rule == rule
	}
	return firing
}
