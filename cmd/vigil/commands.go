package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strconv"
	"time"

	"github.com/vigil-iot/vigil/alert"
	"github.com/vigil-iot/vigil/config"
	"github.com/vigil-iot/vigil/daemon"
	"github.com/vigil-iot/vigil/heartbeat"
	"github.com/vigil-iot/vigil/manage"
	"github.com/vigil-iot/vigil/store"
	"github.com/vigil-iot/vigil/web"
)

func (e *env) cmdCheck(ctx context.Context, args []string) error {
	var dry, asJSON bool
	if _, err := e.flags("check", args, func(fs *flag.FlagSet) {
		fs.BoolVar(&dry, "dry-run", false, "deliver nothing")
		fs.BoolVar(&asJSON, "json", false, "print the run record as JSON")
	}, 0); err != nil {
		return err
	}
	cfg, err := e.loadConfig()
	if err != nil {
		return err
	}
	var cj daemon.CheckJSON
	resp, err := e.client(cfg).Call(ctx, daemon.Request{Cmd: "check", DryRun: dry}, 10*time.Minute)
	switch {
	case err == nil:
		cj = *resp.Check
	case err == daemon.ErrNoDaemon:
		var base *manage.Base
		if cfg, base, err = e.loadOverlaid(ctx, e.logger()); err != nil {
			return err
		}
		log := inZone(e.logger(), cfg.Device.Location)
		mode := daemon.StoreWrite
		sample := (*heartbeat.Engine).SampleOnce
		if dry {
			mode, sample = daemon.StoreReadOnly, (*heartbeat.Engine).SampleDry
		}
		// The base: the model's set_interval stores through it.
		a, err := e.newApp(ctx, cfg, base, log, parts{sensors: true, thinker: true}, daemon.Options{Store: mode})
		if err != nil {
			return err
		}
		defer a.Close()
		if !cfg.LLMEnabled() {
			log.Info("no LLM API key: rules-only mode, the checklist is not sent to any LLM")
		}
		res, err := a.Commands().CheckWith(cliCtx(ctx), heartbeat.CheckOptions{DryRun: dry}, sample)
		if err != nil {
			return err
		}
		cj = daemon.ToCheckJSON(res)
		if len(res.Alerts) > 0 {
			fmt.Fprintf(e.stderr, "no daemon running: %d alert(s) queued in %s, delivered when 'vigil run' starts\n", len(res.Alerts), daemon.DBPath(cfg))
		}
	default:
		return err
	}
	cj = cj.Redacted(e.redactor())
	if asJSON {
		if err := writeJSON(e.stdout, cj); err != nil {
			return err
		}
		return checkExit(cj)
	}
	daemon.WriteCheck(e.stdout, cj)
	return checkExit(cj)
}

// checkExit makes a failed heartbeat exit 1 without printing its error a
// second time: the record above already carries it.
func checkExit(cj daemon.CheckJSON) error {
	if cj.Outcome == heartbeat.OutcomeFailed {
		return &exitError{exitFailure, errSilent}
	}
	return nil
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

func (e *env) cmdStatus(ctx context.Context, args []string) error {
	var asJSON bool
	if _, err := e.flags("status", args, func(fs *flag.FlagSet) {
		fs.BoolVar(&asJSON, "json", false, "print JSON")
	}, 0); err != nil {
		return err
	}
	cfg, err := e.loadConfig()
	if err != nil {
		return err
	}
	var st heartbeat.Status
	var series []heartbeat.Series
	var rt *manage.Runtime
	resp, err := e.client(cfg).Call(ctx, daemon.Request{Cmd: "status"}, 10*time.Second)
	running := err == nil
	switch {
	case err == nil:
		st, series, rt = *resp.Status, resp.Series, resp.Runtime
	case err == daemon.ErrNoDaemon:
		// The run-time settings as `vigil run` would apply them (a
		// disabled rule shows as disabled).
		if cfg, _, err = e.loadOverlaid(ctx, e.logger()); err != nil {
			return err
		}
		a, err := e.newApp(ctx, cfg, nil, e.logger(), parts{}, daemon.Options{Store: daemon.StoreReadOnly})
		if err != nil {
			return err
		}
		defer a.Close()
		if st, err = a.Engine().Status(ctx); err != nil {
			return err
		}
		if series, err = a.Engine().History(ctx, time.Now().Add(-daemon.StatusWindow)); err != nil {
			return err
		}
		// The mode `vigil run` would start in; writeStatus says no daemon runs.
		st.Mode = "rules-only"
		if cfg.LLMEnabled() {
			st.Mode = "llm"
		}
		if err := configuredQueues(a.DB(), cfg, st.Outbox); err != nil {
			return err
		}
		r, err := manage.RuntimeView(cfg, a.DB())
		if err != nil {
			return err
		}
		rt = &r
	default:
		return err
	}
	if asJSON {
		v := web.StatusView{Status: st, Series: series}
		if rt != nil {
			v.Runtime = *rt
		}
		return writeJSON(e.stdout, struct {
			web.StatusView
			DaemonRunning bool `json:"daemon_running"`
		}{v, running})
	}
	daemon.WriteStatus(e.stdout, st, rt, running)
	writeReadings(e.stdout, st, series, daemon.WebRules(cfg), time.Now(), colorOK(e.stdout))
	return nil
}

// configuredQueues adds the queue depth of every configured network
// transport to outbox. With no daemon running only the log transport is
// wired, but the state file holds every transport's cursor, and alerts for
// MQTT and Telegram wait there as well.
func configuredQueues(db *store.DB, cfg *config.Config, outbox map[string]int) error {
	return db.View(func(tx *store.Tx) error {
		for _, n := range daemon.ConfiguredTransports(cfg) {
			if _, ok := outbox[n]; ok {
				continue
			}
			d, err := tx.Depth(n)
			if err != nil {
				return fmt.Errorf("read %s queue: %w", n, err)
			}
			outbox[n] = d
		}
		return nil
	})
}

func (e *env) cmdPause(ctx context.Context, args []string) error {
	pos, err := e.flags("pause", args, nil, 1)
	if err != nil {
		return err
	}
	// The range (transport.MinPause..MaxPause) is checked where every
	// channel's pause is: in commands.Pause, here or in the daemon.
	minutes, err := strconv.Atoi(pos[0])
	if err != nil {
		return usageErr("pause: MINUTES must be a whole number of minutes, got %q", pos[0])
	}
	d := time.Duration(minutes) * time.Minute
	return e.pauseOrResume(ctx, daemon.Request{Cmd: "pause", Minutes: minutes},
		func(ctx context.Context, c *daemon.Commands) (string, error) { return c.Pause(ctx, d) })
}

func (e *env) cmdResume(ctx context.Context, args []string) error {
	if _, err := e.flags("resume", args, nil, 0); err != nil {
		return err
	}
	return e.pauseOrResume(ctx, daemon.Request{Cmd: "resume"},
		func(ctx context.Context, c *daemon.Commands) (string, error) { return c.Resume(ctx) })
}

// pauseOrResume asks the running daemon, or, with none running, applies
// offline to the state file directly.
func (e *env) pauseOrResume(ctx context.Context, req daemon.Request, offline func(context.Context, *daemon.Commands) (string, error)) error {
	cfg, err := e.loadConfig()
	if err != nil {
		return err
	}
	resp, err := e.client(cfg).Call(ctx, req, 10*time.Second)
	switch {
	case err == nil:
		fmt.Fprintln(e.stdout, resp.Text)
		return nil
	case err != daemon.ErrNoDaemon:
		return err // a pause out of range exits 2 (exitCode)
	}
	a, err := e.newApp(ctx, cfg, nil, e.logger(), parts{}, daemon.Options{Store: daemon.StoreWrite})
	if err != nil {
		return err
	}
	defer a.Close()
	txt, err := offline(cliCtx(ctx), a.Commands())
	if err != nil {
		return err
	}
	fmt.Fprintln(e.stdout, txt+" (saved; no daemon running)")
	return nil
}

// cmdTestAlert queues a test alert through the real outbox: the running
// daemon delivers it at once; with none running it waits in the state file
// for the next 'vigil run'.
func (e *env) cmdTestAlert(ctx context.Context, args []string) error {
	var sevName, only string
	if _, err := e.flags("test-alert", args, func(fs *flag.FlagSet) {
		fs.StringVar(&sevName, "severity", "info", "info, warning or critical")
		fs.StringVar(&only, "transport", "", "deliver through this transport only: log, mqtt or telegram (default: all)")
	}, 0); err != nil {
		return err
	}
	sev, err := alert.ParseSeverity(sevName)
	if err != nil {
		return usageErr("test-alert: --severity: %v", err)
	}
	cfg, err := e.loadConfig()
	if err != nil {
		return err
	}
	if err := daemon.CheckTransport(cfg, only); err != nil {
		return usageErr("test-alert: --transport: %v", err)
	}
	for _, note := range belowMinSeverity(cfg, sev, only) {
		fmt.Fprintln(e.stderr, note)
	}
	resp, err := e.client(cfg).Call(ctx, daemon.Request{Cmd: "test-alert", Severity: sev.String(), Transport: only}, 10*time.Second)
	switch {
	case err == nil:
		fmt.Fprintln(e.stdout, resp.Text)
		return nil
	case err != daemon.ErrNoDaemon:
		return err
	}
	a, err := e.newApp(ctx, cfg, nil, inZone(e.logger(), cfg.Device.Location), parts{}, daemon.Options{Store: daemon.StoreWrite})
	if err != nil {
		return err
	}
	defer a.Close()
	t, err := a.Engine().TestAlert(ctx, sev, only)
	if err != nil {
		return err
	}
	fmt.Fprintln(e.stdout, daemon.TestAlertText(t, "no daemon running: it waits in "+daemon.DBPath(cfg)+" and is delivered when 'vigil run' starts"))
	return nil
}

// belowMinSeverity says which transports would not send an alert of sev
// because of their min_severity.
func belowMinSeverity(cfg *config.Config, sev alert.Severity, only string) []string {
	var notes []string
	for _, t := range []struct{ name, min string }{{"mqtt", cfg.MQTT.MinSeverity}, {"telegram", cfg.Telegram.MinSeverity}} {
		if (only != "" && only != t.name) || !slices.Contains(daemon.ConfiguredTransports(cfg), t.name) {
			continue
		}
		if m, err := alert.ParseSeverity(t.min); err == nil && sev < m {
			notes = append(notes, fmt.Sprintf("note: %s.min_severity is %s, so %s will not send this %s alert; try --severity %s", t.name, m, t.name, sev, m))
		}
	}
	return notes
}

func (e *env) cmdConfigCheck(ctx context.Context, args []string) error {
	if _, err := e.flags("config check", args, nil, 0); err != nil {
		return err
	}
	cfg, _, err := e.loadOverlaid(ctx, e.logger())
	if err != nil {
		return err
	}
	if _, err := daemon.EngineConfig(cfg); err != nil {
		return err
	}
	// What `run` checks beyond the file itself: the board profile and the
	// files the config names.
	if _, err := profile(cfg, e.logger(), slog.LevelDebug); err != nil {
		return err
	}
	if cfg.MQTTEnabled() {
		if _, err := mqttTLS(cfg); err != nil {
			return configErr(err)
		}
	}
	if path, over := manage.InForce(cfg); over || manage.FileExists(path) {
		_, empty, err := manage.ChecklistFunc(cfg)()
		if err != nil {
			return configErr(err)
		}
		if over {
			fmt.Fprintf(e.stderr, "checklist %s set from afar is in force instead of %s ('vigil checklist reset' removes it)\n", path, cfg.Heartbeat.Checklist)
		}
		if empty {
			fmt.Fprintf(e.stderr, "checklist %s is empty (headings and comments only): heartbeats will not call the LLM\n", path)
		}
	} else {
		fmt.Fprintf(e.stderr, "checklist %s does not exist yet: 'vigil run' writes a template there\n", cfg.Heartbeat.Checklist)
	}
	for _, w := range cfg.Warnings() {
		fmt.Fprintf(e.stderr, "warning: unsafe setup: %s\n", w)
	}
	writeOverrides(e.stdout, cfg)
	if err := cfg.WriteTOML(e.stdout); err != nil {
		return err
	}
	fmt.Fprintf(e.stderr, "%s: ok\n", e.config)
	return nil
}

// writeOverrides lists, as TOML comments above the resolved config, the
// values that come from the environment or the run-time overlay rather
// than the file: "# heartbeat.interval = 10m (env)".
func writeOverrides(w io.Writer, cfg *config.Config) {
	keys := cfg.Overridden()
	if len(keys) == 0 {
		return
	}
	fmt.Fprintln(w, "# values set outside the file (VIGIL_<SECTION>_<KEY> or 'vigil set'):")
	for _, k := range keys {
		v, _ := cfg.Get(k)
		fmt.Fprintf(w, "# %s = %s (%s)\n", k, v, cfg.Origin(k))
	}
}

func (e *env) cmdSensors(ctx context.Context, args []string) error {
	var o sensorsOptions
	if _, err := e.flags("sensors", args, func(fs *flag.FlagSet) {
		fs.BoolVar(&o.json, "json", false, "print the snapshot as JSON")
		fs.BoolVar(&o.drivers, "drivers", false, "list the sensor drivers and their config keys (needs no config)")
	}, 0); err != nil {
		return err
	}
	if o.drivers {
		return printDrivers(e.stdout)
	}
	cfg, err := e.loadConfig()
	if err != nil {
		return err
	}
	log := e.logger()
	prof, err := profile(cfg, log, slog.LevelDebug)
	if err != nil {
		return err
	}
	return cmdSensors(ctx, cfg, prof, o, e.stdout, log)
}

func (e *env) cmdScan(ctx context.Context, args []string) error {
	var bus string
	if _, err := e.flags("scan", args, func(fs *flag.FlagSet) {
		fs.StringVar(&bus, "bus", "", "I²C bus to probe (default: the board's)")
	}, 0); err != nil {
		return err
	}
	cfg, err := e.loadConfigOrDefaults()
	if err != nil {
		return err
	}
	prof, err := profile(cfg, e.logger(), slog.LevelDebug)
	if err != nil {
		return err
	}
	return cmdScan(ctx, cfg, prof, bus, e.stdout)
}
