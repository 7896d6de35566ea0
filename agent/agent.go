// Package agent turns a checklist and a sensor snapshot into a Decision by
// asking an LLM (SPEC §4): OpenAI-compatible and Anthropic providers, a small
// prompt, read-only tools, heartbeat_respond, scout → escalate, and the text
// fallback for models without tool calls.
package agent

import (
	"context"
	"time"

	"github.com/vigil-iot/vigil/alert"
	"github.com/vigil-iot/vigil/device"
)

// Outcomes of a decision.
const (
	OutcomeOK     = "ok"
	OutcomeAlert  = "alert"
	OutcomePaused = "paused"
)

// RuleStatus is one local rule as the model sees it.
type RuleStatus struct {
	Name   string    `json:"name"`
	When   string    `json:"when"`
	Firing bool      `json:"firing"`
	Since  time.Time `json:"since,omitempty"`
}

// Point is one historical value of a reading.
type Point struct {
	Time  time.Time `json:"t"`
	Value float64   `json:"v"`
}

// Facts is the read-only view of the device the tools expose. The heartbeat
// engine implements it.
type Facts interface {
	// History returns the values of sensor.quantity within window, oldest first.
	History(ctx context.Context, key string, window time.Duration) ([]Point, device.Unit, error)
	// SystemStatus returns board health and vigil's own state as a flat map.
	SystemStatus(ctx context.Context) (map[string]any, error)
}

// Input is everything one heartbeat shows the model.
type Input struct {
	Checklist   string
	Snapshot    device.Snapshot
	Previous    *device.Snapshot         // snapshot at the last LLM run, for deltas (nil: none)
	Stale       map[string]time.Duration // sensor -> time since its last good read
	Rules       []RuleStatus
	Now         time.Time
	Location    *time.Location
	LastAlert   string
	LastAlertAt time.Time
	LastSuccess time.Time
	Facts       Facts
	MaxCalls    int // HTTP requests this run may make (the day's remaining budget); 0: no cap
}

// Decision is how a heartbeat ended.
type Decision struct {
	Outcome   string         `json:"outcome"` // ok | alert | paused
	Severity  alert.Severity `json:"severity,omitempty"`
	Summary   string         `json:"summary,omitempty"`
	Pause     time.Duration  `json:"pause,omitempty"` // with OutcomePaused
	ToolCalls []string       `json:"tool_calls"`      // "read_sensor {\"name\":\"air\"}"
	Tokens    int            `json:"tokens"`          // prompt + completion, all calls
	Calls     int            `json:"calls"`           // HTTP requests to the LLM
	Escalated bool           `json:"escalated,omitempty"`
	// Escalation is the scout's reason for handing the run to the main model.
	Escalation string `json:"escalation,omitempty"`
}
