// Package alert holds vigil's domain type: the alert, its severity, source
// and state. It imports nothing of vigil's own, so every package that only
// needs to name an alert (store, agent, heartbeat, the transports) can do so
// without importing the package that delivers one.
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
// SourceSystem.
const RuleTest = "test"

// Rules of the info alerts that audit a change made at run time (vigil set,
// unset, checklist, notes clear), whose Source is SourceSystem.
const (
	RuleSetting   = "setting"
	RuleChecklist = "checklist"
	RuleNotes     = "notes"
)

// Alert sources.
const (
	SourceLLM    = "llm"
	SourceRule   = "rule"
	SourceSystem = "system"
)

// Alert states.
const (
	StateFiring   = "firing"
	StateResolved = "resolved"
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
	State    string    `json:"state"`  // firing | resolved
	Summary  string    `json:"summary"`
	// Transport, when set, is the only transport that delivers the alert;
	// every other one acknowledges it without sending (vigil test-alert
	// --transport). It is not part of the message.
	Transport string `json:"-"`
}

// Text renders the alert as one human-readable line for chat and logs.
func (a Alert) Text() string {
	what := a.Rule
	if what == "" {
		what = a.Source
	}
	if a.State == StateResolved {
		return fmt.Sprintf("[%s] %s resolved: %s — %s", a.Device, what, a.Summary, a.Severity)
	}
	return fmt.Sprintf("[%s] %s %s: %s", a.Device, a.Severity, what, a.Summary)
}
