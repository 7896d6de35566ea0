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
	"github.com/vigil-iot/vigil/control"
	"github.com/vigil-iot/vigil/internal/termtext"
	"github.com/vigil-iot/vigil/manage"
	"github.com/vigil-iot/vigil/transport"
)

// settingsNote ends the answer of a change made with no daemon running.
const settingsNote = "\n(no daemon is running: 'vigil run' starts with this)"

// changeSettings makes a change of the run-time settings (c.req, c.do)
// through the daemon or, with none running, on the state file with the
// overlay applied.
func (e *env) changeSettings(ctx context.Context, c change) error {
	base, cfg, err := e.load()
	if err != nil {
		return err
	}
	c.base, c.note = base, settingsNote
	return e.change(ctx, cfg, c)
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
	base, cfg, err := e.load()
	if err != nil {
		return err
	}
	var views []manage.SettingView
	resp, err := e.daemonOr(ctx, cfg, control.Request{Cmd: "get", Key: key}, 10*time.Second, func() error {
		// No daemon answered: the overlay is the state file's.
		cfg, _, err := base.Resolve(localOverlay(cfg), e.logger())
		if err != nil {
			return err
		}
		views, err = manage.SettingViews(cfg, key)
		return err
	})
	if err != nil {
		return err
	}
	if resp != nil {
		views = resp.Values
	}
	if asJSON {
		if views == nil {
			views = []manage.SettingView{}
		}
		return writeJSON(e.stdout, views)
	}
	_ = termtext.Print(e.stdout, func(w io.Writer) { manage.WriteSettings(w, views) })
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
	return e.changeSettings(ctx, change{req: control.Request{Cmd: "set", Key: key, Value: value},
		// With no state file yet there is no overlay: a refused value
		// creates none. The check is the one the set runs (manage's).
		precheck: func(base *manage.Base) error {
			cfg, err := base.Configured()
			if err != nil {
				return err
			}
			_, err = base.Check(manage.Set{Key: key, Value: manage.To(value), Who: manage.Local, By: transport.ChannelCLI}, cfg, cfg, nil)
			return err
		}})
}

func (e *env) cmdUnset(ctx context.Context, args []string) error {
	pos, err := e.flags("unset", args, nil, 1)
	if err != nil {
		return err
	}
	key := pos[0]
	return e.changeSettings(ctx, change{req: control.Request{Cmd: "unset", Key: key}})
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
		// Reading needs no state file: nothing is opened or created.
		txt, err := e.answer(ctx, cfg, control.Request{Cmd: "checklist", Op: op}, 10*time.Second, func() (string, error) { return manage.ShowChecklist(cfg) })
		if err != nil {
			return err
		}
		fmt.Fprint(e.stdout, termtext.Text(txt))
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
		return e.changeSettings(ctx, change{req: control.Request{Cmd: "checklist", Op: op, Body: text}})
	case op == transport.ChecklistReset && len(pos) == 1:
		return e.changeSettings(ctx, change{req: control.Request{Cmd: "checklist", Op: op}})
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
		return e.changeSettings(ctx, change{req: control.Request{Cmd: "notes", Clear: true}})
	}
	cfg, err := e.loadConfig()
	if err != nil {
		return err
	}
	txt, err := e.answer(ctx, cfg, control.Request{Cmd: "notes"}, 10*time.Second, func() (string, error) { return localNotes(cfg) })
	if err != nil {
		return err
	}
	fmt.Fprint(e.stdout, termtext.Text(txt))
	return nil
}
