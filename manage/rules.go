package manage

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/vigil-iot/vigil/alert"
	"github.com/vigil-iot/vigil/config"
	"github.com/vigil-iot/vigil/store"
)

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

// IsRunRule reports whether an overlay key holds a run-time rule.
func IsRunRule(key string) bool { return strings.HasPrefix(key, RunRulePrefix) }

// runRule is a run-time rule's overlay value (JSON): the approved
// proposal's rule and when the model proposed it.
type runRule struct {
	ID         string    `json:"id"`
	When       string    `json:"when"`
	Clear      string    `json:"clear,omitempty"`
	For        string    `json:"for,omitempty"`
	Severity   string    `json:"severity"`
	Message    string    `json:"message"`
	ProposedAt time.Time `json:"proposed_at"`
}

// RunRuleSetting is the overlay entry that keeps p in force, approved by
// by at at.
func RunRuleSetting(p alert.Proposal, by string, at time.Time) store.Setting {
	v, _ := json.Marshal(runRule{ID: p.ID, When: p.When, Clear: p.Clear, For: p.For, Severity: p.Severity, Message: p.Message, ProposedAt: p.At})
	return store.Setting{Key: RunRulePrefix + p.Name, Value: string(v), By: by, At: at}
}

// RuleOf is p as a config rule: a [[rule]] table with p's values, and a
// run-time rule's origin when approved (by not empty). A bad `for` is
// a *config.Error naming rule.<name>.for.
func RuleOf(p alert.Proposal, by string, at time.Time) (config.Rule, error) {
	r := config.Rule{Name: p.Name, When: p.When, Clear: p.Clear, Severity: p.Severity, Message: p.Message, Enabled: true}
	if r.Severity == "" {
		r.Severity = "warning"
	}
	if p.For != "" {
		d, err := time.ParseDuration(p.For)
		if err != nil || d < 0 {
			return r, &config.Error{File: config.RunRuleFile, Key: "rule." + p.Name + ".for", Err: fmt.Errorf("must be a Go duration such as \"10s\" (got %q)", p.For)}
		}
		r.For = config.Duration{Duration: d}
	}
	if by != "" {
		r.Origin = fmt.Sprintf("proposed by the model at %s, approved by %s at %s", p.At.Format(originTime), by, at.Format(originTime))
	}
	return r, nil
}

const originTime = "2006-01-02 15:04:05 -07:00"

// runRules are the overlay's run-time rules as config rules (an entry
// that does not decode is left out: the validator cannot name it).
func runRules(overlay []store.Setting) []config.Rule {
	var out []config.Rule
	for _, s := range overlay {
		name, ok := strings.CutPrefix(s.Key, RunRulePrefix)
		if !ok {
			continue
		}
		var v runRule
		if json.Unmarshal([]byte(s.Value), &v) != nil {
			continue
		}
		p := alert.Proposal{ID: v.ID, Name: name, When: v.When, Clear: v.Clear, For: v.For, Severity: v.Severity, Message: v.Message, At: v.ProposedAt}
		if r, err := RuleOf(p, s.By, s.At); err == nil {
			out = append(out, r)
		}
	}
	return out
}
