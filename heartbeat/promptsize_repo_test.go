package heartbeat_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"

	"github.com/vigil-iot/vigil/agent"
	"github.com/vigil-iot/vigil/config"
	"github.com/vigil-iot/vigil/daemon"
	"github.com/vigil-iot/vigil/device"
	"github.com/vigil-iot/vigil/heartbeat"
	"github.com/vigil-iot/vigil/store"
)

// twice asks the real agent once without what is usual and once with it,
// so the server sees the same heartbeat's request both ways.
type twice struct{ a *agent.Agent }

func (t twice) Think(ctx context.Context, in agent.Input) (agent.Decision, error) {
	bare := in
	bare.Usual = nil
	if _, err := t.a.Think(ctx, bare); err != nil {
		return agent.Decision{}, err
	}
	return t.a.Think(ctx, in)
}

// TestPromptGrowthRepoConfig measures the LLM request of the repo's
// config.toml (its sensors simulated, its checklist and rules) after three
// days of learning, without and with each reading's usual value and
// z-score: it must not grow by more than 15 %.
func TestPromptGrowthRepoConfig(t *testing.T) {
	f, err := os.Open("../config.toml")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	cfg, err := config.Parse(f, "../config.toml")
	if err != nil {
		t.Fatal(err)
	}
	cfg.Heartbeat.Checklist = filepath.Join("..", cfg.Heartbeat.Checklist) // relative to the file, as cmd/vigil resolves it
	ec, err := daemon.EngineConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var sizes []int
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		sizes = append(sizes, len(body))
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"id":"c","object":"chat.completion","model":"m","choices":[{"index":0,"finish_reason":"tool_calls","message":{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"heartbeat_respond","arguments":"{\"outcome\":\"ok\",\"severity\":\"info\",\"summary\":\"fine\"}"}}]}}],"usage":{"prompt_tokens":900,"completion_tokens":20,"total_tokens":920}}`)
	}))
	defer srv.Close()
	clock := clockwork.NewFakeClockAt(time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC))
	a, err := agent.New(agent.Config{Provider: agent.ProviderOpenAI, BaseURL: srv.URL + "/v1", Model: "m", APIKey: "k"},
		nil, clockwork.NewRealClock(), nil)
	if err != nil {
		t.Fatal(err)
	}
	start := clock.Now()
	var sensors []device.Named
	for _, s := range cfg.Sensors {
		sim, err := device.NewSim(s.Name, s.Driver, start, clock.Now)
		if err != nil {
			t.Fatal(err)
		}
		sim.Every = 0 // no excursions: a quiet day
		sensors = append(sensors, device.Named{Name: s.Name, Sensor: sim})
	}
	sensors = append(sensors, device.Named{Name: "board", Sensor: device.NewSimHealth(start, clock.Now)})
	db, err := store.Open(filepath.Join(t.TempDir(), "vigil.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	e, err := heartbeat.New(ec, heartbeat.Deps{Clock: clock, DB: db, Thinker: twice{a}, Sensors: sensors})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for range 3 * 24 * 60 {
		clock.Advance(time.Minute)
		if err := e.SampleOnce(ctx); err != nil {
			t.Fatal(err)
		}
	}
	res, err := e.Check(ctx, heartbeat.CheckOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(sizes) != 2 {
		t.Fatalf("the LLM server saw %d requests, want 2 (run %+v)", len(sizes), res.Run)
	}
	before, after := sizes[0], sizes[1]
	t.Logf("PROMPTSIZE repo config.toml request body: %d B without what is usual, %d B with it (+%.1f %%)",
		before, after, 100*float64(after-before)/float64(before))
	if after <= before {
		t.Errorf("the request with what is usual (%d B) is not larger: the prompt carries nothing", after)
	}
	if float64(after) > 1.15*float64(before) {
		t.Errorf("request grew from %d to %d bytes, more than 15 %%", before, after)
	}
}
