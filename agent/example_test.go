package agent_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"time"

	"github.com/vigil-iot/vigil/agent"
	"github.com/vigil-iot/vigil/device"
)

func ExampleAgent_Think() {
	// A stand-in for an OpenAI-compatible server whose model ends the
	// heartbeat with heartbeat_respond.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, `{"choices":[{"message":{"role":"assistant","content":null,"tool_calls":[
			{"id":"call_1","type":"function","function":{"name":"heartbeat_respond",
			 "arguments":"{\"outcome\":\"alert\",\"severity\":\"critical\",\"summary\":\"freezer at -4 °C\"}"}}]},
			"finish_reason":"tool_calls"}],"usage":{"prompt_tokens":700,"completion_tokens":30,"total_tokens":730}}`)
	}))
	defer srv.Close()

	a, err := agent.New(agent.Config{Provider: agent.ProviderOpenAI, BaseURL: srv.URL + "/v1", Model: "gpt-4o-mini"}, nil, nil, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	now := time.Date(2025, 6, 1, 3, 0, 0, 0, time.UTC)
	d, err := a.Think(context.Background(), agent.Input{
		Checklist: "- Is the freezer colder than -15 °C?",
		Snapshot: device.Snapshot{Time: now, Readings: map[string]device.Value{
			"freezer.temperature": {Value: -4, Unit: device.Celsius},
		}},
		Now: now,
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(d.Outcome, d.Severity, d.Summary)
	fmt.Println(d.ToolCalls, d.Calls, d.Tokens)
	// Output:
	// alert critical freezer at -4 °C
	// [heartbeat_respond {"outcome":"alert","severity":"critical","summary":"freezer at -4 °C"}] 1 730
}
