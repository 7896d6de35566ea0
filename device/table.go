package device

import (
	"fmt"
	"io"
	"slices"
	"sort"
	"strconv"
	"text/tabwriter"
	"time"
)

// Table is what `vigil sensors --json` prints: the snapshot, with the
// driver's value next to each calibrated reading's.
type Table struct {
	Time     time.Time             `json:"time"`
	Readings map[string]TableValue `json:"readings"`
	Errors   map[string]string     `json:"errors,omitempty"`
}

// TableValue is one reading of a Table.
type TableValue struct {
	Value float64  `json:"value"`
	Unit  Unit     `json:"unit"`
	Raw   *float64 `json:"raw,omitempty"` // before calibration; only for a calibrated reading
}

// Table is the snapshot as `vigil sensors --json` prints it.
func (snap Snapshot) Table() Table {
	out := Table{Time: snap.Time, Readings: make(map[string]TableValue, len(snap.Readings)), Errors: snap.Errors}
	for k, v := range snap.Readings {
		sv := TableValue{Value: v.Value, Unit: v.Unit}
		if raw, ok := snap.Raw[k]; ok {
			sv.Raw = &raw
		}
		out.Readings[k] = sv
	}
	return out
}

// WriteTable prints the snapshot as `vigil sensors` shows it: one row per
// reading, sensors in config order and quantities in driver order, and
// one row per failed sensor. With a
// calibrated sensor, a RAW column shows the driver's values next to the
// calibrated ones. With usual (a text by reading key: what is usual now),
// a BASELINE column shows it.
func WriteTable(w io.Writer, specs []Spec, sensors []Named, snap Snapshot, usual map[string]string) {
	drivers := map[string]Spec{}
	calibrated := false
	for _, s := range specs {
		drivers[s.Name] = s
		calibrated = calibrated || len(s.Calibrate) > 0
	}
	// The RAW column's header, its cell in a failed sensor's row, and its
	// cell for a reading; each with its tab, and nothing without the column.
	rawHead, rawFailed := "", ""
	if calibrated {
		rawHead, rawFailed = "RAW\t", "-\t"
	}
	raw := func(key string) string {
		v, ok := snap.Raw[key]
		switch {
		case !calibrated:
			return ""
		case !ok:
			return "\t"
		}
		return strconv.FormatFloat(v, 'f', -1, 64) + "\t"
	}
	// The BASELINE column likewise.
	usualHead, usualFailed := "", ""
	if len(usual) > 0 {
		usualHead, usualFailed = "BASELINE\t", "-\t"
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "SENSOR\tQUANTITY\tVALUE\t%sUNIT\t%sERROR\n", rawHead, usualHead)
	for _, n := range sensors {
		if e, ok := snap.Errors[n.Name]; ok {
			fmt.Fprintf(tw, "%s\t-\t-\t%s-\t%s%s\n", n.Name, rawFailed, usualFailed, e)
			continue
		}
		var order []Reading
		if n.Name == BoardSensor {
			order = HealthQuantities()
		} else if s, ok := drivers[n.Name]; ok {
			var known bool
			if order, known = s.Readings(); !known {
				order, _ = Quantities(s.Driver) // iio, hwmon: the kinds' order
			}
		}
		var keys []string
		for _, r := range order {
			if _, ok := snap.Readings[Key(n.Name, r.Quantity)]; ok {
				keys = append(keys, Key(n.Name, r.Quantity))
			}
		}
		var rest []string
		for _, k := range snap.Keys() {
			if s, _ := SplitKey(k); s == n.Name && !slices.Contains(keys, k) {
				rest = append(rest, k)
			}
		}
		sort.Strings(rest)
		for _, k := range append(keys, rest...) {
			v := snap.Readings[k]
			_, q := SplitKey(k)
			u := ""
			if usualHead != "" {
				u = usual[k] + "\t"
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s%s\t%s\n", n.Name, q, strconv.FormatFloat(v.Value, 'f', -1, 64), raw(k), v.Unit, u)
		}
	}
	tw.Flush()
}
