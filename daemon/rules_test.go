package daemon

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"testing"

	"github.com/vigil-iot/vigil/alert"
	"github.com/vigil-iot/vigil/config"
	"github.com/vigil-iot/vigil/device"
	"github.com/vigil-iot/vigil/manage"
	"github.com/vigil-iot/vigil/transport"
)

func proposal(name, when string) alert.Proposal {
	return alert.Proposal{Name: name, When: when, For: "10s", Severity: "warning", Message: "warm: {air.temperature}", Why: "it climbed after the door opened"}
}

// proposalNotices are the notices with a proposal the App queued.
func proposalNotices(t *testing.T, a *App) []alert.Alert {
	t.Helper()
	all, err := a.engine.Alerts(context.Background(), 100)
	if err != nil {
		t.Fatal(err)
	}
	var out []alert.Alert
	for _, x := range all {
		if x.Proposal != nil {
			out = append(out, x)
		}
	}
	return out
}

// TestProposeRuleRefused: each bad proposal is refused back to the model
// with the validator's message, and none is kept or reaches a person.
func TestProposeRuleRefused(t *testing.T) {
	a := newOverlayApp(t, "")
	self := a.modelSelf()
	ctx := context.Background()
	// A rejected rule, for the repeat.
	if _, err := self.ProposeRule(ctx, proposal("cold", "air.temperature < 5")); err != nil {
		t.Fatal(err)
	}
	cli := transport.WithSource(ctx, transport.Source{Channel: transport.ChannelCLI})
	if _, err := a.Commander().RuleDecide(cli, RuleReject, "cold"); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		p    alert.Proposal
		want string
	}{
		{"unknown sensor", proposal("warm", "aier.temperature > 34"),
			`run-time rule: rule.warm.when: unknown sensor "aier" (configured: board, air); did you mean air?`},
		{"syntax error", proposal("warm", "air.temperature >"), "run-time rule: rule.warm.when: column"},
		{"name clash", proposal("too_hot", "air.temperature > 34"), "rule.too_hot.name: a rule of that name exists (" + a.current().File() + ":"},
		{"100 KB", proposal("warm", "air.temperature > 34"+strings.Repeat(" ", 100<<10)), "rule.warm.when: 102420 bytes, more than the 500 a proposed rule may have"},
		{"rejected repeat", proposal("cold2", "air.temperature<5"), "rule.cold2: the same rule (cold: air.temperature < 5) was rejected by cli at "},
		{"rejected name", proposal("cold", "air.temperature < 4"), "rule.cold: the same rule (cold: air.temperature < 5) was rejected by cli at "},
		{"long why", alert.Proposal{Name: "warm", When: "air.temperature > 34", Severity: "warning", Why: strings.Repeat("w", 301)}, "rule.warm: why is 301 bytes, more than 300"},
		{"bad for", alert.Proposal{Name: "warm", When: "air.temperature > 34", For: "soon", Severity: "warning", Why: "x"}, `rule.warm.for: must be a Go duration`},
		{"bad severity", alert.Proposal{Name: "warm", When: "air.temperature > 34", Severity: "loud", Why: "x"}, `rule.warm.severity: must be info, warning or critical (got "loud")`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := self.ProposeRule(ctx, tc.p)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("ProposeRule = %v; want an error with %q", err, tc.want)
			}
		})
	}
	ps, _ := a.db.Proposals()
	if len(ps) != 1 || len(proposalNotices(t, a)) != 1 {
		t.Errorf("%d proposals kept, %d notices; want only the first (cold)", len(ps), len(proposalNotices(t, a)))
	}
}

// TestRuleApproveRejectDrop: a proposal reaches a person as a notice with
// its backtest; approved from the CLI it is a rule in force with its
// origin (in the overlay, so a restart keeps it); dropped it is gone; a
// rejected one is never in force.
func TestRuleApproveRejectDrop(t *testing.T) {
	air := func(*config.Config, *slog.Logger) ([]device.Named, func() error) {
		return []device.Named{{Name: "air", Sensor: fixedAir(36)}}, func() error { return nil }
	}
	a := newWiredApp(t, "", Wiring{Sensors: air})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	a.runCtx = ctx // as cmdRun: a change applies to the running engine
	for range 3 {
		if err := a.engine.SampleOnce(ctx); err != nil {
			t.Fatal(err)
		}
	}
	p := proposal("warm", "air.temperature > 34")
	p.For = "" // the test's clock is the wall's: fire on the next sample
	answer, err := a.modelSelf().ProposeRule(ctx, p)
	if err != nil || !strings.HasPrefix(answer, "proposal p1 kept for a person") {
		t.Fatalf("ProposeRule = %q, %v", answer, err)
	}
	ns := proposalNotices(t, a)
	if len(ns) != 1 || ns[0].State != alert.StateNotice || ns[0].Rule != "warm" || ns[0].Proposal.ID != "p1" ||
		!ns[0].Proposal.Backtest.OnPrompt || ns[0].Proposal.Backtest.Samples == 0 || !strings.Contains(ns[0].Summary, "Why: it climbed") {
		t.Fatalf("notices = %+v; want one notice of p1 with its backtest", ns)
	}
	cli := transport.WithSource(ctx, transport.Source{Channel: transport.ChannelCLI})
	out, err := a.Commander().RuleDecide(cli, RuleApprove, "p1")
	if err != nil || !strings.Contains(out, "rule warm (air.temperature > 34) approved by cli") {
		t.Fatalf("approve = %q, %v", out, err)
	}
	if err := a.engine.SampleOnce(ctx); err != nil {
		t.Fatal(err)
	}
	if st, _ := a.engine.Status(ctx); !slices.Contains(st.Firing, "warm") {
		t.Errorf("firing after the next sample: %v; want warm", st.Firing)
	}
	v, err := a.Commander().Rules(cli)
	if err != nil {
		t.Fatal(err)
	}
	var got *manage.RuleView
	for i := range v.Rules {
		if v.Rules[i].Name == "warm" {
			got = &v.Rules[i]
		}
	}
	if got == nil || !got.RunTime || !strings.HasPrefix(got.Origin, "proposed by the model at ") || !strings.Contains(got.Origin, ", approved by cli at ") || len(v.Pending) != 0 {
		t.Fatalf("rules = %+v; want warm in force with its origin, none pending", v)
	}
	stored, _ := a.db.Settings()
	if len(stored) != 1 || stored[0].Key != manage.RunRulePrefix+"warm" {
		t.Errorf("overlay = %+v; want runrule.warm", stored)
	}
	if cfg, _, err := a.base.Resolve(stored, a.log); err != nil || !hasRule(cfg.Rules, "warm") { // what a restart reads
		t.Errorf("the overlay read again: %v; want warm in force", err)
	}
	if toml, err := a.Commander().RuleTOML(cli, "warm"); err != nil || !strings.Contains(toml, "[[rule]]\nname = \"warm\"\nwhen = \"air.temperature > 34\"") {
		t.Errorf("RuleTOML = %q, %v", toml, err)
	}
	if st, err := a.Status(ctx); err != nil || st.RuleBook == nil || !hasRuleView(st.RuleBook.Rules, "warm") {
		t.Errorf("status rule book = %+v, %v; want warm", st.RuleBook, err)
	}
	if _, err := a.Commander().RuleDecide(cli, RuleDrop, "warm"); err != nil {
		t.Fatal(err)
	}
	if hasRule(a.current().Rules, "warm") {
		t.Error("warm still in force after drop")
	}
	if _, err := a.modelSelf().ProposeRule(ctx, proposal("wet", "air.humidity > 90")); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Commander().RuleDecide(cli, RuleReject, "wet"); err != nil {
		t.Fatal(err)
	}
	if hasRule(a.current().Rules, "wet") {
		t.Error("a rejected rule is in force")
	}
}

// TestRuleDecisionRefused: a remote approve when [manage] remote lacks
// rule, an approve of an unknown ID, and the model's own approve are
// refused, changing nothing.
func TestRuleDecisionRefused(t *testing.T) {
	a := newOverlayApp(t, "\n[manage]\nremote = [\"status\"]\n")
	ctx := context.Background()
	if _, err := a.modelSelf().ProposeRule(ctx, proposal("warm", "air.temperature > 34")); err != nil {
		t.Fatal(err)
	}
	mq := transport.WithSource(ctx, transport.Source{Channel: transport.ChannelMQTT, Topic: "vigil/e2e/cmd/rule"})
	if _, err := a.Commander().RuleDecide(mq, RuleApprove, "p1"); !errors.Is(err, alert.ErrNotAllowed) {
		t.Errorf("remote approve without rule in [manage] remote = %v; want ErrNotAllowed", err)
	}
	cli := transport.WithSource(ctx, transport.Source{Channel: transport.ChannelCLI})
	if _, err := a.Commander().RuleDecide(cli, RuleApprove, "p9"); !errors.Is(err, alert.ErrNoProposal) || !strings.Contains(err.Error(), "pending: p1 warm") {
		t.Errorf("approve p9 = %v; want ErrNoProposal listing p1", err)
	}
	if _, err := a.Commander().RuleDecide(cli, RuleDrop, "too_hot"); !errors.Is(err, alert.ErrNoProposal) {
		t.Errorf("drop of a file rule = %v; want ErrNoProposal", err)
	}
	model := transport.WithSource(ctx, transport.Source{Channel: transport.ChannelModel})
	if _, err := a.Commander().RuleDecide(model, RuleApprove, "p1"); !errors.Is(err, alert.ErrNotAllowed) {
		t.Errorf("the model's approve = %v; want ErrNotAllowed", err)
	}
	ps, _ := a.db.Proposals()
	stored, _ := a.db.Settings()
	if len(ps) != 1 || ps[0].State != alert.ProposalPending || len(stored) != 0 || hasRule(a.current().Rules, "warm") {
		t.Errorf("proposals %+v, overlay %+v; want p1 still pending and nothing stored", ps, stored)
	}
	b := newOverlayApp(t, "\n[manage]\nremote = [\"status\", \"rule\"]\n")
	if _, err := b.modelSelf().ProposeRule(ctx, proposal("warm", "air.temperature > 34")); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Commander().RuleDecide(mq, RuleApprove, "warm"); err != nil || !hasRule(b.current().Rules, "warm") {
		t.Errorf("remote approve with rule in [manage] remote = %v; want warm in force", err)
	}
}

// TestFileRuleWinsOverRunRule: once config.toml has a [[rule]] of the run-time
// rule's name, the run-time copy leaves the overlay with a notice.
func TestFileRuleWinsOverRunRule(t *testing.T) {
	a := newOverlayApp(t, "")
	ctx := context.Background()
	cli := transport.WithSource(ctx, transport.Source{Channel: transport.ChannelCLI})
	if _, err := a.modelSelf().ProposeRule(ctx, proposal("warm", "air.temperature > 34")); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Commander().RuleDecide(cli, RuleApprove, "warm"); err != nil {
		t.Fatal(err)
	}
	base := &manage.Base{Name: a.base.Name, Data: append(append([]byte{}, a.base.Data...), "\n[[rule]]\nname = \"warm\"\nwhen = \"air.temperature > 40\"\n"...)}
	stored, _ := a.db.Settings()
	cfg, _, err := base.Resolve(stored, a.log)
	if err != nil {
		t.Fatal(err)
	}
	a.dropShadowed(ctx, cfg)
	if stored, _ := a.db.Settings(); len(stored) != 0 {
		t.Errorf("overlay %+v; want the run-time warm dropped", stored)
	}
	all, _ := a.engine.Alerts(ctx, 10)
	if len(all) == 0 || !strings.Contains(all[0].Summary, "run-time rule warm dropped: ") || !strings.Contains(all[0].Summary, "now has a [[rule]] of that name, which wins") {
		t.Errorf("last alert %+v; want the notice", all[0])
	}
	if ps, _ := a.db.Proposals(); ps[0].State != alert.ProposalDropped {
		t.Errorf("proposal %+v; want dropped", ps[0])
	}
}

// fixedAir is an air sensor that reads a fixed temperature.
type fixedAir float64

func (f fixedAir) Sense(context.Context) ([]device.Reading, error) {
	return []device.Reading{{Quantity: "temperature", Value: float64(f), Unit: device.Celsius}}, nil
}

func hasRule(rules []config.Rule, name string) bool {
	return slices.ContainsFunc(rules, func(r config.Rule) bool { return r.Name == name })
}

func hasRuleView(rules []manage.RuleView, name string) bool {
	return slices.ContainsFunc(rules, func(r manage.RuleView) bool { return r.Name == name })
}

// TestProposalBounds: the 17th pending proposal drops the oldest with a
// notice; past 32 run-time rules a proposal is refused.
func TestProposalBounds(t *testing.T) {
	a := newOverlayApp(t, "")
	ctx := context.Background()
	cli := transport.WithSource(ctx, transport.Source{Channel: transport.ChannelCLI})
	propose := func(i int) error {
		_, err := a.modelSelf().ProposeRule(ctx, proposal(fmt.Sprintf("r%d", i), fmt.Sprintf("air.temperature > %d", i)))
		return err
	}
	for i := range 17 {
		if err := propose(i); err != nil {
			t.Fatal(err)
		}
	}
	all, _ := a.engine.Alerts(ctx, 2)
	if !strings.Contains(all[1].Summary, "rule proposal p1 (r0) dropped unseen: 16 proposals wait for a person") {
		t.Errorf("alert before the 17th proposal's notice: %q; want the drop's notice", all[1].Summary)
	}
	if _, err := a.Commander().RuleDecide(cli, RuleApprove, "r0"); !errors.Is(err, alert.ErrNoProposal) {
		t.Errorf("approve of the dropped r0 = %v; want ErrNoProposal", err)
	}
	for i := 1; i < 33; i++ {
		if i > 16 {
			if err := propose(i + 100); err != nil {
				t.Fatal(err)
			}
			if _, err := a.Commander().RuleDecide(cli, RuleApprove, fmt.Sprintf("r%d", i+100)); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if _, err := a.Commander().RuleDecide(cli, RuleApprove, fmt.Sprintf("r%d", i)); err != nil {
			t.Fatal(err)
		}
	}
	if n := runRules(a.current()); n != manage.MaxRunRules {
		t.Fatalf("%d run-time rules; want %d", n, manage.MaxRunRules)
	}
	if err := propose(999); err == nil || !strings.Contains(err.Error(), "already 32 run-time rules") {
		t.Errorf("the 33rd = %v; want refused", err)
	}
}
