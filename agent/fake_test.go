package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"

	"github.com/vigil-iot/vigil/device"
	"github.com/vigil-iot/vigil/internal/logtest"
)

const testKey = "sk-test-SECRET-0123456789"

var providers = []string{ProviderOpenAI, ProviderAnthropic}

// turn is one scripted answer of the fake LLM server.
type turn struct {
	status int               // 0: 200
	header map[string]string // extra response headers
	body   string            // verbatim body; overrides text and calls
	text   string
	calls  []call
	in     int // usage: prompt tokens
	out    int // usage: completion tokens
	hang   bool
	hangUp bool // close the connection after reading the request, without an answer
}

type call struct{ id, name, args string }

func respond(outcome, severity, summary string) call {
	b, _ := json.Marshal(map[string]string{"outcome": outcome, "severity": severity, "summary": summary})
	return call{"call_respond", ToolRespond, string(b)}
}

type captured struct {
	header http.Header
	body   map[string]any
	raw    []byte
}

// fakeLLM is an httptest server speaking one provider's wire format.
type fakeLLM struct {
	t        testing.TB
	provider string
	script   func(n int) turn
	srv      *httptest.Server
	release  chan struct{}

	mu   sync.Mutex
	reqs []captured
}

func newFake(t testing.TB, provider string, turns ...turn) *fakeLLM {
	return newFakeFunc(t, provider, func(n int) turn {
		if n >= len(turns) {
			t.Errorf("unexpected request %d (script has %d turns)", n+1, len(turns))
			return turn{status: 500}
		}
		return turns[n]
	})
}

func newFakeFunc(t testing.TB, provider string, script func(n int) turn) *fakeLLM {
	f := &fakeLLM{t: t, provider: provider, script: script, release: make(chan struct{})}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(func() {
		close(f.release)
		f.srv.Close()
	})
	return f
}

func (f *fakeLLM) baseURL() string {
	if f.provider == ProviderOpenAI {
		return f.srv.URL + "/v1"
	}
	return f.srv.URL
}

func (f *fakeLLM) requests() []captured {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.reqs)
}

func (f *fakeLLM) serve(w http.ResponseWriter, r *http.Request) {
	want := "/v1/chat/completions"
	if f.provider == ProviderAnthropic {
		want = "/v1/messages"
	}
	if r.Method != http.MethodPost || r.URL.Path != want {
		f.t.Errorf("request %s %s, want POST %s", r.Method, r.URL.Path, want)
	}
	raw, _ := io.ReadAll(r.Body)
	var body map[string]any
	if err := json.Unmarshal(raw, &body); err != nil {
		f.t.Errorf("request body is not JSON: %v", err)
	}
	f.mu.Lock()
	n := len(f.reqs)
	f.reqs = append(f.reqs, captured{header: r.Header.Clone(), body: body, raw: raw})
	f.mu.Unlock()

	tr := f.script(n)
	if tr.hangUp {
		c, _, err := w.(http.Hijacker).Hijack()
		if err != nil {
			f.t.Errorf("hijack: %v", err)
			return
		}
		c.Close()
		return
	}
	if tr.hang {
		select {
		case <-r.Context().Done():
		case <-f.release:
		}
		return
	}
	for k, v := range tr.header {
		w.Header().Set(k, v)
	}
	w.Header().Set("Content-Type", "application/json")
	if tr.status == 0 {
		tr.status = http.StatusOK
	}
	w.WriteHeader(tr.status)
	if tr.body != "" {
		io.WriteString(w, tr.body)
		return
	}
	model, _ := body["model"].(string)
	if f.provider == ProviderOpenAI {
		w.Write(openAIBody(tr, model))
	} else {
		w.Write(anthropicBody(tr, model))
	}
}

// openAIBody renders a chat.completion object as OpenAI documents it.
func openAIBody(tr turn, model string) []byte {
	msg := map[string]any{"role": "assistant", "content": nil, "refusal": nil}
	if tr.text != "" {
		msg["content"] = tr.text
	}
	finish := "stop"
	if len(tr.calls) > 0 {
		finish = "tool_calls"
		var tcs []any
		for _, c := range tr.calls {
			tcs = append(tcs, map[string]any{"id": c.id, "type": "function",
				"function": map[string]any{"name": c.name, "arguments": c.args}})
		}
		msg["tool_calls"] = tcs
	}
	b, _ := json.Marshal(map[string]any{
		"id": "chatcmpl-abc123", "object": "chat.completion", "created": 1735689600, "model": model,
		"choices":            []any{map[string]any{"index": 0, "message": msg, "logprobs": nil, "finish_reason": finish}},
		"usage":              map[string]any{"prompt_tokens": tr.in, "completion_tokens": tr.out, "total_tokens": tr.in + tr.out},
		"system_fingerprint": "fp_test",
	})
	return b
}

// anthropicBody renders a Messages API response as Anthropic documents it.
// Arguments that are not a JSON object are sent as a JSON string, to model
// a broken server.
func anthropicBody(tr turn, model string) []byte {
	content := []any{}
	if tr.text != "" {
		content = append(content, map[string]any{"type": "text", "text": tr.text})
	}
	stop := "end_turn"
	for _, c := range tr.calls {
		stop = "tool_use"
		var input any = c.args
		var obj map[string]any
		if json.Unmarshal([]byte(c.args), &obj) == nil {
			input = obj
		}
		content = append(content, map[string]any{"type": "tool_use", "id": c.id, "name": c.name, "input": input})
	}
	b, _ := json.Marshal(map[string]any{
		"id": "msg_01", "type": "message", "role": "assistant", "model": model, "content": content,
		"stop_reason": stop, "stop_sequence": nil,
		"usage": map[string]any{"input_tokens": tr.in, "output_tokens": tr.out},
	})
	return b
}

// checkRequests asserts every captured request is what the provider
// documents: headers, roles, tool schemas, and tool call ids echoed.
func (f *fakeLLM) checkRequests(t *testing.T) {
	t.Helper()
	for i, c := range f.requests() {
		if got := c.header.Get("Content-Type"); got != "application/json" {
			t.Errorf("request %d: Content-Type %q", i, got)
		}
		if f.provider == ProviderOpenAI {
			checkOpenAIRequest(t, i, c)
		} else {
			checkAnthropicRequest(t, i, c)
		}
	}
}

func checkOpenAIRequest(t *testing.T, i int, c captured) {
	t.Helper()
	if got := c.header.Get("Authorization"); got != "Bearer "+testKey {
		t.Errorf("request %d: Authorization %q", i, got)
	}
	if _, ok := c.body["tool_choice"]; ok {
		t.Errorf("request %d: tool_choice sent (Ollama rejects it)", i)
	}
	if m, _ := c.body["model"].(string); m == "" {
		t.Errorf("request %d: no model", i)
	}
	for _, tool := range list(c.body["tools"]) {
		tm := obj(tool)
		fn := obj(tm["function"])
		params := obj(fn["parameters"])
		if tm["type"] != "function" || str(fn["name"]) == "" || str(fn["description"]) == "" || params["type"] != "object" {
			t.Errorf("request %d: tool %v is not {type:function, function:{name, description, parameters:{type:object}}}", i, tool)
		}
	}
	msgs := list(c.body["messages"])
	if len(msgs) < 2 || obj(msgs[0])["role"] != "system" || obj(msgs[1])["role"] != "user" {
		t.Fatalf("request %d: messages must start with system, user: %s", i, c.raw)
	}
	var pending []string // tool_call ids awaiting a tool message
	for j, m := range msgs {
		mm := obj(m)
		role := str(mm["role"])
		if role != "tool" && len(pending) > 0 {
			t.Errorf("request %d message %d: tool calls %v not answered", i, j, pending)
			pending = nil
		}
		switch role {
		case "system", "user":
			if str(mm["content"]) == "" {
				t.Errorf("request %d message %d: empty %s content", i, j, role)
			}
		case "assistant":
			if _, ok := mm["content"].(string); !ok && mm["content"] != nil {
				t.Errorf("request %d message %d: assistant content %v", i, j, mm["content"])
			}
			for _, tc := range list(mm["tool_calls"]) {
				tcm := obj(tc)
				fn := obj(tcm["function"])
				args, ok := fn["arguments"].(string)
				if !ok || !json.Valid([]byte(args)) || tcm["type"] != "function" || str(tcm["id"]) == "" || str(fn["name"]) == "" {
					t.Errorf("request %d message %d: bad tool call %v", i, j, tc)
				}
				pending = append(pending, str(tcm["id"]))
			}
		case "tool":
			id := str(mm["tool_call_id"])
			if len(pending) == 0 || pending[0] != id {
				t.Errorf("request %d message %d: tool_call_id %q, want next of %v", i, j, id, pending)
			} else {
				pending = pending[1:]
			}
			if _, ok := mm["content"].(string); !ok {
				t.Errorf("request %d message %d: tool content not a string", i, j)
			}
		default:
			t.Errorf("request %d message %d: role %q", i, j, role)
		}
	}
	if len(pending) > 0 {
		t.Errorf("request %d: tool calls %v not answered", i, pending)
	}
}

func checkAnthropicRequest(t *testing.T, i int, c captured) {
	t.Helper()
	if got := c.header.Get("x-api-key"); got != testKey {
		t.Errorf("request %d: x-api-key %q", i, got)
	}
	if got := c.header.Get("anthropic-version"); got != "2023-06-01" {
		t.Errorf("request %d: anthropic-version %q", i, got)
	}
	if got := c.header.Get("Authorization"); got != "" {
		t.Errorf("request %d: Authorization %q sent to Anthropic", i, got)
	}
	if mt, _ := c.body["max_tokens"].(float64); mt <= 0 {
		t.Errorf("request %d: max_tokens %v", i, c.body["max_tokens"])
	}
	if str(c.body["system"]) == "" {
		t.Errorf("request %d: no top-level system", i)
	}
	for _, tool := range list(c.body["tools"]) {
		tm := obj(tool)
		if str(tm["name"]) == "" || str(tm["description"]) == "" || obj(tm["input_schema"])["type"] != "object" || tm["type"] != nil {
			t.Errorf("request %d: tool %v is not {name, description, input_schema:{type:object}}", i, tool)
		}
	}
	msgs := list(c.body["messages"])
	var pending []string // tool_use ids the next user message must answer
	for j, m := range msgs {
		mm := obj(m)
		role := str(mm["role"])
		want := "user"
		if j%2 == 1 {
			want = "assistant"
		}
		if role != want {
			t.Errorf("request %d message %d: role %q, want %q (alternating, user first)", i, j, role, want)
		}
		var results []string
		for _, b := range list(mm["content"]) {
			bm := obj(b)
			switch str(bm["type"]) {
			case "text":
				if str(bm["text"]) == "" {
					t.Errorf("request %d message %d: empty text block", i, j)
				}
			case "tool_use":
				if role != "assistant" || str(bm["id"]) == "" || str(bm["name"]) == "" || bm["input"] == nil {
					t.Errorf("request %d message %d: bad tool_use %v", i, j, b)
				}
				if _, ok := bm["input"].(map[string]any); !ok {
					t.Errorf("request %d message %d: tool_use input %v is not an object", i, j, bm["input"])
				}
				pending = append(pending, str(bm["id"]))
			case "tool_result":
				if role != "user" {
					t.Errorf("request %d message %d: tool_result in %s message", i, j, role)
				}
				results = append(results, str(bm["tool_use_id"]))
			default:
				t.Errorf("request %d message %d: block type %v", i, j, bm["type"])
			}
		}
		if role == "user" && (len(pending) > 0 || len(results) > 0) {
			if !slices.Equal(pending, results) {
				t.Errorf("request %d message %d: tool_result ids %v, want %v", i, j, results, pending)
			}
			pending = nil
		}
	}
	if len(msgs)%2 != 1 {
		t.Errorf("request %d: %d messages, want the last from the user", i, len(msgs))
	}
}

func obj(v any) map[string]any { m, _ := v.(map[string]any); return m }
func list(v any) []any         { l, _ := v.([]any); return l }
func str(v any) string         { s, _ := v.(string); return s }

// toolNames returns the names of the tools a request offered.
func toolNames(c captured) []string {
	var names []string
	for _, tool := range list(c.body["tools"]) {
		tm := obj(tool)
		if fn := obj(tm["function"]); fn != nil {
			names = append(names, str(fn["name"]))
		} else {
			names = append(names, str(tm["name"]))
		}
	}
	return names
}

// userText returns the text of the first user message.
func userText(c captured) string {
	for _, m := range list(c.body["messages"]) {
		mm := obj(m)
		if mm["role"] != "user" {
			continue
		}
		if s, ok := mm["content"].(string); ok {
			return s
		}
		for _, b := range list(mm["content"]) {
			if bm := obj(b); bm["type"] == "text" {
				return str(bm["text"])
			}
		}
	}
	return ""
}

// toolResults returns the tool results of a request: id -> content.
func toolResults(c captured) map[string]string {
	out := map[string]string{}
	for _, m := range list(c.body["messages"]) {
		mm := obj(m)
		if mm["role"] == "tool" {
			out[str(mm["tool_call_id"])] = str(mm["content"])
		}
		for _, b := range list(mm["content"]) {
			if bm := obj(b); bm["type"] == "tool_result" {
				out[str(bm["tool_use_id"])] = str(bm["content"])
			}
		}
	}
	return out
}

// testConfig is a Config for f with fast retries.
func testConfig(f *fakeLLM) Config {
	return Config{
		Provider: f.provider, BaseURL: f.baseURL(), Model: "main-model", APIKey: testKey,
		Timeout: 5 * time.Second, MaxRetries: 2, RetryBase: time.Millisecond, RetryMax: 20 * time.Millisecond,
	}
}

func newTestAgent(t testing.TB, cfg Config, clock clockwork.Clock, log *slog.Logger) *Agent {
	t.Helper()
	a, err := New(cfg, nil, clock, log)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return a
}

// fakeFacts is the heartbeat's store as the tools see it.
type fakeFacts struct {
	mu     sync.Mutex
	hist   map[string][]Point
	unit   map[string]device.Unit
	window time.Duration
	status map[string]any
}

func (f *fakeFacts) History(_ context.Context, key string, window time.Duration) ([]Point, device.Unit, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.window = window
	pts, ok := f.hist[key]
	if !ok {
		return nil, "", fmt.Errorf("no history for %s", key)
	}
	return pts, f.unit[key], nil
}

func (f *fakeFacts) SystemStatus(context.Context) (map[string]any, error) {
	if f.status == nil {
		return nil, fmt.Errorf("status unavailable")
	}
	return f.status, nil
}

var testNow = time.Date(2025, 6, 1, 12, 30, 0, 0, time.UTC)

// quietInput is a device with five sensors and nothing wrong.
func quietInput() Input {
	berlin, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		panic(err)
	}
	snap := device.Snapshot{
		Time: testNow.Add(-2 * time.Second),
		Readings: map[string]device.Value{
			"air.temperature":     {Value: 21.43, Unit: device.Celsius},
			"air.humidity":        {Value: 55.2, Unit: device.Percent},
			"air.pressure":        {Value: 1013.25, Unit: device.HectoPascal},
			"soil.moisture":       {Value: 38.5, Unit: device.Percent},
			"freezer.temperature": {Value: -18.25, Unit: device.Celsius},
			"tank.voltage":        {Value: 2.71, Unit: device.Volt},
			"board.temperature":   {Value: 48.3, Unit: device.Celsius},
			"board.load":          {Value: 0.12, Unit: device.Count},
			"board.disk":          {Value: 41, Unit: device.Percent},
			"board.throttled":     {Value: 0, Unit: device.Bool},
		},
		Errors: map[string]string{},
	}
	prev := device.Snapshot{Time: testNow.Add(-30 * time.Minute), Readings: map[string]device.Value{}}
	for k, v := range snap.Readings {
		prev.Readings[k] = v
	}
	prev.Readings["air.temperature"] = device.Value{Value: 21.1, Unit: device.Celsius}
	prev.Readings["soil.moisture"] = device.Value{Value: 39, Unit: device.Percent}
	return Input{
		Checklist: `# Greenhouse heartbeat

<!-- One question per line. Alert only when a person should act. -->
- Is the air between 5 and 35 °C, and humidity below 90 %?
- Is the soil moisture above 25 %? Say so if it drops fast.
- Is the freezer colder than -15 °C?
- Is the tank voltage above 1.2 V (tank not empty)?
- Is the board healthy: not throttled, SoC under 75 °C, disk under 90 %?
`,
		Snapshot: snap,
		Previous: &prev,
		Rules: []RuleStatus{
			{Name: "too_hot", When: "air.temperature > 35"},
			{Name: "freezer_warm", When: "freezer.temperature > -12"},
			{Name: "tank_empty", When: "tank.voltage < 1.2"},
		},
		Now:         testNow,
		Location:    berlin,
		LastAlert:   "Greenhouse at 36.2 °C",
		LastAlertAt: testNow.Add(-26 * time.Hour),
		LastSuccess: testNow.Add(-30 * time.Minute),
		Facts: &fakeFacts{
			hist:   map[string][]Point{"air.temperature": ramp(testNow, 120, time.Minute, 20, 0.01)},
			unit:   map[string]device.Unit{"air.temperature": device.Celsius},
			status: map[string]any{"soc_temperature": 48.3, "throttled": false, "uptime_s": 86400},
		},
	}
}

// ramp returns n points ending at end, step apart, rising by slope per point.
func ramp(end time.Time, n int, step time.Duration, start, slope float64) []Point {
	pts := make([]Point, n)
	for i := range pts {
		pts[i] = Point{Time: end.Add(-time.Duration(n-1-i) * step), Value: start + slope*float64(i)}
	}
	return pts
}

// logBuffer returns a debug logger writing into a buffer.
func logBuffer() (*slog.Logger, *logtest.Buffer) {
	var b logtest.Buffer
	return b.Logger(slog.LevelDebug), &b
}
