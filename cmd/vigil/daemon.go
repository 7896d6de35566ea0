package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/coreos/go-systemd/v22/daemon"
	"github.com/jonboulle/clockwork"
	"golang.org/x/sync/errgroup"

	"github.com/vigil-iot/vigil/alert"
	"github.com/vigil-iot/vigil/board"
	"github.com/vigil-iot/vigil/config"
	"github.com/vigil-iot/vigil/device"
	"github.com/vigil-iot/vigil/heartbeat"
	"github.com/vigil-iot/vigil/redact"
	"github.com/vigil-iot/vigil/store"
	"github.com/vigil-iot/vigil/transport"
	"github.com/vigil-iot/vigil/web"
)

// shutdownGrace bounds the work done after SIGTERM (flush, "offline"); it is
// well under the unit's TimeoutStopSec.
const shutdownGrace = 5 * time.Second

// app is a wired engine with everything it owns.
type app struct {
	cfg    *config.Config
	prof   board.Profile
	log    *slog.Logger
	db     *store.DB
	engine *heartbeat.Engine
	clock  clockwork.Clock
	cmds   *commands
	red    *redact.Redactor // the env's: knows every secret a config resolved

	// What a reload may replace (see reload.go).
	sensors      []device.Named
	closeSensors func() error
	thinker      heartbeat.Thinker
	live         []*liveTransport // network transports; their loops run under runCtx
	runCtx       context.Context  // the daemon's context, set by cmdRun
	closers      []func() error

	// base is what cfg was built from before the overlay (overlay.go); a
	// set re-validates against it. setMu guards base and the overlay's
	// read-validate-store, and is held only briefly; applyMu orders what
	// changes the running daemon (reload, applying a set), which may wait
	// for a heartbeat run. Lock order: applyMu, then setMu.
	base     *configBase
	setMu    sync.Mutex
	applyMu  sync.Mutex
	applying sync.WaitGroup // changes applying in the background; Close waits
}

func (a *app) Close() error {
	a.applying.Wait() // a change still applying uses the state file and the engine
	var errs []error
	for i := len(a.closers) - 1; i >= 0; i-- {
		errs = append(errs, a.closers[i]())
	}
	return errors.Join(errs...)
}

// buildOptions select what an app wires up.
type buildOptions struct {
	sensors    bool // open the sensors (hardware)
	thinker    bool // the LLM
	transports bool // MQTT, Telegram (the log transport is always there)
	store      storeMode
	watchdog   func()
}

// build wires an app. The caller closes it.
func (e *env) build(ctx context.Context, cfg *config.Config, log *slog.Logger, opts buildOptions) (*app, error) {
	a := &app{cfg: cfg, log: log, red: e.redactor()}
	ok := false
	defer func() {
		if !ok {
			a.Close()
		}
	}()
	var err error
	level := slog.LevelDebug
	if opts.transports {
		level = slog.LevelInfo // the daemon says it once, at start
	}
	if a.prof, err = profile(cfg, log, level); err != nil {
		return nil, err
	}
	var closeDB func() error
	if a.db, closeDB, err = openStore(cfg, opts.store); err != nil {
		if errors.Is(err, store.ErrLocked) {
			return nil, lockedErr(cfg, opts.store)
		}
		return nil, err
	}
	a.closers = append(a.closers, closeDB)

	ec, err := engineConfig(cfg)
	if err != nil {
		return nil, err
	}
	clock := clockwork.NewRealClock()
	a.clock = clock
	a.cmds = &commands{} // its app is set once built: the LLM and the transports hold it
	deps := heartbeat.Deps{Clock: clock, Wall: time.Now, DB: a.db, Log: log, Progress: opts.watchdog, Redactor: a.red}
	deps.Notifiers = append(deps.Notifiers, &transport.Log{Logger: log})
	a.closeSensors = func() error { return nil }
	a.closers = append(a.closers, func() error { return a.closeSensors() })
	if opts.sensors {
		a.sensors, a.closeSensors = openSensors(cfg, a.prof, time.Now, log)
		deps.Sensors = a.sensors
	}
	if opts.thinker {
		if a.thinker, err = newThinker(cfg, a.db, a.red, clock, log, a.cmds.setModelInterval); err != nil {
			return nil, err
		}
		deps.Thinker = a.thinker
	}
	if opts.transports {
		w, err := newTransports(ctx, cfg, a.prof.Name, a.db, a.cmds, engineProblems{a}, clock, log)
		if err != nil {
			return nil, err
		}
		for _, t := range w.transports {
			lt := &liveTransport{name: t.notifier.Name(), log: log, cur: t}
			a.live = append(a.live, lt)
			deps.Notifiers = append(deps.Notifiers, lt)
			if t.publisher != nil {
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

func (e *env) cmdRun(ctx context.Context, args []string) error {
	if _, err := e.flags("run", args, nil, 0); err != nil {
		return err
	}
	// SIGHUP reloads; without this Go's default for it is to exit.
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	singleProc()
	cfg, base, err := e.loadOverlaid(ctx, e.logger())
	if err != nil {
		return err
	}
	log := inZone(e.logger(), cfg.Device.Location)
	if err := ensureChecklist(cfg.Heartbeat.Checklist, log); err != nil {
		// Under the hardened unit /etc is read-only: failing here would make
		// systemd restart-loop a daemon whose rules work fine. Without a
		// checklist heartbeats skip as empty_checklist; say so and go on.
		log.Warn("no checklist: heartbeats will not call the LLM until it exists", "err", err)
	}
	wd := newWatchdog(log, cfg.Heartbeat.SampleInterval.Duration)
	defer onWatchdogAbort(log, wd.interval, wd.lastProgress, os.Exit)()
	a, err := e.build(ctx, cfg, log, buildOptions{sensors: true, thinker: true, transports: true, store: storeDaemon, watchdog: wd.ping})
	if err != nil {
		return err
	}
	defer a.Close()
	a.base = base

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
	log.Info("vigil starting", "version", version, "device", cfg.Device.ID, "board", a.prof.Name, "mode", mode,
		"sensors", len(cfg.Sensors), "rules", len(cfg.Rules), "sample_interval", cfg.Heartbeat.SampleInterval.Duration,
		"interval", interval, "state", dbPath(cfg))
	for _, w := range cfg.Warnings() {
		log.Warn("unsafe setup: " + w.Error())
	}

	page, err := listenWeb(cfg, a, log)
	if err != nil {
		return err
	}
	var srv *ctlServer
	sock := daemonSockPath(cfg)
	if srv, err = listenControl(sock, cfg.Device.StateDir, a.cmds, log); err != nil {
		// The daemon's work does not need the socket: say what is lost.
		log.Warn("no control socket: vigil status, check, pause and resume cannot reach this daemon (status says so); set RuntimeDirectory= in the unit or use a state_dir on a local filesystem with a short path",
			"socket", sock, "err", err)
	}
	g, gctx := errgroup.WithContext(ctx)
	a.runCtx = gctx
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
			case <-hup:
				log.Info("SIGHUP: reloading the config", "config", e.config)
				e.reload(gctx, a, log)
			}
		}
	})
	// VIGIL_NO_TRIM=1 is for `make bench` only: it compares the trims with
	// the runtime's own knobs (GOGC, GOMEMLIMIT). Not a setting.
	if os.Getenv("VIGIL_NO_TRIM") != "1" {
		g.Go(func() error { trimMemory(gctx, trimAfterStart, trimInterval(cfg)); return nil })
	}
	sdNotify(log, daemon.SdNotifyReady+"\nSTATUS=watching "+fmt.Sprint(len(cfg.Sensors))+" sensors ("+mode+")")
	err = g.Wait()
	sdNotify(log, daemon.SdNotifyStopping)
	for _, lt := range a.live {
		lt.stop() // MQTT publishes "offline" and disconnects
	}
	log.Info("vigil stopped")
	if err != nil && !errors.Is(err, context.Canceled) {
		return err
	}
	return nil
}

// lockedErr explains a state file another process holds. For `vigil run`
// it is a second daemon; for the CLI it is a daemon whose socket none of
// the candidates reached (its bind failed, or no permission).
func lockedErr(cfg *config.Config, mode storeMode) error {
	pid := ""
	if n := lockHolder(dbPath(cfg)); n > 0 {
		pid = fmt.Sprintf(" (pid %d)", n)
	}
	if mode == storeDaemon {
		return fmt.Errorf("another vigil is already running on %s%s; stop it first", cfg.Device.StateDir, pid)
	}
	return fmt.Errorf("a running vigil%s holds the state file %s, but its control socket is unreachable (looked for %s): see its log for the control socket warning, or run this as the daemon's user",
		pid, dbPath(cfg), strings.Join(sockCandidates(cfg), ", "))
}

// singleProc runs the daemon's Go code on one processor unless GOMAXPROCS
// says otherwise. vigil spends its life waiting on timers and sockets and
// does a few milliseconds of work per heartbeat; every extra P only adds
// per-processor caches of memory spans and stacks (the second P cost about
// 350 KB of the idle RSS on amd64) and lets the runtime start more threads.
func singleProc() {
	if os.Getenv("GOMAXPROCS") == "" {
		runtime.GOMAXPROCS(1)
	}
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
func trimMemory(ctx context.Context, first, every time.Duration) {
	t := time.NewTimer(first)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		debug.FreeOSMemory()
		t.Reset(every)
	}
}

func sdNotify(log *slog.Logger, state string) {
	if _, err := daemon.SdNotify(false, state); err != nil {
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
}

// lastProgress is when a loop last reported progress (zero: never).
func (w *watchdog) lastProgress() time.Time {
	if n := w.progress.Load(); n != 0 {
		return time.Unix(0, n)
	}
	return time.Time{}
}

func newWatchdog(log *slog.Logger, sample time.Duration) *watchdog {
	w := &watchdog{log: log}
	iv, err := daemon.SdWatchdogEnabled(false)
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
	w.progress.Store(time.Now().UnixNano())
	if w.interval == 0 {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if now := time.Now(); now.Sub(w.last) >= w.interval/4 {
		w.last = now
		sdNotify(w.log, daemon.SdNotifyWatchdog)
	}
}

// commands implements transport.Commands for Telegram, MQTT, the control
// socket and the CLI. It is the one place that bounds and audits commands:
// every channel's pause goes through transport.CheckPause here, and every
// accepted command is logged at INFO with its source (transport.SourceOf)
// and, if it acts (check, pause, resume), listed in `vigil status`. A check
// spends the daily LLM budget like a scheduled heartbeat (heartbeat.Check).
type commands struct{ app *app }

var _ transport.Commands = (*commands)(nil)

// accept logs an accepted command with who sent it and, when listed, adds
// it to the engine's recent-commands list. The CLI working on the state
// file without a daemon logs at debug: the person sees the answer.
func (c *commands) accept(ctx context.Context, command string, listed bool) {
	src := transport.SourceOf(ctx)
	level := slog.LevelInfo
	if src.Channel == transport.ChannelCLI {
		level = slog.LevelDebug
	}
	c.app.log.Log(ctx, level, "command accepted", append([]any{"command", command}, src.LogAttrs()...)...)
	if listed {
		c.app.engine.NoteCommand(src.String(), command)
	}
}

func (c *commands) Status(ctx context.Context) (string, error) {
	if err := c.gate(ctx, "status"); err != nil {
		return "", err
	}
	c.accept(ctx, "status", false)
	st, err := c.app.engine.Status(ctx)
	if err != nil {
		return "", err
	}
	var rt *web.Runtime
	cfg := c.app.current()
	if r, err := runtimeView(cfg, c.app.db); err == nil {
		if remote(ctx) {
			r = forRemote(r, cfg.Manage)
		}
		rt = &r
	} else {
		c.app.log.Warn("status: read the model's notes", "err", err)
	}
	var b strings.Builder
	writeStatus(&b, st, rt, true)
	return b.String(), nil
}

// check samples the sensors and runs a forced heartbeat. Once the day's
// budget is spent the result is skipped (budget), on every channel.
// check runs one forced heartbeat after sample (nil: none, the daemon's
// dry run works on its last sample).
func (c *commands) check(ctx context.Context, opts heartbeat.CheckOptions, sample func(*heartbeat.Engine, context.Context) error) (heartbeat.Result, error) {
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

func (c *commands) Check(ctx context.Context) (string, error) {
	res, err := c.check(ctx, heartbeat.CheckOptions{}, (*heartbeat.Engine).SampleOnce)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	writeCheckJSON(&b, toCheckJSON(res).redacted(c.app.red))
	return b.String(), nil
}

func (c *commands) Pause(ctx context.Context, d time.Duration) (string, error) {
	if err := c.gate(ctx, "pause"); err != nil {
		return "", err
	}
	if err := transport.CheckPause(d); err != nil {
		return "", err
	}
	c.accept(ctx, "pause "+d.String(), true)
	p, err := c.app.engine.Pause(ctx, d, "remote")
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("heartbeats paused for %s (until %s); rules keep running", d, p.Until.In(c.app.current().Device.Location).Round(time.Second).Format(timeLayout)), nil
}

func (c *commands) Resume(ctx context.Context) (string, error) {
	if err := c.gate(ctx, "resume"); err != nil {
		return "", err
	}
	c.accept(ctx, "resume", true)
	if err := c.app.engine.Resume(ctx); err != nil {
		return "", err
	}
	return "heartbeats resumed", nil
}

// TestAlert queues an info test alert for every transport (the status
// page's button; `vigil test-alert` has its own flags).
func (c *commands) TestAlert(ctx context.Context) (string, error) {
	if err := c.gate(ctx, "test-alert"); err != nil {
		return "", err
	}
	c.accept(ctx, "test-alert", true)
	a, err := c.app.engine.TestAlert(ctx, alert.Info, "")
	if err != nil {
		return "", err
	}
	return testAlertText(a, "the daemon is delivering it"), nil
}

func (c *commands) Sensors(ctx context.Context) (string, error) {
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

// The management verbs (issue 14). Each is gated by its channel (gate) and
// the changes are audited (see overlay.go).

func (c *commands) Get(ctx context.Context, key string) (string, error) {
	if err := c.gate(ctx, "get"); err != nil {
		return "", err
	}
	c.accept(ctx, strings.TrimSpace("get "+key), false)
	views, err := settingViews(c.app.current(), key)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	writeSettings(&b, views)
	return b.String(), nil
}

func (c *commands) Set(ctx context.Context, key, value string) (string, error) {
	if err := c.gate(ctx, "set"); err != nil {
		return "", err
	}
	c.accept(ctx, "set "+key+" "+value, false) // listed by audit once it is applied
	return c.set(ctx, key, value)
}

func (c *commands) Unset(ctx context.Context, key string) (string, error) {
	if err := c.gate(ctx, "unset"); err != nil {
		return "", err
	}
	c.accept(ctx, "unset "+key, false)
	return c.unset(ctx, key)
}

// Toggle flips rule.<name>.enabled; it needs "set".
func (c *commands) Toggle(ctx context.Context, rule string) (string, error) {
	if err := c.gate(ctx, "set"); err != nil {
		return "", err
	}
	c.accept(ctx, "toggle "+rule, false)
	key := "rule." + rule + ".enabled"
	cfg := c.app.current()
	if err := config.CheckSettable(key, cfg); err != nil {
		return "", configErr(err)
	}
	return c.setWith(ctx, key, func(was string) string { return strconv.FormatBool(was != "true") })
}

func (c *commands) Checklist(ctx context.Context, op, text string) (string, error) {
	if err := c.gate(ctx, "checklist"); err != nil {
		return "", err
	}
	c.accept(ctx, "checklist "+op, false)
	return c.checklist(ctx, op, text)
}

func (c *commands) Logs(ctx context.Context, n int) (string, error) {
	if err := c.gate(ctx, "logs"); err != nil {
		return "", err
	}
	c.accept(ctx, "logs", false)
	return c.logs(ctx, n)
}

func (c *commands) Notes(ctx context.Context, clear bool) (string, error) {
	if err := c.gate(ctx, "notes"); err != nil {
		return "", err
	}
	if !clear {
		c.accept(ctx, "notes", false)
	}
	return c.notes(ctx, clear)
}
