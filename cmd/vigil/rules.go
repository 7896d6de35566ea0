package main

// The rules the model proposed: `vigil rules` lists the rules in force
// and the proposals (daemon.Commander.Rules), `vigil rule` decides on one
// (Commander.RuleDecide, on the one path of a change) or shows it. Each
// asks the running daemon, or works on the state file (read-only for
// what only reads).

import (
	"cmp"
	"context"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/vigil-iot/vigil/alert"
	"github.com/vigil-iot/vigil/control"
	"github.com/vigil-iot/vigil/internal/termtext"
	"github.com/vigil-iot/vigil/manage"
	"github.com/vigil-iot/vigil/status"
	"github.com/vigil-iot/vigil/transport"
)

func (e *env) cmdRules(ctx context.Context, args []string) error {
	var asJSON bool
	if _, err := e.flags("rules", args, func(fs *flag.FlagSet) { fs.BoolVar(&asJSON, "json", false, "print JSON") }, 0); err != nil {
		return err
	}
	return e.showRules(ctx, "", asJSON, false)
}

// showRules prints the rules in force and the proposals, or the one name
// names; asTOML: that one as a [[rule]] table.
func (e *env) showRules(ctx context.Context, name string, asJSON, asTOML bool) error {
	base, cfg, err := e.load()
	if err != nil {
		return err
	}
	var v manage.RulesView
	var toml string
	req := control.Request{Cmd: "rules"}
	if asTOML {
		req = control.Request{Cmd: "rule", Op: "show", Target: name}
	}
	resp, err := e.daemonOr(ctx, cfg, req, 10*time.Second, func() (err error) {
		v, toml, err = e.localRules(ctx, cfg, base, name, asTOML)
		return err
	})
	if resp != nil {
		v, toml = *cmp.Or(resp.Rules, &manage.RulesView{}), resp.Text
	}
	ok := true
	if name != "" && !asTOML && err == nil {
		v, ok = status.RulesNamed(v, name)
	}
	switch {
	case err != nil:
		return err
	case !ok:
		return fmt.Errorf("rule show: %q is no rule in force and no proposal: %w", name, alert.ErrNoProposal)
	case asTOML:
		fmt.Fprint(e.stdout, termtext.Text(toml))
	case asJSON:
		return writeJSON(e.stdout, v)
	default:
		_ = termtext.Print(e.stdout, func(w io.Writer) { status.WriteRules(w, v, cfg.Device.Location) })
	}
	return nil
}

// cmdRule is `vigil rule approve|reject ID|NAME`, `vigil rule drop NAME`
// and `vigil rule show NAME [--toml]`.
func (e *env) cmdRule(ctx context.Context, args []string) error {
	var asTOML bool
	pos, err := e.flags("rule", args, func(fs *flag.FlagSet) {
		fs.BoolVar(&asTOML, "toml", false, "show: the rule as a [[rule]] table to paste into config.toml")
	}, 2)
	if err != nil {
		return err
	}
	switch op := pos[0]; op {
	case "show":
		return e.showRules(ctx, pos[1], false, asTOML)
	case transport.RuleApprove, transport.RuleReject, transport.RuleDrop:
		return e.changeSettings(ctx, change{req: control.Request{Cmd: "rule", Op: op, Target: pos[1]}, precheck: func(*manage.Base) error {
			return fmt.Errorf("rule %s %q: %w: there is no state file yet", op, pos[1], alert.ErrNoProposal) // and a refusal creates none
		}})
	}
	return usageErr("rule: want approve, reject, drop or show, got %q (see 'vigil help rule')", pos[0])
}
