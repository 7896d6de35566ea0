package daemon

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"runtime/debug"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	sd "github.com/coreos/go-systemd/v22/daemon"
	"github.com/jonboulle/clockwork"
	"golang.org/x/sync/errgroup"

	"github.com/vigil-iot/vigil/agent"
	"github.com/vigil-iot/vigil/board"
	"github.com/vigil-iot/vigil/config"
	"github.com/vigil-iot/vigil/device"
	"github.com/vigil-iot/vigil/heartbeat"
	"github.com/vigil-iot/vigil/manage"
	"github.com/vigil-iot/vigil/redact"
	"github.com/vigil-iot/vigil/status"
	"github.com/vigil-iot/vigil/store"
	"github.com/vigil-iot/vigil/transport"
)

// shutdownGrace bounds the work done after SIGTERM (flush, "offline"); it is
// well under the unit's TimeoutStopSec.
const shutdownGrace = 5 * time.Second

// App is a wired engine with everything it owns.
type App struct {
	cfg    *config.Config
	prof   board.Profile
	log    *slog.Logger
	db     *store.DB
	engine *heartbeat.Engine
	clock  clockwork.Clock
	cmds   *Commander
	wall   func() time.Time
	red    *redact.Redactor // the CLI's: knows every secret a config resolved
	opts   Options
	wd     *watchdog

	// applyWait is how long a set or unset waits for its change to apply
	// before it answers; a heartbeat run in progress (an LLM call may take
	// a minute) holds the change back, and the answer then says so.
	applyWait time.Duration
	// clockSynced reports whether the system clock is synchronised, for
	// status.
	clockSynced func() bool

	// What a reload may replace (see reload.go).
	sensors      []device.Named
	closeSensors func() error
	thinker      heartbeat.Thinker
	live         []*liveTransport // network transports; their loops run under runCtx
	runCtx       context.Context  // the daemon's context, set by Run
	closers      []func() error

	// base is what cfg was built from before the overlay (package
	// manage); a set validates against it. latest is the config with every
	// stored setting: what the next apply puts in force (cfg lags behind
	// while a heartbeat run holds a change back); gen counts the changes
	// stored. setMu guards base, latest, gen and the overlay's
	// read-validate-store, and is held only briefly; applyMu orders what
	// changes the running daemon (reload, applying a set), which may wait
	// for a heartbeat run. Lock order: applyMu, then setMu.
	base    *manage.Base
	latest  *config.Config
	gen     uint64
	setMu   sync.Mutex
	applyMu sync.Mutex

	// bg owns the goroutines the App starts outside Run's group (a change
	// applying, an interval announced); Close waits for them.
	bg sync.WaitGroup

	// writes counts the changes of each remote channel (ratelimit.go).
	writes writeLimiter
}

// Transport is one network transport: how alerts reach it, how the
// retained state does (nil for Telegram), and its connection loop.
type Transport struct {
	Notifier  heartbeat.Notifier
	Publisher heartbeat.Publisher
	Run       func(ctx context.Context) error
}

// Wiring builds the concrete parts of an App from a config: package main
// knows the drivers, the LLM and the transports; the App calls these at
// start and again when a reload changes their section. A nil func leaves
// its part out.
type Wiring struct {
	// Sensors opens the config's sensors; closeAll closes what they hold.
	Sensors func(cfg *config.Config, log *slog.Logger) (sensors []device.Named, closeAll func() error)
	// Thinker builds the LLM step, or nil (rules-only). self is what the
	// model may change about its own heartbeat (its notes, its interval),
	// memory what the agent remembers of models: the App's, on its state
	// file.
	Thinker func(cfg *config.Config, self agent.Self, memory agent.ModelMemory, log *slog.Logger) (heartbeat.Thinker, error)
	// Transports builds MQTT and Telegram as the config asks; cmds are the
	// commands they may call, problems what MQTT rebuilds its problem
	// sensor from.
	Transports func(ctx context.Context, cfg *config.Config, db *store.DB, cmds *Commander, problems transport.ProblemSource, log *slog.Logger) ([]Transport, error)
	// Load reads the config file and the environment again, for a reload.
	Load func() (*manage.Base, error)
}

// Options configure an App.
type Options struct {
	Profile  board.Profile
	Log      *slog.Logger
	Redactor *redact.Redactor
	Store    StoreMode
	Wiring   Wiring
	// Base is what the config was built from; with it New applies the
	// overlay stored in the state file, and the App's commands may change
	// run-time settings.
	Base *manage.Base
	// Clock runs the timers, Wall tells the time of day (nil: the real
	// ones); ClockSynced says whether the system clock is synchronised
	// (nil: status.ClockSynced).
	Clock       clockwork.Clock
	Wall        func() time.Time
	ClockSynced func() bool
	// ApplyWait is how long a change waits to be in force before it
	// answers (0: 5 s).
	ApplyWait time.Duration
	// BuildTime is the earliest plausible wall-clock time (the binary's
	// build date); Version the one logged at start.
	BuildTime time.Time
	Version   string

	// For Run only.
	Socket string           // the control socket's path
	Reload <-chan os.Signal // SIGHUP: reload the config
	Exit   func(code int)   // exits the process after a watchdog stop
	NoTrim bool             // no memory trims (make bench compares without)
}

// Close waits for the goroutines the App started, then closes what it
// opened, the state file last.
func (a *App) Close() error {
	a.bg.Wait() // a change still applying uses the state file and the engine
	var errs []error
	for i := len(a.closers) - 1; i >= 0; i-- {
		errs = append(errs, a.closers[i]())
	}
	return errors.Join(errs...)
}

// Config is the config in force.
func (a *App) Config() *config.Config { return a.current() }

// Engine is the App's heartbeat engine.
func (a *App) Engine() *heartbeat.Engine { return a.engine }

// Commander carries out what the channels may ask of the App.
func (a *App) Commander() *Commander { return a.cmds }

// New wires an App on cfg, the config without the overlay: with
// Options.Base it applies the overlay stored in the state file it opens.
// The caller closes it.
func New(ctx context.Context, cfg *config.Config, o Options) (*App, error) {
	a := &App{log: o.Log, red: o.Redactor, opts: o, prof: o.Profile, base: o.Base,
		clock: o.Clock, wall: o.Wall, applyWait: o.ApplyWait, clockSynced: o.ClockSynced}
	if a.clock == nil {
		a.clock = clockwork.NewRealClock()
	}
	if a.wall == nil {
		a.wall = a.clock.Now
	}
	if a.applyWait == 0 {
		a.applyWait = 5 * time.Second
	}
	if a.clockSynced == nil {
		a.clockSynced = status.ClockSynced
	}
	ok := false
	defer func() {
		if !ok {
			a.Close()
		}
	}()
	log := o.Log
	var err error
	var closeDB func() error
	if a.db, closeDB, err = OpenStore(cfg, o.Store, a.wall); err != nil {
		return nil, err
	}
	a.closers = append(a.closers, closeDB)
	if cfg, err = a.overlaid(cfg); err != nil {
		return nil, err
	}
	a.cfg, a.latest = cfg, cfg

	ec, err := a.engineConfig(cfg)
	if err != nil {
		return nil, err
	}
	a.cmds = &Commander{} // its app is set once built: the LLM and the transports hold it
	deps := heartbeat.Deps{Clock: a.clock, Wall: a.wall, DB: a.db, Log: log, Redactor: a.red}
	if o.Store == StoreDaemon {
		a.wd = newWatchdog(log, cfg.Heartbeat.SampleInterval.Duration, a.clock)
		deps.Progress = a.wd.ping
	}
	deps.Notifiers = append(deps.Notifiers, &transport.Log{Logger: log})
	a.closeSensors = func() error { return nil }
	a.closers = append(a.closers, func() error { return a.closeSensors() })
	if o.Wiring.Sensors != nil {
		a.sensors, a.closeSensors = o.Wiring.Sensors(cfg, log)
		deps.Sensors = a.sensors
	}
	if o.Wiring.Thinker != nil {
		if a.thinker, err = o.Wiring.Thinker(cfg, a.modelSelf(), modelMemory{a.db}, log); err != nil {
			return nil, err
		}
		deps.Thinker = a.thinker
	}
	if o.Wiring.Transports != nil {
		ts, err := o.Wiring.Transports(ctx, cfg, a.db, a.cmds, engineProblems{a}, log)
		if err != nil {
			return nil, err
		}
		for _, t := range ts {
			lt := &liveTransport{name: t.Notifier.Name(), log: log, cur: t, bg: &a.bg}
			a.live = append(a.live, lt)
			deps.Notifiers = append(deps.Notifiers, lt)
			if t.Publisher != nil {
				deps.Publishers = append(deps.Publishers, lt)
			}
		}
	}
	if a.engine, err = heartbeat.New(ec, deps); err != nil {
		return nil, err
	}
	a.cmds.app = a
	ok = true
	return a, nil
}

// modelSelf is what the model may change about its own heartbeat.
func (a *App) modelSelf() *modelSelf {
	return &modelSelf{db: a.db, now: a.wall, red: a.red, setInterval: a.cmds.setModelInterval, propose: a.cmds.proposeRule}
}

// overlaid is cfg with the overlay stored in the App's state file, when
// the App has a base; an overlay that cannot be read is left out, with
// one ERROR line.
func (a *App) overlaid(cfg *config.Config) (*config.Config, error) {
	if a.base == nil {
		return cfg, nil
	}
	stored, err := a.db.Settings()
	if err != nil {
		a.log.Error("read the run-time settings: going on without them", "err", err)
		return cfg, nil
	}
	if len(stored) == 0 {
		return cfg, nil
	}
	cfg, _, err = a.base.Resolve(stored, a.log)
	return cfg, err
}

// engineConfig is EngineConfig with the App's build time.
func (a *App) engineConfig(cfg *config.Config) (heartbeat.Config, error) {
	ec, err := EngineConfig(cfg)
	ec.BuildTime = a.opts.BuildTime
	return ec, err
}

// Run runs the daemon until ctx ends: the engine's loops, the control
// socket, the status page, the transports, reloads on Options.Reload and
// the memory trims. The App must have been opened with StoreDaemon.
func (a *App) Run(ctx context.Context) error {
	if a.wd == nil {
		return errors.New("daemon: Run needs an App opened with StoreDaemon")
	}
	cfg, log := a.cfg, a.log
	if a.opts.Exit != nil {
		defer onWatchdogAbort(log, a.wd.interval, a.wd.lastProgress, a.wall, a.opts.Exit)()
	}
	mode := "llm"
	if !cfg.LLMEnabled() {
		mode = "rules-only"
		keyVar := cfg.LLM.APIKeyEnv
		if cfg.LLM.APIKeyFile != "" {
			keyVar = cfg.LLM.APIKeyFile
		}
		log.Info("no LLM API key: running in rules-only mode — local rules alert, the heartbeat checklist is not sent to any LLM", "key", keyVar)
	}
	interval := "disabled"
	switch {
	case !cfg.Heartbeat.Enabled:
	case len(cfg.Heartbeat.Schedule) > 0:
		interval = "schedule " + strings.Join(cfg.Heartbeat.Schedule, ", ")
	case cfg.Heartbeat.Interval.Duration > 0:
		interval = cfg.Heartbeat.Interval.Duration.String()
	}
	log.Info("vigil starting", "version", a.opts.Version, "device", cfg.Device.ID, "board", a.prof.Name, "mode", mode,
		"sensors", len(cfg.Sensors), "rules", len(cfg.Rules), "sample_interval", cfg.Heartbeat.SampleInterval.Duration,
		"interval", interval, "state", DBPath(cfg))
	for _, w := range cfg.Warnings() {
		log.Warn("unsafe setup: " + w.Error())
	}
	for _, w := range cfg.Cautions() {
		log.Warn("config: " + w.Error())
	}

	page, err := listenWeb(cfg, a, log)
	if err != nil {
		return err
	}
	var srv *ctlServer
	sock := a.opts.Socket
	if srv, err = listenControl(sock, cfg.Device.StateDir, a.cmds, log); err != nil {
		// The daemon's work does not need the socket: say what is lost.
		log.Warn("no control socket: vigil status, check, pause and resume cannot reach this daemon (status says so); set RuntimeDirectory= in the unit or use a state_dir on a local filesystem with a short path",
			"socket", sock, "err", err)
	}
	g, gctx := errgroup.WithContext(ctx)
	a.runCtx = gctx
	a.dropShadowed(gctx, cfg) // a [[rule]] added while vigil was stopped wins
	g.Go(func() error { return a.engine.Run(gctx) })
	if srv != nil {
		g.Go(func() error { return srv.Serve(gctx) })
	}
	if page != nil {
		g.Go(func() error { return page.Serve(gctx) })
	}
	for _, lt := range a.live {
		lt.start(gctx)
	}
	g.Go(func() error {
		for {
			select {
			case <-gctx.Done():
				return nil
			case <-a.opts.Reload:
				log.Info("SIGHUP: reloading the config", "config", a.base.Name)
				a.reload(gctx, log)
			}
		}
	})
	if !a.opts.NoTrim {
		g.Go(func() error { trimMemory(gctx, a.clock, trimAfterStart, trimInterval(cfg)); return nil })
	}
	sdNotify(log, sd.SdNotifyReady+"\nSTATUS=watching "+fmt.Sprint(len(cfg.Sensors))+" sensors ("+mode+")")
	err = g.Wait()
	sdNotify(log, sd.SdNotifyStopping)
	for _, lt := range a.live {
		lt.stop() // MQTT publishes "offline" and disconnects
	}
	log.Info("vigil stopped")
	if err != nil && !errors.Is(err, context.Canceled) {
		return err
	}
	return nil
}

// When trimMemory hands free heap pages back to the kernel.
const (
	trimAfterStart = 15 * time.Second // config, discovery and the first connections are behind
	trimSamples    = 20               // samples of garbage (a few KB each) between trims
	trimMin        = 10 * time.Second
	trimMax        = 10 * time.Minute
)

// trimInterval bounds the garbage that can pile up between two trims: at
// most trimSamples samples and one heartbeat (the biggest burst: prompt,
// JSON, HTTP, TLS), and never more than ten minutes of either.
func trimInterval(cfg *config.Config) time.Duration {
	iv := trimSamples * cfg.Heartbeat.SampleInterval.Duration
	if hb := cfg.Heartbeat.Interval.Duration; cfg.Heartbeat.Enabled && hb > 0 {
		iv = min(iv, hb)
	}
	return min(max(iv, trimMin), trimMax)
}

// trimMemory runs a collection and returns the heap's free pages to the
// kernel (debug.FreeOSMemory): once after start, then every interval until
// ctx ends. The runtime's own scavenger gives memory back slowly and leaves
// alone the few heap chunks a small daemon lives in, so without this the
// garbage of one heartbeat stays resident until the next. A collection of
// vigil's heap of well under a megabyte costs about a millisecond.
func trimMemory(ctx context.Context, clock clockwork.Clock, first, every time.Duration) {
	t := clock.NewTimer(first)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.Chan():
		}
		debug.FreeOSMemory()
		t.Reset(every)
	}
}

func sdNotify(log *slog.Logger, state string) {
	if _, err := sd.SdNotify(false, state); err != nil {
		log.Warn("sd_notify", "err", err)
	}
}

// watchdog pings systemd's watchdog from the loops that make progress (the
// sample and heartbeat loops call ping after each completed round), at most
// once per quarter of WatchdogSec. A hung loop stops the pings and systemd
// restarts the unit.
type watchdog struct {
	mu       sync.Mutex
	interval time.Duration
	last     time.Time
	progress atomic.Int64 // UnixNano of the last ping call
	log      *slog.Logger
	clock    clockwork.Clock
}

// lastProgress is when a loop last reported progress (zero: never).
func (w *watchdog) lastProgress() time.Time {
	if n := w.progress.Load(); n != 0 {
		return time.Unix(0, n)
	}
	return time.Time{}
}

func newWatchdog(log *slog.Logger, sample time.Duration, clock clockwork.Clock) *watchdog {
	w := &watchdog{log: log, clock: clock}
	iv, err := sd.SdWatchdogEnabled(false)
	if err != nil || iv == 0 {
		return w
	}
	w.interval = iv
	if sample > iv/2 {
		log.Warn("heartbeat.sample_interval is more than half of WatchdogSec: systemd may restart a healthy vigil",
			"sample_interval", sample, "watchdog", iv)
	}
	return w
}

func (w *watchdog) ping() {
	w.progress.Store(w.clock.Now().UnixNano())
	if w.interval == 0 {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if now := w.clock.Now(); now.Sub(w.last) >= w.interval/4 {
		w.last = now
		sdNotify(w.log, sd.SdNotifyWatchdog)
	}
}
