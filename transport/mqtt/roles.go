package mqtt

import (
	"context"
	"time"
)

// The roles of the daemon that the cmd topics call, declared here where
// they are used. Each answers with a short text for the result topic; the
// daemon logs, bounds and audits what it accepts.

// Checker runs a forced heartbeat (cmd/check).
type Checker interface {
	Check(ctx context.Context) (string, error)
}

// Pauser pauses and resumes heartbeats (cmd/pause, cmd/resume). Pause
// refuses a duration out of range (transport.ErrPauseRange).
type Pauser interface {
	Pause(ctx context.Context, d time.Duration) (string, error)
	Resume(ctx context.Context) (string, error)
}

// Settings reads and changes run-time settings (cmd/get, cmd/set,
// cmd/unset); Get with key "" lists every settable key.
type Settings interface {
	Get(ctx context.Context, key string) (string, error)
	Set(ctx context.Context, key, value string) (string, error)
	Unset(ctx context.Context, key string) (string, error)
}

// Checklister shows, sets or resets the checklist set from afar
// (cmd/checklist; op is transport.ChecklistShow, Set or Reset).
type Checklister interface {
	Checklist(ctx context.Context, op, text string) (string, error)
}

// Acker acknowledges a firing problem (cmd/ack): target is a rule, "llm",
// an alert id, or "" for the only one firing.
type Acker interface {
	Ack(ctx context.Context, target string) (string, error)
}

// Commands is every role the cmd topics call.
type Commands interface {
	Checker
	Pauser
	Settings
	Checklister
	Acker
}
