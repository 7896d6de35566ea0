package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"text/tabwriter"
	"time"

	"github.com/vigil-iot/vigil/config"
	"github.com/vigil-iot/vigil/control"
	"github.com/vigil-iot/vigil/device"
	"github.com/vigil-iot/vigil/heartbeat"
	"github.com/vigil-iot/vigil/internal/termtext"
	"github.com/vigil-iot/vigil/manage"
	"github.com/vigil-iot/vigil/status"
)

// cmdStatus is `vigil status [--json]`: the daemon's status, or with none
// running the state file's, read-only.
func (e *env) cmdStatus(ctx context.Context, args []string) error {
	var asJSON bool
	if _, err := e.flags("status", args, func(fs *flag.FlagSet) {
		fs.BoolVar(&asJSON, "json", false, "print JSON")
	}, 0); err != nil {
		return err
	}
	base, cfg, err := e.load()
	if err != nil {
		return err
	}
	// The run-time settings as `vigil run` would apply them (a disabled
	// rule shows as disabled).
	v, running, err := e.view(ctx, cfg, base)
	if err != nil {
		return err
	}
	if asJSON {
		return writeJSON(e.stdout, struct {
			status.View
			DaemonRunning bool `json:"daemon_running"`
		}{v, running})
	}
	_ = termtext.Print(e.stdout, func(w io.Writer) { status.WriteStatus(w, v, running, status.ClockSynced()) })
	status.WriteReadings(e.stdout, v, status.Rules(cfg), time.Now(), colorOK(e.stdout))
	return nil
}

// view is the status view: the daemon's, or with none running the state
// file's, read-only (with base: the run-time settings applied).
func (e *env) view(ctx context.Context, cfg *config.Config, base *manage.Base) (v status.View, running bool, err error) {
	resp, err := e.daemonOr(ctx, cfg, control.Request{Cmd: "status"}, 10*time.Second, func() (err error) {
		v, err = e.localStatus(ctx, cfg, base)
		return err
	})
	if resp != nil && resp.Status != nil {
		v = *resp.Status
	}
	return v, resp != nil, err
}

// colorOK reports whether w is a terminal and NO_COLOR is unset
// (https://no-color.org).
func colorOK(w io.Writer) bool {
	_, noColor := os.LookupEnv("NO_COLOR")
	return !noColor && isTerminal(w)
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
	// As the page's /api/history reads since: from 1m to the history kept.
	window, err := status.ParseSince(since)
	if err != nil {
		return usageErr("history: --%v", err)
	}
	cfg, err := e.loadConfig()
	if err != nil {
		return err
	}
	now := time.Now()
	var series []heartbeat.Series
	resp, err := e.daemonOr(ctx, cfg, control.Request{Cmd: "history", SinceS: int64(window / time.Second)}, 30*time.Second, func() error {
		series, err = e.localHistory(ctx, cfg, now.Add(-window))
		return err
	})
	if err != nil {
		return err
	}
	if resp != nil {
		series = resp.Series
	}
	want := ""
	if len(pos) == 1 {
		want = pos[0]
	}
	series = status.Filter(series, want)
	if want != "" && len(series) == 0 {
		return fmt.Errorf("history: no reading %q in the last %s", want, window)
	}
	loc := cfg.Device.Location
	switch {
	case asCSV:
		return status.WriteCSV(e.stdout, series, loc)
	case asJSON:
		return status.WriteJSON(e.stdout, series, now.Add(-window), loc)
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
