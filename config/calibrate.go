package config

import (
	"fmt"
	"math"
	"strings"
)

// UnmarshalTOML decodes one quantity's calibration: { offset = N } or
// { points = [[raw, true], [raw, true]] }. Parse checks the numbers.
func (c *Calibration) UnmarshalTOML(v any) error {
	m, ok := v.(map[string]any)
	if !ok {
		return fmt.Errorf("must be a table like { offset = -1.5 } or { points = [[35.0, 33.2], [75.0, 76.1]] } (got %s)", tomlTypeName(goTypeName(v)))
	}
	*c = Calibration{}
	for _, k := range sortedKeys(m) {
		switch k {
		case "offset":
			f, ok := number(m[k])
			if !ok {
				return fmt.Errorf("offset: must be a number like -1.5 (got %s)", tomlTypeName(goTypeName(m[k])))
			}
			c.Offset = &f
		case "points":
			pts, err := decodePoints(m[k])
			if err != nil {
				return err
			}
			c.Points = pts
		default:
			return fmt.Errorf("unknown key %q (want offset or points)", k)
		}
	}
	return nil
}

// decodePoints decodes an array of arrays of numbers; validatePoints
// counts them.
func decodePoints(v any) ([][]float64, error) {
	bad := func(got string) error {
		return fmt.Errorf("points: must be two [raw, true] pairs, as in [[35.0, 33.2], [75.0, 76.1]] (got %s)", got)
	}
	outer, ok := v.([]any)
	if !ok {
		return nil, bad(tomlTypeName(goTypeName(v)))
	}
	out := make([][]float64, len(outer))
	for i, e := range outer {
		pair, ok := e.([]any)
		if !ok {
			if _, isNum := number(e); isNum {
				return nil, bad("an array of numbers")
			}
			return nil, bad("an array of " + strings.TrimPrefix(strings.TrimPrefix(tomlTypeName(goTypeName(e)), "an "), "a ") + "s")
		}
		out[i] = make([]float64, len(pair))
		for j, x := range pair {
			f, ok := number(x)
			if !ok {
				return nil, fmt.Errorf("points[%d][%d]: must be a number (got %s)", i, j, tomlTypeName(goTypeName(x)))
			}
			out[i][j] = f
		}
	}
	return out, nil
}

// number reads a TOML integer or float as a float.
func number(v any) (float64, bool) {
	switch v := v.(type) {
	case int64:
		return float64(v), true
	case float64:
		return v, true
	}
	return 0, false
}

// validateCalibration checks a sensor's calibrate table: each key a
// quantity the sensor produces, each value an offset or two points that
// make a line.
//
// Which readings an iio or hwmon sensor has is known only when it is read,
// unless it lists them (quantities = [...]). A calibration of a reading it
// does not turn out to have would silently do nothing, so such a sensor
// must list its quantities to calibrate one.
func (p *parser) validateCalibration(i int, s *Sensor) {
	for _, q := range sortedKeys(s.Calibrate) {
		c := s.Calibrate[q]
		path := at("sensor", i, "calibrate", q)
		key := func(k string) []seg { return append(at("sensor", i, "calibrate", q), seg{name: k, idx: -1}) }
		switch {
		case !validQuantity(q):
			p.bad(path, "must be a quantity name like temperature (got %q)", q)
			continue
		case p.takes(*s, "quantities") && len(s.Quantities) == 0:
			p.bad(path, `sensor %s (%s) lists no quantities, so what it reads is known only when it is read: list them, as in quantities = ["temperature", "humidity"], to calibrate one`, s.Name, s.Driver)
			continue
		case validSensorName(s.Name):
			if msg := p.noQuantity(s.Name, q, func(q string) string { return q }); msg != "" {
				p.bad(path, "%s", msg)
				continue
			}
		}
		switch {
		case c.Offset != nil && c.Points != nil:
			p.bad(path, "give offset or points, not both")
		case c.Offset != nil:
			if !finite(*c.Offset) {
				p.bad(key("offset"), "must be a finite number (got %v)", *c.Offset)
			} else if math.Abs(*c.Offset) > MaxCalibration {
				p.bad(key("offset"), "must be within ±%g (got %v)", MaxCalibration, *c.Offset)
			}
		case c.Points != nil:
			p.validatePoints(key("points"), c.Points)
		default:
			p.bad(path, "needs offset = N (added to every reading) or points = [[raw, true], [raw, true]] (the line through two readings and their true values)")
		}
	}
}

// validatePoints checks a two-point calibration: two [raw, true] pairs of
// finite numbers, with different raw and different true values.
func (p *parser) validatePoints(path []seg, pts [][]float64) {
	if len(pts) != 2 {
		p.bad(path, "must be two [raw, true] pairs, as in [[35.0, 33.2], [75.0, 76.1]] (got %d %s)", len(pts), plural(len(pts), "pair"))
		return
	}
	for j, pt := range pts {
		if len(pt) != 2 {
			p.bad(path, "points[%d]: must be a [raw, true] pair of two numbers (got %d %s)", j, len(pt), plural(len(pt), "number"))
			return
		}
		if !finite(pt[0]) || !finite(pt[1]) {
			p.bad(path, "points[%d]: must be finite numbers (got [%v, %v])", j, pt[0], pt[1])
			return
		}
	}
	switch {
	case pts[0][0] == pts[1][0]:
		p.bad(path, "the two raw values must differ, a line needs two different readings (got %v twice)", pts[0][0])
	case pts[0][1] == pts[1][1]:
		p.bad(path, "the two true values must differ, or every reading would become %v (got %v twice)", pts[0][1], pts[0][1])
	default:
		// The line device.TwoPoint applies, as true = offset + slope × raw.
		slope := (pts[1][1] - pts[0][1]) / (pts[1][0] - pts[0][0])
		offset := pts[0][1] - slope*pts[0][0]
		const how = "give a line (true = offset + slope × raw) with slope"
		switch {
		case !finite(slope) || !finite(offset) || math.Abs(slope) > MaxCalibration || math.Abs(offset) > MaxCalibration:
			p.bad(path, "%s %v and offset %v: both must be finite and within ±%g; check the two [raw, true] pairs", how, slope, offset, MaxCalibration)
		case slope == 0:
			p.bad(path, "%s 0: every reading would become %v; check the two [raw, true] pairs", how, offset)
		}
	}
}

// MaxCalibration bounds a calibration's offset and slope. A sensor's
// correction is a few units or a few percent; a line steeper or further
// off than a billion is a typo, and over the range of a float it turns a
// real reading into ±Inf, which no rule can compare and JSON cannot hold.
const MaxCalibration = 1e9

func finite(f float64) bool { return !math.IsNaN(f) && !math.IsInf(f, 0) }

func plural(n int, word string) string {
	if n == 1 {
		return word
	}
	return word + "s"
}

// calibrateTOML writes a sensor's calibrate table inline, quantities in
// order.
func calibrateTOML(cal map[string]Calibration) string {
	parts := make([]string, 0, len(cal))
	for _, q := range sortedKeys(cal) {
		c := cal[q]
		v := "{ }"
		switch {
		case c.Offset != nil:
			v = "{ offset = " + tomlFloat(*c.Offset) + " }"
		case c.Points != nil:
			pts := make([]string, len(c.Points))
			for i, pt := range c.Points {
				nums := make([]string, len(pt))
				for j, x := range pt {
					nums[j] = tomlFloat(x)
				}
				pts[i] = "[" + strings.Join(nums, ", ") + "]"
			}
			v = "{ points = [" + strings.Join(pts, ", ") + "] }"
		}
		parts = append(parts, tomlKey(q)+" = "+v)
	}
	return "{ " + strings.Join(parts, ", ") + " }"
}
