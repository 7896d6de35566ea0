package daemon

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"

	"github.com/vigil-iot/vigil/board"
	"github.com/vigil-iot/vigil/config"
	"github.com/vigil-iot/vigil/device"
	"github.com/vigil-iot/vigil/heartbeat"
	"github.com/vigil-iot/vigil/store"
)

// TestRepoConfigWeek: the repository's config.toml, as `make run` runs it
// on the simulated board, over the scripted week on the fake clock: its
// unusual_night rule fires on the greenhouse sensor's 3 a.m. event and at
// no other time of the week.
func TestRepoConfigWeek(t *testing.T) {
	src, err := os.ReadFile("../config.toml")
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Parse(strings.NewReader(string(src)), "config.toml")
	if err != nil {
		t.Fatal(err)
	}
	var week string
	for _, s := range cfg.Sensors {
		if s.Sim != nil && s.Sim.Script == device.SimWeek {
			week = s.Name
		}
	}
	var watched bool
	for _, r := range cfg.Rules {
		watched = watched || strings.Contains(r.When, "unusual("+week+".temperature)") && r.Name == "unusual_night"
	}
	if week == "" || !watched {
		t.Fatalf("config.toml: week sensor %q, unusual_night on its temperature %v; want both", week, watched)
	}
	ec, err := EngineConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ec.BuildTime = time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	// Only unusual_night: too_hot fires on air's excursion every three
	// minutes, a week of commits that says nothing here.
	rules := ec.Rules[:0]
	for _, r := range ec.Rules {
		if r.Spec.Name == "unusual_night" {
			rules = append(rules, r)
		}
	}
	ec.Rules = rules
	loc := cfg.Device.Location
	start := time.Date(2026, 6, 1, 0, 0, 0, 0, loc) // no DST change within the week
	clock := clockwork.NewFakeClockAt(start)
	sensors, _, problems := device.OpenSensors(cfg.Specs(), device.Host{Board: board.Profile{Name: "sim"}, Now: clock.Now})
	if len(problems) > 0 {
		t.Fatalf("open the sim board: %v", problems)
	}
	db, err := store.Open(filepath.Join(t.TempDir(), "vigil.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	e, err := heartbeat.New(ec, heartbeat.Deps{Clock: clock, DB: db, Sensors: sensors})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	event := start.AddDate(0, 0, device.SimEventDay)
	var fired []time.Time
	firing := false
	for at := start; at.Before(start.AddDate(0, 0, 7)); at = at.Add(ec.SampleInterval * 15) { // every 30 s
		clock.Advance(at.Sub(clock.Now()))
		if err := e.SampleOnce(ctx); err != nil {
			t.Fatal(err)
		}
		ps, err := e.Problems(ctx)
		if err != nil {
			t.Fatal(err)
		}
		now := false
		for _, p := range ps {
			now = now || p.Rule == "unusual_night"
		}
		if now && !firing {
			fired = append(fired, at)
		}
		firing = now
	}
	if len(fired) != 1 || fired[0].Before(event.Add(2*time.Hour+30*time.Minute)) || !fired[0].Before(event.Add(3*time.Hour+30*time.Minute)) {
		t.Fatalf("unusual_night fired at %v over the week; want once, during the event on day %d from 02:30 (%s)", fired, device.SimEventDay, event.Format("Mon 2006-01-02"))
	}
	t.Logf("unusual_night fired once, at %s", fired[0].In(loc).Format("Mon 15:04:05 MST"))
}
