package daemon

// The text the daemon answers with, on every channel, and that the CLI
// prints: status, the last sample, a check's record, the settings.

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/vigil-iot/vigil/alert"
	"github.com/vigil-iot/vigil/device"
	"github.com/vigil-iot/vigil/heartbeat"
	"github.com/vigil-iot/vigil/manage"
	"github.com/vigil-iot/vigil/redact"
	"github.com/vigil-iot/vigil/transport"
	"github.com/vigil-iot/vigil/web"
)

// statusWindow is the span of the sparklines in `vigil status`: the
// history that comes with a status.
const statusWindow = time.Hour

// CheckJSON is the documented `vigil check --json` record (SPEC §2).
type CheckJSON struct {
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

// ToCheckJSON is the record of a run.
func ToCheckJSON(res heartbeat.Result) CheckJSON {
	cj := CheckJSON{Outcome: res.Run.Outcome, Reason: res.Run.Reason, Alerts: res.Alerts, ToolCalls: res.Run.ToolCalls,
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

// Redacted returns cj with the secrets red knows removed from the
// model's text and the error: whoever prints a check (vigil check, a
// remote /check) prints it redacted, whatever the daemon that ran it knew.
func (cj CheckJSON) Redacted(red *redact.Redactor) CheckJSON {
	cj.Summary, cj.Error, cj.ToolCalls = red.String(cj.Summary), red.String(cj.Error), red.Strings(cj.ToolCalls)
	alerts := make([]alert.Alert, len(cj.Alerts))
	for i, a := range cj.Alerts {
		a.Summary = red.String(a.Summary)
		alerts[i] = a
	}
	cj.Alerts = alerts
	return cj
}

// WriteCheck prints a check's record for a person.
func WriteCheck(w io.Writer, cj CheckJSON) {
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

// WriteStatus prints the status of a running daemon, or of the state file
// when none runs; rt (nil: not known, an older daemon) adds the checklist
// in force, the model's notes and the settings that do not come from the
// file. clockSynced says whether the system clock is synchronised
// (ClockSynced).
func WriteStatus(w io.Writer, st heartbeat.Status, rt *manage.Runtime, running, clockSynced bool) {
	daemon := "daemon running"
	if !running {
		daemon = "daemon not running"
	}
	fmt.Fprintf(w, "device:   %s (%s; %s)\n", st.Device, daemon, modeText(st.Mode))
	clock := clockWord(st.ClockPlausible, clockSynced)
	fmt.Fprintf(w, "clock:    %s, %s\n", st.Now.Format(TimeLayout), clock)
	switch {
	case !st.NextRun.IsZero():
		fmt.Fprintf(w, "next run: %s\n", st.NextRun.Format(TimeLayout))
	case st.HeartbeatsOff != "":
		fmt.Fprintf(w, "next run: heartbeats disabled (%s)\n", st.HeartbeatsOff)
	case !running:
		fmt.Fprintln(w, "next run: none (no daemon is running)")
	default:
		fmt.Fprintln(w, "next run: not scheduled yet")
	}
	if !st.PausedUntil.IsZero() {
		fmt.Fprintf(w, "paused:   until %s\n", st.PausedUntil.Format(TimeLayout))
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
	writeProblems(w, st.Problems, st.Now)
	writeSensorErrors(w, st, running)
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
			fmt.Fprintf(tw, "  %s\t%s\t%s\n", c.Time.In(st.Now.Location()).Format(TimeLayout), c.Command, c.Source)
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
			fmt.Fprintf(tw, "  %s\t%s\t%s\t%dms\t%s\n", r.Start.Format(TimeLayout), r.Outcome, r.Reason, r.DurationMS, extra)
		}
		tw.Flush()
	}
}

// writeProblems lists the problems firing (rules, the LLM's alert, system
// faults) with their acks, one a line.
func writeProblems(w io.Writer, ps []alert.Alert, now time.Time) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	label := "problems:"
	for _, p := range ps {
		name := p.Name()
		ack := "not acknowledged"
		if p.AckedBy != "" {
			ack = "acknowledged by " + p.AckedBy + " at " + sinceText(p.AckedAt, now)
		}
		fmt.Fprintf(tw, "%-10s%s\t%s\tsince %s\t%s\n", label, name, p.Severity, sinceText(p.Time, now), ack)
		label = ""
	}
	tw.Flush()
}

// writeSensorErrors says which sensors failed in the last sample known
// (the daemon's, or with none running the last one the state file
// stored), one a line with its error, or that none did; without a sample
// it says the sensors are not known rather than nothing.
func writeSensorErrors(w io.Writer, st heartbeat.Status, running bool) {
	if st.SensorsAt.IsZero() {
		if running {
			fmt.Fprintln(w, "sensors:  no sample yet")
		} else {
			fmt.Fprintln(w, "sensors:  not known: no daemon is running and the state file holds no sample yet ('vigil sensors' reads them now)")
		}
		return
	}
	which := "in the last sample, " + sinceText(st.SensorsAt, st.Now)
	if !running {
		which = "in the last sample stored, " + sinceText(st.SensorsAt, st.Now) + " (no daemon is running)"
	}
	if len(st.SensorErrors) == 0 {
		fmt.Fprintf(w, "sensors:  none failed %s\n", which)
		return
	}
	fmt.Fprintf(w, "sensors:  %d failed %s:\n", len(st.SensorErrors), which)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	for _, name := range slices.Sorted(maps.Keys(st.SensorErrors)) {
		fmt.Fprintf(tw, "  %s\t%s\n", name, st.SensorErrors[name])
	}
	tw.Flush()
}

// modeText names the engine's mode for a person: "LLM mode", "rules-only
// mode".
func modeText(mode string) string {
	if mode == "llm" {
		return "LLM mode"
	}
	return mode + " mode"
}

// TimeLayout is how every command shows a time: in the device's time zone
// (device.timezone), with its offset, to the second; Telegram shows an
// alert's time the same way.
const TimeLayout = transport.TimeLayout

// sinceText prints a time in its own zone (the device's): the clock time
// when it is on the same day as now, else with the date; with the offset.
func sinceText(t, now time.Time) string {
	y, m, d := t.Date()
	if ny, nm, nd := now.In(t.Location()).Date(); y == ny && m == nm && d == nd {
		return t.Format("15:04 -07:00")
	}
	return t.Format("2006-01-02 15:04 -07:00")
}

// writeSnapshot prints the last sample, one reading a line, then the
// sensors that failed.
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

// TestAlertText is the answer to a queued test alert; where says who
// delivers it.
func TestAlertText(a alert.Alert, where string) string {
	to := "every transport"
	if a.Transport != "" {
		to = a.Transport + " only"
	}
	return fmt.Sprintf("test alert %s queued for %s (%s): %s", a.ID, to, where, a.Summary)
}

// writeRuntime prints the checklist in force, the notes' count and the
// settings that do not come from the file, one a line.
func writeRuntime(w io.Writer, rt manage.Runtime, now time.Time) {
	if rt.Checklist != nil {
		fmt.Fprintf(w, "checklist: %s\n", rt.Checklist)
	}
	fmt.Fprintf(w, "notes:    %s\n", rt.NotesLine(now))
	if rt.Hides("get") {
		fmt.Fprintf(w, "settings: %s\n", manage.HiddenText("get"))
		return
	}
	if len(rt.Settings) == 0 {
		fmt.Fprintln(w, "settings: all from the config file or defaults")
		return
	}
	fmt.Fprintln(w, "settings: (not from the config file)")
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	for _, s := range rt.Settings {
		fmt.Fprintf(tw, "  %s\t%s\t%s\n", s.Key, manage.ShowSetting(s.Value), s.Origin)
	}
	tw.Flush()
}

// WriteSettings prints `vigil get`: one key a line with its value and
// origin.
func WriteSettings(w io.Writer, views []manage.SettingView) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "KEY\tVALUE\tORIGIN")
	for _, v := range views {
		fmt.Fprintf(tw, "%s\t%s\t%s\n", v.Key, manage.ShowSetting(v.Value), v.Origin)
	}
	tw.Flush()
}

// sparkWidth is the bars of a sparkline in `vigil status`: two minutes a
// bar.
const sparkWidth = 30

var stateColor = map[string]string{
	heartbeat.RuleOK: "\x1b[32m", heartbeat.RulePending: "\x1b[33m",
	heartbeat.RuleFiring: "\x1b[1;31m", heartbeat.RuleUnknown: "\x1b[2m", heartbeat.RuleDisabled: "\x1b[2m",
}

// WriteReadings prints each reading's last value, a sparkline of the last
// hour with its min and max, and the states of the rules that watch it.
func WriteReadings(w io.Writer, st heartbeat.Status, series []heartbeat.Series, rules []web.RuleInfo, now time.Time, color bool) {
	byKey := map[string]heartbeat.Series{}
	keys := []string{}
	for _, s := range series {
		byKey[s.Key] = s
		keys = append(keys, s.Key)
	}
	if st.Snapshot != nil {
		for k := range st.Snapshot.Readings {
			if _, ok := byKey[k]; !ok {
				keys = append(keys, k)
			}
		}
	}
	if len(keys) == 0 {
		return
	}
	slices.Sort(keys)
	state := map[string]string{}
	for _, r := range st.Rules {
		state[r.Name] = r.State
	}
	fmt.Fprintf(w, "readings: (last hour, %s a bar)\n", statusWindow/sparkWidth)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	for _, k := range keys {
		val := "–"
		var last device.Value
		var have bool
		if st.Snapshot != nil {
			last, have = st.Snapshot.Readings[k]
		}
		if have {
			val = heartbeat.FormatValue(last)
		} else if pts := byKey[k].Points; len(pts) > 0 { // no daemon: the last stored sample
			val = heartbeat.FormatValue(device.Value{Value: pts[len(pts)-1].Value, Unit: byKey[k].Unit})
		}
		sp := web.Sparkline(byKey[k].Points, now.Add(-statusWindow), now, sparkWidth)
		rng := "no history"
		line := strings.Repeat(" ", sparkWidth)
		if sp.N > 0 {
			line = sp.Line
			rng = trimNum(sp.Min)
			if sp.Max != sp.Min {
				rng += "–" + trimNum(sp.Max)
			}
		}
		var rs []string
		for _, ri := range rules {
			if !slices.Contains(ri.Keys, k) {
				continue
			}
			s := ri.Name + " " + state[ri.Name]
			if color {
				s = stateColor[state[ri.Name]] + s + "\x1b[0m"
			}
			rs = append(rs, s)
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\n", k, val, line, rng, strings.Join(rs, ", "))
	}
	tw.Flush()
}

// trimNum formats a sparkline's min or max as FormatValue does, unitless.
func trimNum(v float64) string { return heartbeat.FormatValue(device.Value{Value: v}) }
