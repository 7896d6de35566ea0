// Package transport holds what vigil's transports share: the heartbeat
// payload, the commands a transport may ask of the daemon, the permanent
// delivery error, and the log transport. Network transports live in the
// sub-packages mqtt and telegram; each implements the consumer's interfaces
// (heartbeat.Notifier and friends). The alert itself is package alert's.
package transport

import (
	"context"
	"errors"
	"time"
)

// ErrPermanent marks a delivery failure that retrying cannot fix: the far
// side rejected this alert's content (Telegram answers 400 even to the plain
// text fallback). A delivery loop that sees errors.Is(err, ErrPermanent)
// drops the entry, logs it, and moves on instead of retrying.
var ErrPermanent = errors.New("permanent delivery failure")

// Heartbeat is the retained payload of <prefix>/<id>/heartbeat: the last run.
type Heartbeat struct {
	Time       time.Time `json:"time"`
	Outcome    string    `json:"outcome"` // ok | alert | skipped | failed | paused
	Reason     string    `json:"reason"`
	DurationMS int64     `json:"duration_ms"`
	NextAt     time.Time `json:"next_at"`
	Tokens     int       `json:"tokens"`
}

// Commands is what a transport that accepts commands (Telegram, MQTT cmd
// topics, the control socket) may ask of the daemon. Each returns a short
// human-readable answer. The transport names the sender with WithSource on
// ctx; the implementation logs and lists what it accepted. Pause rejects a
// duration outside MinPause..MaxPause with an error wrapping ErrPauseRange:
// that is the one place the limit is enforced.
type Commands interface {
	Status(ctx context.Context) (string, error)
	Check(ctx context.Context) (string, error)
	Pause(ctx context.Context, d time.Duration) (string, error)
	Resume(ctx context.Context) (string, error)
	Sensors(ctx context.Context) (string, error)

	// Run-time settings (an overlay in the state file over config.toml):
	// Get with key "" lists every settable key with its value and origin.
	// Set and Unset validate as config.toml is validated and apply at once.
	// Toggle flips rule.<name>.enabled (a Set).
	Get(ctx context.Context, key string) (string, error)
	Set(ctx context.Context, key, value string) (string, error)
	Unset(ctx context.Context, key string) (string, error)
	Toggle(ctx context.Context, rule string) (string, error)
	// Checklist shows (ChecklistShow), replaces (ChecklistSet, with text)
	// or drops (ChecklistReset) the checklist set from afar.
	Checklist(ctx context.Context, op, text string) (string, error)
	// Logs lists the last n runs and accepted commands (n <= 0: a default).
	Logs(ctx context.Context, n int) (string, error)
	// Notes lists the model's notes, or clears them.
	Notes(ctx context.Context, clear bool) (string, error)
}

// TimeLayout is how vigil shows a time to a person, on every channel (the
// CLI, Telegram, command replies): in the device's zone, to the second,
// with the offset, as in 2026-11-26 15:46:03 +01:00.
const TimeLayout = "2006-01-02 15:04:05 -07:00"

// Checklist operations for Commands.Checklist.
const (
	ChecklistShow  = "show"
	ChecklistSet   = "set"
	ChecklistReset = "reset"
)

// ErrNotAllowed is wrapped by Commands for a verb that [manage] remote does
// not allow on the channel that sent it.
var ErrNotAllowed = errors.New("not allowed")
