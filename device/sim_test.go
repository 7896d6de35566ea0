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

// The scripted week (sim.script = "week"): nights at 15 °C and afternoons
// at 30 °C on the device's clock, a little noise that a rerun repeats, and
// one night at 28 °C at 3 a.m., on day SimEventDay only.
func TestSimWeek(t *testing.T) {
	berlin, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		t.Fatal(err)
	}
	start := time.Date(2026, 6, 1, 0, 0, 0, 0, berlin)
	var now time.Time
	open := func() *Sim {
		s, err := NewSim("air", "bme280", start, func() time.Time { return now })
		if err != nil {
			t.Fatal(err)
		}
		s.Script, s.Location = SimWeek, berlin
		return s
	}
	a, b := open(), open()
	at := func(s *Sim, day, hour, min int) (temp, hum float64) {
		now = time.Date(2026, 6, 1+day, hour, min, 0, 0, berlin)
		r, err := s.Sense(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		return r[0].Value, r[1].Value
	}
	noisy := false
	for day := 0; day < 7; day++ {
		night, nightHum := at(a, day, 3, 0)
		noon, noonHum := at(a, day, 15, 0)
		if again, _ := at(b, day, 15, 0); again != noon {
			t.Errorf("day %d 15:00: %v, then %v from a second sim of the same name: want the same noise", day, noon, again)
		}
		if noon < 29.75 || noon > 30.25 {
			t.Errorf("day %d 15:00: %v °C, want 30 ± 0.25", day, noon)
		}
		noisy = noisy || noon != 30
		want := 15.0
		if day == SimEventDay {
			want = SimEventTemp
		}
		if night < want-0.25 || night > want+0.25 {
			t.Errorf("day %d 03:00: %v °C, want %v ± 0.25", day, night, want)
		}
		if day != SimEventDay && (nightHum < 74 || noonHum > 46) {
			t.Errorf("day %d: humidity %v %% at 03:00, %v %% at 15:00; want about 75 and 45", day, nightHum, noonHum)
		}
		if late, _ := at(a, day, 4, 0); late > 16 {
			t.Errorf("day %d 04:00: %v °C, want a night again", day, late)
		}
	}
	if !noisy {
		t.Error("every afternoon read exactly 30 °C: want a little noise")
	}
	if v, _ := at(a, SimEventDay+7, 3, 0); v < SimEventTemp-0.25 {
		t.Errorf("day %d 03:00: %v °C, want the week (and its event) to repeat", SimEventDay+7, v)
	}
}
