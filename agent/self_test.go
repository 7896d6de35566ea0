package agent

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"

	"github.com/vigil-iot/vigil/redact"
	"github.com/vigil-iot/vigil/store"
)

// fakeSelf records what the model changed about its own heartbeat.
type fakeSelf struct {
	mu        sync.Mutex
	intervals []time.Duration
	notes     []string
}

func (s *fakeSelf) Remember(_ context.Context, note string) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.notes = append(s.notes, note)
	return "noted", nil
}

func (s *fakeSelf) SetInterval(_ context.Context, d time.Duration) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.intervals = append(s.intervals, d)
	return "interval set to " + d.String(), nil
}

// TestThinkToolsFollowModelMay checks the tools sent to the provider:
// model_may = ["pause"] offers neither remember nor set_interval, all
// three offer both, an empty list none of the three.
func TestThinkToolsFollowModelMay(t *testing.T) {
	tests := []struct {
		may        []string
		want, not  []string
		callsPause bool
	}{
		{nil, []string{ToolPause}, []string{ToolRemember, ToolSetInterval}, true},
		{[]string{"pause"}, []string{ToolPause}, []string{ToolRemember, ToolSetInterval}, true},
		{[]string{"pause", "interval", "notes"}, []string{ToolPause, ToolRemember, ToolSetInterval}, nil, true},
		{[]string{"notes"}, []string{ToolRemember}, []string{ToolPause, ToolSetInterval}, false},
		{[]string{}, nil, []string{ToolPause, ToolRemember, ToolSetInterval}, false},
	}
	for _, tt := range tests {
		forProviders(t, func(t *testing.T, p string) {
			t.Run(fmt.Sprintf("%q", tt.may), func(t *testing.T) {
				// The model tries to pause whether or not it may.
				f := newFake(t, p,
					turn{calls: []call{{"p1", ToolPause, `{"minutes":5}`}}},
					turn{calls: []call{respond("ok", "", "")}})
				cfg := testConfig(f)
				cfg.ModelMay, cfg.Self = tt.may, &fakeSelf{}
				d, err := think(t, newTestAgent(t, cfg, nil, nil))
				if err != nil {
					t.Fatalf("Think: %v", err)
				}
				names := toolNames(f.requests()[0])
				for _, w := range append(tt.want, ToolRespond, ToolReadSensor) {
					if !slices.Contains(names, w) {
						t.Errorf("tools sent = %v, want %s among them", names, w)
					}
				}
				for _, n := range tt.not {
					if slices.Contains(names, n) {
						t.Errorf("tools sent = %v, want no %s", names, n)
					}
				}
				if tt.callsPause {
					if d.Outcome != OutcomePaused || d.Calls != 1 {
						t.Errorf("Think = %+v, want paused after one call", d)
					}
					return
				}
				if d.Outcome != OutcomeOK || d.Calls != 2 {
					t.Fatalf("Think = %+v, want ok after the refused pause", d)
				}
				if got := toolResults(f.requests()[1])["p1"]; !strings.Contains(got, `unknown tool "pause_heartbeats"`) {
					t.Errorf("pause_heartbeats without pause in model_may answered %q, want unknown tool", got)
				}
			})
		})
	}
}

// TestThinkSetInterval: a scripted model sets its interval within the
// bounds (Self records it) and outside them (refused, Self not called).
func TestThinkSetInterval(t *testing.T) {
	tests := []struct {
		arg     string
		applied time.Duration // 0: refused
		result  string
	}{
		{"15m", 15 * time.Minute, "interval set to 15m0s"},
		{"10m", 10 * time.Minute, "interval set to 10m0s"},
		{"6h", 6 * time.Hour, "interval set to 6h0m0s"},
		{"5m", 0, "error: interval 5m is outside the allowed 10m to 6h (heartbeat.interval_min, interval_max); nothing changed"},
		{"7h", 0, "error: interval 7h is outside the allowed 10m to 6h"},
		{"soon", 0, `error: interval "soon": want a Go duration like 15m or 2h`},
		{"-1h", 0, `error: interval "-1h": want a Go duration`},
	}
	for _, tt := range tests {
		forProviders(t, func(t *testing.T, p string) {
			t.Run(tt.arg, func(t *testing.T) {
				f := newFake(t, p,
					turn{calls: []call{{"s1", ToolSetInterval, fmt.Sprintf(`{"interval":%q}`, tt.arg)}}},
					turn{calls: []call{respond("ok", "", "")}})
				self := &fakeSelf{}
				cfg := testConfig(f)
				cfg.ModelMay, cfg.Self = []string{"pause", "interval"}, self
				cfg.IntervalMin, cfg.IntervalMax = 10*time.Minute, 6*time.Hour
				d, err := think(t, newTestAgent(t, cfg, nil, nil))
				if err != nil || d.Outcome != OutcomeOK || d.Calls != 2 {
					t.Fatalf("Think = %+v, %v, want ok after 2 calls", d, err)
				}
				if got := toolResults(f.requests()[1])["s1"]; !strings.HasPrefix(got, tt.result) {
					t.Errorf("set_interval %s answered %q, want %q", tt.arg, got, tt.result)
				}
				var want []time.Duration
				if tt.applied > 0 {
					want = []time.Duration{tt.applied}
				}
				if !slices.Equal(self.intervals, want) {
					t.Errorf("Self.SetInterval calls = %v, want %v", self.intervals, want)
				}
			})
		})
	}
	t.Run("without Self", func(t *testing.T) {
		f := newFake(t, ProviderOpenAI,
			turn{calls: []call{{"s1", ToolSetInterval, `{"interval":"20m"}`}}},
			turn{calls: []call{respond("ok", "", "")}})
		cfg := testConfig(f)
		cfg.ModelMay = []string{"interval"}
		if _, err := think(t, newTestAgent(t, cfg, nil, nil)); err != nil {
			t.Fatal(err)
		}
		if got := toolResults(f.requests()[1])["s1"]; got != "error: setting the interval is not available" {
			t.Errorf("set_interval without Self = %q", got)
		}
	})
}

// TestThinkRemember checks what remember keeps and refuses.
func TestThinkRemember(t *testing.T) {
	long := strings.Repeat("é", MaxNoteLen+1) // runes, not bytes
	tests := []struct {
		name, note string
		kept       string // "": refused
		result     string
	}{
		{"kept", "  freezer door left open at 14:02; check it next time  ", "freezer door left open at 14:02; check it next time", "noted"},
		{"exactly 280", strings.Repeat("é", MaxNoteLen), strings.Repeat("é", MaxNoteLen), "noted"},
		{"too long", long, "", "error: note has 281 characters, more than the 280 allowed; nothing kept"},
		{"empty", "   ", "", "error: note is empty; nothing kept"},
		{"api key redacted", "the key is " + testKey, "the key is [redacted]", "noted"},
		{"configured secret redacted", "mqtt password hunter2-mqtt works", "mqtt password [redacted] works", "noted"},
		{"credentials redacted", "telegram 123456789:AAHk-2jD7s9d8f7g6h5j4k3l2m1n0b9v8c7x and password=abc123", "telegram [redacted] and password=[redacted]", "noted"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFake(t, ProviderOpenAI,
				turn{calls: []call{{"r1", ToolRemember, fmt.Sprintf(`{"note":%q}`, tt.note)}}},
				turn{calls: []call{respond("ok", "", "")}})
			self := &fakeSelf{}
			cfg := testConfig(f)
			cfg.ModelMay, cfg.Self, cfg.Redactor = []string{"notes"}, self, redact.New("hunter2-mqtt")
			if _, err := think(t, newTestAgent(t, cfg, nil, nil)); err != nil {
				t.Fatal(err)
			}
			if got := toolResults(f.requests()[1])["r1"]; !strings.HasPrefix(got, tt.result) {
				t.Errorf("remember answered %q, want %q", got, tt.result)
			}
			var want []string
			if tt.kept != "" {
				want = []string{tt.kept}
			}
			if !slices.Equal(self.notes, want) {
				t.Errorf("Self.Remember got %q, want %q", self.notes, want)
			}
		})
	}
}

// dbSelf keeps notes in a real state file, as cmd does.
type dbSelf struct {
	db  *store.DB
	now func() time.Time
}

func (s dbSelf) Remember(_ context.Context, note string) (string, error) {
	return "noted", s.db.AddNote(store.Note{Time: s.now(), Text: note})
}

func (s dbSelf) SetInterval(context.Context, time.Duration) (string, error) {
	return "", errors.New("not in this test")
}

// TestThinkNotesReachNextPrompt: a note written with remember in one
// heartbeat is in the state file and in the next heartbeat's prompt, with
// its age, under the heading that marks it as the model's own words.
func TestThinkNotesReachNextPrompt(t *testing.T) {
	db, err := store.Open(filepath.Join(t.TempDir(), "vigil.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	forProviders(t, func(t *testing.T, p string) {
		if _, err := db.ClearNotes(); err != nil {
			t.Fatal(err)
		}
		f := newFake(t, p,
			turn{calls: []call{{"r1", ToolRemember, `{"note":"soil dried 2 % in 30 min; watch the pump"}`}}},
			turn{calls: []call{respond("ok", "", "")}},
			turn{calls: []call{respond("ok", "", "")}})
		in := quietInput()
		cfg := testConfig(f)
		cfg.ModelMay, cfg.Self = []string{"pause", "notes"}, dbSelf{db: db, now: func() time.Time { return in.Now }}
		a := newTestAgent(t, cfg, nil, nil)
		if _, err := a.Think(context.Background(), in); err != nil {
			t.Fatal(err)
		}
		if strings.Contains(userText(f.requests()[0]), "Your own notes") {
			t.Errorf("first prompt has a notes section before any note was kept:\n%s", userText(f.requests()[0]))
		}

		// The next heartbeat, three hours later, reads the ring back.
		stored, err := db.Notes()
		if err != nil || len(stored) != 1 {
			t.Fatalf("Notes() = %v, %v, want the one note", stored, err)
		}
		next := quietInput()
		next.Now = in.Now.Add(3 * time.Hour)
		for _, n := range stored {
			next.Notes = append(next.Notes, Note{Time: n.Time, Text: n.Text})
		}
		if _, err := a.Think(context.Background(), next); err != nil {
			t.Fatal(err)
		}
		want := notesHeading + "- 3h ago: soil dried 2 % in 30 min; watch the pump"
		if got := userText(f.requests()[2]); !strings.Contains(got, want) {
			t.Errorf("second prompt lacks the note:\n%s\nwant it to contain:\n%s", got, want)
		}
	})
}

// TestThinkScoutAliases: a scout answering noop or done ends the run as ok
// with exactly one HTTP call, no escalation.
func TestThinkScoutAliases(t *testing.T) {
	for _, outcome := range []string{"done", "noop", "DONE"} {
		forProviders(t, func(t *testing.T, p string) {
			t.Run(outcome, func(t *testing.T) {
				f := newFake(t, p, turn{calls: []call{respond(outcome, "", "")}})
				cfg := testConfig(f)
				cfg.ScoutModel = "scout-model"
				d, err := think(t, newTestAgent(t, cfg, nil, nil))
				if err != nil {
					t.Fatalf("Think: %v", err)
				}
				if n := len(f.requests()); n != 1 || d.Calls != 1 || d.Outcome != OutcomeOK || d.Escalated {
					t.Errorf("scout answering %s: %d requests, Think = %+v; want 1 request, ok, not escalated", outcome, n, d)
				}
			})
		})
	}
}

// TestThinkMaxRetries: a 503 is sent MaxRetries more times, and never
// again with retries off (llm.max_retries = 0, which cmd passes as -1).
func TestThinkMaxRetries(t *testing.T) {
	for _, tt := range []struct{ retries, requests int }{{-1, 1}, {1, 2}, {3, 4}} {
		t.Run(fmt.Sprint(tt.retries), func(t *testing.T) {
			f := newFakeFunc(t, ProviderOpenAI, func(int) turn { return turn{status: 503, body: `{"error":"loading model"}`} })
			cfg := testConfig(f)
			cfg.MaxRetries = tt.retries
			d, err := think(t, newTestAgent(t, cfg, nil, nil))
			if !errors.Is(err, ErrUnreachable) || ErrorClass(err) != "http_5xx" {
				t.Fatalf("Think error = %v (class %q), want ErrUnreachable, http_5xx", err, ErrorClass(err))
			}
			if n := len(f.requests()); n != tt.requests || d.Calls != tt.requests {
				t.Errorf("MaxRetries %d: %d requests (Calls %d), want %d", tt.retries, n, d.Calls, tt.requests)
			}
		})
	}
}

// TestThinkBackoffDoubles watches the retries on the fake clock: 1s, 2s,
// 4s after a 503 each, with RetryBase 1s and no Retry-After.
func TestThinkBackoffDoubles(t *testing.T) {
	start := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	clock := clockwork.NewFakeClockAt(start)
	var mu sync.Mutex
	var at []time.Duration
	f := newFakeFunc(t, ProviderOpenAI, func(int) turn {
		mu.Lock()
		at = append(at, clock.Since(start))
		mu.Unlock()
		return turn{status: 503, body: `{"error":"busy"}`}
	})
	cfg := testConfig(f)
	cfg.MaxRetries, cfg.RetryBase, cfg.RetryMax = 3, time.Second, 30*time.Second
	a := newTestAgent(t, cfg, clock, nil)
	done := make(chan error, 1)
	go func() {
		_, err := a.Think(context.Background(), quietInput())
		done <- err
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for {
		select {
		case err := <-done:
			if !errors.Is(err, ErrUnreachable) {
				t.Fatalf("Think error = %v, want ErrUnreachable", err)
			}
			mu.Lock()
			defer mu.Unlock()
			want := []time.Duration{0, time.Second, 3 * time.Second, 7 * time.Second}
			if !slices.Equal(at, want) {
				t.Fatalf("requests at %v on the fake clock, want %v (waits of 1s, 2s, 4s)", at, want)
			}
			return
		default:
		}
		// Step in quarter seconds while the agent waits on a timer.
		wctx, wcancel := context.WithTimeout(ctx, 50*time.Millisecond)
		err := clock.BlockUntilContext(wctx, 1)
		wcancel()
		if err == nil {
			clock.Advance(250 * time.Millisecond)
		}
		if ctx.Err() != nil {
			t.Fatal("Think did not finish")
		}
	}
}

func TestErrorClass(t *testing.T) {
	tests := []struct {
		err  error
		want string
	}{
		{nil, ""},
		{&ProviderError{Status: 0, Retryable: true, Timeout: true, Err: errors.New("no response within 60s")}, "timeout"},
		{&ProviderError{Status: 0, Retryable: true, Err: errors.New("connection refused")}, "network"},
		{fmt.Errorf("model m: %w", &ProviderError{Status: 429, Retryable: true, Err: errors.New("slow down")}), "http_429"},
		{&ProviderError{Status: 529, Retryable: true, Err: errors.New("overloaded")}, "http_5xx"},
		{&ProviderError{Status: 401, Err: errors.New("bad key")}, "http_401"},
		{&ProviderError{Status: 400, Err: errors.New("bad request")}, "http_4xx"},
		{&ProviderError{Status: 200, NoAnswer: true, Err: errors.New("refusal: I can't")}, "refusal"},
		{&ProviderError{Status: 200, NoAnswer: true, Err: errors.New("finish_reason content_filter: withheld")}, "refusal"},
		{&ProviderError{Status: 200, NoAnswer: true, Err: errors.New("finish_reason length: cut")}, "no_answer"},
		{&ProviderError{Status: 200, Err: errors.New("decode response: eof")}, "malformed"},
		{fmt.Errorf("model m: %w after 6 steps", ErrLoop), "no_decision"},
		{fmt.Errorf("%w: 3 calls", ErrBudget), "budget"},
		{context.DeadlineExceeded, "timeout"},
		{errors.New("something else"), "error"},
	}
	for _, tt := range tests {
		if got := ErrorClass(tt.err); got != tt.want {
			t.Errorf("ErrorClass(%v) = %q, want %q", tt.err, got, tt.want)
		}
	}
}

// TestThinkRedactsWhatTheModelWrote: a model that echoes a configured
// secret with no known prefix (and the API key) in its tool calls' names
// and arguments and in its summary returns a Decision without them; so
// does the error of a run it ends in a loop.
func TestThinkRedactsWhatTheModelWrote(t *testing.T) {
	const secret = "q7Zt9wLmN3xK2pR8vB4c"
	forProviders(t, func(t *testing.T, p string) {
		f := newFake(t, p,
			turn{calls: []call{{"c1", ToolReadSensor, `{"name":"` + secret + `"}`}, {"c2", secret, `{"k":"` + testKey + `"}`}}},
			turn{calls: []call{respond("alert", "warning", "saw "+secret+" and "+testKey)}})
		cfg := testConfig(f)
		cfg.Redactor = redact.New(secret)
		d, err := think(t, newTestAgent(t, cfg, nil, nil))
		if err != nil {
			t.Fatal(err)
		}
		want := []string{`read_sensor {"name":"[redacted]"}`, `[redacted] {"k":"[redacted]"}`,
			`heartbeat_respond {"outcome":"alert","severity":"warning","summary":"saw [redacted] and [redacted]"}`}
		if !slices.Equal(d.ToolCalls, want) || d.Summary != "saw [redacted] and [redacted]" {
			t.Errorf("Think = tool calls %q, summary %q; want %q and the summary redacted", d.ToolCalls, d.Summary, want)
		}

		f = newFakeFunc(t, p, func(int) turn { return turn{calls: []call{{"c", secret, `{}`}}} })
		cfg = testConfig(f)
		cfg.Redactor = redact.New(secret)
		_, err = think(t, newTestAgent(t, cfg, nil, nil))
		if !errors.Is(err, ErrLoop) || strings.Contains(err.Error(), secret) || !strings.Contains(err.Error(), "[redacted] called 3 times") {
			t.Errorf("Think error = %v, want ErrLoop naming the tool [redacted]", err)
		}
	})
}
