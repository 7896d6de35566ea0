package device

import (
	"context"
	"fmt"
	"maps"
	"math"
	"sort"
	"strings"
	"time"
)

// Unit is the unit a reading is expressed in.
type Unit string

// Units used by vigil's drivers and board health readings.
const (
	Celsius     Unit = "°C"
	Percent     Unit = "%"
	HectoPascal Unit = "hPa"
	Volt        Unit = "V"
	Ampere      Unit = "A"
	Watt        Unit = "W"
	Lux         Unit = "lx"
	PPM         Unit = "ppm"
	PPB         Unit = "ppb"
	Ohm         Unit = "Ω"
	Megabyte    Unit = "MB"
	Second      Unit = "s"
	Count       Unit = ""     // a plain number (load average, raw ADC counts)
	Bool        Unit = "bool" // 0 or 1 (throttled, clock synced)
)

// Reading is one measured quantity of one sensor.
type Reading struct {
	Quantity string // "temperature", "humidity", "pressure", ...
	Value    float64
	Unit     Unit
}

// Sensor is anything that can be read: a chip on a bus, the board's own
// health, or a simulated waveform. Sense returns every quantity it measures;
// an error means the whole sensor failed this time.
type Sensor interface {
	Sense(ctx context.Context) ([]Reading, error)
}

// Named binds a configured name, a read timeout and calibrations to a
// Sensor.
type Named struct {
	Name    string // [a-z0-9_]; readings become Name.quantity
	Sensor  Sensor
	Timeout time.Duration // zero means no per-sensor timeout
	// Calibrate corrects the sensor's readings, by quantity; Sense applies
	// it before the readings enter the snapshot.
	Calibrate map[string]Calibration
}

// Value is a reading's value with its unit, keyed by "sensor.quantity" in a Snapshot.
type Value struct {
	Value float64 `json:"value"`
	Unit  Unit    `json:"unit"`
}

// Snapshot is the result of reading every sensor once.
type Snapshot struct {
	Time     time.Time         `json:"time"`             // when it was taken (wall clock, may be implausible)
	Readings map[string]Value  `json:"readings"`         // "air.temperature" -> 21.4 °C
	Errors   map[string]string `json:"errors,omitempty"` // "air" -> "bme280: i2c bus 1 addr 0x76: nack"
	// Raw holds the driver's values of the calibrated readings, before
	// calibration ("air.temperature" -> 21.9 while Readings has 20.4);
	// nil when no reading is calibrated. Only `vigil sensors` shows it.
	Raw map[string]float64 `json:"-"`
}

// Key returns the snapshot key of a sensor's quantity: "air.temperature".
func Key(sensor, quantity string) string { return sensor + "." + quantity }

// SplitKey splits "air.temperature" into "air" and "temperature".
func SplitKey(key string) (sensor, quantity string) {
	sensor, quantity, _ = strings.Cut(key, ".")
	return sensor, quantity
}

// Keys returns the snapshot's reading keys in sorted order.
func (s Snapshot) Keys() []string {
	keys := make([]string, 0, len(s.Readings))
	for k := range s.Readings {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// Sense reads every sensor once, each under its own timeout, and returns the
// snapshot stamped with now. A failing or hanging sensor becomes an entry in
// Errors; it never stops the others. Each reading is calibrated here, the one
// place readings enter a snapshot, so everything downstream sees the
// corrected value.
func Sense(ctx context.Context, sensors []Named, now time.Time) Snapshot {
	// Most sensors report one to three quantities, the board five or six:
	// sized up front, the map is not rebuilt as it grows.
	snap := Snapshot{Time: now, Readings: make(map[string]Value, 3*len(sensors)), Errors: map[string]string{}}
	type result struct {
		readings []Reading
		err      error
	}
	for _, n := range sensors {
		sctx, cancel := ctx, context.CancelFunc(func() {})
		if n.Timeout > 0 {
			sctx, cancel = context.WithTimeout(ctx, n.Timeout)
		}
		ch := make(chan result, 1)
		go func() {
			r, err := n.Sensor.Sense(sctx)
			ch <- result{r, err}
		}()
		var res result
		select {
		case res = <-ch:
		case <-sctx.Done():
			res.err = fmt.Errorf("%s: read timed out: %w", n.Name, sctx.Err())
		}
		cancel()
		if res.err != nil {
			snap.Errors[n.Name] = res.err.Error()
			continue
		}
		if err := finiteReadings(n, res.readings); err != nil {
			snap.Errors[n.Name] = err.Error()
			continue
		}
		for _, r := range res.readings {
			key := Key(n.Name, r.Quantity)
			if c, ok := n.Calibrate[r.Quantity]; ok {
				if snap.Raw == nil {
					snap.Raw = map[string]float64{}
				}
				snap.Raw[key] = r.Value
				r.Value = c.Apply(r.Value)
			}
			snap.Readings[key] = Value{Value: r.Value, Unit: r.Unit}
		}
	}
	return snap
}

// finiteReadings refuses a sensor whose readings, calibrated, are not all
// finite numbers. NaN and ±Inf have no JSON form (status --json, the
// sensors topic and the history export would fail on them) and no rule
// can compare them, so such a read counts as a failed read of the whole
// sensor, named in Snapshot.Errors, like any other.
func finiteReadings(n Named, readings []Reading) error {
	for _, r := range readings {
		v := r.Value
		c, calibrated := n.Calibrate[r.Quantity]
		if calibrated && !math.IsNaN(v) && !math.IsInf(v, 0) {
			v = c.Apply(v)
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return fmt.Errorf("%s: %s is %v after calibration (raw %v): check the sensor's calibrate", n.Name, r.Quantity, v, r.Value)
			}
		}
		if math.IsNaN(v) {
			return fmt.Errorf("%s: %s is NaN, not a number", n.Name, r.Quantity)
		}
		if math.IsInf(v, 0) {
			return fmt.Errorf("%s: %s is %v, not a finite number", n.Name, r.Quantity, v)
		}
	}
	return nil
}

// Clone returns a deep copy of the snapshot.
func (s Snapshot) Clone() *Snapshot {
	c := Snapshot{Time: s.Time, Readings: make(map[string]Value, len(s.Readings)), Errors: make(map[string]string, len(s.Errors))}
	for k, v := range s.Readings {
		c.Readings[k] = v
	}
	for k, v := range s.Errors {
		c.Errors[k] = v
	}
	c.Raw = maps.Clone(s.Raw)
	return &c
}
