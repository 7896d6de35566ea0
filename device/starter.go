package device

// Starter rules: the [[rule]] blocks `vigil init` offers for the sensors
// it found, one per quantity where a sensible default exists, each of
// which the person can accept, change (At) or skip.
//
// Policy: a starter rule never fires on a healthy sensor in a living
// room or a greenhouse. A threshold has a clear below it (hysteresis) and
// a for long enough that one noisy sample does not page anyone; a sensor
// that stops answering is a warning after 5 minutes; "unusual for this
// hour" needs |z| above 4 for 10 minutes, and only informs.

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// StarterRule is a rule `vigil init` offers, as config.toml's [[rule]]
// takes it.
type StarterRule struct {
	// Sensor is the sensor the rule watches ("air", or "board");
	// Quantity the reading ("temperature"), or "" for a rule on the
	// sensor itself (it stopped answering).
	Sensor, Quantity string
	// Kind says what the rule is about, for the wizard's question:
	// "above" (a threshold), "lost" (error() or stale()), "unusual"
	// (unusual for this hour).
	Kind string

	Name, When, Clear, Severity, Message string
	For                                  time.Duration

	// Limit and Unit are an "above" rule's threshold, which At changes;
	// Hysteresis is how far below it Clear is.
	Limit, Hysteresis float64
	Unit              Unit
}

// Starter thresholds, by quantity: above Limit for For, clear Hysteresis
// below it.
var starterAbove = map[string]struct {
	limit, hysteresis float64
	forDur            time.Duration
	what              string
}{
	"temperature": {40, 2, 2 * time.Minute, "hot"},
	"co2":         {1500, 300, 10 * time.Minute, "co2_high"},
}

// At returns the rule with its threshold moved to limit (an "above" rule;
// others are returned unchanged).
func (r StarterRule) At(limit float64) StarterRule {
	if r.Kind != "above" {
		return r
	}
	key := Key(r.Sensor, r.Quantity)
	r.Limit = limit
	r.When = key + " > " + num(limit)
	r.Clear = key + " < " + num(limit-r.Hysteresis)
	r.Message = fmt.Sprintf("%s above %s %s: {%s}", key, num(limit), r.Unit, key)
	return r
}

func num(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

// TOML is the rule's [[rule]] block.
func (r StarterRule) TOML() string {
	var b strings.Builder
	fmt.Fprintf(&b, "[[rule]]\nname = %s\nwhen = %s\n", strconv.Quote(r.Name), strconv.Quote(r.When))
	if r.Clear != "" {
		fmt.Fprintf(&b, "clear = %s\n", strconv.Quote(r.Clear))
	}
	if r.For > 0 {
		fmt.Fprintf(&b, "for = %s\n", strconv.Quote(durString(r.For)))
	}
	fmt.Fprintf(&b, "severity = %s\nmessage = %s\n", strconv.Quote(r.Severity), strconv.Quote(r.Message))
	return b.String()
}

// durString writes 2m rather than time.Duration's 2m0s.
func durString(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

// StarterRules are the rules offered for the sensors found: for each
// sensor one that says it stopped answering, one per quantity with a
// threshold (temperature above 40 °C, CO₂ above 1500 ppm), and one when
// its first reading is unusual for this hour.
func StarterRules(found []Found) []StarterRule {
	var out []StarterRule
	for _, f := range found {
		out = append(out, SensorRules(f.Spec.Name, f.Quantities())...)
	}
	return out
}

// SensorRules are the starter rules for the sensor named name that
// produces quantities.
func SensorRules(name string, quantities []Reading) []StarterRule {
	out := []StarterRule{{
		Sensor: name, Kind: "lost", Name: name + "_lost",
		When:     fmt.Sprintf("error(%s) or stale(%s) > 5m", name, name),
		For:      2 * time.Minute,
		Severity: "warning",
		Message:  fmt.Sprintf("sensor %s is not answering: check its wiring and 'vigil sensors'", name),
	}}
	for _, q := range quantities {
		a, ok := starterAbove[q.Quantity]
		if !ok {
			continue
		}
		r := StarterRule{
			Sensor: name, Quantity: q.Quantity, Kind: "above", Name: name + "_" + a.what,
			For: a.forDur, Severity: "warning", Hysteresis: a.hysteresis, Unit: q.Unit,
		}
		out = append(out, r.At(a.limit))
	}
	// Unusual for this hour: the temperature if there is one, else the
	// first reading with a baseline.
	var pick *Reading
	for i, q := range quantities {
		if !HasBaseline(q.Unit) {
			continue
		}
		if pick == nil || q.Quantity == "temperature" && pick.Quantity != "temperature" {
			pick = &quantities[i]
		}
	}
	if pick != nil {
		key := Key(name, pick.Quantity)
		out = append(out, StarterRule{
			Sensor: name, Quantity: pick.Quantity, Kind: "unusual", Name: name + "_unusual",
			When:     fmt.Sprintf("abs(unusual(%s)) > 4", key),
			Clear:    fmt.Sprintf("abs(unusual(%s)) < 3", key),
			For:      10 * time.Minute,
			Severity: "info",
			Message:  fmt.Sprintf("%s at {%s}: unusual for this hour", key, key),
		})
	}
	return out
}

// BoardRules are the starter rules for the board's own health, which
// every config gets (also one with no sensor): a hot SoC, a full disk,
// and on a board that reports it (ThrottlePath), under-voltage.
func BoardRules(throttle bool) []StarterRule {
	b := BoardSensor
	out := []StarterRule{
		{Sensor: b, Quantity: "soc_temperature", Kind: "above", Name: "board_hot",
			When: "board.soc_temperature > 80", Clear: "board.soc_temperature < 75", Limit: 80, Hysteresis: 5, Unit: Celsius,
			For: 2 * time.Minute, Severity: "warning", Message: "SoC at {board.soc_temperature}"},
		{Sensor: b, Quantity: "disk_free", Kind: "below", Name: "disk_low",
			When: "board.disk_free < 200", Clear: "board.disk_free > 300",
			For: 10 * time.Minute, Severity: "warning", Message: "only {board.disk_free} MB left for the state file"},
	}
	if throttle {
		out = append(out, StarterRule{Sensor: b, Quantity: "undervoltage", Kind: "flag", Name: "undervoltage",
			When: "board.undervoltage == 1", For: time.Minute, Severity: "warning",
			Message: "the board is under-voltage: use a better power supply"})
	}
	return out
}
