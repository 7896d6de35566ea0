package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/vigil-iot/vigil/board"
	"github.com/vigil-iot/vigil/config"
	"github.com/vigil-iot/vigil/control"
	"github.com/vigil-iot/vigil/internal/journal"
	"github.com/vigil-iot/vigil/internal/tlshint"
	"github.com/vigil-iot/vigil/manage"
	"github.com/vigil-iot/vigil/store"
)

// load reads the config file once and parses it with the environment:
// the base a daemon runs on, and the config without the run-time overlay.
// Every failure is a config error (exit 78).
func (e *env) load() (*manage.Base, *config.Config, error) {
	base, err := e.readBase()
	if err != nil {
		return nil, nil, err
	}
	cfg, err := base.Configured()
	return base, cfg, err
}

// loadConfig is load's config.
func (e *env) loadConfig() (*config.Config, error) {
	_, cfg, err := e.load()
	return cfg, err
}

// readBase reads config.toml and the environment. A missing file is a
// config error (exit 78).
func (e *env) readBase() (*manage.Base, error) {
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
	host, _ := os.Hostname()
	return &manage.Base{Name: e.config, Data: data, Env: config.EnvOverrides(os.Environ()), Options: config.HardwareOptions(),
		Host: host, Getenv: os.Getenv, ReadFile: os.ReadFile, Red: e.redactor(), SecretsLater: !e.secrets}, nil
}

// overlaid is cfg with the run-time overlay, as `vigil run` would apply
// it: the overlay from the running daemon, or from the state file
// read-only (creating nothing) when none runs.
func (e *env) overlaid(ctx context.Context, base *manage.Base, cfg *config.Config) (*config.Config, error) {
	var overlay []store.Setting
	if resp, err := e.client(cfg).Call(ctx, control.Request{Cmd: "settings"}, 10*time.Second); err == nil {
		overlay = resp.Settings
	} else {
		overlay = localOverlay(cfg)
	}
	cfg, _, err := base.Resolve(overlay, e.logger())
	return cfg, err
}

// loadConfigOrDefaults is loadConfig, except that with no config file at
// the default path (none given with -c or $VIGIL_CONFIG) it returns the
// defaults: board auto, no sensors. For commands that are useful before
// vigil is configured, such as scan.
func (e *env) loadConfigOrDefaults() (*config.Config, error) {
	if _, err := os.Stat(e.config); !e.configSet && errors.Is(err, fs.ErrNotExist) {
		cfg, err := config.Parse(strings.NewReader(""), "(defaults)")
		if err != nil {
			return nil, configErr(err)
		}
		return cfg, nil
	}
	return e.loadConfig()
}

func (e *env) logger() *slog.Logger {
	level := slog.LevelInfo
	if e.verbose {
		level = slog.LevelDebug
	}
	opts := &slog.HandlerOptions{Level: level}
	if toJournal(e.stderr) {
		// journald stamps every line itself, and files it at the
		// priority its "<N>" prefix names.
		opts.ReplaceAttr = func(groups []string, a slog.Attr) slog.Attr {
			if a.Key == slog.TimeKey && len(groups) == 0 {
				return slog.Attr{}
			}
			return a
		}
		return slog.New(tlshint.Handler{Handler: e.redactor().Handler(journal.NewHandler(e.stderr, opts))})
	}
	return slog.New(tlshint.Handler{Handler: e.redactor().Handler(slog.NewTextHandler(e.stderr, opts))})
}

// profile resolves the board profile; "auto" detects it and says so when the
// machine is not a known board (it never silently simulates): at level, so
// the daemon says it at INFO once while one-shot commands keep quiet
// unless -v.
func profile(cfg *config.Config, log *slog.Logger, level slog.Level) (board.Profile, error) {
	switch cfg.Device.Board {
	case "", "auto":
		p, ok := board.Detect("/")
		if !ok {
			log.Log(context.Background(), level, "board: not a known single-board computer, using the generic Linux profile", "board", p.Name)
		} else {
			log.Debug("board detected", "board", p.Name)
		}
		return p, nil
	}
	p, ok := board.Lookup(cfg.Device.Board)
	if !ok {
		return board.Profile{}, configErr(fmt.Errorf("%s: device.board: unknown board %q (see 'vigil version --boards')", cfg.Device.Board, cfg.Device.Board))
	}
	return p, nil
}

// inZone returns log with its records stamped in loc (device.timezone), so
// the text log's time carries the device's offset. Under journald, which
// drops the attribute, it changes nothing that shows.
func inZone(log *slog.Logger, loc *time.Location) *slog.Logger {
	if loc == nil {
		return log
	}
	return slog.New(zoneHandler{log.Handler(), loc})
}

type zoneHandler struct {
	slog.Handler
	loc *time.Location
}

func (h zoneHandler) Handle(ctx context.Context, r slog.Record) error {
	if !r.Time.IsZero() {
		r.Time = r.Time.In(h.loc)
	}
	return h.Handler.Handle(ctx, r)
}

func (h zoneHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return zoneHandler{h.Handler.WithAttrs(as), h.loc}
}

func (h zoneHandler) WithGroup(name string) slog.Handler {
	return zoneHandler{h.Handler.WithGroup(name), h.loc}
}
