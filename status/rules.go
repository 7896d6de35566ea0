package status

// The rules in force and the rules the model proposed, as text: what
// `vigil rules` and `vigil rule show` print.

import (
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/vigil-iot/vigil/alert"
	"github.com/vigil-iot/vigil/manage"
	"github.com/vigil-iot/vigil/transport"
)

// WriteRules prints v: the rules in force with their origin, the
// proposals waiting with the model's why and the backtest, and the ones
// decided in the last 30 days; times in loc.
func WriteRules(w io.Writer, v manage.RulesView, loc *time.Location) {
	pad := 0
	for _, r := range v.Rules {
		pad = max(pad, len(r.Name))
	}
	for _, p := range slices.Concat(v.Pending, v.Decided) {
		pad = max(pad, len(p.ID)+1+len(p.Name))
	}
	indent := fmt.Sprintf("%*s", pad+4, "")
	if len(v.Rules) > 0 {
		fmt.Fprintln(w, "rules in force:")
	}
	for _, r := range v.Rules {
		off := ""
		if !r.Enabled {
			off = " (disabled)"
		}
		p := alert.Proposal{When: r.When, For: r.For, Clear: r.Clear, Severity: r.Severity}
		fmt.Fprintf(w, "  %-*s  %s%s\n%sorigin: %s\n", pad, r.Name, transport.ProposedRule(p), off, indent, r.Origin)
	}
	if len(v.Pending) == 0 {
		fmt.Fprintln(w, "proposals waiting: none proposed by the model")
	} else {
		fmt.Fprintln(w, "proposals waiting (vigil rule approve ID, or reject):")
	}
	for _, p := range v.Pending {
		fmt.Fprintf(w, "  %-*s  %s\n%swhy: %s\n%sbacktest: %s\n%sproposed %s\n", pad, p.ID+" "+p.Name, transport.ProposedRule(p),
			indent, p.Why, indent, transport.BacktestText(p.Backtest, loc), indent, p.At.In(loc).Format(transport.TimeLayout))
	}
	if len(v.Decided) > 0 {
		fmt.Fprintln(w, "decided in the last 30 days:")
	}
	for _, p := range v.Decided {
		fmt.Fprintf(w, "  %-*s  %s by %s at %s\n", pad, p.ID+" "+p.Name, p.State, p.DecidedBy, p.DecidedAt.In(loc).Format(transport.TimeLayout))
	}
}

// RulesNamed keeps of v the rule or proposal name names (a rule's name, a
// proposal's ID or name), and reports whether there was one.
func RulesNamed(v manage.RulesView, name string) (manage.RulesView, bool) {
	is := func(p alert.Proposal) bool { return p.ID != name && p.Name != name }
	out := manage.RulesView{Rules: slices.DeleteFunc(slices.Clone(v.Rules), func(r manage.RuleView) bool { return r.Name != name }),
		Pending: slices.DeleteFunc(slices.Clone(v.Pending), is), Decided: slices.DeleteFunc(slices.Clone(v.Decided), is)}
	return out, len(out.Rules)+len(out.Pending)+len(out.Decided) > 0
}
