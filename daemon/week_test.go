package daemon

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/vigil-iot/vigil/config"
	"github.com/vigil-iot/vigil/device"
	"github.com/vigil-iot/vigil/internal/replaytest"
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
	replaytest.OnlyRule(t, &ec, "unusual_night")
	loc := cfg.Device.Location
	start := time.Date(2026, 6, 1, 0, 0, 0, 0, loc) // no DST change within the week
	r := replaytest.Start(t, ec, cfg.Specs(), start)
	event := start.AddDate(0, 0, device.SimEventDay)
	var fired []time.Time
	firing := false
	for at := start; at.Before(start.AddDate(0, 0, 7)); at = at.Add(ec.SampleInterval * 15) { // every 30 s
		now := r.Firing(t, at, "unusual_night")
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
