package config

import (
	"errors"
	"fmt"
	"strings"
	"time"
)

// UnmarshalText parses a Go duration ("30m", "0"); negative durations are
// errors.
func (d *Duration) UnmarshalText(b []byte) error {
	v, err := time.ParseDuration(string(b))
	if err != nil {
		return fmt.Errorf(`must be a duration like "30m" (got %q)`, b)
	}
	if v < 0 {
		return fmt.Errorf("must not be negative (got %q)", b)
	}
	d.Duration = v
	return nil
}

// MarshalText writes the duration the way a person would ("30m", "1h30m").
func (d Duration) MarshalText() ([]byte, error) { return []byte(d.String()), nil }

// String is like time.Duration.String without trailing zero units: "30m",
// "6h", "1h30m", "0".
func (d Duration) String() string {
	if d.Duration == 0 {
		return "0"
	}
	s := d.Duration.String()
	if strings.HasSuffix(s, "m0s") {
		s = s[:len(s)-2]
	}
	if strings.HasSuffix(s, "h0m") {
		s = s[:len(s)-2]
	}
	return s
}

// UnmarshalTOML decodes the channels key: an array of channel numbers, or
// of tables { channel, quantity, unit, volts, values }, or of both.
func (c *Channels) UnmarshalTOML(v any) error {
	var elems []any
	switch a := v.(type) {
	case []any:
		elems = a
	case []map[string]any:
		for _, m := range a {
			elems = append(elems, m)
		}
	default:
		return fmt.Errorf(`must be an array like [0, 1] or [{ channel = 0, quantity = "soil", unit = "%%", volts = [0.0, 3.3], values = [0.0, 100.0] }] (got %s)`, tomlTypeName(goTypeName(v)))
	}
	out := make(Channels, 0, len(elems))
	for i, e := range elems {
		ch, err := decodeChannel(e)
		if err != nil {
			return fmt.Errorf("channels[%d]: %w", i, err)
		}
		out = append(out, ch)
	}
	*c = out
	return nil
}

func decodeChannel(e any) (Channel, error) {
	switch e := e.(type) {
	case int64:
		if e < 0 || e > 1<<16 {
			return Channel{}, fmt.Errorf("channel %d out of range", e)
		}
		return Channel{Channel: int(e), Unit: "V"}, nil
	case map[string]any:
		return decodeChannelTable(e)
	}
	return Channel{}, fmt.Errorf("must be a channel number or a table (got %s)", tomlTypeName(goTypeName(e)))
}

func decodeChannelTable(m map[string]any) (Channel, error) {
	var ch Channel
	for _, k := range sortedKeys(m) {
		switch k {
		case "channel", "quantity", "unit", "volts", "values":
		default:
			return ch, fmt.Errorf("unknown key %q (want channel, quantity, unit, volts, values)", k)
		}
	}
	n, ok := m["channel"].(int64)
	if !ok {
		return ch, errors.New(`needs channel = N, the input number`)
	}
	if n < 0 || n > 1<<16 {
		return ch, fmt.Errorf("channel %d out of range", n)
	}
	ch.Channel = int(n)
	if ch.Quantity, ok = m["quantity"].(string); !ok {
		return ch, errors.New(`needs quantity = "name", what the channel measures (or write the bare channel number to read volts)`)
	}
	var err error
	if ch.Volts, err = floatPair(m, "volts"); err != nil {
		return ch, err
	}
	if ch.Values, err = floatPair(m, "values"); err != nil {
		return ch, err
	}
	unit, hasUnit := m["unit"]
	switch {
	case hasUnit:
		if ch.Unit, ok = unit.(string); !ok {
			return ch, fmt.Errorf("unit: must be a string like \"%%\" (got %s)", tomlTypeName(goTypeName(unit)))
		}
		if ch.Values == nil && ch.Unit != "V" {
			return ch, fmt.Errorf("unit %q needs values: without values the reading is the input in volts", ch.Unit)
		}
	case ch.Values != nil:
		return ch, errors.New(`needs unit = "..." for its values ("%", "lx"; "" for a plain number)`)
	default:
		ch.Unit = "V"
	}
	return ch, nil
}

// floatPair decodes m[key], if present, as two numbers.
func floatPair(m map[string]any, key string) ([]float64, error) {
	v, ok := m[key]
	if !ok {
		return nil, nil
	}
	if a, ok := v.([]any); ok && len(a) == 2 {
		x, okX := number(a[0])
		y, okY := number(a[1])
		if okX && okY {
			return []float64{x, y}, nil
		}
	}
	return nil, fmt.Errorf("%s: must be two numbers like [0.0, 3.3]", key)
}
