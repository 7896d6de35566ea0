// Package alert holds vigil's domain type: the alert, its severity, source
// and state. It imports nothing of vigil's own, so every package that only
// needs to name an alert (store, agent, heartbeat, the transports) can do so
// without importing the package that delivers one. It also holds the one
// refusal every side names (ErrNotAllowed), for the same reason.
package alert

import (
	"fmt"
	"time"
)

// Severity ranks alerts. The zero value is invalid.
type Severity int

// Severities in increasing order.
const (
	Info Severity = iota + 1
	Warning
	Critical
)

// ParseSeverity parses "info", "warning" or "critical".
func ParseSeverity(s string) (Severity, error) {
	switch s {
	case "info":
		return Info, nil
	case "warning":
		return Warning, nil
	case "critical":
		return Critical, nil
	}
	return 0, fmt.Errorf("unknown severity %q (want info, warning or critical)", s)
}

func (s Severity) String() string {
	switch s {
	case Info:
		return "info"
	case Warning:
		return "warning"
	case Critical:
		return "critical"
	}
	return fmt.Sprintf("severity(%d)", int(s))
}

// MarshalText encodes the severity as its name.
func (s Severity) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// UnmarshalText decodes a severity name.
func (s *Severity) UnmarshalText(b []byte) error {
	v, err := ParseSeverity(string(b))
	if err != nil {
		return err
	}
	*s = v
	return nil
}

// RuleTest is the Rule of a test alert (vigil test-alert), whose Source is
// SourceSystem and whose State is StateNotice.
const RuleTest = "test"

// TestSummary is the Summary of a test alert from device (vigil
// test-alert, and the proof at the end of vigil init).
func TestSummary(device string) string {
	return fmt.Sprintf("Test alert from vigil on %s — if you can read this, delivery works", device)
}

// Rules of the notices that audit a change made at run time (vigil set,
// unset, checklist, notes clear, a model's set_interval), whose Source is
// SourceSystem and whose State is StateNotice.
const (
	RuleSetting   = "setting"
	RuleChecklist = "checklist"
	RuleNotes     = "notes"
	RuleBaseline  = "baseline" // vigil baseline reset, or a reload that moved a sensor
)

// RuleFloodGuard is the Rule of the notice that the flood guard engaged
// and holds further alerts; it never resolves, so it is no problem.
const RuleFloodGuard = "flood_guard"

// Alert sources.
const (
	SourceLLM    = "llm"
	SourceRule   = "rule"
	SourceSystem = "system"
)

// Alert states. A problem (a rule, an LLM alert, a system fault) is
// firing and later resolved; a notice (a setting changed, the checklist
// replaced, a test alert) is an event with no lifecycle: it is delivered,
// but it never turns a problem indicator on (Home Assistant's problem
// sensor, the firing list of `vigil fleet`).
const (
	StateFiring   = "firing"
	StateResolved = "resolved"
	StateNotice   = "notice"
)

// Alert is the payload of <prefix>/<id>/alert and of every other alert
// message. ID is unique per alert and stable across redelivery.
type Alert struct {
	ID       string    `json:"id"`
	Device   string    `json:"device"`
	Time     time.Time `json:"time"`
	Severity Severity  `json:"severity"`
	Source   string    `json:"source"` // llm | rule | system
	Rule     string    `json:"rule"`   // rule name, or the system alert kind ("llm_unreachable", "heartbeat_failed")
	State    string    `json:"state"`  // firing | resolved | notice
	Summary  string    `json:"summary"`
	// AckedBy and AckedAt say who acknowledged the problem and when (vigil
	// ack, Telegram's button, MQTT cmd/ack, the page): set on a firing
	// problem that was acknowledged and on the resolved alert that ends
	// it; empty otherwise.
	AckedBy string    `json:"acked_by,omitempty"`
	AckedAt time.Time `json:"acked_at,omitzero"`
	// Proposal is set on the notice that brings a rule the model proposed
	// to a person (state notice, source llm, rule the proposed name).
	Proposal *Proposal `json:"proposal,omitempty"`
	// Transport, when set, is the only transport that delivers the alert;
	// every other one acknowledges it without sending (vigil test-alert
	// --transport). It is not part of the message.
	Transport string `json:"-"`
}

// Name is how a person names what raised the alert: its rule, or its
// source when it has none ("llm").
func (a Alert) Name() string {
	if a.Rule != "" {
		return a.Rule
	}
	return a.Source
}

// Key names the problem an alert belongs to: its source and rule
// ("rule/too_hot", "llm/", "system/llm_unreachable"). A problem's firing,
// its reminders and its resolved alert share it.
func (a Alert) Key() string { return a.Source + "/" + a.Rule }

// IsNotice reports whether the alert is a notice: an event that is
// delivered but never counts as a problem. Besides State "notice" this
// recognises the notices vigil wrote before that state existed: a firing
// system alert with one of the notice rules (RuleTest, RuleSetting,
// RuleChecklist, RuleNotes, RuleBaseline, RuleFloodGuard), as an outbox filled by an
// older vigil or an older device on the same broker still carries them.
func (a Alert) IsNotice() bool {
	if a.State == StateNotice {
		return true
	}
	if a.State != StateFiring || a.Source != SourceSystem {
		return false
	}
	switch a.Rule {
	case RuleTest, RuleSetting, RuleChecklist, RuleNotes, RuleBaseline, RuleFloodGuard:
		return true
	}
	return false
}

// IsProblem reports whether the alert says that something is firing: a
// firing alert that is not a notice.
func (a Alert) IsProblem() bool { return a.State == StateFiring && !a.IsNotice() }

// Normalized returns the alert with a notice written the old way (see
// IsNotice) given State "notice", so that readers of stored and received
// alerts see one form.
func (a Alert) Normalized() Alert {
	if a.IsNotice() {
		a.State = StateNotice
	}
	return a
}

// Text renders the alert as one human-readable line for chat and logs.
func (a Alert) Text() string {
	what := a.Name()
	switch {
	case a.State == StateResolved:
		return fmt.Sprintf("[%s] %s resolved: %s — %s", a.Device, what, a.Summary, a.Severity)
	case a.IsNotice():
		return fmt.Sprintf("[%s] notice %s: %s", a.Device, what, a.Summary)
	}
	return fmt.Sprintf("[%s] %s %s: %s", a.Device, a.Severity, what, a.Summary)
}
