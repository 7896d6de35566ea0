package daemon

import (
	"context"
	"errors"
	"fmt"

	"github.com/vigil-iot/vigil/manage"
)

// Rule decision operations (Commander.RuleDecide).
const (
	RuleApprove = "approve" // a pending proposal (by ID or name) becomes a run-time rule
	RuleReject  = "reject"  // a pending proposal is rejected: the same rule is refused for 30 days
	RuleDrop    = "drop"    // a run-time rule (by name) leaves the overlay
)

var errRulesTODO = errors.New("rules: not built yet")

// Rules is what `vigil rules` lists: the rules in force with their origin
// and the proposals (gated like status).
func (c *Commander) Rules(ctx context.Context) (manage.RulesView, error) {
	return manage.RulesView{}, errRulesTODO
}

// RuleDecide approves, rejects (op RuleApprove, RuleReject: target is a
// pending proposal's ID or name) or drops (RuleDrop: target is a
// run-time rule's name) on the one path of a change: gated by the
// channel and [manage] remote's verb "rule", rate limited and audited,
// like an ack. An unknown target wraps alert.ErrNoProposal and changes
// nothing. The answer is a line for the person.
func (c *Commander) RuleDecide(ctx context.Context, op, target string) (string, error) {
	return "", fmt.Errorf("rule %s: %w", op, errRulesTODO)
}

// RuleTOML is the rule name (a run-time rule or a proposal) as a
// [[rule]] table to paste into config.toml.
func (c *Commander) RuleTOML(ctx context.Context, name string) (string, error) {
	return "", errRulesTODO
}
