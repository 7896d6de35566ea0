package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/vigil-iot/vigil/config"
	"github.com/vigil-iot/vigil/device"
	"github.com/vigil-iot/vigil/heartbeat"
	"github.com/vigil-iot/vigil/store"
	"github.com/vigil-iot/vigil/web"
)

// statusWindow is the span of the sparklines in `vigil status`.
const (
	statusWindow = time.Hour
	sparkWidth   = 30 // two minutes a bar
)

// colorOK reports whether w is a terminal and NO_COLOR is unset
// (https://no-color.org).
func colorOK(w io.Writer) bool {
	if _, set := os.LookupEnv("NO_COLOR"); set {
		return false
	}
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

var stateColor = map[string]string{
	heartbeat.RuleOK: "\x1b[32m", heartbeat.RulePending: "\x1b[33m",
	heartbeat.RuleFiring: "\x1b[1;31m", heartbeat.RuleUnknown: "\x1b[2m", heartbeat.RuleDisabled: "\x1b[2m",
}

// writeReadings prints each reading's last value, a sparkline of the last
// hour with its min and max, and the states of the rules that watch it.
func writeReadings(w io.Writer, st heartbeat.Status, series []heartbeat.Series, rules []web.RuleInfo, now time.Time, color bool) {
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

// runtimeView is what changed at run time, for status and the page: the
// keys whose value is not the file's or a default (the environment, the
// overlay), the checklist in force and the model's notes, newest first.
func runtimeView(cfg *config.Config, db *store.DB) (web.Runtime, error) {
	rt := web.Runtime{Settings: []web.Setting{}}
	for _, k := range cfg.Overridden() {
		v, err := cfg.Get(k)
		if err != nil {
			continue // an override config left out has no value to show
		}
		rt.Settings = append(rt.Settings, web.Setting{Key: k, Value: v, Origin: originText(cfg, k)})
	}
	path, over := checklistInForce(cfg)
	rt.Checklist = &web.Checklist{Path: path, FromAfar: over}
	notes, err := db.Notes()
	if err != nil {
		return rt, err
	}
	slices.Reverse(notes)
	for i := range notes {
		notes[i].Time = notes[i].Time.In(cfg.Device.Location)
	}
	rt.Notes = append([]store.Note{}, notes...)
	return rt, nil
}

// forRemote withholds from a remote viewer (MQTT, Telegram, the status
// page) what the verbs its [manage] remote lacks would show: the settings
// without "get", the notes without "notes". status is not a way around
// them.
func forRemote(rt web.Runtime, m config.Manage) web.Runtime {
	if !m.Allows("get") {
		rt.Settings, rt.Withheld = nil, append(rt.Withheld, "get")
	}
	if !m.Allows("notes") {
		rt.Notes, rt.Withheld = nil, append(rt.Withheld, "notes")
	}
	return rt
}

// writeRuntime prints the checklist in force, the notes' count and the
// settings that do not come from the file, one a line.
func writeRuntime(w io.Writer, rt web.Runtime, now time.Time) {
	if rt.Checklist != nil {
		fmt.Fprintf(w, "checklist: %s\n", rt.Checklist)
	}
	fmt.Fprintf(w, "notes:    %s\n", rt.NotesLine(now))
	if rt.Hides("get") {
		fmt.Fprintf(w, "settings: %s\n", web.HiddenText("get"))
		return
	}
	if len(rt.Settings) == 0 {
		fmt.Fprintln(w, "settings: all from the config file or defaults")
		return
	}
	fmt.Fprintln(w, "settings: (not from the config file)")
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	for _, s := range rt.Settings {
		fmt.Fprintf(tw, "  %s\t%s\t%s\n", s.Key, showSetting(s.Value), s.Origin)
	}
	tw.Flush()
}

// trimNum formats a sparkline's min or max as FormatValue does, unitless.
func trimNum(v float64) string { return heartbeat.FormatValue(device.Value{Value: v}) }

// parseHistorySince reads --since as the page's /api/history reads since
// (web.ParseSince): from 1m to the history kept.
func parseHistorySince(s string) (time.Duration, error) {
	d, err := web.ParseSince(s)
	if err != nil {
		return 0, fmt.Errorf("--%w", err)
	}
	return d, nil
}

// cmdHistory exports the history ring: `vigil history [SENSOR[.QUANTITY]]
// [--since 6h] [--csv|--json]`. It asks the daemon, or reads the state
// file read-only when none runs.
func (e *env) cmdHistory(ctx context.Context, args []string) error {
	var asCSV, asJSON bool
	since := "24h"
	pos, err := e.flags("history", args, func(fs *flag.FlagSet) {
		fs.BoolVar(&asCSV, "csv", false, "print CSV: time,reading,value,unit")
		fs.BoolVar(&asJSON, "json", false, "print JSON")
		fs.StringVar(&since, "since", since, fmt.Sprintf("how far back, as in 6h or 90m (at most %dh, the history kept)", int(heartbeat.HistoryKept/time.Hour)))
	}, -1)
	if err != nil {
		return err
	}
	if len(pos) > 1 {
		return usageErr("history: at most one SENSOR or SENSOR.QUANTITY, got %q", pos)
	}
	if asCSV && asJSON {
		return usageErr("history: --csv and --json exclude each other")
	}
	window, err := parseHistorySince(since)
	if err != nil {
		return usageErr("history: %v", err)
	}
	cfg, err := e.loadConfig()
	if err != nil {
		return err
	}
	now := time.Now()
	var series []heartbeat.Series
	resp, err := ctlCall(ctx, cfg, ctlRequest{Cmd: "history", SinceS: int64(window / time.Second)}, 30*time.Second)
	switch {
	case err == nil:
		series = resp.Series
	case err == errNoDaemon:
		a, err := e.build(ctx, cfg, e.logger(), buildOptions{store: storeReadOnly})
		if err != nil {
			return err
		}
		defer a.Close()
		if series, err = a.engine.History(ctx, now.Add(-window)); err != nil {
			return err
		}
	default:
		return err
	}
	want := ""
	if len(pos) == 1 {
		want = pos[0]
	}
	series = web.Filter(series, want)
	if want != "" && len(series) == 0 {
		return fmt.Errorf("history: no reading %q in the last %s", want, window)
	}
	loc := cfg.Device.Location
	switch {
	case asCSV:
		return web.WriteCSV(e.stdout, series, loc)
	case asJSON:
		return web.WriteJSON(e.stdout, series, now.Add(-window), loc)
	}
	tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "time\treading\tvalue")
	for _, s := range series {
		for _, p := range s.Points {
			fmt.Fprintf(tw, "%s\t%s\t%s\n", p.Time.In(loc).Format("2006-01-02 15:04:05"), s.Key, heartbeat.FormatValue(device.Value{Value: p.Value, Unit: s.Unit}))
		}
	}
	return tw.Flush()
}
