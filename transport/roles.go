package transport

import (
	"context"
	"time"

	"github.com/vigil-iot/vigil/alert"
)

// The roles the daemon plays for the channels that carry commands (MQTT's
// cmd topics, the Telegram bot, the status page), each declared once,
// here, where every channel that calls it can name it. Each answers with a
// short text for the channel's reply; the daemon logs, bounds and audits
// what it accepts, and refuses what [manage] remote does not allow on the
// channel that asked (alert.ErrNotAllowed) and changes over the rate
// (ErrRateLimited). Each channel bundles the roles it calls
// (mqtt.CmdHandler, telegram.BotHandler, web.Controller).

// Reporter answers what a person asks to read: the status, the last
// readings, and the last n runs and accepted commands (n <= 0: a default).
type Reporter interface {
	Status(ctx context.Context) (string, error)
	Sensors(ctx context.Context) (string, error)
	Logs(ctx context.Context, n int) (string, error)
}

// Checker runs a forced heartbeat.
type Checker interface {
	Check(ctx context.Context) (string, error)
}

// Pauser pauses and resumes heartbeats. Pause refuses a duration out of
// range (ErrPauseRange).
type Pauser interface {
	Pause(ctx context.Context, d time.Duration) (string, error)
	Resume(ctx context.Context) (string, error)
}

// SettingsEditor reads and changes run-time settings; Get with key ""
// lists every settable key.
type SettingsEditor interface {
	Get(ctx context.Context, key string) (string, error)
	Set(ctx context.Context, key, value string) (string, error)
	Unset(ctx context.Context, key string) (string, error)
}

// Toggler flips a rule on or off: a set of rule.<name>.enabled.
type Toggler interface {
	Toggle(ctx context.Context, rule string) (string, error)
}

// Checklister shows, sets or resets the checklist set from afar (op is
// ChecklistShow, ChecklistSet or ChecklistReset).
type Checklister interface {
	Checklist(ctx context.Context, op, text string) (string, error)
}

// Notebook lists the model's notes, or clears them.
type Notebook interface {
	Notes(ctx context.Context, clear bool) (string, error)
}

// Acker acknowledges a firing problem: target is a rule, "llm", an alert
// id, or "" for the only one firing. It refuses with ErrNotFiring,
// ErrNotice or ErrAmbiguous.
type Acker interface {
	Ack(ctx context.Context, target string) (string, error)
}

// AlertTester queues an info test alert for every transport.
type AlertTester interface {
	TestAlert(ctx context.Context) (string, error)
}

// ProblemSource tells what is firing now (rules, system faults, an open
// LLM alert), from the durable state of the transport's owner: the
// heartbeat engine, which a transport must not import.
type ProblemSource interface {
	Problems(ctx context.Context) ([]alert.Alert, error)
}

// Acknowledger is a transport that shows an ack where it told of the
// problem: Telegram edits the messages of the alerts (ids) sent for it,
// MQTT republishes its problem sensor with the ack.
type Acknowledger interface {
	Acknowledged(ctx context.Context, p alert.Alert, ids []string) error
}

// RuleDecider decides on a rule the model proposed: op RuleApprove or
// RuleReject with target a pending proposal's ID ("p7") or name, or
// RuleDrop with target a run-time rule's name. An unknown target is
// refused (alert.ErrNoProposal) and changes nothing; [manage] remote's verb
// is "rule". Approving adds an alerting rule, never an action.
type RuleDecider interface {
	RuleDecide(ctx context.Context, op, target string) (string, error)
}
