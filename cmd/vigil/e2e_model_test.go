package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

// modelScript is an OpenAI-compatible server that answers each request with
// the next scripted tool calls and records what it was sent.
type modelScript struct {
	t     *testing.T
	srv   *httptest.Server
	mu    sync.Mutex
	steps [][]string // per request: tool calls as "name {json args}"
	reqs  []modelRequest
}

type modelRequest struct {
	Tools    []string // tool names offered
	Messages []struct {
		Role, Content string
	}
}

func newModelScript(t *testing.T, steps ...[]string) *modelScript {
	m := &modelScript{t: t, steps: steps}
	m.srv = httptest.NewServer(http.HandlerFunc(m.handle))
	t.Cleanup(m.srv.Close)
	return m
}

// llmSection writes a checklist of one item into dir (so that heartbeats
// ask the model) and returns the [llm] section for m; the key comes from
// VIGIL_TEST_KEY (start the daemon with "VIGIL_TEST_KEY=sk-test").
func (m *modelScript) llmSection(dir, item string) string {
	m.t.Helper()
	writeFile(m.t, filepath.Join(dir, "HEARTBEAT.md"), "- "+item+"\n")
	return "\n[llm]\nbase_url = \"" + m.srv.URL + "/v1\"\napi_key_env = \"VIGIL_TEST_KEY\"\ntimeout = \"5s\"\n"
}

func (m *modelScript) handle(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	var req struct {
		Messages []struct{ Role, Content string }
		Tools    []struct {
			Function struct{ Name string }
		}
	}
	if err := json.Unmarshal(body, &req); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	rec := modelRequest{Messages: req.Messages}
	for _, tl := range req.Tools {
		rec.Tools = append(rec.Tools, tl.Function.Name)
	}
	m.mu.Lock()
	n := len(m.reqs)
	m.reqs = append(m.reqs, rec)
	calls := []string{`heartbeat_respond {"outcome":"ok","severity":"info","summary":"all fine"}`}
	if n < len(m.steps) {
		calls = m.steps[n]
	}
	m.mu.Unlock()
	var tcs []string
	for i, c := range calls {
		name, args, _ := strings.Cut(c, " ")
		tcs = append(tcs, fmt.Sprintf(`{"id":"call_%d_%d","type":"function","function":{"name":%q,"arguments":%q}}`, n, i, name, args))
	}
	w.Header().Set("Content-Type", "application/json")
	fmt.Fprintf(w, `{"id":"c%d","object":"chat.completion","model":"m","choices":[{"index":0,"finish_reason":"tool_calls",
"message":{"role":"assistant","content":null,"tool_calls":[%s]}}],"usage":{"prompt_tokens":700,"completion_tokens":20,"total_tokens":720}}`,
		n, strings.Join(tcs, ","))
}

func (m *modelScript) requests() []modelRequest {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]modelRequest(nil), m.reqs...)
}

// text is every message of a request, joined.
func (r modelRequest) text() string {
	var b strings.Builder
	for _, msg := range r.Messages {
		b.WriteString(msg.Role + ": " + msg.Content + "\n")
	}
	return b.String()
}

// TestModelChangesItsOwnHeartbeat runs the real daemon against a scripted
// model. With model_may = ["pause", "interval", "notes"] the model sets its
// interval within interval_min..interval_max (it goes through the overlay:
// vigil get shows it, set by model), is refused outside them, and a note it
// keeps with remember reaches the next heartbeat's prompt, with its secret
// redacted. With the default model_may = ["pause"] the tools it is offered
// contain neither remember nor set_interval.
func TestModelChangesItsOwnHeartbeat(t *testing.T) {
	t.Parallel()
	model := newModelScript(t,
		[]string{`set_interval {"interval":"20m"}`, `remember {"note":"humidity creeps up after watering; key sk-abcdefghijklmnopqrstuvwxyz0123 must not stay"}`},
		[]string{`set_interval {"interval":"1m"}`},
		[]string{`heartbeat_respond {"outcome":"ok","severity":"info","summary":"all fine"}`},
	)
	dir := t.TempDir()
	llm := model.llmSection(dir, "Is the air fine?")
	cfg := writeConfig(t, dir, `model_may = ["pause", "interval", "notes"]
interval_min = "10m"
interval_max = "2h"
`+llm+steadySensors)
	d := startDaemon(t, cfg, "VIGIL_TEST_KEY=sk-test")
	defer func() { d.logIfFailed(t) }()
	d.waitLog(t, regexp.MustCompile(`msg="vigil starting"`), 10*time.Second)

	out, errOut, code := runVigil(t, "-c", cfg, "check")
	if code != 0 {
		t.Fatalf("vigil check: exit %d\n%s%s", code, out, errOut)
	}
	reqs := model.requests()
	if len(reqs) != 3 {
		t.Fatalf("the first heartbeat made %d requests, want 3 (two tool rounds, then the answer)", len(reqs))
	}
	for _, want := range []string{"set_interval", "remember", "pause_heartbeats"} {
		if !strings.Contains(strings.Join(reqs[0].Tools, " "), want) {
			t.Errorf("tools offered = %v, want %s among them", reqs[0].Tools, want)
		}
	}
	if second := reqs[1].text(); !strings.Contains(second, "20m") {
		t.Errorf("the answer to set_interval 20m does not confirm it:\n%s", second)
	}
	if third := reqs[2].text(); !strings.Contains(third, "10m") || !strings.Contains(third, "2h") {
		t.Errorf("the refusal of set_interval 1m does not name the bounds 10m and 2h:\n%s", third)
	}
	// The interval is applied once the run ends, through the overlay.
	deadline := time.Now().Add(10 * time.Second)
	for {
		out, _, _ = runVigil(t, "-c", cfg, "get", "heartbeat.interval")
		if strings.Contains(out, "20m") && strings.Contains(out, "by model") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("vigil get heartbeat.interval = %q, want 20m set by model", out)
		}
		time.Sleep(100 * time.Millisecond)
	}
	out, _, _ = runVigil(t, "-c", cfg, "notes")
	if !strings.Contains(out, "humidity creeps up after watering") || strings.Contains(out, "sk-abcdefghijklmnopqrstuvwxyz0123") {
		t.Errorf("vigil notes = %q, want the note with its key redacted", out)
	}

	// The next heartbeat's prompt carries the note, under its heading.
	if out, errOut, code := runVigil(t, "-c", cfg, "check"); code != 0 {
		t.Fatalf("second vigil check: exit %d\n%s%s", code, out, errOut)
	}
	reqs = model.requests()
	if len(reqs) != 4 {
		t.Fatalf("after the second heartbeat: %d requests, want 4", len(reqs))
	}
	prompt := reqs[3].text()
	if !strings.Contains(prompt, "Your own notes from earlier heartbeats") || !strings.Contains(prompt, "humidity creeps up after watering") {
		t.Errorf("the second prompt lacks the note:\n%s", prompt)
	}
	if strings.Contains(prompt, "sk-abcdefghijklmnopqrstuvwxyz0123") {
		t.Errorf("the second prompt carries the secret the note named:\n%s", prompt)
	}
	d.kill()

	// The default model_may offers neither tool.
	cfg = writeConfig(t, dir, llm+steadySensors)
	if out, errOut, code := runIn(t, "", []string{"VIGIL_TEST_KEY=sk-test"}, "-c", cfg, "check"); code != 0 {
		t.Fatalf("vigil check with the default model_may: exit %d\n%s%s", code, out, errOut)
	}
	reqs = model.requests()
	last := strings.Join(reqs[len(reqs)-1].Tools, " ")
	if strings.Contains(last, "remember") || strings.Contains(last, "set_interval") || !strings.Contains(last, "pause_heartbeats") {
		t.Errorf("tools with model_may = [pause]: %s; want pause_heartbeats and neither remember nor set_interval", last)
	}
}
