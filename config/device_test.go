package config

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/vigil-iot/vigil/device"
)

// TestADCChannels: a bare channel reads volts; a table maps volts (default
// 0 to vref) to values (default the volts).
func TestADCChannels(t *testing.T) {
	s := Sensor{Driver: "mcp3008", VRef: 3.3, Channels: Channels{
		{Channel: 4, Unit: "V"},
		{Channel: 0, Quantity: "soil", Unit: "%", Volts: []float64{2.8, 1.2}, Values: []float64{0, 100}},
		{Channel: 1, Quantity: "light", Unit: "lx", Values: []float64{0, 1000}},
		{Channel: 2, Quantity: "battery", Unit: "V"},
	}}
	got := s.adcChannels()
	want := []device.ADCChannel{
		device.VoltsChannel(4),
		{Channel: 0, Quantity: "soil", Unit: device.Percent, Volts: [2]float64{2.8, 1.2}, Values: [2]float64{0, 100}},
		{Channel: 1, Quantity: "light", Unit: "lx", Volts: [2]float64{0, 3.3}, Values: [2]float64{0, 1000}},
		{Channel: 2, Quantity: "battery", Unit: device.Volt, Volts: [2]float64{0, 3.3}, Values: [2]float64{0, 3.3}},
	}
	if !slices.Equal(got, want) {
		t.Errorf("adcChannels = %+v\nwant %+v", got, want)
	}
	// 2.0 V on the soil probe is half way: 50 %; on the light sensor
	// 606.06 lx; on the battery 2 V.
	for i, v := range []float64{50, 606.0606, 2} {
		if r := got[i+1].Reading(2.0); r.Value != v {
			t.Errorf("%s at 2 V = %v, want %v", r.Quantity, r.Value, v)
		}
	}
	rs, ok := s.Spec().Readings()
	if !ok || len(rs) != 4 || rs[0].Quantity != "ch4" || rs[1].Unit != device.Percent || rs[2].Unit != "lx" {
		t.Errorf("sensorReadings = %v, %v", rs, ok)
	}
	if _, ok := (Sensor{Driver: "iio", Device: "bme680"}).Spec().Readings(); ok {
		t.Error("sensorReadings of an iio sensor without quantities: ok, want unknown")
	}
}

// TestDriversFromTheRegistry: config knows the drivers, their buses and
// their keys from package device's registry, not from a list of its own:
// every registered driver is accepted, an unknown one is refused with the
// registry's names, and bus = "spi:0.0" is accepted for exactly the
// drivers that register SPI.
func TestDriversFromTheRegistry(t *testing.T) {
	_, err := Parse(strings.NewReader("[[sensor]]\nname = \"x\"\ndriver = \"nope\"\n"), "config.toml")
	if want := strings.Join(device.DriverNames(), ", "); err == nil || !strings.Contains(err.Error(), "(want one of "+want+")") {
		t.Errorf("unknown driver: %v, want the registry's names %s", err, want)
	}
	for _, d := range device.Drivers() {
		src := fmt.Sprintf("[[sensor]]\nname = \"x\"\ndriver = %q\n", d.Name)
		if d.Takes("wires") {
			src += "wires = 3\n"
		}
		if d.Takes("device") {
			src += "device = \"bme680\"\n"
		}
		if _, err := Parse(strings.NewReader(src), "config.toml"); err != nil {
			t.Errorf("driver %s: %v", d.Name, err)
		}
		if !d.Takes("bus") {
			continue
		}
		_, err := Parse(strings.NewReader(src+"bus = \"spi:0.0\"\n"), "config.toml")
		if (err == nil) != d.SPI() {
			t.Errorf("driver %s (bus %s) with bus = \"spi:0.0\": %v", d.Name, d.Bus, err)
		}
	}
}
