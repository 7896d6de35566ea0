package heartbeat

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"

	"github.com/vigil-iot/vigil/agent"
	"github.com/vigil-iot/vigil/device"
	"github.com/vigil-iot/vigil/store"
)

// simBoard returns the default five-sensor simulated board (the sensors of
// the bench config, plus the board's own health), quiet: no excursions.
func simBoard(t testing.TB, now func() time.Time) []device.Named {
	t.Helper()
	start := now()
	var out []device.Named
	for _, s := range []struct{ name, driver string }{
		{"air", "bme280"}, {"freezer", "ds18b20"}, {"light", "bh1750"}, {"co2", "scd4x"}, {"power", "ina219"},
	} {
		sim, err := device.NewSim(s.name, s.driver, start, now)
		if err != nil {
			t.Fatal(err)
		}
		sim.Every = 0
		out = append(out, device.Named{Name: s.name, Sensor: sim})
	}
	return append(out, device.Named{Name: "board", Sensor: device.NewSimHealth(start, now)})
}

// defaultConfig is the engine configuration config.toml's defaults resolve to.
func defaultConfig() Config {
	return Config{
		DeviceID:               "quiet",
		Interval:               30 * time.Minute,
		SampleInterval:         30 * time.Second,
		SensorsPublishInterval: 5 * time.Minute,
		MaxQuiet:               6 * time.Hour,
		AlertCooldown:          6 * time.Hour,
		FailureAlertAfter:      3,
		MaxLLMCallsPerDay:      96,
		BuildTime:              time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC),
		Checklist:              func() (string, bool, error) { return "- is the greenhouse fine?", false, nil },
	}
}

// TestQuietDay counts the LLM calls of a simulated quiet day at the default
// settings: the five-sensor sim board without excursions, and the same board
// held perfectly still. The bench report quotes the QUIETDAY lines.
func TestQuietDay(t *testing.T) {
	for _, tc := range []struct {
		name  string
		still bool
	}{{"sim_board", false}, {"still", true}} {
		t.Run(tc.name, func(t *testing.T) {
			clock := clockwork.NewFakeClockAt(time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC))
			now := clock.Now
			if tc.still {
				frozen := clock.Now()
				now = func() time.Time { return frozen }
			}
			db, err := store.Open(filepath.Join(t.TempDir(), "vigil.db"), store.Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			th := &fakeThinker{dec: agent.Decision{Outcome: agent.OutcomeOK}}
			e, err := New(defaultConfig(), Deps{Clock: clock, DB: db, Thinker: th, Sensors: simBoard(t, now)})
			if err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			reasons := map[string]int{}
			for hb := 0; hb < 48; hb++ {
				for i := 0; i < 60; i++ {
					clock.Advance(30 * time.Second)
					if err := e.SampleOnce(ctx); err != nil {
						t.Fatal(err)
					}
				}
				res, err := e.tick(ctx, false, CheckOptions{})
				if err != nil {
					t.Fatal(err)
				}
				reasons[res.Run.Outcome+"/"+res.Run.Reason]++
			}
			var rs []string
			for k, n := range reasons {
				rs = append(rs, fmt.Sprintf("%s:%d", k, n))
			}
			sort.Strings(rs)
			t.Logf("QUIETDAY board=%s heartbeats=48 llm_calls=%d reasons=%s", tc.name, th.count(), strings.Join(rs, ","))
			if th.count() > 48 || th.count() < 1 {
				t.Errorf("LLM calls in a day = %d, want between 1 and 48", th.count())
			}
			// Still: the first run, then one per max_quiet (6h) within the
			// remaining 47 heartbeats.
			if want := 1 + int(47*30*time.Minute/(6*time.Hour)); tc.still && th.count() != want {
				t.Errorf("a still board made %d LLM calls in a day, want %d (the first run, then one per max_quiet)", th.count(), want)
			}
		})
	}
}

// BenchmarkHeartbeat measures one heartbeat through the whole pipeline:
// sample the five-sensor sim board, gate, the real agent over HTTP to an
// instant local server, decide, record in one fsync'ed bbolt commit. cpu-ns/op
// is the process's user+system CPU per heartbeat (it includes the local
// server's handler, so vigil's own share is lower).
func BenchmarkHeartbeat(b *testing.B) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"id":"c","object":"chat.completion","model":"m","choices":[{"index":0,"finish_reason":"tool_calls","message":{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"heartbeat_respond","arguments":"{\"outcome\":\"ok\",\"severity\":\"info\",\"summary\":\"fine\"}"}}]}}],"usage":{"prompt_tokens":900,"completion_tokens":20,"total_tokens":920}}`)
	}))
	defer srv.Close()
	clock := clockwork.NewFakeClockAt(time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC))
	a, err := agent.New(agent.Config{Provider: agent.ProviderOpenAI, BaseURL: srv.URL + "/v1", Model: "m", APIKey: "k"},
		nil, clockwork.NewRealClock(), nil)
	if err != nil {
		b.Fatal(err)
	}
	db, err := store.Open(filepath.Join(b.TempDir(), "vigil.db"), store.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	cfg := defaultConfig()
	cfg.MaxLLMCallsPerDay = 0
	e, err := New(cfg, Deps{Clock: clock, DB: db, Thinker: a, Sensors: simBoard(b, clock.Now)})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	c0, cpu0 := db.Commits(), cpuTime()
	b.ReportAllocs()
	for b.Loop() {
		clock.Advance(30 * time.Minute)
		if err := e.SampleOnce(ctx); err != nil {
			b.Fatal(err)
		}
		res, err := e.Check(ctx, CheckOptions{})
		if err != nil || res.Run.Outcome != OutcomeOK {
			b.Fatalf("heartbeat = %+v, %v", res.Run, err)
		}
	}
	b.ReportMetric(float64(cpuTime()-cpu0)/float64(b.N), "cpu-ns/op")
	b.ReportMetric(float64(db.Commits()-c0)/float64(b.N), "commits/op")
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
