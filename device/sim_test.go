package device

import (
	"context"
	"testing"
	"time"
)

// The demo relies on it: whatever its name (which sets its phase in the
// daily cycle), a simulated temperature climbs above 35 °C during every
// excursion and falls below 33 °C between them.
func TestSimExcursionCrossesDemoThresholds(t *testing.T) {
	start := time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC)
	for _, name := range []string{"air", "freezer", "greenhouse", "x", "soil_2"} {
		var now time.Time
		s, err := NewSim(name, "bme280", start, func() time.Time { return now })
		if err != nil {
			t.Fatal(err)
		}
		var hot, cool bool
		for sec := 0; sec < 180; sec += 2 {
			now = start.Add(time.Duration(sec) * time.Second)
			r, err := s.Sense(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if r[0].Quantity != "temperature" || r[0].Unit != Celsius {
				t.Fatalf("first reading = %+v, want a temperature in °C", r[0])
			}
			hot = hot || r[0].Value > 36
			cool = cool || (hot && r[0].Value < 32)
		}
		if !hot || !cool {
			t.Errorf("sim %q in its first 3 minutes: above 36 °C %v, back below 32 °C %v; want both", name, hot, cool)
		}
	}
}

// A configured sensor's own quantities (an iio sensor's, an ADC's scaled
// channels) are simulated like the driver's: a numbered temperature is a
// temperature, with the demo's excursion.
func TestSimProduce(t *testing.T) {
	start := time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC)
	now := start.Add(90 * time.Second) // inside the first excursion
	s, err := NewSim("oven", "iio", start, func() time.Time { return now })
	if err != nil {
		t.Fatal(err)
	}
	s.Produce([]Reading{{Quantity: "temperature_2", Unit: Celsius}, {Quantity: "resistance", Unit: Ohm}})
	r, err := s.Sense(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(r) != 2 || r[0].Quantity != "temperature_2" || r[1].Unit != Ohm {
		t.Fatalf("Sense = %v, want temperature_2 and resistance", r)
	}
	if r[0].Value < 36 {
		t.Errorf("temperature_2 = %v during an excursion, want above 36 like a temperature", r[0].Value)
	}
	if r[1].Value < 10000 {
		t.Errorf("resistance = %v Ω, want a gas sensor's tens of kΩ", r[1].Value)
	}
}
