package manage

import (
	"bytes"
	"io/fs"
	"log/slog"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/vigil-iot/vigil/config"
	"github.com/vigil-iot/vigil/redact"
	"github.com/vigil-iot/vigil/store"
)

// Base is what a config is built from before the overlay: the file's
// bytes and the environment's overrides, and what resolving a config
// reads (the host name, the environment, secret files). It is read once
// (package main reads it; a reload reads it again) and every config built
// from it comes from these bytes, so a file edited but not reloaded does
// not change what a set means.
//
// The configs a Base returns may be shared: read them, never change them.
type Base struct {
	Name    string            // the config file, as the person named it
	Data    []byte            // its bytes
	Env     []config.Override // VIGIL_<SECTION>_<KEY>
	Options config.Options    // the drivers' quantities, the boards

	Host     string                       // the default device.id
	Getenv   func(string) string          // the secrets' variables; nil: none set
	ReadFile func(string) ([]byte, error) // the secrets' files; nil: none readable
	Red      *redact.Redactor             // learns every secret Parse resolves; nil: none
	// SecretsLater: a secret's file that cannot be read is no error
	// (config.ResolveSecretsLater), for the CLI's verbs that need no
	// secret's value; they call SecretsErr when they do after all.
	SecretsLater bool

	once       sync.Once
	configured *config.Config
	err        error
}

// Configured is the config without the overlay: the file and the
// environment. It is parsed once.
func (b *Base) Configured() (*config.Config, error) {
	b.once.Do(func() { b.configured, b.err = b.Parse(nil) })
	return b.configured, b.err
}

// overlayOverrides turns overlay entries into config overrides.
func overlayOverrides(overlay []store.Setting) []config.Override {
	out := make([]config.Override, 0, len(overlay))
	for _, s := range overlay {
		if !IsRunRule(s.Key) {
			out = append(out, config.Override{Key: s.Key, Value: s.Value, Origin: config.OriginSet, By: s.By, At: s.At})
		}
	}
	return out
}

// Parse builds and validates the config from the base and overlay,
// resolved as a daemon runs it: default ID, secrets, paths relative to the
// file. Its errors are *config.Error.
func (b *Base) Parse(overlay []store.Setting) (*config.Config, error) {
	opts := b.Options
	opts.Overrides = append(slices.Clone(b.Env), overlayOverrides(overlay)...)
	opts.RunRules = runRules(overlay)
	cfg, err := config.ParseWith(bytes.NewReader(b.Data), b.Name, opts)
	if err != nil {
		return nil, err
	}
	cfg.SetDefaultID(b.Host)
	getenv, readFile := b.Getenv, b.ReadFile
	if getenv == nil {
		getenv = func(string) string { return "" }
	}
	if readFile == nil {
		readFile = func(name string) ([]byte, error) {
			return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrNotExist}
		}
	}
	if b.SecretsLater {
		cfg.ResolveSecretsLater(getenv, readFile)
	} else if err := cfg.ResolveSecrets(getenv, readFile); err != nil {
		return nil, err
	}
	if b.Red != nil {
		// The one place secrets reach the redactor, at start, on reload
		// and on a set: the logs, the engine and the agent share it.
		b.Red.Add(cfg.SecretValues()...)
	}
	base := filepath.Dir(b.Name)
	cfg.Device.StateDir = relTo(base, cfg.Device.StateDir)
	cfg.Heartbeat.Checklist = relTo(base, cfg.Heartbeat.Checklist)
	return cfg, nil
}

func relTo(base, p string) string {
	if p == "" || filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(base, p)
}

// Resolve builds the config with every overlay entry that still validates
// and returns the entries it used: one parse when they all do (none:
// Configured). Each one left out gets one ERROR line on log naming it and
// who set it; it stays stored. An error means the base itself is bad.
func (b *Base) Resolve(overlay []store.Setting, log *slog.Logger) (*config.Config, []store.Setting, error) {
	if len(overlay) == 0 {
		cfg, err := b.Configured()
		return cfg, nil, err
	}
	if cfg, err := b.Parse(overlay); err == nil {
		return cfg, overlay, nil
	}
	cfg, err := b.Configured()
	if err != nil {
		return nil, nil, err
	}
	var used []store.Setting
	for _, s := range overlay {
		if err := config.CheckSettable(s.Key, cfg); err != nil && !IsRunRule(s.Key) {
			logIgnored(log, s, err)
			continue
		}
		try := append(slices.Clone(used), s)
		next, err := b.Parse(try)
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

// With validates the config with s added to the stored overlay (replacing
// its key's value): one parse when every stored entry still validates;
// entries that no longer do are left out as at load. The error is the
// validator's, about s.
func (b *Base) With(stored []store.Setting, s store.Setting) (*config.Config, error) {
	others := slices.DeleteFunc(slices.Clone(stored), func(o store.Setting) bool { return o.Key == s.Key })
	cfg, err := b.Parse(append(slices.Clone(others), s))
	if err == nil {
		return cfg, nil
	}
	_, used, rerr := b.Resolve(others, slog.New(slog.DiscardHandler)) // said at load
	if rerr != nil {
		return nil, rerr
	}
	if len(used) == len(others) {
		return nil, err // every stored entry validates: s is refused as it stands
	}
	return b.Parse(append(used, s))
}
