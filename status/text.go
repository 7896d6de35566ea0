package status

// The status as text: what `vigil status` prints, and the /status of
// Telegram and MQTT.

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
	"github.com/vigil-iot/vigil/transport"
)

// WriteStatus prints v, the status of a running daemon or, when none
// runs, of the state file; its Runtime (nil: not known, an older daemon)
// adds the checklist in force, the model's notes and the settings that do
// not come from the file. clockSynced says whether the system clock is
// synchronised (ClockSynced).
func WriteStatus(w io.Writer, v View, running, clockSynced bool) {
	st, rt := v.Status, v.Runtime
	daemon := "daemon running"
	if !running {
		daemon = "daemon not running"
	}
	fmt.Fprintf(w, "device:   %s (%s; %s)\n", st.Device, daemon, modeText(st.Mode))
	clock := clockWord(st.ClockPlausible, clockSynced)
	fmt.Fprintf(w, "clock:    %s, %s\n", st.Now.Format(transport.TimeLayout), clock)
	switch {
	case !st.NextRun.IsZero():
		fmt.Fprintf(w, "next run: %s\n", st.NextRun.Format(transport.TimeLayout))
	case st.HeartbeatsOff != "":
		fmt.Fprintf(w, "next run: heartbeats disabled (%s)\n", st.HeartbeatsOff)
	case !running:
		fmt.Fprintln(w, "next run: none (no daemon is running)")
	default:
		fmt.Fprintln(w, "next run: not scheduled yet")
	}
	if !st.PausedUntil.IsZero() {
		fmt.Fprintf(w, "paused:   until %s\n", st.PausedUntil.Format(transport.TimeLayout))
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
	writeWarmingUp(w, st)
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
	if v.RuleBook != nil && len(v.RuleBook.Pending) > 0 {
		fmt.Fprintln(w, "proposed: (rules the model proposed; vigil rule approve|reject ID)")
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		for _, p := range v.RuleBook.Pending {
			noisy := ""
			if p.Backtest.Noisy {
				noisy = "  noisy"
			}
			fmt.Fprintf(tw, "  %s\t%s\t%s\tfired %d times in the history%s\n", p.ID, p.Name, p.When, p.Backtest.Fired, noisy)
		}
		tw.Flush()
	}
	if len(st.Commands) > 0 {
		fmt.Fprintln(w, "commands: (accepted since start, newest last)")
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		for _, c := range st.Commands {
			fmt.Fprintf(tw, "  %s\t%s\t%s\n", c.Time.In(st.Now.Location()).Format(transport.TimeLayout), c.Command, c.Source)
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
			fmt.Fprintf(tw, "  %s\t%s\t%s\t%dms\t%s\n", r.Start.Format(transport.TimeLayout), r.Outcome, r.Reason, r.DurationMS, extra)
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

// sinceText prints a time in its own zone (the device's): the clock time
// when it is on the same day as now, else with the date; with the offset.
func sinceText(t, now time.Time) string {
	y, m, d := t.Date()
	if ny, nm, nd := now.In(t.Location()).Date(); y == ny && m == nm && d == nd {
		return t.Format("15:04 -07:00")
	}
	return t.Format("2006-01-02 15:04 -07:00")
}

// writeRuntime prints the checklist in force, the notes' count and the
// settings that do not come from the file, one a line.
func writeRuntime(w io.Writer, rt manage.Runtime, now time.Time) {
	if rt.Checklist != nil {
		fmt.Fprintf(w, "checklist: %s\n", rt.Checklist)
	}
	if rt.Digest != "" {
		fmt.Fprintf(w, "config:   %s (its digest, as vigil fleet --versions shows it)\n", rt.Digest)
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

// sparkWidth is the bars of a sparkline in `vigil status`: two minutes a
// bar.
const sparkWidth = 30

var stateColor = map[string]string{
	heartbeat.RuleOK: "\x1b[32m", heartbeat.RulePending: "\x1b[33m",
	heartbeat.RuleFiring: "\x1b[1;31m", heartbeat.RuleUnknown: "\x1b[2m", heartbeat.RuleDisabled: "\x1b[2m",
}

// WriteReadings prints each reading's last value (with what is usual for
// it now, when the view knows bands), a sparkline of the last hour with
// its min and max, and the states of the rules that watch it.
func WriteReadings(w io.Writer, v View, rules []RuleInfo, now time.Time, color bool) {
	st, series := v.Status, v.Series
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
	fmt.Fprintf(w, "readings: (last hour, %s a bar)\n", Window/sparkWidth)
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
		sp := Sparkline(byKey[k].Points, now.Add(-Window), now, sparkWidth)
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
		if len(st.Baselines) > 0 { // the usual band beside the value
			if b, ok := st.Baselines[k]; ok {
				val += "\t(" + UsualText(b, st.Unusual, st.Now) + ")"
			} else {
				val += "\t"
			}
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\n", k, val, line, rng, strings.Join(rs, ", "))
	}
	tw.Flush()
}

// trimNum formats a sparkline's min or max as FormatValue does, unitless.
func trimNum(v float64) string { return heartbeat.FormatValue(device.Value{Value: v}) }

// writeWarmingUp says which readings' baselines still warm up (usual() and
// unusual() are unknown for them) and when the last will be ready.
func writeWarmingUp(w io.Writer, st heartbeat.Status) {
	var keys []string
	var at time.Time
	for k, b := range st.Baselines {
		if !b.Ready {
			keys = append(keys, k)
			if b.ReadyAt.After(at) {
				at = b.ReadyAt
			}
		}
	}
	if len(keys) == 0 {
		return
	}
	slices.Sort(keys)
	fmt.Fprintf(w, "usual:    warming up (%s)", strings.Join(keys, ", "))
	if !at.IsZero() {
		fmt.Fprintf(w, ": ready at %s", at.Format(transport.TimeLayout))
	}
	fmt.Fprintln(w)
}
