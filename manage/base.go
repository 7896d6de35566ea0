package manage

import (
	"bytes"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/vigil-iot/vigil/config"
	"github.com/vigil-iot/vigil/redact"
	"github.com/vigil-iot/vigil/store"
)

// Base is what a config is built from before the overlay: the file's
// bytes and the environment's overrides.
type Base struct {
	Name    string
	Data    []byte
	Env     []config.Override
	Red     *redact.Redactor // learns every secret parse resolves; nil: none
	Options config.Options   // the drivers' quantities, the boards
}

// Overrides turns overlay entries into config overrides.
func Overrides(overlay []store.Setting) []config.Override {
	out := make([]config.Override, len(overlay))
	for i, s := range overlay {
		out[i] = config.Override{Key: s.Key, Value: s.Value, Origin: config.OriginSet, By: s.By, At: s.At}
	}
	return out
}

// Parse builds the config from the base and overlay, resolved as
// loadConfig resolves one: default ID, secrets, paths relative to the file.
func (b *Base) Parse(overlay []store.Setting) (*config.Config, error) {
	opts := b.Options
	opts.Overrides = append(slices.Clone(b.Env), Overrides(overlay)...)
	cfg, err := config.ParseWith(bytes.NewReader(b.Data), b.Name, opts)
	if err != nil {
		return nil, err
	}
	host, _ := os.Hostname()
	cfg.SetDefaultID(host)
	if err := cfg.ResolveSecrets(os.Getenv, os.ReadFile); err != nil {
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
// and returns the entries it used. Each one left out gets one ERROR line on
// log naming it and who set it; it stays stored. An error means the base
// itself is bad.
func (b *Base) Resolve(overlay []store.Setting, log *slog.Logger) (*config.Config, []store.Setting, error) {
	if cfg, err := b.Parse(overlay); err == nil {
		return cfg, overlay, nil
	}
	cfg, err := b.Parse(nil)
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
// its key's value); entries that no longer validate are left out as at
// load. The error is the validator's.
func (b *Base) With(stored []store.Setting, s store.Setting, check func(*config.Config) error) (*config.Config, error) {
	others := slices.DeleteFunc(slices.Clone(stored), func(o store.Setting) bool { return o.Key == s.Key })
	_, used, err := b.Resolve(others, slog.New(slog.DiscardHandler)) // said at load
	if err != nil {
		return nil, err
	}
	cfg, err := b.Parse(append(used, s))
	if err != nil {
		return nil, err
	}
	if err := check(cfg); err != nil {
		return nil, err
	}
	return cfg, nil
}
