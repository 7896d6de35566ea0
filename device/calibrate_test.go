package device

import (
	"context"
	"math"
	"testing"
	"time"
)

// TestTwoPointByHand checks the line through (35, 33.2) and (75, 76.1),
// the humidity example of the docs, against values worked out by hand:
//
//	slope = (76.1 - 33.2) / (75 - 35) = 42.9 / 40 = 1.0725
//	true(raw) = 33.2 + 1.0725 × (raw - 35)
//	true(35)  = 33.2
//	true(75)  = 33.2 + 1.0725 × 40 = 33.2 + 42.9    = 76.1
//	true(55)  = 33.2 + 1.0725 × 20 = 33.2 + 21.45   = 54.65
//	true(0)   = 33.2 - 1.0725 × 35 = 33.2 - 37.5375 = -4.3375
//	true(100) = 33.2 + 1.0725 × 65 = 33.2 + 69.7125 = 102.9125
//
// and the same line given with the points in the other order.
func TestTwoPointByHand(t *testing.T) {
	for _, c := range []Calibration{TwoPoint(35, 33.2, 75, 76.1), TwoPoint(75, 76.1, 35, 33.2)} {
		for _, tt := range []struct{ raw, want float64 }{
			{35, 33.2}, {75, 76.1}, {55, 54.65}, {0, -4.3375}, {100, 102.9125},
		} {
			if got := c.Apply(tt.raw); math.Abs(got-tt.want) > 1e-9 {
				t.Errorf("%+v.Apply(%v) = %v, want %v", c, tt.raw, got, tt.want)
			}
		}
	}
	// A falling line: a probe that reads 10 for 20 and 20 for 10.
	//	slope = (10 - 20) / (20 - 10) = -1; true(15) = 20 - 1 × 5 = 15; true(0) = 30
	falling := TwoPoint(10, 20, 20, 10)
	for raw, want := range map[float64]float64{10: 20, 20: 10, 15: 15, 0: 30} {
		if got := falling.Apply(raw); math.Abs(got-want) > 1e-12 {
			t.Errorf("falling.Apply(%v) = %v, want %v", raw, got, want)
		}
	}
}

// TestOffset: an offset is added, exactly.
func TestOffset(t *testing.T) {
	c := Offset(-1.5)
	for raw, want := range map[float64]float64{21.9: 21.9 - 1.5, 0: -1.5, -40: -41.5} {
		if got := c.Apply(raw); got != want {
			t.Errorf("Offset(-1.5).Apply(%v) = %v, want %v", raw, got, want)
		}
	}
}

type fixedSensor []Reading

func (f fixedSensor) Sense(context.Context) ([]Reading, error) {
	return append([]Reading(nil), f...), nil
}

// TestSenseCalibrates: Sense corrects a sensor's calibrated quantities,
// keeps the driver's value as Raw and leaves everything else alone.
func TestSenseCalibrates(t *testing.T) {
	now := time.Date(2026, 11, 22, 3, 0, 0, 0, time.UTC)
	air := fixedSensor{{"temperature", 21.9, Celsius}, {"humidity", 55, Percent}, {"pressure", 1013.2, HectoPascal}}
	sensors := []Named{
		{Name: "air", Sensor: air, Calibrate: map[string]Calibration{
			"temperature": Offset(-100),
			"humidity":    TwoPoint(35, 33.2, 75, 76.1),
			"co2":         Offset(5), // none read: nothing to correct
		}},
		{Name: "shelf", Sensor: fixedSensor{{"temperature", 21.9, Celsius}}},
	}
	snap := Sense(context.Background(), sensors, now)
	want := map[string]Value{
		"air.temperature":   {21.9 - 100, Celsius},
		"air.humidity":      {54.65, Percent},
		"air.pressure":      {1013.2, HectoPascal},
		"shelf.temperature": {21.9, Celsius},
	}
	if len(snap.Readings) != len(want) {
		t.Errorf("readings %v, want %v", snap.Readings, want)
	}
	for k, w := range want {
		if got := snap.Readings[k]; got.Unit != w.Unit || math.Abs(got.Value-w.Value) > 1e-9 {
			t.Errorf("%s = %v, want %v", k, got, w)
		}
	}
	wantRaw := map[string]float64{"air.temperature": 21.9, "air.humidity": 55}
	if len(snap.Raw) != len(wantRaw) || snap.Raw["air.temperature"] != 21.9 || snap.Raw["air.humidity"] != 55 {
		t.Errorf("raw = %v, want %v", snap.Raw, wantRaw)
	}
	if c := snap.Clone(); c.Raw["air.temperature"] != 21.9 || len(c.Raw) != 2 {
		t.Errorf("Clone().Raw = %v, want %v", c.Raw, wantRaw)
	}

	// Without a calibration there is nothing raw to show.
	snap = Sense(context.Background(), sensors[1:], now)
	if snap.Raw != nil {
		t.Errorf("uncalibrated snapshot raw = %v, want nil", snap.Raw)
	}
}

// TestSenseNonFinite: a reading that is not finite, after calibration or
// straight from the driver, is an error of its sensor that names it and
// the quantity; none of that sensor's readings enter the snapshot, so no
// NaN or Inf reaches JSON (status, the sensors topic, history). Other
// sensors are read as usual.
func TestSenseNonFinite(t *testing.T) {
	now := time.Date(2026, 11, 22, 3, 0, 0, 0, time.UTC)
	sensors := []Named{
		// A slope of 1e9 (the largest config allows) over a huge raw value.
		{Name: "air", Sensor: fixedSensor{{"temperature", 1e300, Celsius}, {"humidity", 50, Percent}},
			Calibrate: map[string]Calibration{"temperature": TwoPoint(0, 0, 1, 1e9)}},
		{Name: "probe", Sensor: fixedSensor{{"temperature", math.NaN(), Celsius}}},
		{Name: "shelf", Sensor: fixedSensor{{"temperature", 21.9, Celsius}}},
	}
	snap := Sense(context.Background(), sensors, now)
	for _, k := range []string{"air.temperature", "air.humidity", "probe.temperature"} {
		if v, ok := snap.Readings[k]; ok {
			t.Errorf("Readings[%s] = %v, want no reading", k, v)
		}
	}
	if snap.Readings["shelf.temperature"].Value != 21.9 {
		t.Errorf("shelf.temperature = %v, want 21.9", snap.Readings["shelf.temperature"])
	}
	for name, want := range map[string]string{
		"air":   "air: temperature is +Inf after calibration (raw 1e+300): check the sensor's calibrate",
		"probe": "probe: temperature is NaN, not a number",
	} {
		if got := snap.Errors[name]; got != want {
			t.Errorf("Errors[%s] = %q, want %q", name, got, want)
		}
	}
}
