package main

import (
	"context"
	"flag"
	"io"
	"time"

	"github.com/vigil-iot/vigil/control"
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
	var cj control.CheckJSON
	resp, err := e.daemonOr(ctx, cfg, control.Request{Cmd: "check", DryRun: dry}, 10*time.Minute, func() error {
		var err error
		cj, err = e.localCheck(ctx, cfg, base, dry)
		return err
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
	_ = termtext.Print(e.stdout, func(w io.Writer) { control.WriteCheck(w, cj) })
	return checkExit(cj)
}

// checkExit makes a failed heartbeat exit 1 without printing its error a
// second time: the record above already carries it.
func checkExit(cj control.CheckJSON) error {
	if cj.Outcome == heartbeat.OutcomeFailed {
		return &exitError{exitFailure, errSilent}
	}
	return nil
}

func writeJSON(w io.Writer, v any) error { return termtext.WriteJSON(w, v) }
