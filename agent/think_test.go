package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
	_ "time/tzdata" // Europe/Berlin without the host's zoneinfo

	"github.com/google/go-cmp/cmp"
	"github.com/jonboulle/clockwork"

	"github.com/vigil-iot/vigil/alert"
)

func think(t *testing.T, a *Agent) (Decision, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return a.Think(ctx, quietInput())
}

func forProviders(t *testing.T, fn func(t *testing.T, provider string)) {
	for _, p := range providers {
		t.Run(p, func(t *testing.T) { fn(t, p) })
	}
}

func TestThinkOK(t *testing.T) {
	forProviders(t, func(t *testing.T, p string) {
		f := newFake(t, p, turn{calls: []call{respond("ok", "", "all fine")}, in: 900, out: 25})
		d, err := think(t, newTestAgent(t, testConfig(f), nil, nil))
		if err != nil {
			t.Fatalf("Think: %v", err)
		}
		want := Decision{Outcome: OutcomeOK, Summary: "all fine", Calls: 1, Tokens: 925,
			ToolCalls: []string{`heartbeat_respond {"outcome":"ok","severity":"","summary":"all fine"}`}}
		if diff := cmp.Diff(want, d); diff != "" {
			t.Errorf("Think (-want +got):\n%s", diff)
		}
		f.checkRequests(t)
		reqs := f.requests()
		if got, want := toolNames(reqs[0]), []string{ToolListSensors, ToolReadSensor, ToolSensorHistory, ToolSystemStatus, ToolPause, ToolRespond}; !slices.Equal(got, want) {
			t.Errorf("tools offered %v, want %v", got, want)
		}
		if got := reqs[0].body["model"]; got != "main-model" {
			t.Errorf("model %v, want main-model", got)
		}
		if u := userText(reqs[0]); !strings.Contains(u, "Is the freezer colder than -15 °C?") || !strings.Contains(u, "freezer.temperature = -18.25 °C") {
			t.Errorf("user message lacks the checklist or readings:\n%s", u)
		}
	})
}

func TestThinkAlertAfterTool(t *testing.T) {
	forProviders(t, func(t *testing.T, p string) {
		f := newFake(t, p,
			turn{text: "Let me look at the freezer.", calls: []call{{"call_a1", ToolReadSensor, `{"name": "freezer"}`}}, in: 1000, out: 30},
			turn{calls: []call{respond("alert", "critical", "Freezer door may be open")}, in: 1100, out: 40},
		)
		d, err := think(t, newTestAgent(t, testConfig(f), nil, nil))
		if err != nil {
			t.Fatalf("Think: %v", err)
		}
		if d.Outcome != OutcomeAlert || d.Severity != alert.Critical || d.Summary != "Freezer door may be open" {
			t.Errorf("Think = %+v, want critical alert", d)
		}
		if d.Calls != 2 || d.Tokens != 2170 {
			t.Errorf("Calls, Tokens = %d, %d, want 2, 2170", d.Calls, d.Tokens)
		}
		if want := `read_sensor {"name":"freezer"}`; len(d.ToolCalls) != 2 || d.ToolCalls[0] != want {
			t.Errorf("ToolCalls = %q, want %q first", d.ToolCalls, want)
		}
		f.checkRequests(t)
		res := toolResults(f.requests()[1])
		if got := res["call_a1"]; !strings.Contains(got, `"temperature":{"value":-18.25,"unit":"°C"}`) {
			t.Errorf("tool result for call_a1 = %q, want the freezer reading", got)
		}
	})
}

func TestThinkEscalate(t *testing.T) {
	forProviders(t, func(t *testing.T, p string) {
		f := newFake(t, p,
			turn{calls: []call{{"call_s", ToolRespond, `{"outcome":"escalate","reason":"soil moisture trend unclear"}`}}, in: 800, out: 20},
			turn{calls: []call{{"call_h", ToolSensorHistory, `{"name":"air","quantity":"temperature","window":"2h"}`}}, in: 1200, out: 30},
			turn{calls: []call{respond("ok", "info", "soil fine")}, in: 1900, out: 20},
		)
		cfg := testConfig(f)
		cfg.ScoutModel = "scout-model"
		d, err := think(t, newTestAgent(t, cfg, nil, nil))
		if err != nil {
			t.Fatalf("Think: %v", err)
		}
		if !d.Escalated || d.Escalation != "soil moisture trend unclear" || d.Outcome != OutcomeOK {
			t.Errorf("Think = %+v, want escalated ok", d)
		}
		if d.Calls != 3 || d.Tokens != 800+20+1200+30+1900+20 {
			t.Errorf("Calls, Tokens = %d, %d, want 3, %d", d.Calls, d.Tokens, 800+20+1200+30+1900+20)
		}
		f.checkRequests(t)
		reqs := f.requests()
		if got := reqs[0].body["model"]; got != "scout-model" {
			t.Errorf("first call model %v, want scout-model", got)
		}
		if got := toolNames(reqs[0]); !slices.Equal(got, []string{ToolRespond}) {
			t.Errorf("scout tools %v, want only heartbeat_respond", got)
		}
		if !strings.Contains(string(reqs[0].raw), `"enum":["ok","alert","escalate"]`) {
			t.Errorf("scout's heartbeat_respond lacks escalate: %s", reqs[0].raw)
		}
		if got := reqs[1].body["model"]; got != "main-model" {
			t.Errorf("escalated call model %v, want main-model", got)
		}
		if got := toolNames(reqs[1]); len(got) != 6 {
			t.Errorf("main model tools %v, want all six", got)
		}
		if strings.Contains(string(reqs[1].raw), `"escalate"`) {
			t.Errorf("main model offered escalate")
		}
		if u := userText(reqs[1]); !strings.Contains(u, "soil moisture trend unclear") {
			t.Errorf("main model's user message lacks the reason:\n%s", u)
		}
		if got := toolResults(reqs[2])["call_h"]; !strings.Contains(got, `"window":"2h0m0s"`) || !strings.Contains(got, `"points":[`) {
			t.Errorf("sensor_history result = %q", got)
		}
	})
}

func TestThinkScout(t *testing.T) {
	tests := []struct {
		name      string
		turn      turn
		outcome   string
		escalated bool
	}{
		{"ok", turn{calls: []call{respond("ok", "", "")}}, OutcomeOK, false},
		{"alert", turn{calls: []call{respond("alert", "warning", "tank low")}}, OutcomeAlert, false},
		{"text ok", turn{text: "HEARTBEAT_OK"}, OutcomeOK, false},
		{"free text escalates", turn{text: "I am not sure about the soil."}, OutcomeOK, true},
		{"other tool then escalate", turn{calls: []call{{"c1", ToolReadSensor, `{"name":"air"}`}}}, OutcomeOK, true},
	}
	for _, tt := range tests {
		forProviders(t, func(t *testing.T, p string) {
			t.Run(tt.name, func(t *testing.T) {
				turns := []turn{tt.turn}
				if tt.name == "other tool then escalate" {
					turns = append(turns, turn{calls: []call{{"c2", ToolRespond, `{"outcome":"escalate"}`}}})
				}
				if tt.escalated {
					turns = append(turns, turn{calls: []call{respond("ok", "", "")}})
				}
				f := newFake(t, p, turns...)
				cfg := testConfig(f)
				cfg.ScoutModel = "scout-model"
				d, err := think(t, newTestAgent(t, cfg, nil, nil))
				if err != nil {
					t.Fatalf("Think: %v", err)
				}
				if d.Outcome != tt.outcome || d.Escalated != tt.escalated || d.Calls != len(turns) {
					t.Errorf("Think = %+v, want outcome %s, escalated %t, %d calls", d, tt.outcome, tt.escalated, len(turns))
				}
				f.checkRequests(t)
				if tt.name == "other tool then escalate" {
					if got := toolResults(f.requests()[1])["c1"]; !strings.Contains(got, "unknown tool") {
						t.Errorf("scout calling read_sensor got %q, want unknown tool", got)
					}
				}
			})
		})
	}
}

func TestThinkPause(t *testing.T) {
	tests := []struct {
		args string
		want time.Duration
	}{
		{`{"minutes":15}`, 15 * time.Minute},
		{`{}`, 2 * time.Minute},
		{`{"minutes":500}`, 60 * time.Minute},
		{`{"minutes":0}`, time.Minute},
		{`{"minutes":4.6}`, 5 * time.Minute},
	}
	for _, tt := range tests {
		forProviders(t, func(t *testing.T, p string) {
			t.Run(tt.args, func(t *testing.T) {
				// The pause ends the run: it outweighs an ok in the same
				// batch, and both calls are recorded (an alert would
				// outweigh it: TestThinkMostSevereOfTurnWins).
				f := newFake(t, p, turn{calls: []call{{"p1", ToolPause, tt.args}, respond("ok", "", "x")}})
				d, err := think(t, newTestAgent(t, testConfig(f), nil, nil))
				if err != nil {
					t.Fatalf("Think: %v", err)
				}
				if d.Outcome != OutcomePaused || d.Pause != tt.want || len(d.ToolCalls) != 2 || d.Calls != 1 {
					t.Errorf("Think = %+v, want paused for %v, two tool calls recorded", d, tt.want)
				}
			})
		})
	}
}

func TestThinkText(t *testing.T) {
	tests := []struct {
		text     string
		outcome  string
		severity alert.Severity
		summary  string
	}{
		{"HEARTBEAT_OK", OutcomeOK, 0, ""},
		{"**HEARTBEAT_OK**", OutcomeOK, 0, ""},
		{"All five checklist items look fine.\n\nHEARTBEAT_OK.", OutcomeOK, 0, "All five checklist items look fine."},
		{"ALERT: tank voltage 0.9 V, the tank is nearly empty", OutcomeAlert, alert.Warning, "tank voltage 0.9 V, the tank is nearly empty"},
		{"The freezer seems warmer than usual.", OutcomeAlert, alert.Warning, "The freezer seems warmer than usual."},
	}
	for _, tt := range tests {
		forProviders(t, func(t *testing.T, p string) {
			t.Run(tt.text, func(t *testing.T) {
				f := newFake(t, p, turn{text: tt.text, in: 10, out: 5})
				d, err := think(t, newTestAgent(t, testConfig(f), nil, nil))
				if err != nil {
					t.Fatalf("Think: %v", err)
				}
				if d.Outcome != tt.outcome || d.Severity != tt.severity || d.Summary != tt.summary || d.Tokens != 15 {
					t.Errorf("Think = %+v, want %s %v %q", d, tt.outcome, tt.severity, tt.summary)
				}
			})
		})
	}
}

func TestThinkToolErrors(t *testing.T) {
	tests := []struct {
		name string
		call call
		want string // in the tool result the model sees
	}{
		{"malformed arguments", call{"bad1", ToolReadSensor, `{"name": "air"`}, "error: invalid arguments"},
		{"wrong argument type", call{"bad2", ToolReadSensor, `{"name": 7}`}, "error: invalid arguments"},
		{"unknown tool", call{"bad3", "rm_rf", `{}`}, `error: unknown tool "rm_rf"`},
		{"unknown sensor", call{"bad4", ToolReadSensor, `{"name":"garage"}`}, `error: unknown sensor "garage"`},
		{"bad outcome", call{"bad5", ToolRespond, `{"outcome":"escalate"}`}, `error: outcome must be "ok" or "alert"`},
		{"bad window", call{"bad6", ToolSensorHistory, `{"name":"air","quantity":"temperature","window":"forever"}`}, `error: window "forever"`},
	}
	for _, tt := range tests {
		forProviders(t, func(t *testing.T, p string) {
			t.Run(tt.name, func(t *testing.T) {
				f := newFake(t, p, turn{calls: []call{tt.call}}, turn{calls: []call{respond("ok", "", "")}})
				d, err := think(t, newTestAgent(t, testConfig(f), nil, nil))
				if err != nil {
					t.Fatalf("Think: %v", err)
				}
				if d.Outcome != OutcomeOK || d.Calls != 2 || len(d.ToolCalls) != 2 {
					t.Errorf("Think = %+v, want ok after 2 calls", d)
				}
				f.checkRequests(t)
				if got := toolResults(f.requests()[1])[tt.call.id]; !strings.HasPrefix(got, tt.want) {
					t.Errorf("tool result = %q, want prefix %q", got, tt.want)
				}
				if p == ProviderAnthropic && !strings.Contains(string(f.requests()[1].raw), `"is_error":true`) {
					t.Errorf("tool_result lacks is_error")
				}
			})
		})
	}
}

func TestThinkLoops(t *testing.T) {
	tests := []struct {
		name      string
		script    func(n int) turn
		mod       func(*Config)
		calls     int
		toolCalls int
		msg       string
	}{
		{"breaker", func(int) turn { return turn{calls: []call{{"c", ToolListSensors, `{}`}}, in: 10, out: 1} },
			nil, 3, 3, "list_sensors called 3 times"},
		{"breaker ignores key order and spacing", func(n int) turn {
			args := []string{`{"name":"air"}`, `{ "name" : "air" }`, "{\"name\":\"air\"}\n"}[n%3]
			return turn{calls: []call{{"c", ToolReadSensor, args}}, in: 10, out: 1}
		}, nil, 3, 3, "read_sensor called 3 times"},
		{"max steps", func(n int) turn {
			return turn{calls: []call{{"c", ToolReadSensor, `{"name":"s` + string(rune('a'+n)) + `"}`}}, in: 10, out: 1}
		}, func(c *Config) { c.MaxSteps = 4 }, 4, 4, "after 4 steps"},
		{"tool call cap", func(n int) turn {
			var cs []call
			for i := range 5 {
				cs = append(cs, call{"c" + string(rune('0'+i)), ToolReadSensor, `{"name":"s` + string(rune('a'+i)) + `"}`})
			}
			return turn{calls: cs, in: 10, out: 1}
		}, func(c *Config) { c.MaxToolCalls = 3 }, 1, 4, "more than 3 tool calls"},
	}
	for _, tt := range tests {
		forProviders(t, func(t *testing.T, p string) {
			t.Run(tt.name, func(t *testing.T) {
				f := newFakeFunc(t, p, tt.script)
				cfg := testConfig(f)
				if tt.mod != nil {
					tt.mod(&cfg)
				}
				d, err := think(t, newTestAgent(t, cfg, nil, nil))
				if !errors.Is(err, ErrLoop) || !strings.Contains(err.Error(), tt.msg) {
					t.Fatalf("Think error = %v, want ErrLoop with %q", err, tt.msg)
				}
				if errors.Is(err, ErrUnreachable) {
					t.Errorf("loop error %v matches ErrUnreachable", err)
				}
				if d.Calls != tt.calls || d.Tokens != 11*tt.calls || len(d.ToolCalls) != tt.toolCalls || d.Outcome != "" {
					t.Errorf("Think = %+v, want %d calls, %d tokens, %d tool calls, no outcome", d, tt.calls, 11*tt.calls, tt.toolCalls)
				}
				f.checkRequests(t)
			})
		})
	}
}

func TestThinkMalformed(t *testing.T) {
	tests := []struct {
		name string
		body map[string]string // provider -> body
	}{
		{"not json", map[string]string{ProviderOpenAI: "<html>bad gateway</html>", ProviderAnthropic: "<html>bad gateway</html>"}},
		{"truncated", map[string]string{ProviderOpenAI: `{"choices":[{"message":{"content":"HEART`, ProviderAnthropic: `{"type":"message","content":[{"type":"te`}},
		{"no answer", map[string]string{ProviderOpenAI: `{"choices":[],"usage":{"total_tokens":7}}`, ProviderAnthropic: `{"type":"message","usage":{"input_tokens":5,"output_tokens":2}}`}},
		{"wrong shape", map[string]string{ProviderOpenAI: `{"choices":{"a":1}}`, ProviderAnthropic: `{"type":"message","content":"text"}`}},
		// An error without an outage's code or type: not retried (one with
		// one is an outage: TestThinkErrorInside200).
		{"error object", map[string]string{ProviderOpenAI: `{"error":{"message":"upstream failed"}}`, ProviderAnthropic: `{"type":"error","error":{"type":"invalid_request_error","message":"upstream failed"}}`}},
	}
	for _, tt := range tests {
		forProviders(t, func(t *testing.T, p string) {
			t.Run(tt.name, func(t *testing.T) {
				f := newFake(t, p, turn{body: tt.body[p]})
				d, err := think(t, newTestAgent(t, testConfig(f), nil, nil))
				if !errors.Is(err, ErrMalformed) || errors.Is(err, ErrUnreachable) || errors.Is(err, ErrRejected) {
					t.Fatalf("Think error = %v, want only ErrMalformed", err)
				}
				if d.Calls != 1 {
					t.Errorf("Calls = %d, want 1 (no retry)", d.Calls)
				}
				if tt.name == "no answer" && d.Tokens != 7 {
					t.Errorf("Tokens = %d, want 7 counted from usage", d.Tokens)
				}
			})
		})
	}
}

func TestThinkRetries(t *testing.T) {
	forProviders(t, func(t *testing.T, p string) {
		t.Run("500 then ok", func(t *testing.T) {
			f := newFake(t, p,
				turn{status: 500, body: `{"error":{"message":"internal"}}`},
				turn{status: 503, body: `{"error":"model is loading"}`},
				turn{calls: []call{respond("ok", "", "")}, in: 50, out: 5})
			log, buf := logBuffer()
			d, err := think(t, newTestAgent(t, testConfig(f), nil, log))
			if err != nil {
				t.Fatalf("Think: %v", err)
			}
			if d.Outcome != OutcomeOK || d.Calls != 3 || d.Tokens != 55 {
				t.Errorf("Think = %+v, want ok after 3 calls, 55 tokens", d)
			}
			if n := strings.Count(buf.String(), "llm retry"); n != 2 {
				t.Errorf("logged %d retries, want 2:\n%s", n, buf)
			}
		})
		t.Run("5xx until retries run out", func(t *testing.T) {
			f := newFakeFunc(t, p, func(int) turn { return turn{status: 502, body: "bad gateway"} })
			d, err := think(t, newTestAgent(t, testConfig(f), nil, nil))
			var pe *ProviderError
			if !errors.Is(err, ErrUnreachable) || !errors.As(err, &pe) || pe.Status != 502 {
				t.Fatalf("Think error = %v, want ErrUnreachable with status 502", err)
			}
			if d.Calls != 3 || d.Outcome != "" {
				t.Errorf("Think = %+v, want 3 calls (1 + 2 retries) and no outcome", d)
			}
		})
		t.Run("hang past the timeout", func(t *testing.T) {
			f := newFake(t, p, turn{hang: true}, turn{hang: true})
			cfg := testConfig(f)
			cfg.Timeout, cfg.MaxRetries = 50*time.Millisecond, 1
			d, err := think(t, newTestAgent(t, cfg, nil, nil))
			if !errors.Is(err, ErrUnreachable) || !strings.Contains(err.Error(), "no response within 50ms") {
				t.Fatalf("Think error = %v, want ErrUnreachable after a timeout", err)
			}
			if d.Calls != 2 {
				t.Errorf("Calls = %d, want 2", d.Calls)
			}
		})
		t.Run("connection refused", func(t *testing.T) {
			f := newFake(t, p)
			cfg := testConfig(f)
			f.srv.Close()
			d, err := think(t, newTestAgent(t, cfg, nil, nil))
			if !errors.Is(err, ErrUnreachable) {
				t.Fatalf("Think error = %v, want ErrUnreachable", err)
			}
			if d.Calls != 3 {
				t.Errorf("Calls = %d, want 3", d.Calls)
			}
		})
		t.Run("retry-after beyond RetryMax gives up at once", func(t *testing.T) {
			f := newFake(t, p, turn{status: 429, header: map[string]string{"Retry-After": "3600"}, body: `{"error":{"message":"rate limited"}}`})
			d, err := think(t, newTestAgent(t, testConfig(f), nil, nil))
			var pe *ProviderError
			if !errors.As(err, &pe) || !errors.Is(err, ErrUnreachable) || pe.RetryAfter != time.Hour {
				t.Fatalf("Think error = %v, want ErrUnreachable with RetryAfter 1h", err)
			}
			if d.Calls != 1 {
				t.Errorf("Calls = %d, want 1", d.Calls)
			}
		})
		t.Run("parent context cancelled", func(t *testing.T) {
			f := newFake(t, p, turn{hang: true})
			ctx, cancel := context.WithCancel(context.Background())
			a := newTestAgent(t, testConfig(f), nil, nil)
			go func() {
				for len(f.requests()) == 0 {
					time.Sleep(time.Millisecond)
				}
				cancel()
			}()
			d, err := a.Think(ctx, quietInput())
			if !errors.Is(err, context.Canceled) || errors.Is(err, ErrUnreachable) {
				t.Fatalf("Think error = %v, want context.Canceled only", err)
			}
			if d.Calls != 1 {
				t.Errorf("Calls = %d, want 1", d.Calls)
			}
		})
	})
}

// TestThinkRetryAfter checks the wait honours Retry-After on the injected clock.
func TestThinkRetryAfter(t *testing.T) {
	start := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		name   string
		header func(now time.Time) string
		wait   time.Duration
		ms     string // retry-after-ms, when set
	}{
		{"seconds", func(time.Time) string { return "7" }, 7 * time.Second, ""},
		{"http date", func(now time.Time) string { return now.Add(12 * time.Second).Format(http.TimeFormat) }, 12 * time.Second, ""},
		// OpenAI sends both; the finer one wins.
		{"retry-after-ms", func(time.Time) string { return "30" }, 2500 * time.Millisecond, "2500"},
	}
	for _, tt := range tests {
		forProviders(t, func(t *testing.T, p string) {
			t.Run(tt.name, func(t *testing.T) {
				clock := clockwork.NewFakeClockAt(start)
				h := map[string]string{"Retry-After": tt.header(start)}
				if tt.ms != "" {
					h["retry-after-ms"] = tt.ms
				}
				f := newFake(t, p,
					turn{status: 429, header: h, body: `{"error":{"message":"slow down"}}`},
					turn{calls: []call{respond("ok", "", "")}, in: 3, out: 4})
				cfg := testConfig(f)
				cfg.RetryMax = time.Minute
				a := newTestAgent(t, cfg, clock, nil)
				type result struct {
					d   Decision
					err error
				}
				done := make(chan result, 1)
				go func() {
					d, err := a.Think(context.Background(), quietInput())
					done <- result{d, err}
				}()
				ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
				defer cancel()
				if err := clock.BlockUntilContext(ctx, 1); err != nil {
					t.Fatalf("agent never waited: %v", err)
				}
				clock.Advance(tt.wait - time.Second)
				select {
				case r := <-done:
					t.Fatalf("Think returned %+v, %v before Retry-After elapsed", r.d, r.err)
				default:
				}
				if n := len(f.requests()); n != 1 {
					t.Fatalf("%d requests before Retry-After elapsed, want 1", n)
				}
				clock.Advance(time.Second)
				var r result
				select {
				case r = <-done:
				case <-ctx.Done():
					t.Fatal("Think did not retry after Retry-After elapsed")
				}
				if r.err != nil || r.d.Outcome != OutcomeOK || r.d.Calls != 2 || r.d.Tokens != 7 {
					t.Errorf("Think = %+v, %v, want ok after 2 calls, 7 tokens", r.d, r.err)
				}
			})
		})
	}
}

func TestThinkRejected(t *testing.T) {
	bodies := map[string]string{
		ProviderOpenAI:    `{"error":{"message":"Incorrect API key provided: ` + testKey + `","type":"invalid_request_error","param":null,"code":"invalid_api_key"}}`,
		ProviderAnthropic: `{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key ` + testKey + `"}}`,
	}
	for _, status := range []int{400, 401, 403, 404} {
		forProviders(t, func(t *testing.T, p string) {
			t.Run(http.StatusText(status), func(t *testing.T) {
				f := newFake(t, p, turn{status: status, body: bodies[p]})
				log, buf := logBuffer()
				d, err := think(t, newTestAgent(t, testConfig(f), nil, log))
				if !errors.Is(err, ErrRejected) || errors.Is(err, ErrUnreachable) || errors.Is(err, ErrMalformed) {
					t.Fatalf("Think error = %v, want only ErrRejected", err)
				}
				if d.Calls != 1 {
					t.Errorf("Calls = %d, want 1 (never retried)", d.Calls)
				}
				msg := err.Error()
				if strings.Contains(msg, testKey) || strings.Contains(buf.String(), testKey) {
					t.Errorf("API key leaked: error %q, log %q", msg, buf)
				}
				if !strings.Contains(msg, "[redacted]") || !strings.Contains(msg, fmt.Sprintf("http %d", status)) {
					t.Errorf("error %q lacks the provider's message", msg)
				}
			})
		})
	}
}

func TestThinkRedirectNotFollowed(t *testing.T) {
	target := newFake(t, ProviderAnthropic, turn{calls: []call{respond("ok", "", "")}})
	f := newFake(t, ProviderAnthropic, turn{status: http.StatusTemporaryRedirect, header: map[string]string{"Location": target.srv.URL + "/v1/messages"}})
	_, err := think(t, newTestAgent(t, testConfig(f), nil, nil))
	if !errors.Is(err, ErrRejected) || !strings.Contains(err.Error(), "redirect") {
		t.Fatalf("Think error = %v, want ErrRejected naming the redirect", err)
	}
	if n := len(target.requests()); n != 0 {
		t.Errorf("redirect followed: the key was sent to another server (%d requests)", n)
	}
}

func TestNew(t *testing.T) {
	tests := []struct {
		name string
		cfg  Config
		want string // error substring; "" for success
	}{
		{"openai default", Config{Model: "m"}, ""},
		{"anthropic with /v1", Config{Provider: "anthropic", BaseURL: "https://api.anthropic.com/v1/", Model: "m"}, ""},
		{"no model", Config{Provider: "openai"}, "model is empty"},
		{"unknown provider", Config{Provider: "gemini", Model: "m"}, `unknown provider "gemini"`},
		{"bad url", Config{BaseURL: "api.openai.com", Model: "m"}, "want http:// or https://"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, err := New(tt.cfg, nil, nil, nil)
			if tt.want == "" {
				if err != nil {
					t.Fatalf("New: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("New = %v, %v, want error %q", a, err, tt.want)
			}
		})
	}
	a, _ := New(Config{Provider: "anthropic", BaseURL: "https://api.anthropic.com/v1/", Model: "m"}, nil, nil, nil)
	if a.url != "https://api.anthropic.com/v1/messages" {
		t.Errorf("url = %q", a.url)
	}
}

func TestConfigNeverPrintsKey(t *testing.T) {
	cfg := Config{Provider: "openai", Model: "m", APIKey: testKey}
	log, buf := logBuffer()
	log.Info("config", "llm", cfg)
	b, _ := json.Marshal(cfg.LogValue().Resolve().String())
	for _, s := range []string{buf.String(), cfg.String(), string(b)} {
		if strings.Contains(s, testKey) {
			t.Errorf("key printed: %s", s)
		}
	}
}

func TestRetryAfterParse(t *testing.T) {
	now := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		in   string
		want time.Duration
	}{
		{"", 0},
		{"5", 5 * time.Second},
		{"1.5", 1500 * time.Millisecond},
		{"-3", 0},
		{"soon", 0},
		{now.Add(90 * time.Second).Format(http.TimeFormat), 90 * time.Second},
		{now.Add(-time.Minute).Format(http.TimeFormat), 0},
	}
	for _, tt := range tests {
		if got := retryAfter(tt.in, now); got != tt.want {
			t.Errorf("retryAfter(%q) = %v, want %v", tt.in, got, tt.want)
		}
	}
}

func TestBackoff(t *testing.T) {
	a := &Agent{cfg: Config{RetryBase: time.Second, RetryMax: 10 * time.Second}}
	for attempt, want := range []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second, 10 * time.Second, 10 * time.Second} {
		if d := a.backoff(attempt); d != want {
			t.Errorf("backoff(%d) = %v, want %v", attempt, d, want)
		}
	}
}

func TestThinkKeepsNoConnectionOpen(t *testing.T) {
	f := newFake(t, ProviderOpenAI,
		turn{calls: []call{{"c1", ToolListSensors, "{}"}}},
		turn{calls: []call{respond("ok", "", "fine")}})
	var mu sync.Mutex
	states := map[net.Conn]http.ConnState{}
	f.srv.Config.ConnState = func(c net.Conn, s http.ConnState) {
		mu.Lock()
		states[c] = s
		mu.Unlock()
	}
	if _, err := think(t, newTestAgent(t, testConfig(f), nil, nil)); err != nil {
		t.Fatalf("Think: %v", err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		mu.Lock()
		n, open := len(states), 0
		for _, s := range states {
			if s != http.StateClosed {
				open++
			}
		}
		mu.Unlock()
		if n != 1 {
			t.Fatalf("the run's two requests used %d connections, want 1 (kept alive within the run)", n)
		}
		if open == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("a connection is still open 5s after Think returned")
		}
		time.Sleep(10 * time.Millisecond)
	}
}
