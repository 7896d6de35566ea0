package heartbeat

import (
	"context"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/vigil-iot/vigil/agent"
	"github.com/vigil-iot/vigil/alert"
	"github.com/vigil-iot/vigil/device"
	"github.com/vigil-iot/vigil/store"
)

// populatedState builds a state file the way a day of running does: rule
// changes, heartbeats with alerts, history, an outbox backlog, a pause.
func populatedState(t *testing.T) string {
	t.Helper()
	h := newHarness(t, nil)
	h.thinker.dec = agent.Decision{Outcome: agent.OutcomeAlert, Severity: alert.Warning, Summary: "door open"}
	for i := range 60 {
		h.sensor.set(20 + float64(i%4)*6) // fires and resolves too_hot
		h.sample()
		h.clock.Advance(time.Minute)
		if i%5 == 0 {
			h.tick()
		}
	}
	if _, err := h.e.Pause(context.Background(), time.Hour, "cli"); err != nil {
		t.Fatal(err)
	}
	if err := h.db.Close(); err != nil {
		t.Fatal(err)
	}
	return h.path
}

// damage is one way an SD card ruins a file.
type damage struct {
	name  string
	apply func(rng *rand.Rand, b []byte) []byte
}

const pageSize = 4096

var damages = []damage{
	{"random page overwritten", func(rng *rand.Rand, b []byte) []byte {
		p := rng.IntN(len(b) / pageSize)
		fillRandom(rng, b[p*pageSize:(p+1)*pageSize])
		return b
	}},
	{"several pages overwritten", func(rng *rand.Rand, b []byte) []byte {
		for range 2 + rng.IntN(4) {
			p := rng.IntN(len(b) / pageSize)
			fillRandom(rng, b[p*pageSize:(p+1)*pageSize])
		}
		return b
	}},
	{"truncated", func(rng *rand.Rand, b []byte) []byte { return b[:rng.IntN(len(b))] }},
	{"header zeroed", func(rng *rand.Rand, b []byte) []byte {
		n := (1 + rng.IntN(2)) * pageSize
		clear(b[:min(n, len(b))])
		return b
	}},
}

func fillRandom(rng *rand.Rand, b []byte) {
	for i := range b {
		b[i] = byte(rng.Uint32())
	}
}

// TestCorruptStateSuite damages a real state file in 200 ways and starts the
// engine on each: the store opens (moving a damaged file aside), the engine
// loads, the rule fires within two samples, state_lost is queued whenever the
// file was replaced, and a second start on the result neither resets again
// nor fails.
func TestCorruptStateSuite(t *testing.T) {
	cases := 200
	if testing.Short() {
		cases = 40
	}
	src, err := os.ReadFile(populatedState(t))
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(12, 1))
	resets := map[string]int{}
	for i := range cases {
		d := damages[i%len(damages)]
		b := d.apply(rng, append([]byte(nil), src...))
		path := filepath.Join(t.TempDir(), "vigil.db")
		if err := os.WriteFile(path, b, 0o600); err != nil {
			t.Fatal(err)
		}
		reset, lost := startOnDamaged(t, i, d.name, path, 0)
		if reset {
			resets[d.name]++
		}
		// The second start must find a sound file.
		if again, _ := startOnDamaged(t, i, d.name+" (second start)", path, lost); again {
			t.Fatalf("case %d (%s): the second start reset the file again", i, d.name)
		}
	}
	t.Logf("CORRUPT cases=%d page=%d pages=%d truncated=%d header=%d", cases, resets["random page overwritten"],
		resets["several pages overwritten"], resets["truncated"], resets["header zeroed"])
	if resets["header zeroed"] == 0 || resets["random page overwritten"] == 0 {
		t.Errorf("no reset for some kinds of damage (%v): the damage did not reach the file", resets)
	}
}

// startOnDamaged opens path as the daemon does, runs samples until the rule
// fires (at most two) and reports whether the file was replaced and how many
// state_lost alerts are queued (queued before: the ones of an earlier start).
func startOnDamaged(t *testing.T, i int, name, path string, queued int) (reset bool, nLost int) {
	t.Helper()
	moved := len(store.CorruptFiles(path))
	db, err := store.Open(path, store.Options{Timeout: time.Second, Reset: true, Now: time.Now})
	if err != nil {
		t.Fatalf("case %d (%s): Open: %v", i, name, err)
	}
	defer db.Close()
	h := newHarness(t, nil)
	h.sensor.set(40)
	e, err := New(h.cfg, Deps{Clock: h.clock, Wall: h.wall.Now, DB: db, Thinker: h.thinker,
		Sensors: []device.Named{{Name: "air", Sensor: h.sensor}}, Notifiers: []Notifier{h.notes}})
	if err != nil {
		t.Fatalf("case %d (%s): New: %v", i, name, err)
	}
	firing := func() bool {
		e.mu.Lock()
		defer e.mu.Unlock()
		return e.rules["too_hot"].state.Firing
	}
	for s := 0; s < 2 && !firing(); s++ {
		if err := e.SampleOnce(context.Background()); err != nil && !errors.Is(err, store.ErrCorrupt) {
			t.Fatalf("case %d (%s): sample %d: %v", i, name, s+1, err)
		}
		h.clock.Advance(h.cfg.SampleInterval)
	}
	if !firing() {
		t.Fatalf("case %d (%s): the rule did not fire within 2 samples", i, name)
	}
	var lost []alert.Alert
	if err := db.View(func(tx *store.Tx) error {
		ents, err := tx.Pending("rec", 0)
		for _, en := range ents {
			if en.Alert.Rule == RuleStateLost {
				lost = append(lost, en.Alert)
			}
		}
		return err
	}); err != nil {
		t.Fatalf("case %d (%s): read outbox: %v", i, name, err)
	}
	reset = len(store.CorruptFiles(path)) > moved
	want := queued
	if reset {
		want++
	}
	if len(lost) != want {
		t.Fatalf("case %d (%s): file replaced %v, %d state_lost alerts queued", i, name, reset, len(lost))
	}
	if len(lost) > 0 {
		a := lost[len(lost)-1]
		if a.Severity != alert.Critical || a.Source != alert.SourceSystem ||
			!strings.Contains(a.Summary, "queued alerts") || !strings.Contains(a.Summary, ".corrupt-") {
			t.Fatalf("case %d (%s): state_lost alert = %+v", i, name, a)
		}
	}
	return reset, len(lost)
}

// TestStateLostWhileRunning damages the open file under a running engine:
// the next sample fails, the one after raises state_lost on a fresh file
// that keeps the pause and the firing rule, and rules go on.
func TestStateLostWhileRunning(t *testing.T) {
	h, db, e := resettingHarness(t)
	if _, err := e.Pause(context.Background(), time.Hour, "cli"); err != nil {
		t.Fatal(err)
	}
	h.sensor.set(40)
	h.sample() // fires too_hot
	// Damage every page but the meta pages: the next commit meets it.
	zeroDataPages(t, h.path)
	h.sensor.set(20) // resolves: a commit that reads the rules bucket
	err := e.SampleOnce(context.Background())
	if !errors.Is(err, store.ErrCorrupt) {
		t.Fatalf("sample over a damaged file = %v, want ErrCorrupt", err)
	}
	h.clock.Advance(h.cfg.SampleInterval)
	h.sample() // raises state_lost, then retries the resolve
	out := h.outbox()
	if len(out) < 2 || out[0].Alert.Rule != RuleStateLost || out[1].Alert.State != alert.StateResolved {
		t.Fatalf("outbox after the reset = %+v, want state_lost then the resolve", out)
	}
	if s := out[0].Alert.Summary; !strings.Contains(s, "kept from memory") {
		t.Errorf("state_lost summary %q does not say what was kept", s)
	}
	// What lived only in the file is named: the stored run-time settings
	// (still in force until a restart), the model's notes, the Telegram
	// update offset.
	for _, what := range []string{"run-time settings", "until the daemon restarts", "the model's notes", "Telegram update offset",
		"alerts held for the Telegram digest", "the Telegram cap's count", "Telegram's alert messages", "acknowledgements were kept from memory"} {
		if s := out[0].Alert.Summary; !strings.Contains(s, what) {
			t.Errorf("state_lost summary %q does not name %q", s, what)
		}
	}
	// state_lost never resolves: it stays among the problems the MQTT
	// sensor is rebuilt from for as long as this process runs.
	if ps, err := e.Problems(context.Background()); err != nil || !slices.ContainsFunc(ps, func(a alert.Alert) bool { return a.Rule == RuleStateLost }) {
		t.Errorf("Problems() after the reset = %+v, %v; want state_lost among them", ps, err)
	}
	if err := db.View(func(tx *store.Tx) error {
		if _, ok, err := tx.Pause(); err != nil || !ok {
			t.Errorf("pause after the reset: %v, %v; want kept", ok, err)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}

// TestDryRunWritesNothing: a dry check leaves the file byte-identical and
// the next real alert is not a duplicate of it.
func TestDryRunWritesNothing(t *testing.T) {
	h := newHarness(t, nil)
	h.thinker.dec = agent.Decision{Outcome: agent.OutcomeAlert, Severity: alert.Warning, Summary: "door open"}
	h.sample()
	before, err := os.ReadFile(h.path)
	if err != nil {
		t.Fatal(err)
	}
	commits := h.db.Commits()
	h.sensor.set(40)
	if err := h.e.SampleDry(context.Background()); err != nil {
		t.Fatal(err)
	}
	res, err := h.e.Check(context.Background(), CheckOptions{DryRun: true})
	if err != nil || res.Run.Outcome != OutcomeAlert || len(res.Alerts) != 0 {
		t.Fatalf("dry check = %+v, %v; want an alert outcome with nothing queued", res.Run, err)
	}
	after, _ := os.ReadFile(h.path)
	if string(before) != string(after) || h.db.Commits() != commits {
		t.Fatal("a dry run changed the state file")
	}
	res = h.tick()
	if res.Run.Reason == ReasonDuplicate || len(res.Alerts) == 0 {
		t.Fatalf("real run after a dry run = %+v: the dry run's alert made it a duplicate", res.Run)
	}
}

// resettingHarness is a harness whose state file, like the daemon's, is
// replaced by a fresh one when it is found corrupt (Options.Reset).
func resettingHarness(t *testing.T) (*harness, *store.DB, *Engine) {
	t.Helper()
	return resettingHarnessWith(t, nil)
}

// resettingHarnessWith is resettingHarness with the config changed by mod.
func resettingHarnessWith(t *testing.T, mod func(*Config)) (*harness, *store.DB, *Engine) {
	t.Helper()
	h := newHarness(t, mod)
	h.db.Close()
	h.openWith(store.Options{Timeout: time.Second, Reset: true, Now: time.Now})
	return h, h.db, h.e
}

// zeroDataPages zeroes every page of the open state file at path but the
// two meta pages, under the engine's feet.
func zeroDataPages(t *testing.T, path string) {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteAt(make([]byte, fi.Size()-2*pageSize), 2*pageSize); err != nil {
		t.Fatal(err)
	}
}

// TestStateLostWhileRunningKeepsAcks: a reset while running writes the
// acknowledgements the engine holds to the fresh file, as it does the rule
// states, so an acknowledged problem stays quiet after the reset.
func TestStateLostWhileRunningKeepsAcks(t *testing.T) {
	h, db, e := resettingHarness(t)
	h.sensor.set(40)
	h.sample() // fires too_hot
	if _, err := e.Ack(context.Background(), "too_hot"); err != nil {
		t.Fatal(err)
	}
	zeroDataPages(t, h.path)
	// A write meets the damage; the next sample raises state_lost.
	if _, err := e.Pause(context.Background(), time.Hour, "cli"); !errors.Is(err, store.ErrCorrupt) {
		t.Fatalf("pause over a damaged file = %v, want ErrCorrupt", err)
	}
	h.clock.Advance(h.cfg.SampleInterval)
	h.sample()
	if out := h.outbox(); len(out) == 0 || out[0].Alert.Rule != RuleStateLost {
		t.Fatalf("outbox after the reset = %+v, want state_lost", out)
	}
	if err := db.View(func(tx *store.Tx) error {
		acks, err := tx.ProblemAcks()
		if len(acks) != 1 {
			t.Errorf("acks in the fresh file = %v, %v; want too_hot's, kept from memory", acks, err)
		}
		return err
	}); err != nil {
		t.Fatal(err)
	}
}

// TestStateLostWhileRunningDropsEndedAcks: an ack ends with its problem's
// resolution in memory as in the file, so a reset while running does not
// write it back: the next outage of the same kind resolves without an ack
// nobody gave it.
func TestStateLostWhileRunningDropsEndedAcks(t *testing.T) {
	h, db, e := resettingHarnessWith(t, func(c *Config) { c.MaxQuiet = time.Minute; c.FailureAlertAfter = 0 })
	llm := func(err error) {
		h.thinker.err = err
		h.clock.Advance(time.Hour)
		h.sample()
		h.tick()
	}
	down := errors.Join(agent.ErrUnreachable, errors.New("connection refused"))
	llm(down)
	if _, err := h.ack("llm_unreachable"); err != nil {
		t.Fatal(err)
	}
	llm(nil) // resolves llm_unreachable, ending its ack
	zeroDataPages(t, h.path)
	if _, err := e.Pause(context.Background(), time.Hour, "cli"); !errors.Is(err, store.ErrCorrupt) {
		t.Fatalf("pause over a damaged file = %v, want ErrCorrupt", err)
	}
	h.clock.Advance(h.cfg.SampleInterval)
	h.sample() // state_lost, and what the engine holds written to the fresh file
	if err := db.View(func(tx *store.Tx) error {
		acks, err := tx.ProblemAcks()
		if len(acks) != 0 {
			t.Errorf("acks in the fresh file = %v, %v; want none: the only one ended with its problem", acks, err)
		}
		return err
	}); err != nil {
		t.Fatal(err)
	}
	llm(down)
	llm(nil)
	for _, en := range h.outbox() {
		if en.Alert.Rule == "llm_unreachable" && en.Alert.State == alert.StateResolved && en.Alert.AckedBy != "" {
			t.Errorf("llm_unreachable of the outage after the reset resolved acknowledged by %q; nobody acknowledged it", en.Alert.AckedBy)
		}
	}
}

// TestFailedCommitCountsNothing (issue 28, finding 18): a sample whose
// commit fails changes no counter and no flood-guard budget, so the
// sample that retries the same transition counts its alert once, and the
// flood guard (here one alert an hour) does not take the retry for a
// second alert.
func TestFailedCommitCountsNothing(t *testing.T) {
	h, db, e := resettingHarnessWith(t, func(c *Config) { c.FloodLimit = 1 })
	state := func() store.State {
		t.Helper()
		var st store.State
		if err := db.View(func(tx *store.Tx) error { var err error; st, err = tx.State(); return err }); err != nil {
			t.Fatal(err)
		}
		return st
	}
	before := state().Counters
	h.sensor.set(40) // fires too_hot
	zeroDataPages(t, h.path)
	if err := e.SampleOnce(context.Background()); !errors.Is(err, store.ErrCorrupt) {
		t.Fatalf("sample over a damaged file = %v, want ErrCorrupt", err)
	}
	e.mu.Lock()
	mem := cloneCounters(e.state.Counters)
	e.mu.Unlock()
	if mem["alerts"] != before["alerts"] || mem["alerts_held"] != before["alerts_held"] {
		t.Errorf("after a failed commit: alerts %d, alerts_held %d in memory; want %d and %d (nothing committed)",
			mem["alerts"], mem["alerts_held"], before["alerts"], before["alerts_held"])
	}
	h.clock.Advance(h.cfg.SampleInterval)
	h.sample() // raises state_lost on a fresh file, then retries the firing
	after := state().Counters
	if after["alerts"] != before["alerts"]+2 || after["alerts_held"] != before["alerts_held"] {
		t.Errorf("after the retry: alerts %d→%d, alerts_held %d→%d; want 2 more alerts (state_lost, too_hot), none held",
			before["alerts"], after["alerts"], before["alerts_held"], after["alerts_held"])
	}
	out := h.outbox()
	if !slices.ContainsFunc(out, func(en store.Entry) bool { return en.Alert.Rule == "too_hot" && en.Alert.State == alert.StateFiring }) {
		var rules []string
		for _, en := range out {
			rules = append(rules, en.Alert.Rule+"/"+en.Alert.State)
		}
		t.Errorf("outbox after the retry = %v, want the too_hot firing (not held by the flood guard)", rules)
	}
}
