package control

import (
	"path/filepath"

	"github.com/vigil-iot/vigil/config"
	"github.com/vigil-iot/vigil/heartbeat"
	"github.com/vigil-iot/vigil/manage"
	"github.com/vigil-iot/vigil/status"
	"github.com/vigil-iot/vigil/store"
)

// The control socket speaks one JSON request line and one JSON response
// line per connection. Only the owner can connect (mode 0600).

// MaxRequest bounds a request line. The longest a CLI sends is
// `checklist set` with a checklist at config.MaxChecklistSize, every byte
// of which JSON may escape as \u003c (six bytes); the other fields are
// short. A longer request is answered with an error, not read to its end.
const MaxRequest = 8 * config.MaxChecklistSize

// Request is one command to the daemon.
type Request struct {
	Cmd       string `json:"cmd"` // status | check | pause | resume | test-alert | history | get | set | unset | settings | checklist | notes | ack | baseline | rules | rule
	Minutes   int    `json:"minutes,omitempty"`
	SinceS    int64  `json:"since_s,omitempty"` // history: the window in seconds
	DryRun    bool   `json:"dry_run,omitempty"`
	Severity  string `json:"severity,omitempty"`  // test-alert
	Transport string `json:"transport,omitempty"` // test-alert: only this one
	Key       string `json:"key,omitempty"`       // get, set, unset
	Value     string `json:"value,omitempty"`     // set
	Op        string `json:"op,omitempty"`        // checklist: show, set, reset; baseline: reset; rule: approve, reject, drop, show
	Body      string `json:"body,omitempty"`      // checklist set: the text
	Clear     bool   `json:"clear,omitempty"`     // notes clear
	Target    string `json:"target,omitempty"`    // ack: a rule, llm, an alert id, or "" (the only one firing); baseline reset: a sensor or "" (all); rule: a proposal's ID or a rule's name
	// StateDir is the state directory the CLI's config names. A daemon
	// watching another one answers OtherState and does nothing, so a
	// shared socket location (/run/vigil) never reaches the wrong daemon.
	StateDir string `json:"state_dir,omitempty"`
}

// Response is the daemon's answer.
type Response struct {
	Error      string `json:"error,omitempty"`
	OtherState bool   `json:"other_state,omitempty"`
	// Status answers status: the one view (package status), with the
	// last hour of every reading and the run-time view.
	Status *status.View `json:"status,omitempty"`
	Check  *CheckJSON   `json:"check,omitempty"`
	Text   string       `json:"text,omitempty"`
	// Series answers history: the window asked for.
	Series []heartbeat.Series `json:"series,omitempty"`
	// Values answers get; Settings answers settings (the stored overlay).
	Values   []manage.SettingView `json:"values,omitempty"`
	Settings []store.Setting      `json:"settings,omitempty"`
	// Rules answers rules: the rules in force and the proposals.
	Rules *manage.RulesView `json:"rules,omitempty"`
	// Code says what kind of error Error is (a refused set is a config
	// error: the CLI exits 78 with it); the client maps it back.
	Code Code `json:"code,omitempty"`
}

// SockName is the control socket's file name.
const SockName = "vigil.sock"

// AbsDir makes a state directory absolute for comparison across processes.
func AbsDir(dir string) string {
	if a, err := filepath.Abs(dir); err == nil {
		return a
	}
	return dir
}
