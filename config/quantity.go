package config

import (
	"fmt"
	"slices"
	"strings"
)

// Options tune ParseWith.
type Options struct {
	// Quantities returns the quantities a configured sensor produces (its
	// driver's, or for an ADC its channels', for an iio or hwmon sensor the
	// ones it lists), or false when they are not known (an unknown driver,
	// an iio sensor that lists none). With it, ParseWith rejects rule keys,
	// message placeholders and deadband keys that name a quantity the
	// sensor does not have: a rule on one could never fire. Nil skips the
	// check. cmd/vigil passes what package device's drivers register
	// (Sensor.Spec().Readings).
	Quantities func(s Sensor) ([]string, bool)
	// Board lists the quantities of the board's own health sensor
	// ("board"); nil skips the check of board.* keys.
	Board []string
	// BoardBaselines lists the board quantities that have a baseline (what
	// is usual at each hour), for usual() and unusual(); nil skips the check.
	BoardBaselines []string
	// Boards lists the board profile names (besides auto and sim) that
	// device.board may take; nil skips the check. cmd/vigil passes package
	// board's profiles, so `config check` refuses what `run` would.
	Boards []string
	// Overrides are set over the file's values, in order, and validated
	// with them: the environment's (EnvOverrides), then the run-time
	// overlay's.
	Overrides []Override
	// RunRules are rules added at run time (approved proposals), validated
	// after the file's [[rule]] tables exactly as they are; an error names
	// the "run-time rule" instead of a line. One whose name a [[rule]]
	// has is left out and listed in Config.Shadowed.
	RunRules []Rule
}

// quantities returns what sensor produces and how to name it in an error;
// ok is false when that is not known (no Options, an unknown driver).
func (p *parser) quantities(sensor string) (have []string, desc string, ok bool) {
	if sensor == BoardSensor {
		return p.opts.Board, "the board health sensor", p.opts.Board != nil
	}
	if p.opts.Quantities == nil {
		return nil, "", false
	}
	for _, s := range p.cfg.Sensors {
		if s.Name != sensor {
			continue
		}
		have, ok = p.opts.Quantities(s)
		return have, fmt.Sprintf("sensor %s (%s)", s.Name, s.Driver), ok
	}
	return nil, "", false
}

// noQuantity says why sensor has no quantity q, or returns "" when it has
// it or its quantities are not known. spell formats a suggested quantity
// the way the reference was written ("air.temperature", "{air.temperature}").
func (p *parser) noQuantity(sensor, q string, spell func(q string) string) string {
	have, desc, ok := p.quantities(sensor)
	if !ok || slices.Contains(have, q) {
		return ""
	}
	msg := desc + " has " + strings.Join(have, ", ")
	if len(have) == 0 {
		msg = desc + " has no readings"
	}
	if ch, isCh := adcChannel(q); isCh && ch <= p.adcMaxChannel(sensor) {
		return fmt.Sprintf("%s; add %d to its channels to read %s", msg, ch, q)
	}
	if s := closest(q, have); s != "" {
		msg += "; did you mean " + spell(s) + "?"
	}
	return msg
}

// adcMaxChannel returns the highest channel of an ADC sensor, -1 for other
// sensors.
func (p *parser) adcMaxChannel(sensor string) int {
	for _, s := range p.cfg.Sensors {
		if yes, _ := takes(s.Driver, "channels"); yes && s.Name == sensor {
			return maxChannel(s.Driver)
		}
	}
	return -1
}

// adcChannel reports whether q is an ADC channel read in volts, ch0 to ch7.
func adcChannel(q string) (int, bool) {
	if len(q) == 3 && strings.HasPrefix(q, "ch") && q[2] >= '0' && q[2] <= '7' {
		return int(q[2] - '0'), true
	}
	return 0, false
}

// closest returns the candidate q is most likely a misspelling or an
// abbreviation of, or "".
func closest(q string, candidates []string) string {
	best, bestD := "", 3 // at most two edits
	for _, c := range candidates {
		if len(q) >= 3 && strings.HasPrefix(c, q) {
			return c // an abbreviation: temp for temperature
		}
		if d := editDistance(q, c); d < bestD {
			best, bestD = c, d
		}
	}
	return best
}

// editDistance is the Levenshtein distance of two short ASCII names.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
