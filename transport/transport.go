// Package transport holds what vigil's transports share: the heartbeat
// payload, who sent a command (Source) and the limits and refusals every
// channel's commands share, the permanent delivery error, and the log
// transport. Network transports live in the sub-packages mqtt and
// telegram; each implements the consumer's interfaces (heartbeat.Notifier
// and friends). The roles of the daemon that the channels call (Pauser,
// Acker, ...) are declared once, in roles.go, and each channel bundles the
// ones it calls. The alert itself is package alert's, and so is the
// refusal of who asked (alert.ErrNotAllowed).
package transport

import (
	"errors"
	"time"

	"github.com/vigil-iot/vigil/alert"
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

// DeviceInfo is what the daemon tells a transport about the config in
// force, at start and after every change (a set, an unset, a checklist
// set or reset, a reload), for whoever watches the device (MQTT's
// retained info topic, which a fleet view reads).
type DeviceInfo struct {
	Interval       time.Duration // the heartbeat's spacing; 0 when heartbeats are off
	SampleInterval time.Duration
	Tags           []string // [device] tags
	Config         string   // config.Digest of the config and checklist in force
}

// TimeLayout is how vigil shows a time to a person, on every channel (the
// CLI, Telegram, command replies): in the device's zone, to the second,
// with the offset, as in 2026-11-26 15:46:03 +01:00.
const TimeLayout = "2006-01-02 15:04:05 -07:00"

// Checklist operations of the checklist command (op: show, set, reset).
const (
	ChecklistShow  = "show"
	ChecklistSet   = "set"
	ChecklistReset = "reset"
)

// Operations of a rule decision (RuleDecider.RuleDecide), the words
// `vigil rule`, MQTT cmd/rule, Telegram's buttons and the page use.
const (
	RuleApprove = "approve"
	RuleReject  = "reject"
	RuleDrop    = "drop"
)

// ErrRateLimited is wrapped by the daemon's refusal of a change from a
// remote channel that made too many changes in the last minute; its text
// says how many a minute are allowed and when to try again. It is an
// alert.ErrRefused.
var ErrRateLimited = alert.Refusal("refused")

// The refusals of an ack, whichever channel asks (the heartbeat engine
// returns them; a transport tells them apart with errors.Is).
var (
	// ErrNotFiring: the name or id given names no problem firing now
	// (unknown, not firing, or resolved since).
	ErrNotFiring = errors.New("not firing")
	// ErrNotice: the id given is a notice's, which has nothing to
	// acknowledge.
	ErrNotice = errors.New("a notice is no problem: it has nothing to acknowledge")
	// ErrAmbiguous: no name was given and several problems fire
	// unacknowledged.
	ErrAmbiguous = errors.New("several problems are firing")
)
