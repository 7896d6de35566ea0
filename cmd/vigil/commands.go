package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/vigil-iot/vigil/alert"
	"github.com/vigil-iot/vigil/device"
	"github.com/vigil-iot/vigil/heartbeat"
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

func writeCheck(w io.Writer, res heartbeat.Result) {
	writeCheckJSON(w, toCheckJSON(res))
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
	resp, err := ctlCall(ctx, sockPath(cfg), ctlRequest{Cmd: "check", DryRun: dry}, 10*time.Minute)
	switch {
	case err == nil:
		cj = *resp.Check
	case err == errNoDaemon:
		log := e.logger()
		a, err := e.build(ctx, cfg, log, buildOptions{sensors: true, thinker: true})
		if err != nil {
			return err
		}
		defer a.Close()
		if !cfg.LLMEnabled() {
			log.Info("no LLM API key: rules-only mode, the checklist is not sent to any LLM")
		}
		if err := a.engine.SampleOnce(ctx); err != nil {
			return err
		}
		res, err := a.engine.Check(ctx, heartbeat.CheckOptions{DryRun: dry})
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
	if asJSON {
		return writeJSON(e.stdout, cj)
	}
	writeCheckJSON(e.stdout, cj)
	if cj.Outcome == heartbeat.OutcomeFailed {
		return fmt.Errorf("heartbeat failed: %s", cj.Error)
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
	resp, err := ctlCall(ctx, sockPath(cfg), ctlRequest{Cmd: "status"}, 10*time.Second)
	switch {
	case err == nil:
		st = *resp.Status
	case err == errNoDaemon:
		a, err := e.build(ctx, cfg, e.logger(), buildOptions{thinker: false})
		if err != nil {
			return err
		}
		defer a.Close()
		if st, err = a.engine.Status(ctx); err != nil {
			return err
		}
		st.Mode = "not running"
		if cfg.LLMEnabled() {
			st.Mode = "not running (llm)"
		}
	default:
		return err
	}
	if asJSON {
		return writeJSON(e.stdout, st)
	}
	writeStatus(e.stdout, st)
	return nil
}

func writeStatus(w io.Writer, st heartbeat.Status) {
	fmt.Fprintf(w, "device:   %s (%s)\n", st.Device, st.Mode)
	clock := clockWord(st.ClockPlausible, clockSynced())
	fmt.Fprintf(w, "clock:    %s, %s\n", st.Now.Format(time.RFC3339), clock)
	if !st.NextRun.IsZero() {
		fmt.Fprintf(w, "next run: %s\n", st.NextRun.Format(time.RFC3339))
	}
	if !st.PausedUntil.IsZero() {
		fmt.Fprintf(w, "paused:   until %s\n", st.PausedUntil.Format(time.RFC3339))
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
	if len(st.Firing) > 0 {
		fmt.Fprintf(w, "firing:   %s\n", strings.Join(st.Firing, ", "))
	} else {
		fmt.Fprintf(w, "firing:   none\n")
	}
	if len(st.Runs) > 0 {
		fmt.Fprintln(w, "last runs:")
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		for _, r := range st.Runs {
			extra := r.Error
			if r.Tokens > 0 {
				extra = strings.TrimSpace(fmt.Sprintf("%d tokens %s", r.Tokens, extra))
			}
			fmt.Fprintf(tw, "  %s\t%s\t%s\t%dms\t%s\n", r.Start.Format(time.RFC3339), r.Outcome, r.Reason, r.DurationMS, extra)
		}
		tw.Flush()
	}
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
	minutes, err := strconv.Atoi(pos[0])
	if err != nil || minutes < 1 || minutes > 7*24*60 {
		return usageErr("pause: MINUTES must be a whole number from 1 to 10080, got %q", pos[0])
	}
	d := time.Duration(minutes) * time.Minute
	return e.pauseOrResume(ctx, ctlRequest{Cmd: "pause", Minutes: minutes},
		func(c *commands) (string, error) { return c.Pause(ctx, d) })
}

func (e *env) cmdResume(ctx context.Context, args []string) error {
	if _, err := e.flags("resume", args, nil, 0); err != nil {
		return err
	}
	return e.pauseOrResume(ctx, ctlRequest{Cmd: "resume"},
		func(c *commands) (string, error) { return c.Resume(ctx) })
}

// pauseOrResume asks the running daemon, or, with none running, applies
// offline to the state file directly.
func (e *env) pauseOrResume(ctx context.Context, req ctlRequest, offline func(*commands) (string, error)) error {
	cfg, err := e.loadConfig()
	if err != nil {
		return err
	}
	resp, err := ctlCall(ctx, sockPath(cfg), req, 10*time.Second)
	switch {
	case err == nil:
		fmt.Fprintln(e.stdout, resp.Text)
		return nil
	case err != errNoDaemon:
		return err
	}
	a, err := e.build(ctx, cfg, e.logger(), buildOptions{})
	if err != nil {
		return err
	}
	defer a.Close()
	txt, err := offline(&commands{app: a})
	if err != nil {
		return err
	}
	fmt.Fprintln(e.stdout, txt+" (saved; no daemon running)")
	return nil
}

func (e *env) cmdConfigCheck(ctx context.Context, args []string) error {
	if _, err := e.flags("config check", args, nil, 0); err != nil {
		return err
	}
	cfg, err := e.loadConfig()
	if err != nil {
		return err
	}
	if _, err := engineConfig(cfg); err != nil {
		return err
	}
	if _, err := os.Stat(cfg.Heartbeat.Checklist); err == nil {
		_, empty, err := checklistFunc(cfg.Heartbeat.Checklist)()
		if err != nil {
			return configErr(err)
		}
		if empty {
			fmt.Fprintf(e.stderr, "checklist %s is empty (headings and comments only): heartbeats will not call the LLM\n", cfg.Heartbeat.Checklist)
		}
	} else {
		fmt.Fprintf(e.stderr, "checklist %s does not exist yet: 'vigil run' writes a template there\n", cfg.Heartbeat.Checklist)
	}
	if err := cfg.WriteTOML(e.stdout); err != nil {
		return err
	}
	fmt.Fprintf(e.stderr, "%s: ok\n", e.config)
	return nil
}

func (e *env) cmdSensors(ctx context.Context, args []string) error {
	cfg, err := e.loadConfig()
	if err != nil {
		return err
	}
	log := e.logger()
	prof, err := profile(cfg, log)
	if err != nil {
		return err
	}
	return cmdSensors(ctx, cfg, prof, args, e.stdout, e.stderr, log)
}

func (e *env) cmdScan(ctx context.Context, args []string) error {
	cfg, err := e.loadConfig()
	if err != nil {
		return err
	}
	prof, err := profile(cfg, e.logger())
	if err != nil {
		return err
	}
	return cmdScan(ctx, cfg, prof, args, e.stdout, e.stderr)
}
