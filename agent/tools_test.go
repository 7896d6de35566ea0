package agent

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/vigil-iot/vigil/alert"
	"github.com/vigil-iot/vigil/device"
)

func execTool(t *testing.T, in Input, scout bool, name, args string) (toolResult, *Decision) {
	t.Helper()
	r := &run{a: &Agent{tools: allTools()}, in: in, dec: &Decision{}, scout: scout}
	return r.exec(context.Background(), name, args)
}

func TestTools(t *testing.T) {
	in := quietInput()
	in.Snapshot.Errors = map[string]string{"door": "gpio: read timed out"}
	in.Stale = map[string]time.Duration{"door": 2 * time.Hour}
	tests := []struct {
		name, tool, args string
		want             []string // substrings of the result
		isErr            bool
	}{
		{"list", ToolListSensors, ``, []string{`{"name":"air","quantities":{"humidity":"%","pressure":"hPa","temperature":"°C"}}`, `{"name":"door","error":"gpio: read timed out"}`, `{"name":"tank","quantities":{"voltage":"V"}}`}, false},
		{"read by name", ToolReadSensor, `{"name":"air"}`, []string{`"name":"air"`, `"humidity":{"value":55.2,"unit":"%"}`, `"temperature":{"value":21.43,"unit":"°C"}`, `"time":"2025-06-01T14:29:58+02:00"`}, false},
		{"read by key", ToolReadSensor, `{"name":"air.humidity"}`, []string{`"readings":{"humidity":{"value":55.2,"unit":"%"}}`}, false},
		{"read failed sensor", ToolReadSensor, `{"name":"door"}`, []string{`"error":"gpio: read timed out"`, `"last_good_read":"2h ago"`}, false},
		{"read unknown", ToolReadSensor, `{"name":"garage"}`, []string{`unknown sensor "garage": sensors: air, board, door, freezer, soil, tank`}, true},
		{"read double-encoded", ToolReadSensor, `"{\"name\":\"tank\"}"`, []string{`"voltage":{"value":2.71,"unit":"V"}`}, false},
		{"read null args", ToolReadSensor, `null`, []string{`unknown sensor ""`}, true},
		{"history default window", ToolSensorHistory, `{"name":"air","quantity":"temperature"}`, []string{`"key":"air.temperature"`, `"unit":"°C"`, `"window":"1h0m0s"`, `"count":120`, `"min":{"t":"2025-06-01T12:31:00+02:00","v":20}`, `"max":{"t":"2025-06-01T14:30:00+02:00","v":21.19}`}, false},
		{"history by key, capped", ToolSensorHistory, `{"name":"air.temperature","window":"72h"}`, []string{`"window":"24h0m0s"`, `"note":"window capped at 24h"`}, false},
		{"history unknown key", ToolSensorHistory, `{"name":"air","quantity":"co2"}`, []string{"history of air.co2: no history for air.co2"}, true},
		{"history no quantity", ToolSensorHistory, `{"name":"air"}`, []string{"quantity is required"}, true},
		{"history bad window", ToolSensorHistory, `{"name":"air","quantity":"temperature","window":"-5m"}`, []string{`window "-5m"`}, true},
		{"status", ToolSystemStatus, `{}`, []string{`"soc_temperature":48.3`, `"throttled":false`}, false},
		{"unknown", "shell", `{"cmd":"reboot"}`, []string{`unknown tool "shell": available: list_sensors, read_sensor, sensor_history, system_status, pause_heartbeats, heartbeat_respond`}, true},
		{"malformed", ToolReadSensor, `{"name":`, []string{`invalid arguments {"name":`}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, final := execTool(t, in, false, tt.tool, tt.args)
			if final != nil {
				t.Fatalf("%s ended the run: %+v", tt.tool, final)
			}
			if res.isError != tt.isErr {
				t.Errorf("isError = %t, want %t: %s", res.isError, tt.isErr, res.content)
			}
			for _, w := range tt.want {
				if !strings.Contains(res.content, w) {
					t.Errorf("%s(%s) = %s\nwant it to contain %s", tt.tool, tt.args, res.content, w)
				}
			}
		})
	}
}

func TestToolsWithoutFacts(t *testing.T) {
	in := quietInput()
	in.Facts = nil
	for _, tool := range []string{ToolSensorHistory, ToolSystemStatus} {
		res, _ := execTool(t, in, false, tool, `{"name":"air","quantity":"temperature"}`)
		if !res.isError || !strings.Contains(res.content, "not available") {
			t.Errorf("%s without Facts = %q, want a not-available error", tool, res.content)
		}
	}
}

func TestSensorHistoryDownsamples(t *testing.T) {
	in := quietInput()
	facts := &fakeFacts{
		hist: map[string][]Point{"air.temperature": ramp(testNow, 1000, 5*time.Second, 10, 0.01)},
		unit: map[string]device.Unit{"air.temperature": device.Celsius},
	}
	in.Facts = facts
	res, _ := execTool(t, in, false, ToolSensorHistory, `{"name":"air","quantity":"temperature","window":"90m"}`)
	var h struct {
		Count  int      `json:"count"`
		Points [][2]any `json:"points"`
	}
	if err := json.Unmarshal([]byte(res.content), &h); err != nil {
		t.Fatalf("result %q: %v", res.content, err)
	}
	if facts.window != 90*time.Minute {
		t.Errorf("History window = %v, want 90m", facts.window)
	}
	if h.Count != 1000 || len(h.Points) != historyPoints {
		t.Errorf("count %d, %d points, want 1000, %d", h.Count, len(h.Points), historyPoints)
	}
	// The first bucket averages points 0..15: 10 + 0.01*7.5.
	if v, _ := h.Points[0][1].(float64); v != 10.075 {
		t.Errorf("first bucket = %v, want 10.075", h.Points[0])
	}
	if len(res.content) > toolOutputMax {
		t.Errorf("result is %d bytes, over %d", len(res.content), toolOutputMax)
	}
}

func TestDownsample(t *testing.T) {
	for _, n := range []int{0, 1, 59, 60, 61, 119, 120, 1441} {
		pts := ramp(testNow, n, time.Second, 0, 1)
		got := downsample(pts, 60)
		if want := min(n, 60); len(got) != want {
			t.Errorf("downsample(%d points) = %d points, want %d", n, len(got), want)
		}
		for i := 1; i < len(got); i++ {
			if !got[i].Time.After(got[i-1].Time) {
				t.Errorf("downsample(%d points): point %d not after %d", n, i, i-1)
			}
		}
	}
}

func TestRespondTool(t *testing.T) {
	tests := []struct {
		name  string
		scout bool
		args  string
		want  *Decision // nil: a tool error
	}{
		{"ok", false, `{"outcome":"ok"}`, &Decision{Outcome: OutcomeOK}},
		{"alert", false, `{"outcome":"alert","severity":"critical","summary":" freezer warm "}`, &Decision{Outcome: OutcomeAlert, Severity: alert.Critical, Summary: "freezer warm"}},
		{"alert default severity", false, `{"outcome":"ALERT","severity":"urgent","summary":"x"}`, &Decision{Outcome: OutcomeAlert, Severity: alert.Warning, Summary: "x"}},
		{"alert without summary", false, `{"outcome":"alert"}`, &Decision{Outcome: OutcomeAlert, Severity: alert.Warning, Summary: "the model raised an alert without a summary"}},
		{"long summary", false, `{"outcome":"alert","summary":"` + strings.Repeat("é", 600) + `"}`, &Decision{Outcome: OutcomeAlert, Severity: alert.Warning, Summary: strings.Repeat("é", summaryMax-1) + "…"}},
		{"escalate not for main", false, `{"outcome":"escalate","reason":"x"}`, nil},
		{"escalate", true, `{"outcome":"escalate","reason":"trend"}`, &Decision{Outcome: outcomeEscalate, Summary: "trend"}},
		{"escalate without reason", true, `{"outcome":"escalate"}`, &Decision{Outcome: outcomeEscalate, Summary: "no reason given"}},
		{"missing outcome", false, `{}`, nil},
		{"not an object", false, `[1,2]`, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, d := execTool(t, quietInput(), tt.scout, ToolRespond, tt.args)
			switch {
			case tt.want == nil && d != nil:
				t.Errorf("respond(%s) = %+v, want a tool error", tt.args, d)
			case tt.want == nil && !res.isError:
				t.Errorf("respond(%s) result %+v, want a tool error", tt.args, res)
			case tt.want != nil && d == nil:
				t.Errorf("respond(%s) = tool result %q, want %+v", tt.args, res.content, tt.want)
			case tt.want != nil && (d.Outcome != tt.want.Outcome || d.Severity != tt.want.Severity || d.Summary != tt.want.Summary):
				t.Errorf("respond(%s) = %+v, want %+v", tt.args, d, tt.want)
			}
		})
	}
}

func FuzzToolArgs(f *testing.F) {
	for _, tool := range []string{ToolListSensors, ToolReadSensor, ToolSensorHistory, ToolSystemStatus, ToolPause, ToolRespond, "nope"} {
		for _, args := range []string{``, `{}`, `null`, `{"name":"air"}`, `{"name":"air","quantity":"temperature","window":"3h"}`,
			`{"minutes":1e300}`, `{"minutes":-5}`, `{"outcome":"alert","severity":"critical","summary":"x"}`, `"{\"name\":\"air\"}"`, `{"name":`, "\xff"} {
			f.Add(tool, args, false)
		}
	}
	in := quietInput()
	f.Fuzz(func(t *testing.T, tool, args string, scout bool) {
		res, d := execTool(t, in, scout, tool, args)
		if d == nil {
			if res.content == "" {
				t.Errorf("%s(%q): empty tool result", tool, args)
			}
			if len(res.content) > toolOutputMax+len("…(truncated)")+len("error: ") {
				t.Errorf("%s(%q): result of %d bytes", tool, args, len(res.content))
			}
			return
		}
		switch d.Outcome {
		case OutcomePaused:
			if d.Pause < time.Minute || d.Pause > time.Hour {
				t.Errorf("%s(%q): pause %v outside 1..60 minutes", tool, args, d.Pause)
			}
		case OutcomeOK, OutcomeAlert:
			if d.Outcome == OutcomeAlert && (d.Severity < alert.Info || d.Severity > alert.Critical || d.Summary == "") {
				t.Errorf("%s(%q): alert %+v", tool, args, d)
			}
		case outcomeEscalate:
			if !scout {
				t.Errorf("%s(%q): escalate outside the scout", tool, args)
			}
		default:
			t.Errorf("%s(%q): outcome %q", tool, args, d.Outcome)
		}
		if utf8.RuneCountInString(d.Summary) > summaryMax || !utf8.ValidString(d.Summary) {
			t.Errorf("%s(%q): summary %q", tool, args, d.Summary)
		}
	})
}
