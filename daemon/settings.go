package daemon

// The daemon's side of the run-time settings (package manage holds the
// policy and the one validation, manage.Base.Check): each change, on the
// one path of change.go, is validated against the base the running config
// was built from, stored, applied (reload.go) and audited.

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/vigil-iot/vigil/alert"
	"github.com/vigil-iot/vigil/config"
	"github.com/vigil-iot/vigil/manage"
	"github.com/vigil-iot/vigil/store"
	"github.com/vigil-iot/vigil/transport"
)

// remote reports whether the command came from a remote channel (MQTT,
// Telegram, the status page), which [manage] remote bounds: what
// transport.Source.Remote says.
func remote(ctx context.Context) bool { return transport.SourceOf(ctx).Remote() }

// who is who sent the command, as manage's policy sees it.
func who(src transport.Source) manage.Who {
	switch {
	case src.Channel == transport.ChannelModel:
		return manage.Model
	case src.Remote():
		return manage.Remote
	}
	return manage.Local
}

// gate refuses a verb the command's channel may not use (manage.Gate).
func (c *Commander) gate(ctx context.Context, verb string) error {
	src := transport.SourceOf(ctx)
	if !remote(ctx) { // the model's set has its own bounds (manage.Check)
		return nil
	}
	err := manage.Gate(c.app.current().Manage, verb, src.Channel)
	if err != nil {
		c.app.log.Warn("command refused: [manage] remote does not allow it", append([]any{"command", verb}, src.LogAttrs()...)...)
	}
	return err
}

// setModelInterval is the model's set_interval (agent.Self): a set of
// heartbeat.interval from the model channel, bounded by manage.CheckModelSet and
// audited like a person's.
func (c *Commander) setModelInterval(ctx context.Context, d time.Duration) (string, error) {
	ctx = transport.WithSource(ctx, transport.Source{Channel: transport.ChannelModel})
	return c.Set(ctx, "heartbeat.interval", config.Duration{Duration: d}.String())
}

// set validates, stores and applies one overlay value; the caller gated it.
func (c *Commander) set(ctx context.Context, key, value string) (string, error) {
	return c.setWith(ctx, key, manage.To(value))
}

// setWith is set with the value computed from the one before, under the
// same lock as the store (toggle flips what is stored, not what is in
// force, so two toggles cancel out).
func (c *Commander) setWith(ctx context.Context, key string, value func(was string) string) (string, error) {
	src := transport.SourceOf(ctx)
	cfg, was, err := c.store(ctx, key, value)
	if err != nil {
		return "", err
	}
	pending := c.app.applyChange(ctx)
	now, _ := cfg.Get(key)
	text := fmt.Sprintf("%s set to %s by %s", key, manage.ShowSetting(now), src)
	c.audit(ctx, "set "+key+" "+value(was), text)
	return withNote(fmt.Sprintf("%s set to %s (was %s)", key, manage.ShowSetting(now), manage.ShowSetting(was)), pending), nil
}

// store validates key = value against the base and the stored overlay,
// once (manage.Base.Check), and stores it; it returns the config with it
// (now the latest) and the key's previous value.
func (c *Commander) store(ctx context.Context, key string, value func(was string) string) (*config.Config, string, error) {
	a := c.app
	a.setMu.Lock()
	defer a.setMu.Unlock()
	if a.base == nil {
		return nil, "", errors.New("settings cannot be changed here: no config base (a bug)")
	}
	src := transport.SourceOf(ctx)
	stored, err := a.db.Settings()
	if err != nil {
		return nil, "", fmt.Errorf("read settings: %w", err)
	}
	set := manage.Set{Key: key, Value: value, Who: who(src), By: src.String(), At: a.wall().UTC().Round(time.Second)}
	ch, err := a.base.Check(set, a.latest, a.cfg, stored)
	if err != nil {
		return nil, "", err
	}
	if err := a.db.PutSetting(ch.Setting); err != nil {
		return nil, "", fmt.Errorf("store setting: %w", err)
	}
	a.latest = ch.Config
	a.gen++
	return ch.Config, ch.Was, nil
}

// current is the config in force; apply replaces it under setMu.
func (a *App) current() *config.Config {
	a.setMu.Lock()
	defer a.setMu.Unlock()
	return a.cfg
}

// unset removes one overlay value and applies the config without it.
func (c *Commander) unset(ctx context.Context, key string) (string, error) {
	a := c.app
	src := transport.SourceOf(ctx)
	if err := manage.CheckUnset(who(src), key); err != nil {
		return "", err
	}
	cfg, err := c.remove(key)
	if err != nil {
		return "", err
	}
	pending := a.applyChange(ctx)
	now := "(no such key now)"
	origin := ""
	if v, err := cfg.Get(key); err == nil {
		now, origin = v, " ("+manage.OriginText(cfg, key)+")"
	}
	text := fmt.Sprintf("%s unset by %s: back to %s%s", key, src, now, origin)
	c.audit(ctx, "unset "+key, text)
	return withNote(fmt.Sprintf("%s unset: back to %s%s", key, now, origin), pending), nil
}

// remove deletes key from the stored overlay and returns the config
// without it.
func (c *Commander) remove(key string) (*config.Config, error) {
	a := c.app
	a.setMu.Lock()
	defer a.setMu.Unlock()
	if a.base == nil {
		return nil, errors.New("settings cannot be changed here: no config base (a bug)")
	}
	found, err := a.db.DeleteSetting(key)
	if err != nil {
		return nil, fmt.Errorf("unset %s: %w", key, err)
	}
	if !found {
		if v, err := a.cfg.Get(key); err == nil {
			return nil, fmt.Errorf("%s: %w (it is %s from %s)", key, manage.ErrNotSet, v, manage.OriginText(a.cfg, key))
		}
		return nil, fmt.Errorf("%s: %w", key, manage.ErrNotSet)
	}
	a.gen++
	stored, err := a.db.Settings()
	if err != nil {
		return nil, fmt.Errorf("read settings: %w", err)
	}
	cfg, _, err := a.base.Resolve(stored, a.log)
	if err != nil {
		return nil, err
	}
	a.latest = cfg
	return cfg, nil
}

// audit logs an accepted change at INFO with its source, lists it in
// `vigil status` and queues it as an info system alert.
func (c *Commander) audit(ctx context.Context, command, text string) {
	c.auditKind(ctx, command, text, alert.RuleSetting)
}

func (c *Commander) auditKind(ctx context.Context, command, text, kind string) {
	src := transport.SourceOf(ctx)
	c.app.log.Log(ctx, logLevel(src), "setting changed", append([]any{"change", text}, src.LogAttrs()...)...)
	c.app.engine.NoteCommand(src.String(), command)
	if _, err := c.app.engine.Notice(ctx, kind, text); err != nil {
		c.app.log.Error("queue the change's info alert", "err", err)
	}
}

// checklist shows, sets or resets the checklist set from afar; the caller
// gated it.
func (c *Commander) checklist(ctx context.Context, op, text string) (string, error) {
	cfg := c.app.current()
	src := transport.SourceOf(ctx)
	switch op {
	case transport.ChecklistShow:
		return manage.ShowChecklist(cfg)
	case transport.ChecklistSet:
		out, err := manage.SetChecklist(cfg, text)
		if err != nil {
			return "", err
		}
		c.auditKind(ctx, "checklist set", fmt.Sprintf("checklist set by %s (%d bytes)", src, len(text)), alert.RuleChecklist)
		c.app.announceInfo(cfg) // the checklist is in the config's digest
		return out, nil
	case transport.ChecklistReset:
		out, removed, err := manage.ResetChecklist(cfg)
		if err != nil || !removed {
			return out, err
		}
		c.auditKind(ctx, "checklist reset", fmt.Sprintf("checklist reset by %s: back to %s", src, cfg.Heartbeat.Checklist), alert.RuleChecklist)
		c.app.announceInfo(cfg)
		return out, nil
	}
	return "", fmt.Errorf("checklist: unknown operation %q (want show, set or reset)", op)
}

// logs lists the last n runs and the commands accepted since start, one
// line each, in the device's time zone.
func (c *Commander) logs(ctx context.Context, n int) (string, error) {
	if n <= 0 {
		n = 10
	}
	n = min(n, 100)
	var runs []store.Run
	err := c.app.db.View(func(tx *store.Tx) error {
		var err error
		runs, err = tx.Runs(n)
		return err
	})
	if err != nil {
		return "", fmt.Errorf("read runs: %w", err)
	}
	st, err := c.app.engine.Status(ctx)
	if err != nil {
		return "", err
	}
	loc := c.app.current().Device.Location
	var b strings.Builder
	if len(runs) == 0 {
		b.WriteString("no runs yet\n")
	}
	for _, r := range runs {
		fmt.Fprintf(&b, "%s run %s", r.Start.In(loc).Format(TimeLayout), r.Outcome)
		if r.Reason != "" {
			fmt.Fprintf(&b, " (%s)", r.Reason)
		}
		fmt.Fprintf(&b, " %dms", r.DurationMS)
		if r.Tokens > 0 {
			fmt.Fprintf(&b, " %d tokens", r.Tokens)
		}
		if r.Error != "" {
			fmt.Fprintf(&b, " error: %s", c.app.red.String(r.Error)) // as Status redacts it
		}
		b.WriteByte('\n')
	}
	for _, cmd := range st.Commands {
		fmt.Fprintf(&b, "%s command %s by %s\n", cmd.Time.In(loc).Format(TimeLayout), cmd.Command, cmd.Source)
	}
	return b.String(), nil
}

// notes lists the model's notes with their age, or clears them.
func (c *Commander) notes(ctx context.Context, clear bool) (string, error) {
	if clear {
		n, err := c.app.db.ClearNotes()
		if err != nil {
			return "", err
		}
		c.auditKind(ctx, "notes clear", fmt.Sprintf("%d notes cleared by %s", n, transport.SourceOf(ctx)), alert.RuleNotes)
		return fmt.Sprintf("%d notes cleared", n), nil
	}
	return NotesText(c.app.db, c.app.current().Device.Location, c.app.wall())
}

// NotesText lists the model's notes with their age in loc, newest last.
func NotesText(db *store.DB, loc *time.Location, now time.Time) (string, error) {
	ns, err := db.Notes()
	if err != nil {
		return "", err
	}
	if len(ns) == 0 {
		return "no notes\n", nil
	}
	var b strings.Builder
	for _, n := range ns {
		fmt.Fprintf(&b, "%s (%s ago) %s\n", n.Time.In(loc).Format(TimeLayout), now.Sub(n.Time).Round(time.Second), n.Text)
	}
	return b.String(), nil
}

// withNote adds note (why a change is not in force yet) on its own line.
func withNote(answer, note string) string {
	if note == "" {
		return answer
	}
	return answer + "\n(" + note + ")"
}
