package control

import (
	"fmt"
	"io"

	"github.com/vigil-iot/vigil/alert"
	"github.com/vigil-iot/vigil/heartbeat"
	"github.com/vigil-iot/vigil/redact"
)

// CheckJSON is the documented `vigil check --json` record (SPEC §2).
type CheckJSON struct {
	Outcome    string        `json:"outcome"`
	Reason     string        `json:"reason"`
	Alerts     []alert.Alert `json:"alerts"`
	ToolCalls  []string      `json:"tool_calls"`
	Tokens     int           `json:"tokens"`
	DurationMS int64         `json:"duration_ms"`
	Summary    string        `json:"summary,omitempty"`
	Severity   string        `json:"severity,omitempty"`
	Error      string        `json:"error,omitempty"`
}

// ToCheckJSON is the record of a run.
func ToCheckJSON(res heartbeat.Result) CheckJSON {
	cj := CheckJSON{Outcome: res.Run.Outcome, Reason: res.Run.Reason, Alerts: res.Alerts, ToolCalls: res.Run.ToolCalls,
		Tokens: res.Run.Tokens, DurationMS: res.Run.DurationMS, Error: res.Run.Error}
	if cj.Alerts == nil {
		cj.Alerts = []alert.Alert{}
	}
	if cj.ToolCalls == nil {
		cj.ToolCalls = []string{}
	}
	if d := res.Decision; d != nil {
		cj.Summary = d.Summary
		if d.Severity != 0 {
			cj.Severity = d.Severity.String()
		}
	}
	return cj
}

// Redacted returns cj with the secrets red knows removed from the
// model's text and the error: whoever prints a check (vigil check, a
// remote /check) prints it redacted, whatever the daemon that ran it knew.
func (cj CheckJSON) Redacted(red *redact.Redactor) CheckJSON {
	cj.Summary, cj.Error, cj.ToolCalls = red.String(cj.Summary), red.String(cj.Error), red.Strings(cj.ToolCalls)
	alerts := make([]alert.Alert, len(cj.Alerts))
	for i, a := range cj.Alerts {
		a.Summary = red.String(a.Summary)
		alerts[i] = a
	}
	cj.Alerts = alerts
	return cj
}

// WriteCheck prints a check's record for a person.
func WriteCheck(w io.Writer, cj CheckJSON) {
	fmt.Fprintf(w, "outcome: %s", cj.Outcome)
	if cj.Reason != "" {
		fmt.Fprintf(w, " (%s)", cj.Reason)
	}
	fmt.Fprintln(w)
	if cj.Summary != "" {
		fmt.Fprintf(w, "decision: %s %s\n", cj.Severity, cj.Summary)
	}
	if cj.Error != "" {
		fmt.Fprintf(w, "error: %s\n", cj.Error)
	}
	for _, tc := range cj.ToolCalls {
		fmt.Fprintf(w, "tool call: %s\n", tc)
	}
	for _, a := range cj.Alerts {
		fmt.Fprintf(w, "alert queued: %s %s\n", a.ID, a.Text())
	}
	fmt.Fprintf(w, "tokens: %d, duration: %dms\n", cj.Tokens, cj.DurationMS)
}
