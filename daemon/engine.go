package daemon

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/vigil-iot/vigil/alert"
	"github.com/vigil-iot/vigil/config"
	"github.com/vigil-iot/vigil/heartbeat"
	"github.com/vigil-iot/vigil/manage"
	"github.com/vigil-iot/vigil/schedule"
	"github.com/vigil-iot/vigil/transport"
)

// EngineConfig converts the parsed config into the engine's settings
// (BuildTime is the caller's).
func EngineConfig(cfg *config.Config) (heartbeat.Config, error) {
	hb := cfg.Heartbeat
	ec := heartbeat.Config{
		DeviceID:               cfg.Device.ID,
		SampleInterval:         hb.SampleInterval.Duration,
		SensorsPublishInterval: hb.SensorsPublishInterval.Duration,
		Location:               cfg.Device.Location,
		MaxQuiet:               hb.MaxQuiet.Duration,
		AlertCooldown:          hb.AlertCooldown.Duration,
		FailureAlertAfter:      hb.FailureAlertAfter,
		MaxLLMCallsPerDay:      hb.MaxLLMCallsPerDay,
		FloodLimit:             hb.MaxAlertsPerHour,
		FloodWindow:            time.Hour,
		Deadbands:              map[string]float64{},
		Gate:                   hb.Gate,
		Unusual:                hb.Unusual,
		Resolutions:            map[string]float64{},
		Checklist:              manage.ChecklistFunc(cfg),
		HistoryStep:            heartbeat.DefaultHistoryStep,
		Off:                    cfg.HeartbeatsOff(),
	}
	switch {
	case !hb.Enabled:
	case len(hb.Schedule) > 0:
		// The schedule replaces the interval (config refuses both).
		sched, err := schedule.Parse(hb.Schedule)
		if err != nil {
			return ec, cfg.KeyError("heartbeat.schedule", err)
		}
		ec.Schedule = sched
	default:
		ec.Interval = hb.Interval.Duration
	}
	ec.Active = hb.Active
	for _, s := range cfg.Sensors {
		for q, d := range s.Deadband {
			ec.Deadbands[s.Name+"."+q] = d
		}
		// The driver's resolution is its readings' noise floor.
		spec := s.Spec()
		if rs, ok := spec.Readings(); ok {
			for _, r := range rs {
				ec.Resolutions[s.Name+"."+r.Quantity] = spec.Resolution(r.Quantity, r.Unit)
			}
		}
	}
	for _, r := range cfg.Rules {
		spec, err := cfg.RuleSpec(r)
		if err != nil {
			return ec, err
		}
		sev, err := alert.ParseSeverity(r.Severity)
		if err != nil {
			return ec, cfg.KeyError("rule."+r.Name+".severity", err)
		}
		ec.Rules = append(ec.Rules, heartbeat.Rule{Spec: *spec, Severity: sev, Message: r.Message, Disabled: !r.Enabled})
	}
	return ec, nil
}

// ConfiguredTransports names the transports the config enables, log first.
func ConfiguredTransports(cfg *config.Config) []string {
	names := []string{"log"}
	if cfg.MQTTEnabled() {
		names = append(names, "mqtt")
	}
	if cfg.TelegramEnabled() {
		names = append(names, "telegram")
	}
	return names
}

// CheckTransport accepts "" (all transports) or a configured transport.
func CheckTransport(cfg *config.Config, name string) error {
	names := ConfiguredTransports(cfg)
	if name == "" || slices.Contains(names, name) {
		return nil
	}
	return fmt.Errorf("%q %w (configured: %s)", name, transport.ErrNoTransport, strings.Join(names, ", "))
}

// engineProblems is the App's engine as the MQTT client's ProblemSource:
// the transports are built before the engine, and run only once it is.
type engineProblems struct{ a *App }

func (p engineProblems) Problems(ctx context.Context) ([]alert.Alert, error) {
	return p.a.engine.Problems(ctx)
}

// HeartbeatSpacing is the longest a watcher should expect between two
// heartbeats (the info topic's interval, which `vigil fleet` uses to tell a
// silent device from a quiet one): the interval, a schedule's longest gap,
// or 0 when heartbeats are off.
func HeartbeatSpacing(cfg *config.Config) time.Duration {
	hb := cfg.Heartbeat
	switch {
	case !cfg.HeartbeatEnabled():
		return 0
	case len(hb.Schedule) > 0:
		s, err := schedule.Parse(hb.Schedule)
		if err != nil {
			return hb.Interval.Duration
		}
		return s.LongestGap()
	}
	return hb.Interval.Duration
}
