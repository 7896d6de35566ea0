package device

// Calibration corrects a driver's reading of one quantity, in the
// reading's own unit: cheap sensors read off, and a BME280 warms itself by
// 1-2 °C. Sense applies it, so rules, history, MQTT, the page and the LLM
// all see the corrected value. Make one with Offset or TwoPoint; the zero
// Calibration maps every reading to 0.
type Calibration struct {
	// The line true = y0 + slope × (raw - x0).
	x0, y0, slope float64
}

// Offset returns the calibration that adds d to every reading.
func Offset(d float64) Calibration { return Calibration{x0: 0, y0: d, slope: 1} }

// TwoPoint returns the line through two readings and their true values: a
// reading of raw1 becomes true1, one of raw2 true2, and every other moves
// in proportion (ESPHome's calibrate_linear with two points). raw1 and
// raw2 must differ.
func TwoPoint(raw1, true1, raw2, true2 float64) Calibration {
	return Calibration{x0: raw1, y0: true1, slope: (true2 - true1) / (raw2 - raw1)}
}

// Apply returns the corrected value of a raw reading. It is exact at the
// first point, and an offset's is exactly raw + d.
func (c Calibration) Apply(raw float64) float64 { return c.y0 + c.slope*(raw-c.x0) }
