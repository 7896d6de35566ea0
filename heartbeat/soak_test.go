package heartbeat

import (
	"context"
	"encoding/binary"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"

	"github.com/vigil-iot/vigil/agent"
	"github.com/vigil-iot/vigil/alert"
	"github.com/vigil-iot/vigil/device"
	"github.com/vigil-iot/vigil/rule"
	"github.com/vigil-iot/vigil/store"
)

// The soak runs simulated days of a device with a 1-minute heartbeat and a
// 30-second sample interval on the fake clock against a real bbolt file:
// a daily temperature cycle with two excursions a day that fire and resolve
// a rule, an LLM that now and then alerts or pauses, deliveries acknowledged
// every ten minutes and a restart every 30 days. Once the rings are full
// (runs: 500 heartbeats, history: 2,880 one-minute samples, two days) the
// state file must stop growing.
//
//	go test ./heartbeat -run TestSoak                    (short: 3 days)
//	go test ./heartbeat -run TestSoak -soak.days=365     (make reliability)
var (
	soakDays = flag.Int("soak.days", 3, "simulated days of heartbeats at a 1-minute interval")
	soakDir  = flag.String("soak.dir", "", "directory for the state file (default: a test temp dir)")
)

// soakSensor is a greenhouse: 15–30 °C over the day, 37 °C for 20 minutes at
// 03:00 and 15:00.
type soakSensor struct{ now func() time.Time }

func (s soakSensor) Sense(ctx context.Context) ([]device.Reading, error) {
	t := s.now()
	h := float64(t.Hour()) + float64(t.Minute())/60
	temp := 22.5 + 7.5*math.Sin((h-9)/24*2*math.Pi)
	if m := t.Hour()*60 + t.Minute(); (m >= 180 && m < 200) || (m >= 900 && m < 920) {
		temp = 37
	}
	return []device.Reading{
		{Quantity: "temperature", Value: math.Round(temp*10) / 10, Unit: device.Celsius},
		{Quantity: "humidity", Value: math.Round(60 - temp), Unit: device.Percent},
		{Quantity: "pressure", Value: 1013, Unit: device.HectoPascal},
	}, nil
}

// soakThinker alerts on one call in 20 (a new complaint each day, so the
// fingerprint ring fills) and pauses on one in 50.
type soakThinker struct {
	calls int
	now   func() time.Time
}

func (s *soakThinker) Think(ctx context.Context, in agent.Input) (agent.Decision, error) {
	s.calls++
	d := agent.Decision{Outcome: agent.OutcomeOK, Calls: 1, Tokens: 900}
	switch {
	case s.calls%50 == 0:
		d.Outcome, d.Pause = agent.OutcomePaused, 2*time.Minute
	case s.calls%20 == 0:
		d.Outcome, d.Severity = agent.OutcomeAlert, alert.Warning
		d.Summary = fmt.Sprintf("humidity pattern unusual on %s", s.now().Format("Mon Jan 2"))
	}
	return d, nil
}

func TestSoak(t *testing.T) {
	days := *soakDays
	dir := *soakDir
	if dir == "" {
		dir = t.TempDir()
	}
	path := filepath.Join(dir, fmt.Sprintf("soak-%d.db", os.Getpid()))
	os.Remove(path)
	defer os.Remove(path)

	clock := clockwork.NewFakeClockAt(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	cfg := defaultConfig() // the quiet-day settings, at the shortest interval
	cfg.DeviceID, cfg.Interval = "soak", time.Minute
	cfg.Rules = []Rule{{
		Spec: rule.Spec{Name: "too_hot", When: mustCompile(t, "air.temperature > 35"),
			Clear: mustCompile(t, "air.temperature < 33"), Renotify: 2 * time.Hour},
		Severity: alert.Critical,
		Message:  "greenhouse at {air.temperature}",
	}}
	thinker := &soakThinker{now: clock.Now}
	rec := &recorder{}
	var db *store.DB
	var e *Engine
	open := func() {
		t.Helper()
		var err error
		if db, err = store.Open(path, store.Options{Timeout: time.Second}); err != nil {
			t.Fatal(err)
		}
		if e, err = New(cfg, Deps{Clock: clock, DB: db, Thinker: thinker,
			Sensors:   []device.Named{{Name: "air", Sensor: soakSensor{now: clock.Now}}},
			Notifiers: []Notifier{rec}}); err != nil {
			t.Fatal(err)
		}
	}
	open()
	defer func() { db.Close() }()

	ctx := context.Background()
	size := func() int64 {
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		return fi.Size()
	}
	hwm := func() int64 {
		n, err := highWater(path)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	// logFull is the first day the alert log (the status page's timeline)
	// held its cap: it fills with the alerts, more slowly than the rings of
	// samples and runs.
	logFull := 0
	logLen := func() int {
		var n int
		if err := db.View(func(tx *store.Tx) error {
			a, err := tx.Alerts(0)
			n = len(a)
			return err
		}); err != nil {
			t.Fatal(err)
		}
		return n
	}
	var delivered, heartbeats, samples int
	sizes, marks := []int64{size()}, []int64{hwm()}
	commits0 := db.Commits()
	var commits uint64
	began := time.Now()
	for day := 1; day <= days; day++ {
		for minute := 0; minute < 24*60; minute++ {
			for i := 0; i < 2; i++ {
				clock.Advance(30 * time.Second)
				if err := e.SampleOnce(ctx); err != nil {
					t.Fatalf("day %d minute %d: SampleOnce: %v", day, minute, err)
				}
				samples++
			}
			if _, err := e.tick(ctx, false, CheckOptions{}); err != nil {
				t.Fatalf("day %d minute %d: tick: %v", day, minute, err)
			}
			heartbeats++
			if minute%10 == 9 { // the transport acknowledges what is queued
				if err := db.Update(func(tx *store.Tx) error {
					pend, err := tx.Pending(rec.Name(), 0)
					if err != nil || len(pend) == 0 {
						return err
					}
					delivered += len(pend)
					return tx.Ack(rec.Name(), pend[len(pend)-1].Seq, []string{rec.Name()})
				}); err != nil {
					t.Fatal(err)
				}
			}
		}
		if day%30 == 0 {
			commits += db.Commits() - commits0
			db.Close()
			open()
			commits0 = db.Commits()
		}
		sizes, marks = append(sizes, size()), append(marks, hwm())
		if logFull == 0 && logLen() >= store.DefaultAlertLog {
			logFull = day
		}
	}
	commits += db.Commits() - commits0
	if err := db.Check(); err != nil {
		t.Fatalf("bbolt check after %d days: %v", days, err)
	}
	var runs []store.Run
	var hist []device.Snapshot
	if err := db.View(func(tx *store.Tx) error {
		var err error
		if runs, err = tx.Runs(0); err != nil {
			return err
		}
		hist, err = tx.History(time.Time{})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	st, err := e.Status(ctx)
	if err != nil {
		t.Fatal(err)
	}
	final := sizes[len(sizes)-1]
	// The rings of samples and runs are full after two days (2,880
	// one-minute samples), the alert log once it has held its cap; from
	// then on neither the file nor the extent of pages in use may grow. The
	// file grows in power-of-two steps, so the high-water mark of allocated
	// pages (from the meta page) is the finer measure. A run too short for
	// the alert log to fill measures from day 2, as before it existed.
	fullDay := max(2, logFull)
	full := min(fullDay, days)
	grewAfter := final - sizes[full]
	hwmGrew := (marks[len(marks)-1] - marks[full]) * 4096
	t.Logf("SOAK days=%d heartbeats=%d samples=%d commits=%d commits_per_heartbeat=%.3f llm_calls=%d alerts=%d delivered=%d runs_kept=%d history_kept=%d full_day=%d size_full=%d size_final=%d max_size=%d grew_after_full=%d pages_full=%d pages_final=%d max_pages=%d wall=%s",
		days, heartbeats, samples, commits, float64(commits)/float64(heartbeats), thinker.calls,
		st.Counters["alerts"], delivered, len(runs), len(hist), full, sizes[full], final,
		maxOf(sizes), grewAfter, marks[full], marks[len(marks)-1], maxOf(marks), time.Since(began).Round(time.Millisecond))
	if len(runs) != store.DefaultRunCap {
		t.Errorf("run ring holds %d runs after %d heartbeats, want %d", len(runs), heartbeats, store.DefaultRunCap)
	}
	if days >= 2 && len(hist) != store.DefaultHistoryCap {
		t.Errorf("history ring holds %d samples after %d days, want %d", len(hist), days, store.DefaultHistoryCap)
	}
	// bbolt's allocator may settle a few pages higher as the free list
	// fragments; a leak grows without bound.
	if grewAfter > 0 || hwmGrew > 16*4096 {
		t.Errorf("state file grew after the rings filled: file %d → %d bytes, pages in use %d → %d (days %d → %d)",
			sizes[full], final, marks[full], marks[len(marks)-1], full, days)
	}
	if d := st.Outbox[rec.Name()]; d > 100 {
		t.Errorf("outbox depth %d: deliveries were not acknowledged", d)
	}
	if st.Counters["alerts"] == 0 || thinker.calls == 0 {
		t.Errorf("alerts = %d, LLM calls = %d: the soak exercised nothing", st.Counters["alerts"], thinker.calls)
	}
}

func maxOf(xs []int64) int64 {
	m := xs[0]
	for _, x := range xs {
		m = max(m, x)
	}
	return m
}

// highWater returns the high-water mark of allocated pages of a bbolt file:
// the pgid field of its newer meta page (page 0 or 1; a page header is 16
// bytes, then magic, version, page size, flags, root bucket (16 bytes),
// freelist, pgid, txid).
func highWater(path string) (int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	buf := make([]byte, 2*4096)
	if _, err := f.ReadAt(buf, 0); err != nil {
		return 0, fmt.Errorf("read meta pages: %w", err)
	}
	le := binary.LittleEndian
	var best, bestTx uint64
	for _, off := range []int{0, 4096} {
		m := buf[off+16:]
		if le.Uint32(m[0:]) != 0xED0CDAED || le.Uint32(m[8:]) != 4096 {
			return 0, fmt.Errorf("meta page at %d: not a bbolt meta page with 4 KiB pages", off)
		}
		if tx := le.Uint64(m[48:]); tx >= bestTx {
			best, bestTx = le.Uint64(m[40:]), tx
		}
	}
	return int64(best), nil
}
