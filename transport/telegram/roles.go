package telegram

import (
	"context"
	"time"
)

// The roles of the daemon that the bot's commands call, declared here
// where they are used. Each answers with a short text for the reply; the
// daemon logs, bounds and audits what it accepts, and refuses what
// [manage] remote does not allow (transport.ErrNotAllowed).

// Reporter answers /status, /sensors and /logs (the last n runs and
// accepted commands; n <= 0: a default).
type Reporter interface {
	Status(ctx context.Context) (string, error)
	Sensors(ctx context.Context) (string, error)
	Logs(ctx context.Context, n int) (string, error)
}

// Checker runs a forced heartbeat (/check).
type Checker interface {
	Check(ctx context.Context) (string, error)
}

// Pauser pauses and resumes heartbeats (/pause, /resume). Pause refuses a
// duration out of range (transport.ErrPauseRange).
type Pauser interface {
	Pause(ctx context.Context, d time.Duration) (string, error)
	Resume(ctx context.Context) (string, error)
}

// Settings reads and changes run-time settings (/get, /set, /unset, and
// /toggle, which flips rule.<name>.enabled).
type Settings interface {
	Get(ctx context.Context, key string) (string, error)
	Set(ctx context.Context, key, value string) (string, error)
	Unset(ctx context.Context, key string) (string, error)
}

// Toggler flips a rule on or off (/toggle): a set of rule.<name>.enabled.
type Toggler interface {
	Toggle(ctx context.Context, rule string) (string, error)
}

// Checklister shows, sets or resets the checklist set from afar
// (/checklist; op is transport.ChecklistShow, Set or Reset).
type Checklister interface {
	Checklist(ctx context.Context, op, text string) (string, error)
}

// Notebook lists the model's notes, or clears them (/notes).
type Notebook interface {
	Notes(ctx context.Context, clear bool) (string, error)
}

// Acker acknowledges a firing problem (/ack and the Acknowledge button):
// target is a rule, "llm", an alert id, or "" for the only one firing.
// It refuses with transport.ErrNotFiring, ErrNotice or ErrAmbiguous.
type Acker interface {
	Ack(ctx context.Context, target string) (string, error)
}

// Commands is every role the bot's commands call.
type Commands interface {
	Reporter
	Checker
	Pauser
	Settings
	Toggler
	Checklister
	Notebook
	Acker
}
