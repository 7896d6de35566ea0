package config

// This file decides which settings vigil takes but says a word about: they
// are safe and may be meant, but often are not. Refusing them would take a
// way of working from those who mean them; passing them silently would
// leave the others wondering. Like Warnings, they are said once at `vigil
// run` start and by `vigil config check`.

import "fmt"

// Cautions returns one *Error per setting in c that works, but probably
// not as meant, naming the key, its line and what to set instead.
//
// A heartbeat.max_quiet below heartbeat.interval forces an LLM call at
// every heartbeat: the gate never skips one as unchanged. That is a way
// to ask every time (the fleet proof uses 30s with a 1m interval), and a
// max_quiet equal to the interval does not do it reliably (a tick comes a
// hair less than an interval after the last call), so it is not refused.
func (c *Config) Cautions() []*Error {
	var out []*Error
	h := c.Heartbeat
	if c.given("heartbeat.max_quiet") && h.MaxQuiet.Duration > 0 && len(h.Schedule) == 0 &&
		h.Interval.Duration > 0 && h.MaxQuiet.Duration < h.Interval.Duration {
		out = append(out, c.at("heartbeat.max_quiet", fmt.Errorf(
			`%s is below heartbeat.interval (%s): every heartbeat calls the LLM, whether anything changed or not; if that is not meant, set it to at least %s, or "0" to never force a call`,
			h.MaxQuiet, h.Interval, h.Interval)))
	}
	return out
}

// at is an *Error at key: its line in the file, or the override that set
// it ("$VIGIL_HEARTBEAT_MAX_QUIET", "set by cli").
func (c *Config) at(key string, err error) *Error {
	if o, ok := c.overrides[key]; ok {
		return &Error{File: o.label(), Key: key, Err: err}
	}
	return &Error{File: c.file, Key: key, Line: c.lines[key], Err: err}
}
