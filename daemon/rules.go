package daemon

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/vigil-iot/vigil/alert"
	"github.com/vigil-iot/vigil/config"
	"github.com/vigil-iot/vigil/manage"
	"github.com/vigil-iot/vigil/store"
	"github.com/vigil-iot/vigil/transport"
)

// Rule decision operations (Commander.RuleDecide).
const (
	RuleApprove = "approve" // a pending proposal (by ID or name) becomes a run-time rule
	RuleReject  = "reject"  // a pending proposal is rejected: the same rule is refused for 30 days
	RuleDrop    = "drop"    // a run-time rule (by name) leaves the overlay
)

// MaxProposedExpr bounds a proposed rule's when and clear, in bytes.
const MaxProposedExpr = 500

// MaxWhy bounds the model's reason for a proposal, in bytes.
const MaxWhy = 300

// Rules is what `vigil rules` lists: the rules in force with their origin
// and the proposals (gated like status).
func (c *Commander) Rules(ctx context.Context) (manage.RulesView, error) {
	if err := c.gate(ctx, "status"); err != nil {
		return manage.RulesView{}, err
	}
	c.accept(ctx, "rules", false)
	return c.app.rulesView()
}

// rulesView gathers the rules in force and the proposals of the last 30
// days.
func (a *App) rulesView() (manage.RulesView, error) {
	cfg := a.current()
	v := manage.RulesView{Rules: []manage.RuleView{}, Pending: []alert.Proposal{}}
	for _, r := range cfg.Rules {
		rv := manage.RuleView{Name: r.Name, When: r.When, Clear: r.Clear, Severity: r.Severity, Message: r.Message,
			Enabled: r.Enabled, Origin: r.Origin, RunTime: r.Origin != ""}
		if r.For.Duration > 0 {
			rv.For = r.For.String()
		}
		if rv.Origin == "" {
			rv.Origin = fmt.Sprintf("%s:%d", cfg.File(), r.Line)
		}
		v.Rules = append(v.Rules, rv)
	}
	ps, err := a.db.Proposals()
	if err != nil {
		return v, fmt.Errorf("read the proposals: %w", err)
	}
	now := a.wall()
	for _, p := range ps {
		switch {
		case p.State == alert.ProposalPending:
			v.Pending = append(v.Pending, p)
		case now.Sub(p.DecidedAt) <= store.ProposalMemory:
			v.Decided = append(v.Decided, p)
		}
	}
	return v, nil
}

// RuleDecide approves, rejects (op RuleApprove, RuleReject: target is a
// pending proposal's ID or name) or drops (RuleDrop: target is a
// run-time rule's name) on the one path of a change: gated by the
// channel and [manage] remote's verb "rule", rate limited and audited,
// like an ack. An unknown target wraps alert.ErrNoProposal and changes
// nothing. The answer is a line for the person.
func (c *Commander) RuleDecide(ctx context.Context, op, target string) (string, error) {
	var p alert.Proposal
	check := func() error {
		if transport.SourceOf(ctx).Channel == transport.ChannelModel {
			return fmt.Errorf("rule %s: the model cannot decide on its own proposals: %w", op, alert.ErrNotAllowed)
		}
		var err error
		p, err = c.app.findRule(op, strings.TrimSpace(target))
		return err
	}
	return c.change(ctx, change{verb: "rule", name: "rule " + op, command: strings.TrimSpace("rule " + op + " " + target),
		check: check, do: func(ctx context.Context) (string, error) { return c.decide(ctx, op, p) }})
}

// findRule is the proposal op acts on: a pending one by ID or name for
// approve and reject, an approved one in force by name for drop.
func (a *App) findRule(op, target string) (alert.Proposal, error) {
	if op != RuleApprove && op != RuleReject && op != RuleDrop {
		return alert.Proposal{}, fmt.Errorf("rule: unknown operation %q (want approve, reject or drop)", op)
	}
	ps, err := a.db.Proposals()
	if err != nil {
		return alert.Proposal{}, fmt.Errorf("read the proposals: %w", err)
	}
	want := alert.ProposalPending
	if op == RuleDrop {
		want = alert.ProposalApproved
	}
	var names []string
	for _, p := range slices.Backward(ps) {
		if p.State != want {
			continue
		}
		if p.ID == target || p.Name == target {
			return p, nil
		}
		names = append(names, p.ID+" "+p.Name)
	}
	if op == RuleDrop {
		return alert.Proposal{}, fmt.Errorf("rule drop %q: %w: no run-time rule of that name (in force: %s)", target, alert.ErrNoProposal, orNone(names))
	}
	return alert.Proposal{}, fmt.Errorf("rule %s %q: %w pending (pending: %s)", op, target, alert.ErrNoProposal, orNone(names))
}

func orNone(names []string) string {
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}

// decide carries out a decision the one path accepted.
func (c *Commander) decide(ctx context.Context, op string, p alert.Proposal) (string, error) {
	a := c.app
	src := transport.SourceOf(ctx)
	now := a.wall().UTC().Round(time.Second)
	pending := ""
	switch op {
	case RuleApprove:
		if err := c.storeRunRule(p, src.String(), now); err != nil {
			return "", err
		}
		pending = a.applyChange(ctx)
		p.State = alert.ProposalApproved
	case RuleReject:
		p.State = alert.ProposalRejected
	case RuleDrop:
		if _, err := c.remove(manage.RunRulePrefix + p.Name); err != nil {
			return "", err
		}
		pending = a.applyChange(ctx)
		p.State = alert.ProposalDropped
	}
	p.DecidedBy, p.DecidedAt = src.String(), now
	if err := a.db.PutProposal(p); err != nil {
		return "", fmt.Errorf("keep the decision: %w", err)
	}
	var text string
	switch op {
	case RuleApprove:
		text = fmt.Sprintf("rule %s (%s) approved by %s: in force from the next sample, offline", p.Name, p.When, src)
	case RuleReject:
		text = fmt.Sprintf("rule %s (%s) rejected by %s: the same rule is refused for 30 days", p.Name, p.When, src)
	default:
		text = fmt.Sprintf("run-time rule %s dropped by %s", p.Name, src)
	}
	c.auditKind(ctx, "rule "+op+" "+p.Name, text, alert.RuleSetting)
	return withNote(text, pending), nil
}

// storeRunRule validates p as a run-time rule against the base and the
// stored overlay and stores it there (the overlay key runrule.<name>).
func (c *Commander) storeRunRule(p alert.Proposal, by string, at time.Time) error {
	a := c.app
	a.setMu.Lock()
	defer a.setMu.Unlock()
	if a.base == nil {
		return errors.New("rules cannot be changed here: no config base (a bug)")
	}
	if n := runRules(a.cfg); n >= manage.MaxRunRules {
		return fmt.Errorf("rule %s: already %d run-time rules, the most there may be: drop one first (vigil rule drop NAME)", p.Name, n)
	}
	stored, err := a.db.Settings()
	if err != nil {
		return fmt.Errorf("read settings: %w", err)
	}
	s := manage.RunRuleSetting(p, by, at)
	cfg, err := a.base.With(stored, s)
	if err != nil {
		return err
	}
	if err := a.db.PutSetting(s); err != nil {
		return fmt.Errorf("store the rule: %w", err)
	}
	a.latest = cfg
	a.gen++
	return nil
}

// runRules counts cfg's run-time rules.
func runRules(cfg *config.Config) int {
	n := 0
	for _, r := range cfg.Rules {
		if r.Origin != "" {
			n++
		}
	}
	return n
}

// RuleTOML is the rule name (a rule in force or a pending proposal, by
// name or ID) as a [[rule]] table to paste into config.toml.
func (c *Commander) RuleTOML(ctx context.Context, name string) (string, error) {
	if err := c.gate(ctx, "status"); err != nil {
		return "", err
	}
	c.accept(ctx, "rule show "+name, false)
	cfg := c.app.current()
	if i := slices.IndexFunc(cfg.Rules, func(r config.Rule) bool { return r.Name == name }); i >= 0 {
		return config.RuleTOML(cfg.Rules[i]), nil
	}
	p, err := c.app.findRule(RuleApprove, name)
	if err != nil {
		return "", err
	}
	r, err := manage.RuleOf(p, "", time.Time{})
	if err != nil {
		return "", err
	}
	return "# proposed by the model, pending (" + p.ID + ")\n" + config.RuleTOML(r), nil
}

// ProposeRule is the model's propose_rule (agent.Proposer): refused when
// its name is taken, when it was rejected in the last 30 days, when an
// expression is longer than MaxProposedExpr or does not validate as a
// [[rule]] of config.toml (the validator's message); else backtested on
// the history, kept, and brought to a person as a notice.
func (c *Commander) proposeRule(ctx context.Context, p alert.Proposal) (string, error) {
	a := c.app
	cfg := a.current()
	now := a.wall().UTC().Round(time.Second)
	p.At, p.State, p.ID = now, "", ""
	for key, expr := range map[string]string{"when": p.When, "clear": p.Clear} {
		if len(expr) > MaxProposedExpr {
			return "", fmt.Errorf("rule.%s.%s: %d bytes, more than the %d a proposed rule may have", p.Name, key, len(expr), MaxProposedExpr)
		}
	}
	switch n := len(p.Why); {
	case strings.TrimSpace(p.Why) == "":
		return "", fmt.Errorf("rule.%s: why is missing (one sentence for the person)", p.Name)
	case n > MaxWhy:
		return "", fmt.Errorf("rule.%s: why is %d bytes, more than %d: one sentence for the person", p.Name, n, MaxWhy)
	}
	if i := slices.IndexFunc(cfg.Rules, func(r config.Rule) bool { return r.Name == p.Name }); i >= 0 {
		return "", fmt.Errorf("rule.%s.name: a rule of that name exists (%s): choose another name", p.Name, ruleOrigin(cfg, cfg.Rules[i]))
	}
	ps, err := a.db.Proposals()
	if err != nil {
		return "", fmt.Errorf("read the proposals: %w", err)
	}
	for _, q := range ps {
		switch {
		case q.State == alert.ProposalPending && q.Name == p.Name:
			return "", fmt.Errorf("rule.%s.name: proposal %s of that name waits for a person", p.Name, q.ID)
		case q.State == alert.ProposalRejected && now.Sub(q.DecidedAt) <= store.ProposalMemory && (q.Name == p.Name || sameExpr(q.When, p.When)):
			return "", fmt.Errorf("rule.%s: the same rule (%s: %s) was rejected by %s at %s: do not propose it again",
				p.Name, q.Name, q.When, q.DecidedBy, q.DecidedAt.In(cfg.Device.Location).Format(TimeLayout))
		}
	}
	if runRules(cfg) >= manage.MaxRunRules {
		return "", fmt.Errorf("rule.%s: already %d run-time rules, the most there may be", p.Name, manage.MaxRunRules)
	}
	var checked *config.Config
	if a.base != nil {
		stored, err := a.db.Settings()
		if err != nil {
			return "", fmt.Errorf("read settings: %w", err)
		}
		if checked, err = a.base.With(stored, manage.RunRuleSetting(p, "model", now)); err != nil {
			return "", err
		}
	} else {
		return "", errors.New("rules cannot be proposed here: no config base (a bug)")
	}
	r, err := manage.RuleOf(p, "model", now)
	if err != nil {
		return "", err
	}
	spec, err := checked.RuleSpec(r)
	if err != nil {
		return "", err
	}
	if p.Backtest, err = a.engine.Backtest(ctx, spec, cfg.Manage.ProposalMaxPerDay); err != nil {
		return "", fmt.Errorf("backtest: %w", err)
	}
	p, dropped, err := a.db.AddProposal(p, now)
	if err != nil {
		return "", err
	}
	if dropped != nil {
		if _, err := a.engine.Notice(ctx, alert.RuleSetting, fmt.Sprintf("rule proposal %s (%s) dropped unseen: %d proposals wait for a person, and a new one came",
			dropped.ID, dropped.Name, store.MaxPending)); err != nil {
			a.log.Error("queue the dropped proposal's notice", "err", err)
		}
	}
	if _, err := a.engine.ProposalNotice(ctx, p, ProposalText(p, cfg.Device.Location)); err != nil {
		return "", err
	}
	a.log.Info("rule proposed by the model", "id", p.ID, "rule", p.Name, "when", p.When, "fired", p.Backtest.Fired, "noisy", p.Backtest.Noisy)
	return fmt.Sprintf("proposal %s kept for a person to approve; backtest: %s", p.ID, BacktestText(p.Backtest, cfg.Device.Location)), nil
}

// sameExpr compares two expressions but for spaces.
func sameExpr(a, b string) bool {
	return strings.Join(strings.Fields(a), "") == strings.Join(strings.Fields(b), "")
}

func ruleOrigin(cfg *config.Config, r config.Rule) string {
	if r.Origin != "" {
		return r.Origin
	}
	return fmt.Sprintf("%s:%d", cfg.File(), r.Line)
}

// ProposalText is the notice's summary: the rule, the model's why and the
// backtest, for every channel.
func ProposalText(p alert.Proposal, loc *time.Location) string {
	var b strings.Builder
	fmt.Fprintf(&b, "The model proposes rule %s (%s): when %s", p.ID, p.Name, p.When)
	if p.For != "" {
		b.WriteString(" for " + p.For)
	}
	if p.Clear != "" {
		b.WriteString(", clear " + p.Clear)
	}
	fmt.Fprintf(&b, ", %s: %q. Why: %s Backtest: %s.", p.Severity, p.Message, p.Why, BacktestText(p.Backtest, loc))
	return b.String()
}

// BacktestText says what a backtest found, "noisy" first when it is.
func BacktestText(bt alert.Backtest, loc *time.Location) string {
	var b strings.Builder
	if bt.Noisy {
		b.WriteString("NOISY: ")
	}
	hours := bt.To.Sub(bt.From).Round(time.Minute)
	if bt.Fired == 0 {
		fmt.Fprintf(&b, "would not have fired in %s of history (%d samples)", hours, bt.Samples)
	} else {
		fmt.Fprintf(&b, "would have fired %d times in %s of history (%.1f a day), %s in all, first %s, last %s",
			bt.Fired, hours, bt.PerDay, (time.Duration(bt.FiringS) * time.Second).String(),
			bt.First.In(loc).Format(TimeLayout), bt.Last.In(loc).Format(TimeLayout))
	}
	if bt.OnPrompt {
		b.WriteString("; fires on the readings that prompted it")
	} else {
		b.WriteString("; does not fire on the readings that prompted it")
	}
	return b.String()
}

// dropShadowed removes the run-time rules a [[rule]] of config.toml now
// names (cfg.Shadowed: the file wins) from the overlay, with a notice.
func (a *App) dropShadowed(ctx context.Context, cfg *config.Config) {
	for _, name := range cfg.Shadowed {
		if _, err := a.db.DeleteSetting(manage.RunRulePrefix + name); err != nil {
			a.log.Error("drop a run-time rule config.toml now has", "rule", name, "err", err)
			continue
		}
		if ps, err := a.db.Proposals(); err == nil {
			for _, p := range ps {
				if p.Name == name && p.State == alert.ProposalApproved {
					p.State, p.DecidedBy, p.DecidedAt = alert.ProposalDropped, cfg.File(), a.wall().UTC().Round(time.Second)
					_ = a.db.PutProposal(p)
				}
			}
		}
		text := fmt.Sprintf("run-time rule %s dropped: %s now has a [[rule]] of that name, which wins", name, cfg.File())
		a.log.Info(text)
		if _, err := a.engine.Notice(ctx, alert.RuleSetting, text); err != nil {
			a.log.Error("queue the dropped rule's notice", "err", err)
		}
	}
}
