package config

// This file decides the bounds of every duration key, in one place: the
// file, VIGIL_ variables and `vigil set` all go through ParseWith, so each
// is held to the same bounds with the same message, which states them.
//
// Why these bounds:
//   - heartbeat.interval 1m to 24h ("0": off): the LLM budget is counted
//     per day, and a device heard from less than daily is not being
//     watched (heartbeat.schedule names times of day instead);
//     interval_min and interval_max, the model's range for it, likewise.
//   - heartbeat.sample_interval 1s to 1h: the sample loop is what alerts
//     within seconds; past an hour a freezer thaws unseen.
//   - heartbeat.sensors_publish_interval 1s to 24h: a retained topic
//     older than a day is stale to every reader.
//   - heartbeat.max_quiet up to 7 days ("0": never force a call), and
//     alert_cooldown 1m to 7 days ("0": none): beyond a week neither means
//     anything a person would notice. A max_quiet below the interval asks
//     the LLM at every heartbeat (the fleet proof uses 30s with a 1m
//     interval): allowed from 1s, with a warning (Warnings), since a
//     max_quiet equal to the interval does not do that reliably.
//   - llm.timeout 1s to 10m: a heartbeat waiting longer for one answer has
//     fallen behind its own interval; llm.retry_backoff 10ms to 5m.
//   - mqtt.keepalive 5s to 65535s: MQTT 3.1.1 §3.1.2.10 keeps it in 16
//     bits of seconds.
//   - sensor.timeout 10ms to 1m: a bus read takes milliseconds, an SCD4x
//     measurement 5s; a read that takes a minute holds up every sample.
//   - sensor.sim.every 1s to 24h ("0": no excursions), sim.length 100ms
//     to 24h (and at most every).
//   - rule.for 1s to 24h ("0": at once), rule.renotify 1m to 7 days ("0":
//     never): a reminder more than once a minute is noise.

import (
	"fmt"
	"time"
)

// bounds are what a duration key takes: Min to Max, and 0 when Zero says
// what 0 means.
type bounds struct {
	Min, Max time.Duration
	Zero     string // what "0" means ("off", "never"); "" when 0 is refused
}

const week = 7 * 24 * time.Hour

// durationBounds are the bounds of every duration key; a [[sensor]] or
// [[rule]] key is named without its table's name (rule.renotify).
var durationBounds = map[string]bounds{
	"heartbeat.interval":                 {time.Minute, 24 * time.Hour, "off"},
	"heartbeat.sample_interval":          {time.Second, time.Hour, ""},
	"heartbeat.sensors_publish_interval": {time.Second, 24 * time.Hour, ""},
	"heartbeat.max_quiet":                {time.Second, week, "never force a call"},
	"heartbeat.alert_cooldown":           {time.Minute, week, "no cooldown"},
	"heartbeat.interval_min":             {time.Minute, 24 * time.Hour, ""},
	"heartbeat.interval_max":             {time.Minute, 24 * time.Hour, ""},
	"llm.timeout":                        {time.Second, 10 * time.Minute, ""},
	"llm.retry_backoff":                  {10 * time.Millisecond, 5 * time.Minute, ""},
	"mqtt.keepalive":                     {5 * time.Second, 65535 * time.Second, ""},
	"sensor.timeout":                     {10 * time.Millisecond, time.Minute, ""},
	"sensor.sim.every":                   {time.Second, 24 * time.Hour, "no excursions"},
	"sensor.sim.length":                  {100 * time.Millisecond, 24 * time.Hour, ""},
	"rule.for":                           {time.Second, 24 * time.Hour, "at once"},
	"rule.renotify":                      {time.Minute, week, "never"},
}

// String states the bounds as the errors and docs do: `"0" (off) or 1m to
// 24h`, `1s to 1h`.
func (b bounds) String() string {
	s := Duration{b.Min}.String() + " to " + Duration{b.Max}.String()
	if b.Zero != "" {
		s = fmt.Sprintf("%q (%s) or %s", "0", b.Zero, s)
	}
	return s
}

// check reports whether d is within the bounds, and says which one it is
// not within, with all of them.
func (b bounds) check(d time.Duration) error {
	switch {
	case d == 0 && b.Zero != "":
		return nil
	case d < b.Min:
		return fmt.Errorf("must be at least %s (got %q); allowed: %s", Duration{b.Min}, Duration{d}, b)
	case d > b.Max:
		return fmt.Errorf("must be at most %s (got %q); allowed: %s", Duration{b.Max}, Duration{d}, b)
	}
	return nil
}

// durations checks every duration key of the config against its bounds.
func (p *parser) durations() {
	check := func(path []seg, key string, d Duration) {
		if err := durationBounds[key].check(d.Duration); err != nil {
			p.badErr(path, err)
		}
	}
	h, hb := &p.cfg.Heartbeat, func(key string) []seg { return at("heartbeat", -1, key) }
	check(hb("interval"), "heartbeat.interval", h.Interval)
	check(hb("sample_interval"), "heartbeat.sample_interval", h.SampleInterval)
	check(hb("sensors_publish_interval"), "heartbeat.sensors_publish_interval", h.SensorsPublishInterval)
	check(hb("max_quiet"), "heartbeat.max_quiet", h.MaxQuiet)
	check(hb("alert_cooldown"), "heartbeat.alert_cooldown", h.AlertCooldown)
	check(hb("interval_min"), "heartbeat.interval_min", h.IntervalMin)
	check(hb("interval_max"), "heartbeat.interval_max", h.IntervalMax)
	check(at("llm", -1, "timeout"), "llm.timeout", p.cfg.LLM.Timeout)
	check(at("llm", -1, "retry_backoff"), "llm.retry_backoff", p.cfg.LLM.RetryBackoff)
	check(at("mqtt", -1, "keepalive"), "mqtt.keepalive", p.cfg.MQTT.Keepalive)
	for i, s := range p.cfg.Sensors {
		check(at("sensor", i, "timeout"), "sensor.timeout", s.Timeout)
		if s.Sim != nil {
			check(at("sensor", i, "sim", "every"), "sensor.sim.every", s.Sim.Every)
			check(at("sensor", i, "sim", "length"), "sensor.sim.length", s.Sim.Length)
		}
	}
	for i, r := range p.cfg.Rules {
		check(at("rule", i, "for"), "rule.for", r.For)
		check(at("rule", i, "renotify"), "rule.renotify", r.Renotify)
	}
}
