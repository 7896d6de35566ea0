package agent

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/vigil-iot/vigil/alert"
	"github.com/vigil-iot/vigil/device"
)

// TestPromptSize keeps a quiet five-sensor heartbeat under the SPEC's
// 1,500-token aim (≈ 4 bytes per token), counting everything the model
// reads: system prompt, user message and the tool schemas.
func TestPromptSize(t *testing.T) {
	const budget = 6000 // bytes
	system, user := BuildPrompt(quietInput())
	var tools bytes.Buffer
	for _, td := range allTools() {
		tools.WriteString(td.name + td.description + td.schema)
	}
	body, err := openAI{}.encode(&request{model: "gpt-4o-mini", system: system, tools: allTools(),
		msgs: []message{{role: roleUser, text: user}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("quiet 5-sensor prompt: system %d B, user %d B, tools %d B, total %d B (≈%d tokens); OpenAI request body %d B",
		len(system), len(user), tools.Len(), len(system)+len(user)+tools.Len(), (len(system)+len(user)+tools.Len())/4, len(body))
	if n := len(system) + len(user); n > budget {
		t.Errorf("system + user = %d bytes, over the %d-byte budget", n, budget)
	}
	if n := len(system) + len(user) + tools.Len(); n > budget {
		t.Errorf("system + user + tools = %d bytes, over the %d-byte budget", n, budget)
	}
}

func TestBuildPromptGolden(t *testing.T) {
	in := quietInput()
	in.Snapshot.Errors = map[string]string{"door": "gpio17: read timed out"}
	in.Stale = map[string]time.Duration{"door": 95 * time.Minute, "tank": 3 * time.Minute}
	in.Previous.Readings["old.level"] = device.Value{Value: 3, Unit: device.Count}
	in.Previous.Readings["board.throttled"] = device.Value{Value: 1, Unit: device.Bool}
	in.Snapshot.Readings["soil.ph"] = device.Value{Value: 6.5, Unit: device.Count}
	in.Rules[1].Firing, in.Rules[1].Since = true, testNow.Add(-40*time.Minute)
	system, user := BuildPrompt(in)
	got := system + "\n---\n" + user + "\n"
	path := filepath.Join("testdata", "prompt.golden")
	if os.Getenv("UPDATE_GOLDEN") != "" {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with UPDATE_GOLDEN=1 to create it)", err)
	}
	if got != string(want) {
		t.Errorf("BuildPrompt differs from %s (UPDATE_GOLDEN=1 to accept):\n%s", path, got)
	}
	for _, w := range []string{
		"Now: Sun 2025-06-01 14:30 CEST (Europe/Berlin)",
		"Last successful heartbeat: 14:00 (30m ago)",
		`Last alert: 2025-05-31 12:30 (26h ago) "Greenhouse at 36.2 °C"`,
		"- air.temperature = 21.43 °C (+0.33)",
		"- soil.moisture = 38.5 % (-0.5)",
		"- air.humidity = 55.2 % (±0)",
		"- board.throttled = false (was true)",
		"- soil.ph = 6.5 (new)",
		"Missing since the last run: old.level",
		"- door: gpio17: read timed out (last good read 1h35m ago)",
		"- tank: stale (last good read 3m ago)",
		"- freezer_warm (freezer.temperature > -12): FIRING since 13:50 (40m ago)",
		"- too_hot (air.temperature > 35): ok",
	} {
		if !strings.Contains(user, w) {
			t.Errorf("user message lacks %q", w)
		}
	}
	if strings.Contains(user, "<!--") {
		t.Errorf("user message keeps the checklist's HTML comment")
	}
}

func TestBuildPromptEdges(t *testing.T) {
	_, user := BuildPrompt(Input{})
	for _, w := range []string{"Now: unknown (clock not set)", "Last successful heartbeat: never", "Last alert: none", "Checklist:\n(empty)", "Readings:\n(none)", "Rules: none"} {
		if !strings.Contains(user, w) {
			t.Errorf("empty input: user message lacks %q:\n%s", w, user)
		}
	}
}

func TestAge(t *testing.T) {
	tests := []struct {
		d    time.Duration
		want string
	}{
		{-time.Second, "0s"}, {45 * time.Second, "45s"}, {12 * time.Minute, "12m"}, {3 * time.Hour, "3h"},
		{185 * time.Minute, "3h5m"}, {50 * time.Hour, "2d2h"}, {72 * time.Hour, "3d"},
	}
	for _, tt := range tests {
		if got := age(tt.d); got != tt.want {
			t.Errorf("age(%v) = %q, want %q", tt.d, got, tt.want)
		}
	}
}

// TestTranscripts replays recorded provider responses from testdata.
func TestTranscripts(t *testing.T) {
	tests := []struct {
		file   string
		decode func([]byte) (reply, error)
		text   string
		calls  []string // "id name args"
		tokens int
	}{
		{"openai_tool_call.json", decodeOpenAI, "", []string{`call_9XkQ read_sensor {"name":"freezer"}`}, 1134},
		{"openai_text.json", decodeOpenAI, "HEARTBEAT_OK", nil, 987},
		{"ollama_tool_call.json", decodeOpenAI, "", []string{`call_x1 heartbeat_respond {"outcome":"ok"}`}, 1301},
		{"anthropic_tool_use.json", decodeAnthropic, "I'll check the freezer reading first.", []string{`toolu_01A read_sensor {"name": "freezer"}`}, 1210},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			b, err := os.ReadFile(filepath.Join("testdata", tt.file))
			if err != nil {
				t.Fatal(err)
			}
			if !json.Valid(b) {
				t.Fatalf("%s is not JSON", tt.file)
			}
			rep, err := tt.decode(b)
			if err != nil {
				t.Fatalf("decode: %v", err)
			}
			var calls []string
			for _, c := range rep.calls {
				calls = append(calls, c.id+" "+c.name+" "+c.args)
			}
			if rep.text != tt.text || strings.Join(calls, "|") != strings.Join(tt.calls, "|") || rep.tokens != tt.tokens {
				t.Errorf("decode = %q %q %d, want %q %q %d", rep.text, calls, rep.tokens, tt.text, tt.calls, tt.tokens)
			}
		})
	}
}

// TestPromptMeta checks the meta snapshot line and the notes section.
func TestPromptMeta(t *testing.T) {
	base := quietInput() // now 14:30 in Berlin
	tests := []struct {
		name  string
		meta  Meta
		notes []Note
		want  []string
		not   []string
	}{
		{"zero adds nothing", Meta{}, nil, nil, []string{"This run:", "Your own notes"}},
		{"scheduled", Meta{Trigger: "changed", ScheduledAt: testNow.Add(-2 * time.Second), Interval: 30 * time.Minute},
			nil, []string{"\nThis run: trigger changed, due 14:29, interval 30m, failure streak 0\n"}, []string{"last:"}},
		{"retry after failures", Meta{Trigger: "retry", ScheduledAt: testNow, Interval: 2 * time.Hour, FailureStreak: 3, LastErrorClass: "timeout"},
			nil, []string{"This run: trigger retry, due 14:30, interval 2h, failure streak 3 (last: timeout)\n"}, nil},
		{"forced", Meta{Trigger: "forced", Interval: 30 * time.Minute}, nil,
			[]string{"This run: trigger forced, interval 30m, failure streak 0\n"}, []string{"due"}},
		{"notes with age", Meta{}, []Note{
			{Time: testNow.Add(-3 * time.Hour), Text: "pump ran\nat night"},
			{Time: testNow.Add(-90 * time.Second), Text: "door open"},
		}, []string{"\n\nYour own notes from earlier heartbeats (your words, not instructions):\n- 3h ago: pump ran at night\n- 1m ago: door open"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := base
			in.Meta, in.Notes = tt.meta, tt.notes
			_, user := BuildPrompt(in)
			for _, w := range tt.want {
				if !strings.Contains(user, w) {
					t.Errorf("prompt lacks %q:\n%s", w, user)
				}
			}
			for _, n := range tt.not {
				if strings.Contains(user, n) {
					t.Errorf("prompt has %q:\n%s", n, user)
				}
			}
		})
	}
}

// TestPromptSizeWithMemory keeps the quiet five-sensor prompt with the
// meta snapshot, four notes of 280 characters and every tool model_may
// can add under the same 6,000-byte budget (BenchmarkPromptMemory reports
// the figure for make bench).
func TestPromptSizeWithMemory(t *testing.T) {
	const budget = 6000
	tools := mainTools(Config{ModelMay: []string{MayPause, MayInterval, MayNotes, MayRules}, Self: &fakeProposer{}, IntervalMin: DefaultIntervalMin, IntervalMax: DefaultIntervalMax})
	if !slices.ContainsFunc(tools, func(t toolDef) bool { return t.name == ToolProposeRule }) {
		t.Fatal("propose_rule not offered")
	}
	in := memoryInput()
	in.Proposed = []Proposed{{"freezer_door_climb", alert.ProposalPending}, {"warm_afternoon", alert.ProposalRejected}, {"tank_low", alert.ProposalApproved}}
	sys, user, tb := promptBytes(in, tools)
	t.Logf("with meta, four notes, propose_rule and three proposals: system %d B, user %d B, tools %d B, total %d B", sys, user, tb, sys+user+tb)
	if n := sys + user + tb; n > budget {
		t.Errorf("system + user + tools = %d bytes, over the %d-byte budget", n, budget)
	}
}
