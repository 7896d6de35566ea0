package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/vigil-iot/vigil/daemon"
	"github.com/vigil-iot/vigil/heartbeat"
	"github.com/vigil-iot/vigil/internal/termtext"
)

// cmdCheck is `vigil check [--dry-run] [--json]`: one forced heartbeat,
// run by the daemon, or with none running by the CLI on the state file.
func (e *env) cmdCheck(ctx context.Context, args []string) error {
	var dry, asJSON bool
	if _, err := e.flags("check", args, func(fs *flag.FlagSet) {
		fs.BoolVar(&dry, "dry-run", false, "deliver nothing")
		fs.BoolVar(&asJSON, "json", false, "print the run record as JSON")
	}, 0); err != nil {
		return err
	}
	base, cfg, err := e.load()
	if err != nil {
		return err
	}
	var cj daemon.CheckJSON
	resp, err := e.daemonOr(ctx, cfg, daemon.Request{Cmd: "check", DryRun: dry}, 10*time.Minute, func() error {
		log := inZone(e.logger(), cfg.Device.Location)
		mode := daemon.StoreWrite
		sample := (*heartbeat.Engine).SampleOnce
		if dry {
			mode, sample = daemon.StoreReadOnly, (*heartbeat.Engine).SampleDry
		}
		// With the run-time settings, as `vigil run` would apply them;
		// the model's set_interval stores through the base.
		a, err := e.newApp(ctx, cfg, base, log, parts{sensors: true, thinker: true}, daemon.Options{Store: mode})
		if err != nil {
			return err
		}
		defer a.Close()
		if !a.Config().LLMEnabled() {
			log.Info("no LLM API key: rules-only mode, the checklist is not sent to any LLM")
		}
		res, err := a.Commander().CheckWith(cliCtx(ctx), heartbeat.CheckOptions{DryRun: dry}, sample)
		if err != nil {
			return err
		}
		cj = daemon.ToCheckJSON(res)
		if len(res.Alerts) > 0 {
			fmt.Fprintf(e.stderr, "no daemon running: %d alert(s) queued in %s, delivered when 'vigil run' starts\n", len(res.Alerts), daemon.DBPath(cfg))
		}
		return nil
	})
	if err != nil {
		return err
	}
	if resp != nil {
		cj = *resp.Check
	}
	cj = cj.Redacted(e.redactor())
	if asJSON {
		if err := writeJSON(e.stdout, cj); err != nil {
			return err
		}
		return checkExit(cj)
	}
	_ = termtext.Print(e.stdout, func(w io.Writer) { daemon.WriteCheck(w, cj) })
	return checkExit(cj)
}

// checkExit makes a failed heartbeat exit 1 without printing its error a
// second time: the record above already carries it.
func checkExit(cj daemon.CheckJSON) error {
	if cj.Outcome == heartbeat.OutcomeFailed {
		return &exitError{exitFailure, errSilent}
	}
	return nil
}

func writeJSON(w io.Writer, v any) error { return termtext.WriteJSON(w, v) }
