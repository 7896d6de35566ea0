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
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/vigil-iot/vigil/config"
	"github.com/vigil-iot/vigil/internal/termtext"
	"github.com/vigil-iot/vigil/internal/tlshint"
	"github.com/vigil-iot/vigil/redact"
	"github.com/vigil-iot/vigil/transport"
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

// After the first SIGTERM or SIGINT the context is cancelled, and a verb
// that has not returned within its stop deadline ends the process anyway:
// nothing (a damaged state file, a daemon that accepts and never answers)
// may keep a terminal, a script or systemd waiting more than a second.
// `vigil run` has its orderly shutdown (publishing offline, flushing) with
// its own grace of 5 s (daemon.shutdownGrace) and gets stopRunDeadline,
// short of the unit's TimeoutStopSec=15s. A second signal ends any verb at
// once.
const (
	stopDeadline    = 500 * time.Millisecond
	stopRunDeadline = 10 * time.Second
)

func main() {
	ctx, cancel := context.WithCancel(context.Background())
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	go exitAfterSignal(sigs, cancel, stopDeadlineFor(os.Args[1:]), os.Stderr)
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	os.Exit(exitCode(err, os.Stderr))
}

// exitAfterSignal cancels the verb's context on the first signal and ends
// the process when the verb has not returned within deadline, or at a
// second signal.
func exitAfterSignal(sigs <-chan os.Signal, cancel context.CancelFunc, deadline time.Duration, stderr io.Writer) {
	sig := <-sigs
	cancel()
	t := time.NewTimer(deadline)
	select {
	case <-t.C:
		fmt.Fprintf(stderr, "vigil: still busy %s after the signal (%v); exiting\n", deadline, sig)
	case sig = <-sigs:
		fmt.Fprintf(stderr, "vigil: a second signal (%v); exiting\n", sig)
	}
	os.Exit(exitFailure)
}

// stopDeadlineFor is the stop deadline of the verb args name; the global
// flags are parsed as run parses them.
func stopDeadlineFor(args []string) time.Duration {
	var g globals
	fs := flag.NewFlagSet("vigil", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	g.register(fs)
	if fs.Parse(args) == nil && fs.Arg(0) == "run" {
		return stopRunDeadline
	}
	return stopDeadline
}

func exitCode(err error, stderr io.Writer) int {
	if err == nil {
		return exitOK
	}
	if errors.Is(err, flag.ErrHelp) {
		return exitOK
	}
	// The one place an error becomes an exit code, by its type: the
	// daemon's answers come back as the kinds they were (control.Code).
	code := exitFailure
	var ee *exitError
	var ce *config.Error
	switch {
	case errors.As(err, &ee):
		code = ee.code
	case errors.As(err, &ce):
		code = exitConfig
	case errors.Is(err, transport.ErrPauseRange), errors.Is(err, transport.ErrNoTransport):
		code = exitUsage
	}
	if !errors.Is(err, errSilent) {
		// An error may carry a far side's text (a broker's, a provider's,
		// the Bot API's): escaped, it cannot drive the terminal.
		fmt.Fprintf(stderr, "vigil: %s\n", termtext.Text(err.Error()))
		if hint := tlshint.Hint(err); hint != "" {
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
	// configSet says the config path came from -c or $VIGIL_CONFIG, not
	// the default: commands that can run without a config (scan) only
	// do so when it did not.
	configSet      bool
	stdout, stderr io.Writer
	stdin          io.Reader // nil: os.Stdin (vigil checklist set -)
	// helpSink, when set, receives a command's flag set on --help instead
	// of printing the help: the man page is generated from it.
	helpSink **flag.FlagSet
	secrets  bool // the verb needs the secrets' values: load fails when it cannot read them

	redOnce sync.Once
	red     *redact.Redactor // see redactor
}

// redactor is the process's one Redactor: every logger of e redacts with
// it, every config e resolves adds its secrets to it (configBase.parse),
// and the app hands it to the engine and the agent.
func (e *env) redactor() *redact.Redactor {
	e.redOnce.Do(func() { e.red = redact.New() })
	return e.red
}

const defaultConfig = "/etc/vigil/config.toml"

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	g := globals{config: os.Getenv("VIGIL_CONFIG")}
	configSet := g.config != ""
	if !configSet {
		g.config = defaultConfig
	}
	fs := flag.NewFlagSet("vigil", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	g.register(fs)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			writeUsage(stdout)
			return nil
		}
		return usageErr("%v", err)
	}
	fs.Visit(func(f *flag.Flag) { configSet = configSet || f.Name == "c" || f.Name == "config" })
	args = fs.Args()
	if len(args) == 0 {
		writeUsage(stderr)
		return &exitError{exitUsage, fmt.Errorf("no command given")}
	}
	e := &env{globals: g, configSet: configSet, stdout: stdout, stderr: stderr}
	return e.dispatch(ctx, args[0], args[1:])
}

// dispatch runs one command.
func (e *env) dispatch(ctx context.Context, cmd string, rest []string) error {
	switch cmd {
	case "help":
		return e.cmdHelp(ctx, rest)
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
	case "history":
		return e.cmdHistory(ctx, rest)
	case "pause":
		return e.cmdPause(ctx, rest)
	case "resume":
		return e.cmdResume(ctx, rest)
	case "test-alert":
		return e.cmdTestAlert(ctx, rest)
	case "ack":
		return e.cmdAck(ctx, rest)
	case "config":
		// Global flags may come before the verb: vigil config -c x check.
		for i, a := range rest {
			if a == "check" {
				return e.cmdConfigCheck(ctx, append(rest[:i:i], rest[i+1:]...))
			}
		}
		if slices.Contains(rest, "-h") || slices.Contains(rest, "--help") {
			return e.cmdConfigCheck(ctx, []string{"--help"})
		}
		return usageErr("unknown command 'config %s' (want 'config check')", firstOr(rest, ""))
	case "get":
		return e.cmdGet(ctx, rest)
	case "set":
		return e.cmdSet(ctx, rest)
	case "unset":
		return e.cmdUnset(ctx, rest)
	case "checklist":
		return e.cmdChecklist(ctx, rest)
	case "notes":
		return e.cmdNotes(ctx, rest)
	case "baseline":
		return e.cmdBaseline(ctx, rest)
	case "rules":
		return e.cmdRules(ctx, rest)
	case "rule":
		return e.cmdRule(ctx, rest)
	case "version":
		return e.cmdVersion(rest)
	case "fleet":
		return e.cmdFleet(ctx, rest)
	case "init":
		return e.cmdInit(ctx, rest)
	}
	return usageErr("unknown command %q", cmd)
}

// cmdHelp is `vigil help [COMMAND]`; the hidden `vigil help --man` writes
// the vigil(1) man page.
func (e *env) cmdHelp(ctx context.Context, args []string) error {
	if len(args) == 1 && args[0] == "--man" {
		writeMan(e.stdout, func(name string) *flag.FlagSet { return e.flagSet(ctx, name) })
		return nil
	}
	if len(args) == 0 {
		writeUsage(e.stdout)
		return nil
	}
	if args[0] == "-h" || args[0] == "--help" {
		args = []string{"help"}
	}
	name := strings.Join(args, " ")
	if _, ok := lookupDoc(name); !ok {
		return usageErr("help: unknown command %q", name)
	}
	if name == "help" {
		writeCommandHelp(e.stdout, name, nil)
		return nil
	}
	return e.dispatch(ctx, args[0], append(args[1:len(args):len(args)], "--help"))
}

// flagSet returns the flag set a command builds, without running it.
func (e *env) flagSet(ctx context.Context, name string) *flag.FlagSet {
	var fs *flag.FlagSet
	sink := &env{globals: e.globals, stdout: io.Discard, stderr: io.Discard, helpSink: &fs}
	words := strings.Fields(name)
	if words[0] != "help" {
		_ = sink.dispatch(ctx, words[0], append(words[1:], "--help"))
	}
	return fs
}

func firstOr(s []string, def string) string {
	if len(s) > 0 {
		return s[0]
	}
	return def
}

// flags parses a subcommand's flags; the global flags are accepted there
// too, before, between and after positional arguments. An argument that is
// a negative number is positional (pause -3 gets its own clear error).
// --help prints the command's help and returns flag.ErrHelp (exit 0).
func (e *env) flags(name string, args []string, define func(fs *flag.FlagSet), positional int) ([]string, error) {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	e.register(fs)
	if define != nil {
		define(fs)
	}
	var pos []string
	rest := args
	for {
		// The flag package takes a negative number for an unknown flag;
		// take it as an argument instead.
		for len(rest) > 0 && isNegativeNumber(rest[0]) {
			pos = append(pos, rest[0])
			rest = rest[1:]
		}
		if err := fs.Parse(rest); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				if e.helpSink != nil {
					*e.helpSink = fs
				} else {
					writeCommandHelp(e.stdout, name, fs)
				}
				return nil, err
			}
			return nil, usageErr("%s: %v", name, err)
		}
		rest = fs.Args()
		if len(rest) == 0 {
			break
		}
		pos = append(pos, rest[0])
		rest = rest[1:]
	}
	if positional >= 0 && len(pos) != positional {
		return nil, usageErr("%s: want %d argument(s), got %d (see 'vigil help %s')", name, positional, len(pos), name)
	}
	return pos, nil
}

func isNegativeNumber(s string) bool {
	_, err := strconv.ParseFloat(s, 64)
	return err == nil && strings.HasPrefix(s, "-")
}
