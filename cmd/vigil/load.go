package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/vigil-iot/vigil/alert"
	"github.com/vigil-iot/vigil/board"
	"github.com/vigil-iot/vigil/config"
	"github.com/vigil-iot/vigil/device"
	"github.com/vigil-iot/vigil/heartbeat"
	"github.com/vigil-iot/vigil/rule"
	"github.com/vigil-iot/vigil/schedule"
	"github.com/vigil-iot/vigil/store"
)

// loadConfig reads, validates and resolves the config file. Every failure is
// a config error (exit 78).
func (e *env) loadConfig() (*config.Config, error) {
	base, err := e.readBase()
	if err != nil {
		return nil, err
	}
	return base.parse(nil)
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

// parseOptions hands config the quantities each driver and the board health
// sensor produce, so a rule, message or deadband naming one they don't is a
// config error instead of a rule that never fires.
func parseOptions() config.Options {
	names := func(rs []device.Reading) []string {
		out := make([]string, len(rs))
		for i, r := range rs {
			out[i] = r.Quantity
		}
		return out
	}
	return config.Options{
		Quantities: func(s config.Sensor) ([]string, bool) {
			rs, ok := sensorReadings(s)
			return names(rs), ok
		},
		Board:  names(device.HealthQuantities()),
		Boards: boardNames(),
	}
}

// boardNames lists the board profiles a config may name.
func boardNames() []string {
	var out []string
	for _, p := range board.Profiles() {
		if p.Name != "sim" {
			out = append(out, p.Name)
		}
	}
	return out
}

func relTo(base, p string) string {
	if p == "" || filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(base, p)
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
		return slog.New(hintHandler{e.redactor().Handler(newJournalHandler(e.stderr, opts))})
	}
	return slog.New(hintHandler{e.redactor().Handler(slog.NewTextHandler(e.stderr, opts))})
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

func dbPath(cfg *config.Config) string { return filepath.Join(cfg.Device.StateDir, "vigil.db") }

// How a command opens the state file.
type storeMode int

const (
	storeWrite    storeMode = iota // pause, resume, check: a corrupt file is an error
	storeDaemon                    // run: a corrupt file is moved aside and replaced (state_lost)
	storeReadOnly                  // status, check --dry-run: nothing is created or written
)

// openStore opens the state file. The writing modes create the state
// directory (0700). The read-only mode never creates anything: without a
// state file it works on an empty one in a temporary directory, removed by
// the returned closer.
func openStore(cfg *config.Config, mode storeMode) (*store.DB, func() error, error) {
	path := dbPath(cfg)
	opts := store.Options{Timeout: time.Second}
	switch mode {
	case storeReadOnly:
		if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
			return openEmpty()
		}
		opts.ReadOnly = true
	case storeDaemon:
		opts.Reset, opts.Now = true, time.Now
	}
	if mode != storeReadOnly {
		if err := os.MkdirAll(cfg.Device.StateDir, 0o700); err != nil {
			return nil, nil, fmt.Errorf("create state dir: %w", err)
		}
	}
	db, err := store.Open(path, opts)
	if errors.Is(err, store.ErrCorrupt) {
		return nil, nil, fmt.Errorf("%w\nthe state file %s is damaged; 'vigil run' moves it aside as %s.corrupt-<time> and starts a fresh one (queued alerts, pause, counters and history are lost)",
			err, path, filepath.Base(path))
	}
	if err != nil {
		return nil, nil, err
	}
	return db, db.Close, nil
}

// openEmpty opens an empty state file in a temporary directory, for a
// read-only command on a machine where vigil never ran.
func openEmpty() (*store.DB, func() error, error) {
	dir, err := os.MkdirTemp("", "vigil-empty-state-")
	if err != nil {
		return nil, nil, fmt.Errorf("empty state: %w", err)
	}
	db, err := store.Open(filepath.Join(dir, "vigil.db"), store.Options{Timeout: time.Second})
	if err != nil {
		os.RemoveAll(dir)
		return nil, nil, err
	}
	return db, func() error {
		err := db.Close()
		return errors.Join(err, os.RemoveAll(dir))
	}, nil
}

// checklistFunc reads the checklist in force on every run, so edits apply
// without a restart: the one set from afar (vigil checklist set) while it
// exists in the state directory, else heartbeat.checklist.
func checklistFunc(cfg *config.Config) heartbeat.ChecklistFunc {
	over, path := checklistOverride(cfg), cfg.Heartbeat.Checklist
	return func() (string, bool, error) {
		p := over
		f, err := openOverride(over)
		if errors.Is(err, fs.ErrNotExist) {
			p = path
			f, err = os.Open(path)
		}
		if err != nil {
			return "", true, fmt.Errorf("open checklist: %w", err)
		}
		defer f.Close()
		text, empty, err := config.ParseChecklist(f)
		if err != nil {
			return "", true, fmt.Errorf("%s: %w", p, err)
		}
		return text, empty, nil
	}
}

// openOverride opens the checklist set from afar. `vigil checklist set`
// writes a regular file there; a symbolic link (or a FIFO, a device)
// planted in the state directory is refused, never followed, so the daemon
// never reads, and `checklist show` never prints, a file it was not given.
func openOverride(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if errors.Is(err, syscall.ELOOP) {
		return nil, fmt.Errorf("checklist %s is a symbolic link, which vigil does not follow: remove it ('vigil checklist reset') and use 'vigil checklist set'", path)
	}
	if err != nil {
		return nil, err
	}
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		f.Close()
		return nil, fmt.Errorf("checklist %s is not a regular file: remove it ('vigil checklist reset') and use 'vigil checklist set'", path)
	}
	return f, nil
}

// ensureChecklist writes the template when the checklist file is missing.
func ensureChecklist(path string, log *slog.Logger) error {
	if _, err := os.Stat(path); err == nil {
		return nil
	} else if !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("checklist: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("create checklist dir: %w", err)
	}
	if err := os.WriteFile(path, []byte(config.ChecklistTemplate), 0o644); err != nil {
		return fmt.Errorf("write checklist template: %w", err)
	}
	log.Info("wrote checklist template; edit it to give the LLM something to check", "path", path)
	return nil
}

// engineConfig converts the parsed config into the engine's settings.
func engineConfig(cfg *config.Config) (heartbeat.Config, error) {
	hb := cfg.Heartbeat
	ec := heartbeat.Config{
		DeviceID:               cfg.Device.ID,
		SampleInterval:         hb.SampleInterval.Duration,
		SensorsPublishInterval: hb.SensorsPublishInterval.Duration,
		Location:               cfg.Device.Location,
		MaxQuiet:               hb.MaxQuiet.Duration,
		AlertCooldown:          hb.AlertCooldown.Duration,
		FailureAlertAfter:      hb.FailureAlertAfter,
		MaxLLMCallsPerDay:      hb.MaxLLMCallsPerDay,
		FloodLimit:             hb.MaxAlertsPerHour,
		FloodWindow:            time.Hour,
		BuildTime:              buildTime(),
		Deadbands:              map[string]float64{},
		Checklist:              checklistFunc(cfg),
		HistoryStep:            heartbeat.DefaultHistoryStep,
		Off:                    cfg.HeartbeatsOff(),
	}
	switch {
	case !hb.Enabled:
	case len(hb.Schedule) > 0:
		// The schedule replaces the interval (config refuses both).
		sched, err := schedule.Parse(hb.Schedule)
		if err != nil {
			return ec, configErr(fmt.Errorf("heartbeat.schedule: %w", err))
		}
		ec.Schedule = sched
	default:
		ec.Interval = hb.Interval.Duration
	}
	ec.Active = hb.Active
	for _, s := range cfg.Sensors {
		for q, d := range s.Deadband {
			ec.Deadbands[s.Name+"."+q] = d
		}
	}
	for _, r := range cfg.Rules {
		when, err := rule.Compile(r.When)
		if err != nil {
			return ec, configErr(fmt.Errorf("rule.%s.when: %w", r.Name, err))
		}
		spec := rule.Spec{Name: r.Name, When: when, For: r.For.Duration, Renotify: r.Renotify.Duration}
		if strings.TrimSpace(r.Clear) != "" {
			if spec.Clear, err = rule.Compile(r.Clear); err != nil {
				return ec, configErr(fmt.Errorf("rule.%s.clear: %w", r.Name, err))
			}
		}
		sev, err := alert.ParseSeverity(r.Severity)
		if err != nil {
			return ec, configErr(fmt.Errorf("rule.%s.severity: %w", r.Name, err))
		}
		ec.Rules = append(ec.Rules, heartbeat.Rule{Spec: spec, Severity: sev, Message: r.Message, Disabled: !r.Enabled})
	}
	return ec, nil
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
