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
	MaxCalls    int    // HTTP requests this run may make (the day's remaining budget); 0: no cap
	Meta        Meta   // why and when this run happens; zero: not shown
	Notes       []Note // the model's own notes from earlier heartbeats, oldest first
	// Proposed names the rules the model proposed: pending, and approved
	// or rejected in the last 30 days, so it does not repeat itself.
	Proposed []Proposed
	// Usual is what is usual for the readings at this hour, by key, where
	// their baselines are ready (package baseline): shown beside each
	// reading. Nil: none known.
	Usual map[string]Usual
}

// Usual is what is usual for one reading at this hour: the value expected
// and the reading's signed robust z-score against it.
type Usual struct {
	Value float64
	Z     float64
}

// Meta is the meta snapshot of a run: why the LLM is asked now, when the
// tick was due, and how the last runs went. The heartbeat fills it.
type Meta struct {
	// Trigger is the gate's reason: changed, unusual, rule_changed, max_quiet,
	// forced (vigil check), retry (the last run failed) or first_run.
	Trigger       string
	ScheduledAt   time.Time     // when this tick was due; zero for a forced run
	Interval      time.Duration // time between heartbeats
	FailureStreak int           // LLM runs that failed in a row before this one
	// LastErrorClass is ErrorClass of the last failed run ("timeout",
	// "http_429", ...), shown while FailureStreak > 0.
	LastErrorClass string
}

// Proposed is a rule the model proposed and what became of it.
type Proposed struct {
	Name  string
	State string // alert.ProposalPending, ProposalApproved, ProposalRejected
}

// Note is one thing the model asked to remember (the remember tool).
type Note struct {
	Time time.Time
	Text string
}

// What heartbeat.model_may may list: the model may pause heartbeats,
// change its interval, and keep notes.
const (
	MayPause    = "pause"
	MayInterval = "interval"
	MayNotes    = "notes"
	MayRules    = "propose_rule"
)

// Proposer takes a rule the model proposes (the propose_rule tool): it
// validates it as config.toml's [[rule]] is validated, backtests it on
// the device's history and keeps it for a person. A refusal is the error,
// shown to the model so it can correct itself; the answer is a short
// confirmation. The daemon implements it; an agent.Self that also
// implements Proposer gets the tool when heartbeat.model_may lists
// propose_rule.
type Proposer interface {
	ProposeRule(ctx context.Context, p alert.Proposal) (string, error)
}

// Self is what the model may change about its own heartbeat, as allowed
// by Config.ModelMay. The daemon implements it (daemon/model.go): notes go
// to the state file, the interval through the settings overlay. Each returns a short
// confirmation for the model, or an error it is shown.
type Self interface {
	// Remember keeps note (checked and redacted) for later prompts.
	Remember(ctx context.Context, note string) (string, error)
	// SetInterval changes the time between heartbeats (within bounds).
	SetInterval(ctx context.Context, d time.Duration) (string, error)
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
