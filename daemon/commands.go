package daemon

import (
	"context"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"github.com/vigil-iot/vigil/alert"
	"github.com/vigil-iot/vigil/control"
	"github.com/vigil-iot/vigil/heartbeat"
	"github.com/vigil-iot/vigil/manage"
	"github.com/vigil-iot/vigil/status"
	"github.com/vigil-iot/vigil/transport"
	"github.com/vigil-iot/vigil/web"
)

// Commander carries out what Telegram, MQTT, the control socket, the
// status page and the CLI may ask of the App. It is the one place that bounds and
// audits commands: every channel's pause goes through transport.CheckPause
// here, and every accepted command is logged at INFO with its source
// (transport.SourceOf) and, if it acts (check, pause, resume), listed in
// `vigil status`. A check spends the daily LLM budget like a scheduled
// heartbeat (heartbeat.Check).
type Commander struct{ app *App }

// The page's buttons; cmd/vigil's wiring, where the concrete transports
// meet the Commander, checks the roles MQTT and Telegram call.
var _ web.Controller = (*Commander)(nil)

// accept logs an accepted command with who sent it (at logLevel) and,
// when listed, adds it to the engine's recent-commands list.
func (c *Commander) accept(ctx context.Context, command string, listed bool) {
	src := transport.SourceOf(ctx)
	c.app.log.Log(ctx, logLevel(src), "command accepted", append([]any{"command", command}, src.LogAttrs()...)...)
	if listed {
		c.app.engine.NoteCommand(src.String(), command)
	}
}

// refused logs a command that was refused where it is made, and why.
func (c *Commander) refused(ctx context.Context, command string, err error) {
	src := transport.SourceOf(ctx)
	c.app.log.Log(ctx, logLevel(src), "command refused", append([]any{"command", command, "err", err}, src.LogAttrs()...)...)
}

// logLevel is the level a command or a change from src is logged at: INFO,
// or DEBUG for the CLI working on the state file without a daemon, where
// the person sees the answer.
func logLevel(src transport.Source) slog.Level {
	if src.Channel == transport.ChannelCLI {
		return slog.LevelDebug
	}
	return slog.LevelInfo
}

// Status is the status as text: the one status view (App.Status) for
// Telegram's and MQTT's /status, with the sections a remote viewer's
// [manage] remote does not allow withheld.
func (c *Commander) Status(ctx context.Context) (string, error) {
	if err := c.gate(ctx, "status"); err != nil {
		return "", err
	}
	c.accept(ctx, "status", false)
	// The run-time view is added here rather than gathered with the rest:
	// a state file whose notes cannot be read still gives a status.
	v, err := c.app.view(ctx, nil)
	if err != nil {
		return "", err
	}
	cfg := c.app.current()
	if r, err := manage.RuntimeView(cfg, c.app.db); err == nil {
		if remote(ctx) {
			r = manage.ForRemote(r, cfg.Manage)
		}
		v.Runtime = &r
	} else {
		c.app.log.Warn("status: read the model's notes", "err", err)
	}
	var b strings.Builder
	status.WriteStatus(&b, v, true, c.app.clockSynced())
	return b.String(), nil
}

// CheckWith runs one forced heartbeat after sample (nil: none, the
// daemon's dry run works on its last sample). Once the day's budget is
// spent the result is skipped (budget), on every channel.
func (c *Commander) CheckWith(ctx context.Context, opts heartbeat.CheckOptions, sample func(*heartbeat.Engine, context.Context) error) (heartbeat.Result, error) {
	if err := c.gate(ctx, "check"); err != nil {
		return heartbeat.Result{}, err
	}
	name := "check"
	if opts.DryRun {
		name = "check --dry-run"
	}
	c.accept(ctx, name, true)
	if sample != nil {
		if err := sample(c.app.engine, ctx); err != nil {
			return heartbeat.Result{}, err
		}
	}
	return c.app.engine.Check(ctx, opts)
}

// Check samples the sensors and runs a forced heartbeat.
func (c *Commander) Check(ctx context.Context) (string, error) {
	res, err := c.CheckWith(ctx, heartbeat.CheckOptions{}, (*heartbeat.Engine).SampleOnce)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	control.WriteCheck(&b, control.ToCheckJSON(res).Redacted(c.app.red))
	return b.String(), nil
}

func (c *Commander) Pause(ctx context.Context, d time.Duration) (string, error) {
	return c.change(ctx, change{verb: "pause", name: "pause", command: "pause " + d.String(), listed: true,
		check: func() error { return transport.CheckPause(d) },
		do: func(ctx context.Context) (string, error) {
			p, err := c.app.engine.Pause(ctx, d, "remote")
			if err != nil {
				return "", err
			}
			return fmt.Sprintf("heartbeats paused for %s (until %s); rules keep running", d, p.Until.In(c.app.current().Device.Location).Round(time.Second).Format(TimeLayout)), nil
		}})
}

func (c *Commander) Resume(ctx context.Context) (string, error) {
	return c.change(ctx, change{verb: "resume", name: "resume", command: "resume", listed: true,
		do: func(ctx context.Context) (string, error) {
			if err := c.app.engine.Resume(ctx); err != nil {
				return "", err
			}
			return "heartbeats resumed", nil
		}})
}

// TestAlert queues an info test alert for every transport (the status
// page's button).
func (c *Commander) TestAlert(ctx context.Context) (string, error) {
	return c.testAlert(ctx, alert.Info, "")
}

// testAlert queues a test alert of sev for the transport only ("": every
// one), as `vigil test-alert` asks over the control socket.
func (c *Commander) testAlert(ctx context.Context, sev alert.Severity, only string) (string, error) {
	return c.change(ctx, change{verb: "test-alert", name: "test-alert", command: "test-alert", listed: true,
		check: func() error { return CheckTransport(c.app.current(), only) },
		do: func(ctx context.Context) (string, error) {
			a, err := c.app.engine.TestAlert(ctx, sev, only)
			if err != nil {
				return "", err
			}
			return TestAlertText(c.app.current(), a, "the daemon is delivering it"), nil
		}})
}

func (c *Commander) Sensors(ctx context.Context) (string, error) {
	if err := c.gate(ctx, "status"); err != nil { // the readings are part of status
		return "", err
	}
	c.accept(ctx, "sensors", false)
	st, err := c.app.engine.Status(ctx)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	writeSnapshot(&b, st.Snapshot)
	return b.String(), nil
}

// The management verbs (issue 14). Each is gated by its channel (gate);
// the changes go through the one path (change.go) and are audited (see
// settings.go).

func (c *Commander) Get(ctx context.Context, key string) (string, error) {
	if err := c.gate(ctx, "get"); err != nil {
		return "", err
	}
	c.accept(ctx, strings.TrimSpace("get "+key), false)
	views, err := manage.SettingViews(c.app.current(), key)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	manage.WriteSettings(&b, views)
	return b.String(), nil
}

// Set sets one run-time setting (listed by its audit once it is applied).
func (c *Commander) Set(ctx context.Context, key, value string) (string, error) {
	return c.change(ctx, change{verb: "set", name: "set", command: "set " + key + " " + value,
		do: func(ctx context.Context) (string, error) { return c.set(ctx, key, value) }})
}

func (c *Commander) Unset(ctx context.Context, key string) (string, error) {
	return c.change(ctx, change{verb: "unset", name: "unset", command: "unset " + key,
		do: func(ctx context.Context) (string, error) { return c.unset(ctx, key) }})
}

// Toggle flips rule.<name>.enabled; it needs "set".
func (c *Commander) Toggle(ctx context.Context, rule string) (string, error) {
	key := "rule." + rule + ".enabled"
	return c.change(ctx, change{verb: "set", name: "toggle", command: "toggle " + rule,
		do: func(ctx context.Context) (string, error) {
			return c.setWith(ctx, key, func(was string) string { return strconv.FormatBool(was != "true") })
		}})
}

func (c *Commander) Checklist(ctx context.Context, op, text string) (string, error) {
	if op == transport.ChecklistShow { // a read: gated, not counted
		if err := c.gate(ctx, "checklist"); err != nil {
			return "", err
		}
		c.accept(ctx, "checklist "+op, false)
		return c.checklist(ctx, op, text)
	}
	return c.change(ctx, change{verb: "checklist", name: "checklist " + op, command: "checklist " + op,
		do: func(ctx context.Context) (string, error) { return c.checklist(ctx, op, text) }})
}

func (c *Commander) Logs(ctx context.Context, n int) (string, error) {
	if err := c.gate(ctx, "logs"); err != nil {
		return "", err
	}
	c.accept(ctx, "logs", false)
	return c.logs(ctx, n)
}

func (c *Commander) Notes(ctx context.Context, clear bool) (string, error) {
	if err := c.gate(ctx, "notes"); err != nil {
		return "", err
	}
	if !clear {
		c.accept(ctx, "notes", false)
	}
	return c.notes(ctx, clear)
}
