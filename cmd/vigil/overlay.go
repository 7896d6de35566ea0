package main

// Run-time settings policy (vigil set/unset/get, and the same verbs over
// the control socket, MQTT and Telegram). config.toml stays the base and is
// never written (/etc/vigil is read-only under the unit's hardening); the
// environment's VIGIL_<SECTION>_<KEY> come next, and the overlay kept in the
// state file ("settings" bucket) last. Every value goes through the config
// validator, with its messages.
//   - A set is validated against the base the running config was built
//     from (the daemon keeps the file's bytes and the environment), so a
//     file edited but not yet reloaded does not change what a set means.
//   - An accepted set or unset is stored first (it survives a power cut),
//     then applied at once through the same path as a SIGHUP reload, logged
//     at INFO with its source, and queued as an info system alert.
//   - An overlay entry that no longer validates (its rule was removed from
//     the file, or the file changed under it) never stops the daemon: it is
//     left out with one ERROR line naming it and who set it, and kept in the
//     state file until someone unsets it.
//   - Who may: the CLI and the control socket (local root) may use every
//     verb; MQTT, Telegram and the status page only what [manage] remote
//     lists (toggle needs "set"). The model only sets heartbeat.interval,
//     when heartbeat.model_may lists "interval", within interval_min and
//     interval_max.
//   - What a remote channel may not do even with "set": raise the daily LLM
//     budget (heartbeat.max_llm_calls_per_day), which costs money. It may
//     lower it, and set at most the larger of the configured value
//     (config.toml and the environment) and the value in force; only the
//     device's own CLI or socket may go above both.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/vigil-iot/vigil/alert"
	"github.com/vigil-iot/vigil/config"
	"github.com/vigil-iot/vigil/redact"
	"github.com/vigil-iot/vigil/store"
	"github.com/vigil-iot/vigil/transport"
)

// channelModel is the Source.Channel of a change the model asks for (the
// agent's interval tool).
const channelModel = "model"

// configBase is what a config is built from before the overlay: the file's
// bytes and the environment's overrides.
type configBase struct {
	name string
	data []byte
	env  []config.Override
	red  *redact.Redactor // learns every secret parse resolves; nil: none
}

// readBase reads config.toml and the environment. A missing file is a
// config error (exit 78).
func (e *env) readBase() (*configBase, error) {
	f, err := os.Open(e.config)
	if err != nil {
		return nil, configErr(fmt.Errorf("open config: %w", err))
	}
	defer f.Close()
	// One byte over the limit is enough for ParseWith to refuse the file.
	data, err := io.ReadAll(io.LimitReader(f, config.MaxSize+1))
	if err != nil {
		return nil, configErr(fmt.Errorf("read config: %w", err))
	}
	return &configBase{name: e.config, data: data, env: config.EnvOverrides(os.Environ()), red: e.redactor()}, nil
}

// overrides turns overlay entries into config overrides.
func overrides(overlay []store.Setting) []config.Override {
	out := make([]config.Override, len(overlay))
	for i, s := range overlay {
		out[i] = config.Override{Key: s.Key, Value: s.Value, Origin: config.OriginSet, By: s.By, At: s.At}
	}
	return out
}

// parse builds the config from the base and overlay, resolved as
// loadConfig resolves one: default ID, secrets, paths relative to the file.
func (b *configBase) parse(overlay []store.Setting) (*config.Config, error) {
	opts := parseOptions()
	opts.Overrides = append(slices.Clone(b.env), overrides(overlay)...)
	cfg, err := config.ParseWith(bytes.NewReader(b.data), b.name, opts)
	if err != nil {
		return nil, configErr(err)
	}
	host, _ := os.Hostname()
	cfg.SetDefaultID(host)
	if err := cfg.ResolveSecrets(os.Getenv, os.ReadFile); err != nil {
		return nil, configErr(err)
	}
	if b.red != nil {
		// The one place secrets reach the redactor, at start, on reload
		// and on a set: the logs, the engine and the agent share it.
		b.red.Add(cfg.SecretValues()...)
	}
	base := filepath.Dir(b.name)
	cfg.Device.StateDir = relTo(base, cfg.Device.StateDir)
	cfg.Heartbeat.Checklist = relTo(base, cfg.Heartbeat.Checklist)
	return cfg, nil
}

// resolve builds the config with every overlay entry that still validates
// and returns the entries it used. Each one left out gets one ERROR line on
// log naming it and who set it; it stays stored. An error means the base
// itself is bad.
func (b *configBase) resolve(overlay []store.Setting, log *slog.Logger) (*config.Config, []store.Setting, error) {
	if cfg, err := b.parse(overlay); err == nil {
		return cfg, overlay, nil
	}
	cfg, err := b.parse(nil)
	if err != nil {
		return nil, nil, err
	}
	var used []store.Setting
	for _, s := range overlay {
		if err := config.CheckSettable(s.Key, cfg); err != nil {
			logIgnored(log, s, err)
			continue
		}
		try := append(slices.Clone(used), s)
		next, err := b.parse(try)
		if err != nil {
			logIgnored(log, s, err)
			continue
		}
		cfg, used = next, try
	}
	return cfg, used, nil
}

func logIgnored(log *slog.Logger, s store.Setting, err error) {
	log.Error("run-time setting ignored: it no longer validates against the config; 'vigil unset "+s.Key+"' removes it",
		"key", s.Key, "value", s.Value, "set_by", s.By, "set_at", s.At.Format(time.RFC3339), "err", err)
}

// readOverlayFile reads the overlay from the state file read-only, creating
// nothing. No file, a file another process holds, or a damaged one gives an
// empty overlay: whoever opens it next (the daemon, the CLI) says what is
// wrong with it.
func readOverlayFile(cfg *config.Config) []store.Setting {
	path := dbPath(cfg)
	if _, err := os.Stat(path); err != nil {
		return nil
	}
	db, err := store.Open(path, store.Options{Timeout: 200 * time.Millisecond, ReadOnly: true})
	if err != nil {
		return nil
	}
	defer db.Close()
	s, err := db.Settings()
	if err != nil {
		return nil
	}
	return s
}

// readOverlay reads the overlay from the running daemon, or from the state
// file read-only when none runs.
func readOverlay(ctx context.Context, cfg *config.Config) []store.Setting {
	resp, err := ctlCall(ctx, cfg, ctlRequest{Cmd: "settings"}, 10*time.Second)
	if err == nil {
		return resp.Settings
	}
	return readOverlayFile(cfg)
}

// loadOverlaid loads the config as `vigil run` does: the file, the
// environment and the overlay (from the daemon, or the state file). It
// returns the base too, for the daemon to keep.
func (e *env) loadOverlaid(ctx context.Context, log *slog.Logger) (*config.Config, *configBase, error) {
	base, err := e.readBase()
	if err != nil {
		return nil, nil, err
	}
	cfg, err := base.parse(nil)
	if err != nil {
		return nil, nil, err
	}
	overlay := readOverlay(ctx, cfg)
	if len(overlay) == 0 {
		return cfg, base, nil
	}
	cfg, _, err = base.resolve(overlay, log)
	return cfg, base, err
}

// settingView is one line of `vigil get`.
type settingView struct {
	Key    string `json:"key"`
	Value  string `json:"value"`
	Origin string `json:"origin"`
}

// settingViews lists key (all settable keys when empty) with its effective
// value and origin.
func settingViews(cfg *config.Config, key string) ([]settingView, error) {
	keys := cfg.SettableKeys()
	if key != "" {
		if err := config.CheckSettable(key, cfg); err != nil {
			return nil, configErr(err)
		}
		keys = []string{key}
	}
	out := make([]settingView, 0, len(keys))
	for _, k := range keys {
		v, err := cfg.Get(k)
		if err != nil {
			return nil, err
		}
		out = append(out, settingView{Key: k, Value: v, Origin: originText(cfg, k)})
	}
	return out, nil
}

// originText is a key's origin with the file's name as the person wrote it
// (config.toml:12).
func originText(cfg *config.Config, key string) string {
	return cfg.Origin(key).String()
}

func writeSettings(w io.Writer, views []settingView) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "KEY\tVALUE\tORIGIN")
	for _, v := range views {
		fmt.Fprintf(tw, "%s\t%s\t%s\n", v.Key, showSetting(v.Value), v.Origin)
	}
	tw.Flush()
}

// Errors of the management verbs.
var errNotSet = errors.New("not set at run time")

// remote reports whether the command came from a remote channel (MQTT,
// Telegram, the status page), which [manage] remote bounds.
func remote(ctx context.Context) bool {
	switch transport.SourceOf(ctx).Channel {
	case transport.ChannelCLI, transport.ChannelSocket, channelModel:
		return false
	}
	return true
}

// gate refuses a verb the command's channel may not use (see the policy
// at the top).
func (c *commands) gate(ctx context.Context, verb string) error {
	src := transport.SourceOf(ctx)
	if !remote(ctx) { // the model's set checks its own bounds
		return nil
	}
	if c.app.current().Manage.Allows(verb) {
		return nil
	}
	c.app.log.Warn("command refused: [manage] remote does not allow it", append([]any{"command", verb}, src.LogAttrs()...)...)
	return fmt.Errorf("%w: %s from %s: [manage] remote does not list %q", transport.ErrNotAllowed, verb, src.Channel, verb)
}

// checkModelSet bounds what the model may set: only heartbeat.interval,
// when heartbeat.model_may lists "interval", within interval_min..max.
func checkModelSet(cfg *config.Config, key, value string) error {
	hb := cfg.Heartbeat
	if key != "heartbeat.interval" || !slices.Contains(hb.ModelMay, "interval") {
		return fmt.Errorf("%w: the model may not set %s (heartbeat.model_may = %q)", transport.ErrNotAllowed, key, hb.ModelMay)
	}
	var d config.Duration
	if err := d.UnmarshalText([]byte(strings.TrimSpace(value))); err != nil {
		return fmt.Errorf("heartbeat.interval: %w", err)
	}
	if d.Duration < hb.IntervalMin.Duration || d.Duration > hb.IntervalMax.Duration {
		return fmt.Errorf("%w: heartbeat.interval %s is outside heartbeat.interval_min..interval_max (%s..%s)",
			transport.ErrNotAllowed, d.Duration, hb.IntervalMin.Duration, hb.IntervalMax.Duration)
	}
	return nil
}

// errRemoteRaise refuses a remote channel's raise of the daily LLM budget.
var errRemoteRaise = errors.New("a remote channel may lower the daily LLM budget, not raise it")

// checkRemoteSet bounds what a remote channel may set beyond [manage]
// remote (see the policy at the top): heartbeat.max_llm_calls_per_day at
// most the larger of the configured value (base) and the value in force
// (was). A value that is no integer is left to the validator.
func checkRemoteSet(base *config.Config, key, value, was string) error {
	if key != "heartbeat.max_llm_calls_per_day" {
		return nil
	}
	n, err := strconv.ParseInt(strings.TrimSpace(value), 0, 64) // as config reads it: 0x7fffffff too
	if err != nil {
		return nil
	}
	limit, what := int64(base.Heartbeat.MaxLLMCallsPerDay), "the configured value"
	if now, err := strconv.ParseInt(was, 10, 64); err == nil && now > limit {
		limit, what = now, "the value in force"
	}
	if n <= limit {
		return nil
	}
	return fmt.Errorf("%s: %w: at most %d, %s (got %d); raise it on the device with 'vigil set'", key, errRemoteRaise, limit, what, n)
}

// setModelInterval is the model's set_interval (agent.Self): a set of
// heartbeat.interval from the model channel, bounded by checkModelSet and
// audited like a person's.
func (c *commands) setModelInterval(ctx context.Context, d time.Duration) (string, error) {
	ctx = transport.WithSource(ctx, transport.Source{Channel: channelModel})
	return c.Set(ctx, "heartbeat.interval", config.Duration{Duration: d}.String())
}

// set validates, stores and applies one overlay value; the caller gated it.
func (c *commands) set(ctx context.Context, key, value string) (string, error) {
	return c.setWith(ctx, key, func(string) string { return value })
}

// setWith is set with the value computed from the one before, under the
// same lock as the store (toggle flips what is stored, not what is in
// force, so two toggles cancel out).
func (c *commands) setWith(ctx context.Context, key string, value func(was string) string) (string, error) {
	a := c.app
	src := transport.SourceOf(ctx)
	cfg, was, err := c.store(ctx, key, value)
	if err != nil {
		return "", err
	}
	pending := a.applyChange(ctx, cfg)
	now, _ := cfg.Get(key)
	text := fmt.Sprintf("%s set to %s by %s", key, showSetting(now), src)
	c.audit(ctx, "set "+key+" "+value(was), text)
	return withNote(fmt.Sprintf("%s set to %s (was %s)", key, showSetting(now), showSetting(was)), pending), nil
}

// store validates key = value against the base and the stored overlay and
// stores it; it returns the config with it and the key's previous value.
func (c *commands) store(ctx context.Context, key string, value func(was string) string) (*config.Config, string, error) {
	a := c.app
	a.setMu.Lock()
	defer a.setMu.Unlock()
	if a.base == nil {
		return nil, "", errors.New("settings cannot be changed here: no config base (a bug)")
	}
	src := transport.SourceOf(ctx)
	if err := config.CheckSettable(key, a.cfg); err != nil {
		return nil, "", configErr(err)
	}
	stored, err := a.db.Settings()
	if err != nil {
		return nil, "", fmt.Errorf("read settings: %w", err)
	}
	// The value before this change is the stored overlay's, which a change
	// still applying in the background may not have put in force yet.
	latest, _, err := a.base.resolve(stored, slog.New(slog.DiscardHandler))
	if err != nil {
		return nil, "", err
	}
	was, _ := latest.Get(key)
	v := value(was)
	if src.Channel == channelModel {
		if err := checkModelSet(a.cfg, key, v); err != nil { // model_may and its bounds are file keys
			return nil, "", err
		}
	}
	if remote(ctx) {
		base, err := a.base.parse(nil)
		if err != nil {
			return nil, "", err
		}
		if err := checkRemoteSet(base, key, v, was); err != nil {
			return nil, "", err
		}
	}
	s := store.Setting{Key: key, Value: v, By: src.String(), At: time.Now().UTC().Round(time.Second)}
	cfg, err := a.base.with(stored, s)
	if err != nil {
		return nil, "", err
	}
	if err := a.db.PutSetting(s); err != nil {
		return nil, "", fmt.Errorf("store setting: %w", err)
	}
	return cfg, was, nil
}

// current is the config in force; apply replaces it under setMu.
func (a *app) current() *config.Config {
	a.setMu.Lock()
	defer a.setMu.Unlock()
	return a.cfg
}

// with validates the config with s added to the stored overlay (replacing
// its key's value); entries that no longer validate are left out as at
// load. The error is the validator's.
func (b *configBase) with(stored []store.Setting, s store.Setting) (*config.Config, error) {
	others := slices.DeleteFunc(slices.Clone(stored), func(o store.Setting) bool { return o.Key == s.Key })
	_, used, err := b.resolve(others, slog.New(slog.DiscardHandler)) // said at load
	if err != nil {
		return nil, err
	}
	cfg, err := b.parse(append(used, s))
	if err != nil {
		return nil, err
	}
	if err := checkBuildable(cfg); err != nil {
		return nil, err
	}
	return cfg, nil
}

// unset removes one overlay value and applies the config without it.
func (c *commands) unset(ctx context.Context, key string) (string, error) {
	a := c.app
	src := transport.SourceOf(ctx)
	if src.Channel == channelModel {
		return "", fmt.Errorf("%w: the model may not unset %s", transport.ErrNotAllowed, key)
	}
	cfg, err := c.remove(key)
	if err != nil {
		return "", err
	}
	pending := a.applyChange(ctx, cfg)
	now := "(no such key now)"
	origin := ""
	if v, err := cfg.Get(key); err == nil {
		now, origin = v, " ("+originText(cfg, key)+")"
	}
	text := fmt.Sprintf("%s unset by %s: back to %s%s", key, src, now, origin)
	c.audit(ctx, "unset "+key, text)
	return withNote(fmt.Sprintf("%s unset: back to %s%s", key, now, origin), pending), nil
}

// remove deletes key from the stored overlay and returns the config
// without it.
func (c *commands) remove(key string) (*config.Config, error) {
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
			return nil, fmt.Errorf("%s: %w (it is %s from %s)", key, errNotSet, v, originText(a.cfg, key))
		}
		return nil, fmt.Errorf("%s: %w", key, errNotSet)
	}
	stored, err := a.db.Settings()
	if err != nil {
		return nil, fmt.Errorf("read settings: %w", err)
	}
	cfg, _, err := a.base.resolve(stored, a.log)
	return cfg, err
}

// audit logs an accepted change at INFO with its source, lists it in
// `vigil status` and queues it as an info system alert.
func (c *commands) audit(ctx context.Context, command, text string) {
	c.auditKind(ctx, command, text, alert.RuleSetting)
}

func (c *commands) auditKind(ctx context.Context, command, text, kind string) {
	src := transport.SourceOf(ctx)
	level := slog.LevelInfo
	if src.Channel == transport.ChannelCLI {
		level = slog.LevelDebug // the CLI on the state file: the person sees the answer
	}
	c.app.log.Log(ctx, level, "setting changed", append([]any{"change", text}, src.LogAttrs()...)...)
	c.app.engine.NoteCommand(src.String(), command)
	if _, err := c.app.engine.Notice(ctx, kind, text); err != nil {
		c.app.log.Error("queue the change's info alert", "err", err)
	}
}

// checkBuildable checks what the engine needs beyond the validator (the
// rules compile).
func checkBuildable(cfg *config.Config) error {
	_, err := engineConfig(cfg)
	return err
}

// checklistOverride is the checklist set from afar (vigil checklist set):
// in the state directory, it is used instead of heartbeat.checklist while
// it exists.
func checklistOverride(cfg *config.Config) string {
	return filepath.Join(cfg.Device.StateDir, "HEARTBEAT.md")
}

// checklistInForce is the checklist the next heartbeat reads.
func checklistInForce(cfg *config.Config) (path string, override bool) {
	if _, err := os.Lstat(checklistOverride(cfg)); err == nil { // a link there is refused, not skipped
		return checklistOverride(cfg), true
	}
	return cfg.Heartbeat.Checklist, false
}

// readChecklist reads the checklist at path, through openOverride when it
// is the one set from afar.
func readChecklist(path string, override bool) ([]byte, error) {
	if !override {
		return os.ReadFile(path)
	}
	f, err := openOverride(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, config.MaxChecklistSize+1))
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// writeAtomic writes data to path so that a power cut leaves the old file
// or the new one: a temporary file, fsync, rename, fsync of the directory.
func writeAtomic(path string, data []byte, mode os.FileMode) error {
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	tmp := f.Name()
	ok := false
	defer func() {
		if !ok {
			f.Close()
			os.Remove(tmp)
		}
	}()
	if _, err := f.Write(data); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := f.Chmod(mode); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("sync %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	ok = true
	return syncDir(dir)
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("sync %s: %w", dir, err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("sync %s: %w", dir, err)
	}
	return nil
}

// checklist shows, sets or resets the checklist set from afar; the caller
// gated it.
func (c *commands) checklist(ctx context.Context, op, text string) (string, error) {
	cfg := c.app.current()
	over := checklistOverride(cfg)
	src := transport.SourceOf(ctx)
	switch op {
	case transport.ChecklistShow:
		path, isOver := checklistInForce(cfg)
		which := "the config's heartbeat.checklist"
		if isOver {
			which = "set from afar; 'vigil checklist reset' goes back to " + cfg.Heartbeat.Checklist
		}
		b, err := readChecklist(path, isOver)
		if errors.Is(err, fs.ErrNotExist) {
			return fmt.Sprintf("checklist in force: %s (%s): does not exist yet; 'vigil run' writes a template there\n", path, which), nil
		}
		if err != nil {
			return "", fmt.Errorf("read checklist: %w", err)
		}
		return fmt.Sprintf("checklist in force: %s (%s)\n\n%s", path, which, b), nil
	case transport.ChecklistSet:
		_, empty, err := config.ParseChecklist(strings.NewReader(text))
		if err != nil {
			return "", err
		}
		if err := os.MkdirAll(cfg.Device.StateDir, 0o700); err != nil {
			return "", fmt.Errorf("create state dir: %w", err)
		}
		if err := writeAtomic(over, []byte(text), 0o644); err != nil {
			return "", err
		}
		note := ""
		if empty {
			note = "; it is empty (headings and comments only): heartbeats will not call the LLM"
		}
		c.auditKind(ctx, "checklist set", fmt.Sprintf("checklist set by %s (%d bytes)", src, len(text)), alert.RuleChecklist)
		return fmt.Sprintf("checklist set: %s is in force from the next heartbeat%s", over, note), nil
	case transport.ChecklistReset:
		err := os.Remove(over)
		if errors.Is(err, fs.ErrNotExist) {
			return fmt.Sprintf("no checklist set from afar: %s stays in force", cfg.Heartbeat.Checklist), nil
		}
		if err != nil {
			return "", fmt.Errorf("reset checklist: %w", err)
		}
		if err := syncDir(filepath.Dir(over)); err != nil {
			return "", err
		}
		c.auditKind(ctx, "checklist reset", fmt.Sprintf("checklist reset by %s: back to %s", src, cfg.Heartbeat.Checklist), alert.RuleChecklist)
		return fmt.Sprintf("checklist reset: %s is in force again", cfg.Heartbeat.Checklist), nil
	}
	return "", fmt.Errorf("checklist: unknown operation %q (want show, set or reset)", op)
}

// logs lists the last n runs and the commands accepted since start, one
// line each, in the device's time zone.
func (c *commands) logs(ctx context.Context, n int) (string, error) {
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
		fmt.Fprintf(&b, "%s run %s", r.Start.In(loc).Format(timeLayout), r.Outcome)
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
		fmt.Fprintf(&b, "%s command %s by %s\n", cmd.Time.In(loc).Format(timeLayout), cmd.Command, cmd.Source)
	}
	return b.String(), nil
}

// notes lists the model's notes with their age, or clears them.
func (c *commands) notes(ctx context.Context, clear bool) (string, error) {
	if clear {
		n, err := c.app.db.ClearNotes()
		if err != nil {
			return "", err
		}
		c.auditKind(ctx, "notes clear", fmt.Sprintf("%d notes cleared by %s", n, transport.SourceOf(ctx)), alert.RuleNotes)
		return fmt.Sprintf("%d notes cleared", n), nil
	}
	return notesText(c.app.db, c.app.current().Device.Location, time.Now())
}

func notesText(db *store.DB, loc *time.Location, now time.Time) (string, error) {
	ns, err := db.Notes()
	if err != nil {
		return "", err
	}
	if len(ns) == 0 {
		return "no notes\n", nil
	}
	var b strings.Builder
	for _, n := range ns {
		fmt.Fprintf(&b, "%s (%s ago) %s\n", n.Time.In(loc).Format(timeLayout), now.Sub(n.Time).Round(time.Second), n.Text)
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

// showSetting shows an empty value as "" so that "set to" never ends in
// nothing.
func showSetting(v string) string {
	if v == "" {
		return `""`
	}
	return v
}
