package main

// The CLI side of the run-time settings (package manage): get, set, unset,
// checklist and notes. Each asks the running daemon over the control
// socket; with none running it works on the state file. get, notes and
// checklist show only read it (read-only, creating nothing); set, unset,
// checklist set/reset and notes clear write it, and the next `vigil run`
// applies what they stored and delivers their info alerts.

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/vigil-iot/vigil/config"
	"github.com/vigil-iot/vigil/daemon"
	"github.com/vigil-iot/vigil/manage"
	"github.com/vigil-iot/vigil/store"
	"github.com/vigil-iot/vigil/transport"
)

// cliCtx marks a command run by the CLI on the state file.
func cliCtx(ctx context.Context) context.Context {
	return transport.WithSource(ctx, transport.Source{Channel: transport.ChannelCLI})
}

// offline builds an app on the state file (writable) with the overlay
// applied, for a change made with no daemon running.
func (e *env) offline(ctx context.Context) (*daemon.Commands, func() error, error) {
	cfg, base, err := e.loadOverlaid(ctx, e.logger())
	if err != nil {
		return nil, nil, err
	}
	a, err := e.newApp(ctx, cfg, base, inZone(e.logger(), cfg.Device.Location), parts{}, daemon.Options{Store: daemon.StoreWrite})
	if err != nil {
		return nil, nil, err
	}
	return a.Commands(), a.Close, nil
}

// daemonOr sends req to the running daemon and prints its answer, or,
// with none running, runs offline on the state file and prints its answer
// with the note that no daemon runs.
//
// precheck, when not nil, checks the change against the config and the
// stored overlay before the state file is opened for writing, so a refused
// change creates nothing.
func (e *env) daemonOr(ctx context.Context, req daemon.Request, offline func(context.Context, *daemon.Commands) (string, error),
	precheck ...func(*config.Config, *manage.Base, []store.Setting) error) error {
	cfg, err := e.loadConfig()
	if err != nil {
		return err
	}
	resp, err := e.client(cfg).Call(ctx, req, 30*time.Second)
	switch {
	case err == nil:
		fmt.Fprintln(e.stdout, strings.TrimRight(resp.Text, "\n"))
		return nil
	case err != daemon.ErrNoDaemon:
		return err
	}
	for _, check := range precheck {
		cfg, base, err := e.loadOverlaid(ctx, e.logger())
		if err != nil {
			return err
		}
		if err := check(cfg, base, daemon.ReadOverlayFile(cfg)); err != nil {
			return err
		}
	}
	c, closeApp, err := e.offline(ctx)
	if err != nil {
		return err
	}
	defer closeApp()
	txt, err := offline(cliCtx(ctx), c)
	if err != nil {
		return err
	}
	fmt.Fprintln(e.stdout, strings.TrimRight(txt, "\n")+"\n(no daemon is running: 'vigil run' starts with this)")
	return nil
}

func (e *env) cmdGet(ctx context.Context, args []string) error {
	var asJSON bool
	pos, err := e.flags("get", args, func(fs *flag.FlagSet) {
		fs.BoolVar(&asJSON, "json", false, "print JSON")
	}, -1)
	if err != nil {
		return err
	}
	if len(pos) > 1 {
		return usageErr("get: want at most one KEY, got %d (see 'vigil help get')", len(pos))
	}
	key := firstOr(pos, "")
	cfg, err := e.loadConfig()
	if err != nil {
		return err
	}
	var views []manage.SettingView
	resp, err := e.client(cfg).Call(ctx, daemon.Request{Cmd: "get", Key: key}, 10*time.Second)
	switch {
	case err == nil:
		views = resp.Values
	case err == daemon.ErrNoDaemon:
		cfg, _, err := e.loadOverlaid(ctx, e.logger())
		if err != nil {
			return err
		}
		if views, err = manage.SettingViews(cfg, key); err != nil {
			return err
		}
	default:
		return err
	}
	if asJSON {
		if views == nil {
			views = []manage.SettingView{}
		}
		return writeJSON(e.stdout, views)
	}
	daemon.WriteSettings(e.stdout, views)
	return nil
}

func (e *env) cmdSet(ctx context.Context, args []string) error {
	pos, err := e.flags("set", args, nil, -1)
	if err != nil {
		return err
	}
	if len(pos) < 2 {
		return usageErr("set: want KEY VALUE, got %d argument(s) (see 'vigil help set')", len(pos))
	}
	key, value := pos[0], strings.Join(pos[1:], " ")
	return e.daemonOr(ctx, daemon.Request{Cmd: "set", Key: key, Value: value},
		func(ctx context.Context, c *daemon.Commands) (string, error) { return c.Set(ctx, key, value) },
		func(cfg *config.Config, base *manage.Base, stored []store.Setting) error {
			if err := config.CheckSettable(key, cfg); err != nil {
				return err
			}
			_, err := base.With(stored, store.Setting{Key: key, Value: value, By: transport.ChannelCLI}, checkBuildable)
			return err
		})
}

func (e *env) cmdUnset(ctx context.Context, args []string) error {
	pos, err := e.flags("unset", args, nil, 1)
	if err != nil {
		return err
	}
	key := pos[0]
	return e.daemonOr(ctx, daemon.Request{Cmd: "unset", Key: key},
		func(ctx context.Context, c *daemon.Commands) (string, error) { return c.Unset(ctx, key) })
}

func (e *env) cmdChecklist(ctx context.Context, args []string) error {
	pos, err := e.flags("checklist", args, nil, -1)
	if err != nil {
		return err
	}
	op := firstOr(pos, "")
	switch {
	case op == transport.ChecklistShow && len(pos) == 1:
		cfg, err := e.loadConfig()
		if err != nil {
			return err
		}
		resp, err := e.client(cfg).Call(ctx, daemon.Request{Cmd: "checklist", Op: op}, 10*time.Second)
		switch {
		case err == nil:
			fmt.Fprint(e.stdout, resp.Text)
			return nil
		case err != daemon.ErrNoDaemon:
			return err
		}
		// Reading needs no state file: nothing is opened or created.
		txt, err := manage.ShowChecklist(cfg)
		if err != nil {
			return err
		}
		fmt.Fprint(e.stdout, txt)
		return nil
	case op == transport.ChecklistSet && len(pos) == 2:
		text, err := e.readInput(pos[1])
		if err != nil {
			return err
		}
		// Checked here too, so a bad file is refused before anything is
		// sent or opened.
		if _, _, err := config.ParseChecklist(strings.NewReader(text)); err != nil {
			return configErr(fmt.Errorf("%s: %w", pos[1], err))
		}
		return e.daemonOr(ctx, daemon.Request{Cmd: "checklist", Op: op, Body: text},
			func(ctx context.Context, c *daemon.Commands) (string, error) { return c.Checklist(ctx, op, text) })
	case op == transport.ChecklistReset && len(pos) == 1:
		return e.daemonOr(ctx, daemon.Request{Cmd: "checklist", Op: op},
			func(ctx context.Context, c *daemon.Commands) (string, error) { return c.Checklist(ctx, op, "") })
	}
	return usageErr("checklist: want 'show', 'set FILE|-' or 'reset', got %q (see 'vigil help checklist')", strings.Join(pos, " "))
}

// readInput reads a file, or stdin for "-".
func (e *env) readInput(name string) (string, error) {
	var r io.Reader = e.stdin
	if r == nil {
		r = os.Stdin
	}
	if name != "-" {
		f, err := os.Open(name)
		if err != nil {
			return "", err
		}
		defer f.Close()
		r = f
	}
	b, err := io.ReadAll(io.LimitReader(r, config.MaxChecklistSize+1))
	if err != nil {
		return "", fmt.Errorf("read %s: %w", name, err)
	}
	return string(b), nil
}

func (e *env) cmdNotes(ctx context.Context, args []string) error {
	pos, err := e.flags("notes", args, nil, -1)
	if err != nil {
		return err
	}
	clear := false
	switch {
	case len(pos) == 0:
	case len(pos) == 1 && pos[0] == "clear":
		clear = true
	default:
		return usageErr("notes: want nothing or 'clear', got %q (see 'vigil help notes')", strings.Join(pos, " "))
	}
	if clear {
		return e.daemonOr(ctx, daemon.Request{Cmd: "notes", Clear: true},
			func(ctx context.Context, c *daemon.Commands) (string, error) { return c.Notes(ctx, true) })
	}
	cfg, err := e.loadConfig()
	if err != nil {
		return err
	}
	resp, err := e.client(cfg).Call(ctx, daemon.Request{Cmd: "notes"}, 10*time.Second)
	switch {
	case err == nil:
		fmt.Fprint(e.stdout, resp.Text)
		return nil
	case err != daemon.ErrNoDaemon:
		return err
	}
	db, closeDB, err := daemon.OpenStore(cfg, daemon.StoreReadOnly)
	if err != nil {
		return err
	}
	defer closeDB()
	txt, err := daemon.NotesText(db, cfg.Device.Location, time.Now())
	if err != nil {
		return err
	}
	fmt.Fprint(e.stdout, txt)
	return nil
}

// checkBuildable checks what the engine needs beyond the validator (the
// rules compile).
func checkBuildable(cfg *config.Config) error {
	_, err := daemon.EngineConfig(cfg)
	return err
}
