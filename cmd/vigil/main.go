// Command vigil is an on-device watch agent for single-board computers: it
// reads sensors, evaluates local rules, asks an LLM a heartbeat checklist now
// and then, keeps its state in bbolt and sends alerts over MQTT and Telegram.
//
// This is the only package main: it reads files, flags and the environment,
// opens buses and wires the concrete types together.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	_ "time/tzdata" // IANA zones for boards without /usr/share/zoneinfo
)

// Exit codes (SPEC §2).
const (
	exitOK      = 0
	exitFailure = 1
	exitUsage   = 2
	exitConfig  = 78 // EX_CONFIG
)

// exitError carries an exit code with an error.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

func usageErr(format string, args ...any) error {
	return &exitError{exitUsage, fmt.Errorf(format, args...)}
}

func configErr(err error) error { return &exitError{exitConfig, err} }

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(exitCode(err, os.Stderr))
}

func exitCode(err error, stderr io.Writer) int {
	if err == nil {
		return exitOK
	}
	if errors.Is(err, flag.ErrHelp) {
		return exitOK
	}
	code := exitFailure
	var ee *exitError
	if errors.As(err, &ee) {
		code = ee.code
	}
	if !errors.Is(err, errSilent) {
		fmt.Fprintf(stderr, "vigil: %v\n", err)
		if hint := x509Hint(err); hint != "" {
			fmt.Fprintf(stderr, "vigil: hint: %s\n", hint)
		}
	}
	if code == exitUsage {
		fmt.Fprintln(stderr, "run 'vigil help' for usage")
	}
	return code
}

// errSilent marks an error whose message was already printed.
var errSilent = errors.New("error already reported")

const usage = `vigil — an on-device watch agent for single-board computers

usage: vigil [-c CONFIG] COMMAND [flags]

commands:
  run                        the daemon: sensors, rules, heartbeats, delivery
  check [--dry-run] [--json] one heartbeat now, in the foreground
  sensors [--json] [--drivers]  read every sensor once
  scan [--bus NAME]          probe an I²C bus and name what answers
  status [--json]            next run, last runs, pause, outbox, budget
  pause MINUTES              pause heartbeats (rules keep running)
  resume                     resume heartbeats
  config check               validate config and checklist, print the resolved config
  version [--boards]         version, commit, Go version, GOARCH/GOARM

global flags:
  -c, --config PATH  config file (default $VIGIL_CONFIG or /etc/vigil/config.toml)
  -v, --verbose      debug logging

exit codes: 0 ok, 1 runtime failure, 2 usage, 78 config error
`

// globals are the flags every command accepts.
type globals struct {
	config  string
	verbose bool
}

func (g *globals) register(fs *flag.FlagSet) {
	fs.StringVar(&g.config, "c", g.config, "config file")
	fs.StringVar(&g.config, "config", g.config, "config file")
	fs.BoolVar(&g.verbose, "v", g.verbose, "debug logging")
	fs.BoolVar(&g.verbose, "verbose", g.verbose, "debug logging")
}

// env is what every command gets.
type env struct {
	globals
	stdout, stderr io.Writer
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	g := globals{config: os.Getenv("VIGIL_CONFIG")}
	if g.config == "" {
		g.config = "/etc/vigil/config.toml"
	}
	fs := flag.NewFlagSet("vigil", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	g.register(fs)
	if err := fs.Parse(args); err != nil {
		return usageErr("%v", err)
	}
	args = fs.Args()
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return &exitError{exitUsage, fmt.Errorf("no command given")}
	}
	e := &env{globals: g, stdout: stdout, stderr: stderr}
	cmd, rest := args[0], args[1:]
	switch cmd {
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
		return nil
	case "run":
		return e.cmdRun(ctx, rest)
	case "check":
		return e.cmdCheck(ctx, rest)
	case "sensors":
		return e.cmdSensors(ctx, rest)
	case "scan":
		return e.cmdScan(ctx, rest)
	case "status":
		return e.cmdStatus(ctx, rest)
	case "pause":
		return e.cmdPause(ctx, rest)
	case "resume":
		return e.cmdResume(ctx, rest)
	case "config":
		if len(rest) == 0 || rest[0] != "check" {
			return usageErr("unknown command 'config %s' (want 'config check')", firstOr(rest, ""))
		}
		return e.cmdConfigCheck(ctx, rest[1:])
	case "version":
		return e.cmdVersion(rest)
	}
	return usageErr("unknown command %q", cmd)
}

func firstOr(s []string, def string) string {
	if len(s) > 0 {
		return s[0]
	}
	return def
}

// flags parses a subcommand's flags; the global flags are accepted there too.
func (e *env) flags(name string, args []string, define func(fs *flag.FlagSet), positional int) ([]string, error) {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	e.register(fs)
	if define != nil {
		define(fs)
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprint(e.stdout, usage)
			return nil, err
		}
		return nil, usageErr("%s: %v", name, err)
	}
	// Allow flags after positional arguments: vigil pause 5 -c x.toml.
	rest := fs.Args()
	var pos []string
	for len(rest) > 0 {
		pos = append(pos, rest[0])
		if err := fs.Parse(rest[1:]); err != nil {
			return nil, usageErr("%s: %v", name, err)
		}
		rest = fs.Args()
	}
	if positional >= 0 && len(pos) != positional {
		return nil, usageErr("%s: want %d argument(s), got %d", name, positional, len(pos))
	}
	return pos, nil
}
