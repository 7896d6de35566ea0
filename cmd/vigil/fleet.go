package main

import (
	"context"
	"errors"
	"io"
	"os"

	"github.com/vigil-iot/vigil/fleet"
)

// cmdFleet is `vigil fleet` and `vigil fleet do`: package fleet has it
// all; here the line is parsed and its errors get their exit codes.
func (e *env) cmdFleet(ctx context.Context, args []string) error {
	c := &fleet.Command{Stdout: e.stdout, Stderr: e.stderr, Terminal: isTerminal(e.stdout), Log: e.logger()}
	name, define, run := "fleet", c.Define, c.Run
	if len(args) > 0 && args[0] == "do" {
		name, define, run, args = "fleet do", c.DefineDo, c.RunDo, args[1:]
	}
	pos, err := e.flags(name, args, define, -1)
	if err != nil {
		return err
	}
	err = run(ctx, pos)
	var ue *fleet.UsageError
	var ce *fleet.ConfigError
	switch {
	case errors.As(err, &ue):
		return &exitError{exitUsage, err}
	case errors.As(err, &ce):
		return configErr(err)
	}
	return err
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}
