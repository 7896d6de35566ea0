package daemon

// The text the daemon answers with besides status (package status): the
// last sample and a queued test alert. `vigil get` is manage.WriteSettings.

import (
	"fmt"
	"io"
	"slices"
	"sort"
	"text/tabwriter"

	"github.com/vigil-iot/vigil/alert"
	"github.com/vigil-iot/vigil/config"
	"github.com/vigil-iot/vigil/device"
	"github.com/vigil-iot/vigil/heartbeat"
	"github.com/vigil-iot/vigil/transport"
)

// TimeLayout is how every command shows a time: in the device's time zone
// (device.timezone), with its offset, to the second; Telegram shows an
// alert's time the same way.
const TimeLayout = transport.TimeLayout

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
// delivers it. A note follows for each transport of cfg whose
// min_severity keeps it from sending the alert.
func TestAlertText(cfg *config.Config, a alert.Alert, where string) string {
	to := "every transport"
	if a.Transport != "" {
		to = a.Transport + " only"
	}
	txt := fmt.Sprintf("test alert %s queued for %s (%s): %s", a.ID, to, where, a.Summary)
	for _, t := range []struct{ name, min string }{{"mqtt", cfg.MQTT.MinSeverity}, {"telegram", cfg.Telegram.MinSeverity}} {
		if (a.Transport != "" && a.Transport != t.name) || !slices.Contains(ConfiguredTransports(cfg), t.name) {
			continue
		}
		if m, err := alert.ParseSeverity(t.min); err == nil && a.Severity < m {
			txt += fmt.Sprintf("\nnote: %s.min_severity is %s, so %s will not send this %s alert; try --severity %s", t.name, m, t.name, a.Severity, m)
		}
	}
	return txt
}
