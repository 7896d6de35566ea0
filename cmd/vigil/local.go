package main

// Without a daemon the client verbs work on the state file themselves:
// an App of their own (package daemon) answers as the daemon would,
// read-only for what only reads. This file, with run.go and wire.go (the
// wiring of `vigil run`), is all of cmd/vigil that names package daemon;
// a running daemon is asked through package control only
// (TestClientVerbsReachDaemonThroughControl).

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/vigil-iot/vigil/alert"
	"github.com/vigil-iot/vigil/config"
	"github.com/vigil-iot/vigil/control"
	"github.com/vigil-iot/vigil/daemon"
	"github.com/vigil-iot/vigil/heartbeat"
	"github.com/vigil-iot/vigil/manage"
	"github.com/vigil-iot/vigil/status"
	"github.com/vigil-iot/vigil/store"
)

// localStatus is the status view of the state file, read-only, with the
// run-time settings as `vigil run` would apply them (a disabled rule
// shows as disabled).
func (e *env) localStatus(ctx context.Context, cfg *config.Config, base *manage.Base) (status.View, error) {
	a, err := e.newApp(ctx, cfg, base, e.logger(), parts{}, daemon.Options{Store: daemon.StoreReadOnly})
	if err != nil {
		return status.View{}, err
	}
	defer a.Close()
	return a.Status(ctx)
}

// localHistory is the state file's history since since, read-only.
func (e *env) localHistory(ctx context.Context, cfg *config.Config, since time.Time) ([]heartbeat.Series, error) {
	a, err := e.newApp(ctx, cfg, nil, e.logger(), parts{}, daemon.Options{Store: daemon.StoreReadOnly})
	if err != nil {
		return nil, err
	}
	defer a.Close()
	return a.Engine().History(ctx, since)
}

// localChange makes c on the state file: an App on it (with c.base: the
// run-time settings too) answers c's request as the daemon's socket would
// (daemon.Commander.Do), from the CLI.
func (e *env) localChange(ctx context.Context, cfg *config.Config, c change) (string, error) {
	if _, err := os.Stat(daemon.DBPath(cfg)); err != nil && c.precheck != nil {
		if err := c.precheck(c.base); err != nil {
			return "", err
		}
	}
	a, err := e.newApp(ctx, cfg, c.base, inZone(e.logger(), cfg.Device.Location), parts{}, daemon.Options{Store: daemon.StoreWrite})
	if err != nil {
		return "", err
	}
	defer a.Close()
	out, err := a.Commander().Do(cliCtx(ctx), c.req)
	return strings.TrimRight(out, "\n") + c.note, err
}

// localRules is the state file's rules in force and proposals, read-only;
// asTOML: rule name as a [[rule]] table instead.
func (e *env) localRules(ctx context.Context, cfg *config.Config, base *manage.Base, name string, asTOML bool) (v manage.RulesView, toml string, err error) {
	a, err := e.newApp(ctx, cfg, base, e.logger(), parts{}, daemon.Options{Store: daemon.StoreReadOnly})
	if err != nil {
		return v, "", err
	}
	defer a.Close()
	if asTOML {
		toml, err = a.Commander().RuleTOML(cliCtx(ctx), name)
		return v, toml, err
	}
	v, err = a.Commander().Rules(cliCtx(ctx))
	return v, "", err
}

// localCheck runs one forced heartbeat on the state file, with the
// run-time settings as `vigil run` would apply them (the model's
// set_interval stores through base); a dry run writes nothing.
func (e *env) localCheck(ctx context.Context, cfg *config.Config, base *manage.Base, dry bool) (control.CheckJSON, error) {
	if err := cfg.SecretsErr(); err != nil {
		return control.CheckJSON{}, fmt.Errorf("%w\nor start the daemon (systemctl start vigil): 'vigil check' asks it", err)
	}
	log := inZone(e.logger(), cfg.Device.Location)
	mode := daemon.StoreWrite
	sample := (*heartbeat.Engine).SampleOnce
	if dry {
		mode, sample = daemon.StoreReadOnly, (*heartbeat.Engine).SampleDry
	}
	a, err := e.newApp(ctx, cfg, base, log, parts{sensors: true, thinker: true}, daemon.Options{Store: mode})
	if err != nil {
		return control.CheckJSON{}, err
	}
	defer a.Close()
	if !a.Config().LLMEnabled() {
		log.Info("no LLM API key: rules-only mode, the checklist is not sent to any LLM")
	}
	res, err := a.Commander().CheckWith(cliCtx(ctx), heartbeat.CheckOptions{DryRun: dry}, sample)
	if err != nil {
		return control.CheckJSON{}, err
	}
	if len(res.Alerts) > 0 {
		fmt.Fprintf(e.stderr, "no daemon running: %d alert(s) queued in %s, delivered when 'vigil run' starts\n", len(res.Alerts), daemon.DBPath(cfg))
	}
	return control.ToCheckJSON(res), nil
}

// localTestAlert queues a test alert of sev (for only: "" is every
// transport) in the state file, for the next 'vigil run' to deliver.
func (e *env) localTestAlert(ctx context.Context, cfg *config.Config, sev alert.Severity, only string) (string, error) {
	a, err := e.newApp(ctx, cfg, nil, inZone(e.logger(), cfg.Device.Location), parts{}, daemon.Options{Store: daemon.StoreWrite})
	if err != nil {
		return "", err
	}
	defer a.Close()
	t, err := a.Engine().TestAlert(ctx, sev, only)
	return daemon.TestAlertText(cfg, t, "no daemon running: it waits in "+daemon.DBPath(cfg)+" and is delivered when 'vigil run' starts"), err
}

// localNotes lists the model's notes from the state file, read-only:
// nothing is created.
func localNotes(cfg *config.Config) (string, error) {
	db, closeDB, err := daemon.OpenStore(cfg, daemon.StoreReadOnly, time.Now)
	if err != nil {
		return "", err
	}
	defer closeDB()
	return daemon.NotesText(db, cfg.Device.Location, time.Now())
}

// localOverlay is the run-time overlay the state file holds, read-only
// (none when there is no state file).
func localOverlay(cfg *config.Config) []store.Setting { return daemon.ReadOverlayFile(cfg) }

// The daemon's own checks of a config, which the CLI makes before it asks.

// checkTransport refuses a --transport that cfg does not configure.
func checkTransport(cfg *config.Config, only string) error { return daemon.CheckTransport(cfg, only) }

// checkEngine checks what `vigil run` builds the engine from.
func checkEngine(cfg *config.Config) error {
	_, err := daemon.EngineConfig(cfg)
	return err
}
