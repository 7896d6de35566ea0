package device

import (
	"context"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"periph.io/x/conn/v3/i2c"
	"periph.io/x/conn/v3/i2c/i2creg"
	"periph.io/x/conn/v3/i2c/i2ctest"

	"github.com/vigil-iot/vigil/board"
)

// TestEveryDriverRegistersItself: each driver's own registration carries
// what config, the command line and the simulator ask of it: a name of
// its own, a chip, an opener and its quantities, and bus keys that match
// its bus.
func TestEveryDriverRegistersItself(t *testing.T) {
	seen := map[string]bool{}
	for _, d := range Drivers() {
		if seen[d.Name] {
			t.Errorf("driver %q registered twice", d.Name)
		}
		seen[d.Name] = true
		if d.Chip == "" || d.Open == nil || len(d.Quantities) == 0 {
			t.Errorf("driver %q: chip %q, opener %v, quantities %v: want all three", d.Name, d.Chip, d.Open != nil, d.Quantities)
		}
		if bus := d.I2C() || d.SPI(); d.Takes("bus") != bus {
			t.Errorf("driver %q on bus %q: Takes(bus) = %v, want %v", d.Name, d.Bus, d.Takes("bus"), bus)
		}
		if d.SPIOnly() && d.I2C() {
			t.Errorf("driver %q is SPI-only and I²C", d.Name)
		}
	}
	if got, want := DriverNames(), slices.Collect(func(yield func(string) bool) {
		for _, d := range Drivers() {
			if !yield(d.Name) {
				return
			}
		}
	}); !slices.Equal(got, want) {
		t.Errorf("DriverNames() = %v, want %v", got, want)
	}
}

// TestSimulatorProducesWhatEachDriverRegisters: on the sim board every
// driver opens as its simulation, and each sensor reads exactly the
// readings its driver registers for its configuration.
func TestSimulatorProducesWhatEachDriverRegisters(t *testing.T) {
	var specs []Spec
	for _, d := range Drivers() {
		specs = append(specs, Spec{Name: d.Name, Driver: d.Name, Channels: []ADCChannel{VoltsChannel(2)}})
	}
	now := func() time.Time { return time.Unix(600, 0) }
	sensors, closeAll, problems := OpenSensors(specs, Host{Board: board.Profile{Name: "sim"}, Now: now})
	defer closeAll()
	if len(problems) > 0 || len(sensors) != len(specs)+1 {
		t.Fatalf("OpenSensors: %d sensors, problems %v; want %d and none", len(sensors), problems, len(specs)+1)
	}
	snap := Sense(context.Background(), sensors, now())
	for _, s := range specs {
		want, known := s.Readings()
		if !known {
			want, _ = Quantities(s.Driver)
		}
		for _, r := range want {
			v, ok := snap.Readings[Key(s.Name, r.Quantity)]
			if !ok || v.Unit != r.Unit {
				t.Errorf("%s: reading %s = %+v, %v; want one in %s", s.Name, r.Quantity, v, ok, r.Unit)
			}
		}
		n := 0
		for _, k := range snap.Keys() {
			if name, _ := SplitKey(k); name == s.Name {
				n++
			}
		}
		if n != len(want) {
			t.Errorf("%s: %d readings, want %d (%v)", s.Name, n, len(want), want)
		}
	}
}

// TestOpenSharesTheBus: two chips on one I²C bus are opened through the
// registry's constructors on one bus, opened once.
func TestOpenSharesTheBus(t *testing.T) {
	if m, _ := filepath.Glob("/dev/i2c-98"); len(m) > 0 {
		t.Skip("this machine has an I²C bus 98 of its own")
	}
	const name = "vigil-test-98"
	opened := 0
	bus := playback(append(tmp102Open(0x48), tmp102Open(0x49)...)...)
	if err := i2creg.Register(name, nil, 98, func() (i2c.BusCloser, error) {
		opened++
		return namedBus{bus}, nil
	}); err != nil {
		t.Fatal(err)
	}
	defer i2creg.Unregister(name)
	specs := []Spec{{Name: "a", Driver: "tmp102", Bus: "98"}, {Name: "b", Driver: "tmp102", Bus: "98", Address: 0x49}}
	sensors, closeAll, problems := OpenSensors(specs, Host{Board: board.Generic(), Now: time.Now})
	if len(problems) > 0 {
		t.Errorf("problems: %v", problems)
	}
	for i, s := range sensors[:2] {
		if _, ok := s.Sensor.(*TMP102); !ok {
			t.Errorf("sensor %d = %T, want *TMP102", i, s.Sensor)
		}
	}
	if opened != 1 {
		t.Errorf("bus 98 opened %d times, want once", opened)
	}
	if err := closeAll(); err != nil {
		t.Errorf("closeAll: %v", err)
	}
}

// namedBus is a Playback with a name, for periph.io's registry.
type namedBus struct{ *i2ctest.Playback }

func (namedBus) String() string { return "fake" }
