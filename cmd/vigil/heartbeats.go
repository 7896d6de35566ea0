package main

// The verbs about heartbeats and alerts: pause, resume, test-alert and ack.

import (
	"context"
	"flag"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/vigil-iot/vigil/alert"
	"github.com/vigil-iot/vigil/control"
	"github.com/vigil-iot/vigil/internal/termtext"
)

func (e *env) cmdPause(ctx context.Context, args []string) error {
	pos, err := e.flags("pause", args, nil, 1)
	if err != nil {
		return err
	}
	// The range (transport.MinPause..MaxPause) is checked where every
	// channel's pause is: in the daemon's Commander.Pause, here or in the
	// daemon.
	minutes, err := strconv.Atoi(pos[0])
	if err != nil {
		return usageErr("pause: MINUTES must be a whole number of minutes, got %q", pos[0])
	}
	cfg, err := e.loadConfig()
	if err != nil {
		return err
	}
	return e.change(ctx, cfg, change{req: control.Request{Cmd: "pause", Minutes: minutes}, note: " (saved; no daemon running)"})
}

func (e *env) cmdResume(ctx context.Context, args []string) error {
	if _, err := e.flags("resume", args, nil, 0); err != nil {
		return err
	}
	cfg, err := e.loadConfig()
	if err != nil {
		return err
	}
	return e.change(ctx, cfg, change{req: control.Request{Cmd: "resume"}, note: " (saved; no daemon running)"})
}

// cmdAck acknowledges a firing problem (daemon.Commander.Ack).
func (e *env) cmdAck(ctx context.Context, args []string) error {
	pos, err := e.flags("ack", args, nil, -1)
	if err != nil {
		return err
	}
	if len(pos) > 1 {
		return usageErr("ack: want at most one ID or RULE, got %d (see 'vigil help ack')", len(pos))
	}
	cfg, err := e.loadConfig()
	if err != nil {
		return err
	}
	return e.change(ctx, cfg, change{req: control.Request{Cmd: "ack", Target: firstOr(pos, "")}, note: " (saved; no daemon running)"})
}

// cmdBaseline is `vigil baseline reset [SENSOR]` (daemon.Commander.BaselineReset).
func (e *env) cmdBaseline(ctx context.Context, args []string) error {
	pos, err := e.flags("baseline reset", args, nil, -1)
	if err != nil {
		return err
	}
	if len(pos) == 0 || pos[0] != "reset" || len(pos) > 2 {
		return usageErr("baseline: want 'reset [SENSOR]', got %q (see 'vigil help baseline reset')", strings.Join(pos, " "))
	}
	cfg, err := e.loadConfig()
	if err != nil {
		return err
	}
	// The sensor is checked where the reset is made (daemon.Commander).
	return e.change(ctx, cfg, change{req: control.Request{Cmd: "baseline", Op: "reset", Target: firstOr(pos[1:], "")}, note: " (saved; no daemon running)"})
}

// cmdTestAlert queues a test alert through the real outbox: the running
// daemon delivers it at once; with none running it waits in the state file
// for the next 'vigil run'.
func (e *env) cmdTestAlert(ctx context.Context, args []string) error {
	var sevName, only string
	if _, err := e.flags("test-alert", args, func(fs *flag.FlagSet) {
		fs.StringVar(&sevName, "severity", "info", "info, warning or critical")
		fs.StringVar(&only, "transport", "", "deliver through this transport only: log, mqtt or telegram (default: all)")
	}, 0); err != nil {
		return err
	}
	sev, err := alert.ParseSeverity(sevName)
	if err != nil {
		return usageErr("test-alert: --severity: %v", err)
	}
	cfg, err := e.loadConfig()
	if err != nil {
		return err
	}
	// The daemon checks the transport against its own config and
	// environment; without one, this process does.
	txt, err := e.answer(ctx, cfg, control.Request{Cmd: "test-alert", Severity: sev.String(), Transport: only}, 10*time.Second, func() (string, error) {
		if err := checkTransport(cfg, only); err != nil {
			return "", usageErr("test-alert: --transport: %v", err)
		}
		return e.localTestAlert(ctx, cfg, sev, only)
	})
	if err != nil {
		return err
	}
	fmt.Fprintln(e.stdout, termtext.Text(txt))
	return nil
}
