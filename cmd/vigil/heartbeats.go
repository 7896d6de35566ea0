package main

// The verbs about heartbeats and alerts: pause, resume, test-alert and ack.

import (
	"context"
	"flag"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/vigil-iot/vigil/alert"
	"github.com/vigil-iot/vigil/config"
	"github.com/vigil-iot/vigil/daemon"
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
	d := time.Duration(minutes) * time.Minute
	cfg, err := e.loadConfig()
	if err != nil {
		return err
	}
	return e.change(ctx, cfg, change{req: daemon.Request{Cmd: "pause", Minutes: minutes}, note: " (saved; no daemon running)",
		do: func(ctx context.Context, c *daemon.Commander) (string, error) { return c.Pause(ctx, d) }})
}

func (e *env) cmdResume(ctx context.Context, args []string) error {
	if _, err := e.flags("resume", args, nil, 0); err != nil {
		return err
	}
	cfg, err := e.loadConfig()
	if err != nil {
		return err
	}
	return e.change(ctx, cfg, change{req: daemon.Request{Cmd: "resume"}, note: " (saved; no daemon running)",
		do: func(ctx context.Context, c *daemon.Commander) (string, error) { return c.Resume(ctx) }})
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
	return e.change(ctx, cfg, change{req: daemon.Request{Cmd: "ack", Target: firstOr(pos, "")}, note: " (saved; no daemon running)",
		do: func(ctx context.Context, c *daemon.Commander) (string, error) { return c.Ack(ctx, firstOr(pos, "")) }})
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
	if err := daemon.CheckTransport(cfg, only); err != nil {
		return usageErr("test-alert: --transport: %v", err)
	}
	for _, note := range belowMinSeverity(cfg, sev, only) {
		fmt.Fprintln(e.stderr, note)
	}
	txt, err := e.answer(ctx, cfg, daemon.Request{Cmd: "test-alert", Severity: sev.String(), Transport: only}, 10*time.Second, func() (string, error) {
		a, err := e.newApp(ctx, cfg, nil, inZone(e.logger(), cfg.Device.Location), parts{}, daemon.Options{Store: daemon.StoreWrite})
		if err != nil {
			return "", err
		}
		defer a.Close()
		t, err := a.Engine().TestAlert(ctx, sev, only)
		return daemon.TestAlertText(t, "no daemon running: it waits in "+daemon.DBPath(cfg)+" and is delivered when 'vigil run' starts"), err
	})
	if err != nil {
		return err
	}
	fmt.Fprintln(e.stdout, termtext.Text(txt))
	return nil
}

// belowMinSeverity says which transports would not send an alert of sev
// because of their min_severity.
func belowMinSeverity(cfg *config.Config, sev alert.Severity, only string) []string {
	var notes []string
	for _, t := range []struct{ name, min string }{{"mqtt", cfg.MQTT.MinSeverity}, {"telegram", cfg.Telegram.MinSeverity}} {
		if (only != "" && only != t.name) || !slices.Contains(daemon.ConfiguredTransports(cfg), t.name) {
			continue
		}
		if m, err := alert.ParseSeverity(t.min); err == nil && sev < m {
			notes = append(notes, fmt.Sprintf("note: %s.min_severity is %s, so %s will not send this %s alert; try --severity %s", t.name, m, t.name, sev, m))
		}
	}
	return notes
}
