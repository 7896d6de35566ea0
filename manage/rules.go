package manage

import "github.com/vigil-iot/vigil/alert"

// RunRulePrefix starts the overlay key of a run-time rule: an approved
// proposal is kept in the settings overlay as "runrule.<name>" (By: who
// approved it, At: when), so it survives a restart and a power cut like
// any `vigil set`.
const RunRulePrefix = "runrule."

// MaxRunRules bounds the run-time rules; MaxPending the proposals that
// wait for a person (the 17th drops the oldest, and the person is told).
const (
	MaxRunRules = 32
	MaxPending  = 16
)

// RuleView is one rule in force, with where it comes from.
type RuleView struct {
	Name     string `json:"name"`
	When     string `json:"when"`
	Clear    string `json:"clear,omitempty"`
	For      string `json:"for,omitempty"`
	Severity string `json:"severity"`
	Message  string `json:"message,omitempty"`
	Enabled  bool   `json:"enabled"`
	// Origin: "config.toml:12", or for a run-time rule "proposed by the
	// model at …, approved by … at …".
	Origin  string `json:"origin"`
	RunTime bool   `json:"run_time,omitempty"` // an approved proposal, in the overlay
}

// RulesView is what `vigil rules` lists: the rules in force with their
// origin, the proposals waiting for a person (with their backtests), and
// the ones decided in the last 30 days.
type RulesView struct {
	Rules   []RuleView       `json:"rules"`
	Pending []alert.Proposal `json:"pending"`
	Decided []alert.Proposal `json:"decided,omitempty"`
}
