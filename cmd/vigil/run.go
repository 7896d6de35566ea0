package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/jonboulle/clockwork"

	"github.com/vigil-iot/vigil/agent"
	"github.com/vigil-iot/vigil/config"
	"github.com/vigil-iot/vigil/control"
	"github.com/vigil-iot/vigil/daemon"
	"github.com/vigil-iot/vigil/device"
	"github.com/vigil-iot/vigil/heartbeat"
	"github.com/vigil-iot/vigil/manage"
	"github.com/vigil-iot/vigil/store"
	"github.com/vigil-iot/vigil/transport"
)

// parts select what an App wires up.
type parts struct {
	sensors    bool // open the sensors (hardware)
	thinker    bool // the LLM
	transports bool // MQTT, Telegram (the log transport is always there)
}

// newApp wires a daemon.App on cfg with the parts asked for, for o.Store;
// base, when not nil, lets its commands change run-time settings. The
// caller closes it.
func (e *env) newApp(ctx context.Context, cfg *config.Config, base *manage.Base, log *slog.Logger, p parts, o daemon.Options) (*daemon.App, error) {
	level := slog.LevelDebug
	if p.transports {
		level = slog.LevelInfo // the daemon says it once, at start
	}
	prof, err := profile(cfg, log, level)
	if err != nil {
		return nil, err
	}
	clock := clockwork.NewRealClock()
	w := daemon.Wiring{Load: e.readBase}
	if p.sensors {
		w.Sensors = func(cfg *config.Config, log *slog.Logger) ([]device.Named, func() error) {
			return openSensors(cfg, prof, time.Now, log)
		}
	}
	if p.thinker {
		w.Thinker = func(cfg *config.Config, self agent.Self, memory agent.ModelMemory, log *slog.Logger) (heartbeat.Thinker, error) {
			return newThinker(cfg, self, memory, e.redactor(), clock, log)
		}
	}
	if p.transports {
		w.Transports = func(ctx context.Context, cfg *config.Config, db *store.DB, cmds *daemon.Commander, problems transport.ProblemSource, log *slog.Logger) ([]daemon.Transport, error) {
			return newTransports(ctx, cfg, prof.Name, db, cmds, problems, e.redactor(), clock, log)
		}
	}
	o.Profile, o.Log, o.Redactor, o.Wiring, o.Base = prof, log, e.redactor(), w, base
	o.Clock, o.Wall, o.BuildTime, o.Version = clock, time.Now, buildTime(), version
	a, err := daemon.New(ctx, cfg, o)
	if errors.Is(err, store.ErrLocked) {
		return nil, lockedErr(cfg, o.Store)
	}
	return a, err
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
	e.secrets = true
	base, cfg, err := e.load()
	if err != nil {
		return err
	}
	log := inZone(e.logger(), cfg.Device.Location)
	if err := manage.EnsureChecklist(cfg.Heartbeat.Checklist, log); err != nil {
		// Under the hardened unit /etc is read-only: failing here would make
		// systemd restart-loop a daemon whose rules work fine. Without a
		// checklist heartbeats skip as empty_checklist; say so and go on.
		log.Warn("no checklist: heartbeats will not call the LLM until it exists", "err", err)
	}
	a, err := e.newApp(ctx, cfg, base, log, parts{sensors: true, thinker: true, transports: true}, daemon.Options{
		Store:  daemon.StoreDaemon,
		Socket: daemon.SockPath(cfg, runtimeDir()),
		Reload: hup,
		Exit:   os.Exit,
		// VIGIL_NO_TRIM=1 is for `make bench` only: it compares the trims
		// with the runtime's own knobs (GOGC, GOMEMLIMIT). Not a setting.
		NoTrim: os.Getenv("VIGIL_NO_TRIM") == "1",
	})
	if err != nil {
		return err
	}
	defer a.Close()
	return a.Run(ctx)
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

// lockedErr explains a state file another process holds. For `vigil run`
// it is a second daemon; for the CLI it is a daemon whose socket none of
// the candidates reached (its bind failed, or no permission).
func lockedErr(cfg *config.Config, mode daemon.StoreMode) error {
	pid := ""
	if n := lockHolder(daemon.DBPath(cfg)); n > 0 {
		pid = fmt.Sprintf(" (pid %d)", n)
	}
	if mode == daemon.StoreDaemon {
		return fmt.Errorf("another vigil is already running on %s%s; stop it first", cfg.Device.StateDir, pid)
	}
	return fmt.Errorf("a running vigil%s holds the state file %s, but its control socket is unreachable (looked for %s): see its log for the control socket warning, or run this as the daemon's user",
		pid, daemon.DBPath(cfg), strings.Join(control.Sockets(cfg, runtimeDir()), ", "))
}

// lockHolder returns the pid of the process holding the flock on path,
// from /proc/locks, or 0 when it cannot tell.
func lockHolder(path string) int {
	fi, err := os.Stat(path)
	if err != nil {
		return 0
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0
	}
	b, err := os.ReadFile("/proc/locks")
	if err != nil {
		return 0
	}
	dev := uint64(st.Dev)
	major := (dev>>8)&0xfff | (dev>>32)&^0xfff
	minor := dev&0xff | (dev>>12)&^0xff
	want := fmt.Sprintf("%02x:%02x:%d", major, minor, st.Ino)
	for line := range strings.Lines(string(b)) {
		f := strings.Fields(line)
		// 1: FLOCK  ADVISORY  WRITE 1234 08:01:5678 0 EOF; waiters have "->".
		if len(f) < 6 || f[1] != "FLOCK" || f[5] != want {
			continue
		}
		if pid, err := strconv.Atoi(f[4]); err == nil {
			return pid
		}
	}
	return 0
}
