package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/vigil-iot/vigil/alert"
	"github.com/vigil-iot/vigil/config"
	"github.com/vigil-iot/vigil/device"
	"github.com/vigil-iot/vigil/heartbeat"
	"github.com/vigil-iot/vigil/redact"
	"github.com/vigil-iot/vigil/store"
	"github.com/vigil-iot/vigil/transport"
	"github.com/vigil-iot/vigil/web"
)

// checkJSON is the documented `vigil check --json` record (SPEC §2).
type checkJSON struct {
	Outcome    string        `json:"outcome"`
	Reason     string        `json:"reason"`
	Alerts     []alert.Alert `json:"alerts"`
	ToolCalls  []string      `json:"tool_calls"`
	Tokens     int           `json:"tokens"`
	DurationMS int64         `json:"duration_ms"`
	Summary    string        `json:"summary,omitempty"`
	Severity   string        `json:"severity,omitempty"`
	Error      string        `json:"error,omitempty"`
}

func toCheckJSON(res heartbeat.Result) checkJSON {
	cj := checkJSON{Outcome: res.Run.Outcome, Reason: res.Run.Reason, Alerts: res.Alerts, ToolCalls: res.Run.ToolCalls,
		Tokens: res.Run.Tokens, DurationMS: res.Run.DurationMS, Error: res.Run.Error}
	if cj.Alerts == nil {
		cj.Alerts = []alert.Alert{}
	}
	if cj.ToolCalls == nil {
		cj.ToolCalls = []string{}
	}
	if d := res.Decision; d != nil {
		cj.Summary = d.Summary
		if d.Severity != 0 {
			cj.Severity = d.Severity.String()
		}
	}
	return cj
}

// redacted returns cj with the secrets red knows removed from the
// model's text and the error: whoever prints a check (vigil check, a
// remote /check) prints it redacted, whatever the daemon that ran it knew.
func (cj checkJSON) redacted(red *redact.Redactor) checkJSON {
	cj.Summary, cj.Error, cj.ToolCalls = red.String(cj.Summary), red.String(cj.Error), red.Strings(cj.ToolCalls)
	alerts := make([]alert.Alert, len(cj.Alerts))
	for i, a := range cj.Alerts {
		a.Summary = red.String(a.Summary)
		alerts[i] = a
	}
	cj.Alerts = alerts
	return cj
}

func writeCheckJSON(w io.Writer, cj checkJSON) {
	fmt.Fprintf(w, "outcome: %s", cj.Outcome)
	if cj.Reason != "" {
		fmt.Fprintf(w, " (%s)", cj.Reason)
	}
	fmt.Fprintln(w)
	if cj.Summary != "" {
		fmt.Fprintf(w, "decision: %s %s\n", cj.Severity, cj.Summary)
	}
	if cj.Error != "" {
		fmt.Fprintf(w, "error: %s\n", cj.Error)
	}
	for _, tc := range cj.ToolCalls {
		fmt.Fprintf(w, "tool call: %s\n", tc)
	}
	for _, a := range cj.Alerts {
		fmt.Fprintf(w, "alert queued: %s %s\n", a.ID, a.Text())
	}
	fmt.Fprintf(w, "tokens: %d, duration: %dms\n", cj.Tokens, cj.DurationMS)
}

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
	var cj checkJSON
	resp, err := ctlCall(ctx, cfg, ctlRequest{Cmd: "check", DryRun: dry}, 10*time.Minute)
	switch {
	case err == nil:
		cj = *resp.Check
	case err == errNoDaemon:
		var base *configBase
		if cfg, base, err = e.loadOverlaid(ctx, e.logger()); err != nil {
			return err
		}
		log := inZone(e.logger(), cfg.Device.Location)
		bo := buildOptions{sensors: true, thinker: true}
		sample := (*heartbeat.Engine).SampleOnce
		if dry {
			bo.store, sample = storeReadOnly, (*heartbeat.Engine).SampleDry
		}
		a, err := e.build(ctx, cfg, log, bo)
		if err != nil {
			return err
		}
		defer a.Close()
		a.base = base // the model's set_interval stores through it
		if !cfg.LLMEnabled() {
			log.Info("no LLM API key: rules-only mode, the checklist is not sent to any LLM")
		}
		cctx := transport.WithSource(ctx, transport.Source{Channel: transport.ChannelCLI})
		res, err := (&commands{app: a}).check(cctx, heartbeat.CheckOptions{DryRun: dry}, sample)
		if err != nil {
			return err
		}
		cj = toCheckJSON(res)
		if len(res.Alerts) > 0 {
			fmt.Fprintf(e.stderr, "no daemon running: %d alert(s) queued in %s, delivered when 'vigil run' starts\n", len(res.Alerts), dbPath(cfg))
		}
	default:
		return err
	}
	cj = cj.redacted(e.redactor())
	if asJSON {
		if err := writeJSON(e.stdout, cj); err != nil {
			return err
		}
		return checkExit(cj)
	}
	writeCheckJSON(e.stdout, cj)
	return checkExit(cj)
}

// checkExit makes a failed heartbeat exit 1 without printing its error a
// second time: the record above already carries it.
func checkExit(cj checkJSON) error {
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
	var rt *web.Runtime
	resp, err := ctlCall(ctx, cfg, ctlRequest{Cmd: "status"}, 10*time.Second)
	running := err == nil
	switch {
	case err == nil:
		st, series, rt = *resp.Status, resp.Series, resp.Runtime
	case err == errNoDaemon:
		// The run-time settings as `vigil run` would apply them (a
		// disabled rule shows as disabled).
		if cfg, _, err = e.loadOverlaid(ctx, e.logger()); err != nil {
			return err
		}
		a, err := e.build(ctx, cfg, e.logger(), buildOptions{store: storeReadOnly})
		if err != nil {
			return err
		}
		defer a.Close()
		if st, err = a.engine.Status(ctx); err != nil {
			return err
		}
		if series, err = a.engine.History(ctx, time.Now().Add(-statusWindow)); err != nil {
			return err
		}
		// The mode `vigil run` would start in; writeStatus says no daemon runs.
		st.Mode = "rules-only"
		if cfg.LLMEnabled() {
			st.Mode = "llm"
		}
		if err := configuredQueues(a.db, cfg, st.Outbox); err != nil {
			return err
		}
		r, err := runtimeView(cfg, a.db)
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
	writeStatus(e.stdout, st, rt, running)
	writeReadings(e.stdout, st, series, webRules(cfg), time.Now(), colorOK(e.stdout))
	return nil
}

// configuredQueues adds the queue depth of every configured network
// transport to outbox. With no daemon running only the log transport is
// wired, but the state file holds every transport's cursor, and alerts for
// MQTT and Telegram wait there as well.
func configuredQueues(db *store.DB, cfg *config.Config, outbox map[string]int) error {
	return db.View(func(tx *store.Tx) error {
		for _, n := range configuredTransports(cfg) {
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

// writeStatus prints the status of a running daemon, or of the state file
// when none runs; rt (nil: not known, an older daemon) adds the checklist
// in force, the model's notes and the settings that do not come from the
// file.
func writeStatus(w io.Writer, st heartbeat.Status, rt *web.Runtime, running bool) {
	daemon := "daemon running"
	if !running {
		daemon = "daemon not running"
	}
	fmt.Fprintf(w, "device:   %s (%s; %s)\n", st.Device, daemon, modeText(st.Mode))
	clock := clockWord(st.ClockPlausible, clockSynced())
	fmt.Fprintf(w, "clock:    %s, %s\n", st.Now.Format(timeLayout), clock)
	switch {
	case !st.NextRun.IsZero():
		fmt.Fprintf(w, "next run: %s\n", st.NextRun.Format(timeLayout))
	case st.HeartbeatsOff != "":
		fmt.Fprintf(w, "next run: heartbeats disabled (%s)\n", st.HeartbeatsOff)
	case !running:
		fmt.Fprintln(w, "next run: none (no daemon is running)")
	default:
		fmt.Fprintln(w, "next run: not scheduled yet")
	}
	if !st.PausedUntil.IsZero() {
		fmt.Fprintf(w, "paused:   until %s\n", st.PausedUntil.Format(timeLayout))
	} else {
		fmt.Fprintf(w, "paused:   no\n")
	}
	fmt.Fprintf(w, "failures: %d consecutive", st.Failures)
	if st.LLMDown {
		fmt.Fprintf(w, " (LLM unreachable)")
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "budget:   %d/%d LLM calls today, %d tokens\n", st.BudgetCalls, st.BudgetMax, st.BudgetTokens)
	var ob []string
	for name, d := range st.Outbox {
		ob = append(ob, fmt.Sprintf("%s %d", name, d))
	}
	sort.Strings(ob)
	fmt.Fprintf(w, "outbox:   %s (dropped %d)\n", strings.Join(ob, ", "), st.OutboxDropped)
	if st.Held != nil { // what Telegram holds for its digest
		label := "held:"
		for _, l := range st.Held.Lines() {
			fmt.Fprintf(w, "%-10s%s\n", label, l)
			label = ""
		}
	}
	if len(st.Firing) > 0 {
		fmt.Fprintf(w, "firing:   %s\n", strings.Join(st.Firing, ", "))
	} else {
		fmt.Fprintf(w, "firing:   none\n")
	}
	if rt != nil {
		writeRuntime(w, *rt, st.Now)
	}
	if len(st.Rules) > 0 {
		fmt.Fprintln(w, "rules:")
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		for _, r := range st.Rules {
			seen := r.Seen
			if seen == "" {
				seen = "no sample yet"
			}
			var extra []string
			if !r.Since.IsZero() {
				extra = append(extra, "since "+sinceText(r.Since, st.Now))
			}
			if r.Error != "" {
				extra = append(extra, r.Error)
			}
			fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\n", r.Name, r.State, seen, strings.Join(extra, "  "))
		}
		tw.Flush()
	}
	if len(st.Commands) > 0 {
		fmt.Fprintln(w, "commands: (accepted since start, newest last)")
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		for _, c := range st.Commands {
			fmt.Fprintf(tw, "  %s\t%s\t%s\n", c.Time.In(st.Now.Location()).Format(timeLayout), c.Command, c.Source)
		}
		tw.Flush()
	}
	if len(st.Runs) > 0 {
		fmt.Fprintln(w, "last runs:")
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		for _, r := range st.Runs {
			extra := r.Error
			if r.Tokens > 0 {
				extra = strings.TrimSpace(fmt.Sprintf("%d tokens %s", r.Tokens, extra))
			}
			fmt.Fprintf(tw, "  %s\t%s\t%s\t%dms\t%s\n", r.Start.Format(timeLayout), r.Outcome, r.Reason, r.DurationMS, extra)
		}
		tw.Flush()
	}
}

// modeText names the engine's mode for a person: "LLM mode", "rules-only
// mode".
func modeText(mode string) string {
	if mode == "llm" {
		return "LLM mode"
	}
	return mode + " mode"
}

// timeLayout is how every command shows a time: in the device's time zone
// (device.timezone), with its offset, to the second; Telegram shows an
// alert's time the same way.
const timeLayout = transport.TimeLayout

// sinceText prints a time in its own zone (the device's): the clock time
// when it is on the same day as now, else with the date; with the offset.
func sinceText(t, now time.Time) string {
	y, m, d := t.Date()
	if ny, nm, nd := now.In(t.Location()).Date(); y == ny && m == nm && d == nd {
		return t.Format("15:04 -07:00")
	}
	return t.Format("2006-01-02 15:04 -07:00")
}

func writeSnapshot(w io.Writer, s *device.Snapshot) {
	if s == nil {
		fmt.Fprintln(w, "no sample yet")
		return
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	for _, k := range s.Keys() {
		fmt.Fprintf(tw, "%s\t%s\n", k, heartbeat.FormatValue(s.Readings[k]))
	}
	var errs []string
	for name := range s.Errors {
		errs = append(errs, name)
	}
	sort.Strings(errs)
	for _, name := range errs {
		fmt.Fprintf(tw, "%s\terror: %s\n", name, s.Errors[name])
	}
	tw.Flush()
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
	return e.pauseOrResume(ctx, ctlRequest{Cmd: "pause", Minutes: minutes},
		func(ctx context.Context, c *commands) (string, error) { return c.Pause(ctx, d) })
}

func (e *env) cmdResume(ctx context.Context, args []string) error {
	if _, err := e.flags("resume", args, nil, 0); err != nil {
		return err
	}
	return e.pauseOrResume(ctx, ctlRequest{Cmd: "resume"},
		func(ctx context.Context, c *commands) (string, error) { return c.Resume(ctx) })
}

// pauseOrResume asks the running daemon, or, with none running, applies
// offline to the state file directly.
func (e *env) pauseOrResume(ctx context.Context, req ctlRequest, offline func(context.Context, *commands) (string, error)) error {
	cfg, err := e.loadConfig()
	if err != nil {
		return err
	}
	resp, err := ctlCall(ctx, cfg, req, 10*time.Second)
	switch {
	case err == nil:
		fmt.Fprintln(e.stdout, resp.Text)
		return nil
	case err != errNoDaemon && strings.HasPrefix(err.Error(), transport.ErrPauseRange.Error()):
		return usageErr("%v", err) // the daemon's commands.Pause refused it
	case err != errNoDaemon:
		return err
	}
	a, err := e.build(ctx, cfg, e.logger(), buildOptions{})
	if err != nil {
		return err
	}
	defer a.Close()
	txt, err := offline(transport.WithSource(ctx, transport.Source{Channel: transport.ChannelCLI}), &commands{app: a})
	if errors.Is(err, transport.ErrPauseRange) {
		return usageErr("%v", err)
	}
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
	if err := checkTransport(cfg, only); err != nil {
		return usageErr("test-alert: --transport: %v", err)
	}
	for _, note := range belowMinSeverity(cfg, sev, only) {
		fmt.Fprintln(e.stderr, note)
	}
	resp, err := ctlCall(ctx, cfg, ctlRequest{Cmd: "test-alert", Severity: sev.String(), Transport: only}, 10*time.Second)
	switch {
	case err == nil:
		fmt.Fprintln(e.stdout, resp.Text)
		return nil
	case err != errNoDaemon:
		return err
	}
	a, err := e.build(ctx, cfg, inZone(e.logger(), cfg.Device.Location), buildOptions{})
	if err != nil {
		return err
	}
	defer a.Close()
	t, err := a.engine.TestAlert(ctx, sev, only)
	if err != nil {
		return err
	}
	fmt.Fprintln(e.stdout, testAlertText(t, "no daemon running: it waits in "+dbPath(cfg)+" and is delivered when 'vigil run' starts"))
	return nil
}

// configuredTransports names the transports the config enables, log first.
func configuredTransports(cfg *config.Config) []string {
	names := []string{"log"}
	if cfg.MQTTEnabled() {
		names = append(names, "mqtt")
	}
	if cfg.TelegramEnabled() {
		names = append(names, "telegram")
	}
	return names
}

// checkTransport accepts "" (all transports) or a configured transport.
func checkTransport(cfg *config.Config, name string) error {
	names := configuredTransports(cfg)
	if name == "" || slices.Contains(names, name) {
		return nil
	}
	return fmt.Errorf("%q is not a configured transport (configured: %s)", name, strings.Join(names, ", "))
}

// belowMinSeverity says which transports would not send an alert of sev
// because of their min_severity.
func belowMinSeverity(cfg *config.Config, sev alert.Severity, only string) []string {
	var notes []string
	for _, t := range []struct{ name, min string }{{"mqtt", cfg.MQTT.MinSeverity}, {"telegram", cfg.Telegram.MinSeverity}} {
		if (only != "" && only != t.name) || !slices.Contains(configuredTransports(cfg), t.name) {
			continue
		}
		if m, err := alert.ParseSeverity(t.min); err == nil && sev < m {
			notes = append(notes, fmt.Sprintf("note: %s.min_severity is %s, so %s will not send this %s alert; try --severity %s", t.name, m, t.name, sev, m))
		}
	}
	return notes
}

func testAlertText(a alert.Alert, where string) string {
	to := "every transport"
	if a.Transport != "" {
		to = a.Transport + " only"
	}
	return fmt.Sprintf("test alert %s queued for %s (%s): %s", a.ID, to, where, a.Summary)
}

func (e *env) cmdConfigCheck(ctx context.Context, args []string) error {
	if _, err := e.flags("config check", args, nil, 0); err != nil {
		return err
	}
	cfg, _, err := e.loadOverlaid(ctx, e.logger())
	if err != nil {
		return err
	}
	if _, err := engineConfig(cfg); err != nil {
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
	if path, over := checklistInForce(cfg); over || fileExists(path) {
		_, empty, err := checklistFunc(cfg)()
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
