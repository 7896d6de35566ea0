package config

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// The sensors of issue 23: SHT3x/SHT4x, the SPI chips, and the kernel's
// IIO and hwmon devices, with their keys and defaults.
const newSensors = `
[[sensor]]
name = "air"
driver = "sht4x"
address = 0x45

[[sensor]]
name = "kiln"
driver = "max31855"
bus = "spi:0.0"

[[sensor]]
name = "cold_room"
driver = "max31865"
bus = "spi:0.1"
wires = 3

[[sensor]]
name = "lab"
driver = "max31865"
rtd = "pt1000"
wires = 4

[[sensor]]
name = "garden"
driver = "mcp3008"
bus = "spi:1.0"
vref = 3.3
channels = [
  { channel = 0, quantity = "soil", unit = "%", volts = [1.2, 2.8], values = [100.0, 0.0] },
  { channel = 1, quantity = "light", unit = "lx", values = [0, 1000] },
  { channel = 2, quantity = "battery" },
  7,
]

[[sensor]]
name = "adc"
driver = "mcp3208"

[[sensor]]
name = "gas"
driver = "iio"
device = "bme680"
quantities = ["temperature", "humidity", "pressure", "resistance"]

[[sensor]]
name = "probe"
driver = "hwmon"
path = "/sys/class/hwmon/hwmon2"
`

func TestNewSensorKeys(t *testing.T) {
	c := mustParse(t, newSensors)
	s := c.Sensors
	if len(s) != 8 {
		t.Fatalf("%d sensors, want 8", len(s))
	}
	check := func(name string, got, want any) {
		t.Helper()
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s mismatch (-want +got):\n%s", name, diff)
		}
	}
	check("sht4x address", s[0].Address, 0x45)
	check("max31855 bus", s[1].Bus, "spi:0.0")
	check("max31865 defaults", []any{s[2].RTD, s[2].Wires, s[2].RefOhms}, []any{"pt100", 3, 430.0})
	check("pt1000 reference", []any{s[3].RTD, s[3].RefOhms, s[3].Bus}, []any{"pt1000", 4300.0, ""})
	check("mcp3008 channels", s[4].Channels, Channels{
		{Channel: 0, Quantity: "soil", Unit: "%", Volts: []float64{1.2, 2.8}, Values: []float64{100, 0}},
		{Channel: 1, Quantity: "light", Unit: "lx", Values: []float64{0, 1000}},
		{Channel: 2, Quantity: "battery", Unit: "V"},
		{Channel: 7, Unit: "V"},
	})
	check("mcp3208 defaults", []any{s[5].Channels.Numbers(), s[5].VRef}, []any{[]int{0}, 3.3})
	check("iio", []any{s[6].Device, s[6].Path, s[6].Quantities}, []any{"bme680", "", []string{"temperature", "humidity", "pressure", "resistance"}})
	check("hwmon", []any{s[7].Device, s[7].Path}, []any{"", "/sys/class/hwmon/hwmon2"})

	back := roundTrip(t, c)
	sameLines(c, back)
	if diff := cmp.Diff(c, back, cmpConfig...); diff != "" {
		t.Errorf("round trip mismatch (-want +got):\n%s", diff)
	}
}

// A rule or message on a channel an ADC does not read says which channel to
// add, up to ch7 on an MCP3008.
func TestMCP3008ChannelHint(t *testing.T) {
	opts := Options{Quantities: func(s Sensor) ([]string, bool) {
		var q []string
		for _, n := range s.Channels.Numbers() {
			q = append(q, "ch"+string(rune('0'+n)))
		}
		return q, true
	}}
	src := "[[sensor]]\nname = \"adc\"\ndriver = \"mcp3008\"\nchannels = [0]\n[[rule]]\nname = \"r\"\nwhen = \"adc.ch6 > 1\"\n"
	_, err := ParseWith(strings.NewReader(src), "config.toml", opts)
	want := "config.toml:7: rule.r.when: adc.ch6: sensor adc (mcp3008) has ch0; add 6 to its channels to read ch6"
	if err == nil || err.Error() != want {
		t.Errorf("err = %v, want %s", err, want)
	}
}

// TestSensorError: an error about a sensor's key found after Parse names
// the file, the sensor's key, and its line, or the [[sensor]] header's
// when the key is not set.
func TestSensorError(t *testing.T) {
	src := "[[sensor]]\nname = \"air\"\ndriver = \"tmp102\"\n\n[[sensor]]\nname = \"soil\"\ndriver = \"ads1115\"\nbus = \"1\"\n"
	c, err := Parse(strings.NewReader(src), "config.toml")
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		i    int
		want string
	}{
		{0, "config.toml:1: sensor.air.bus: pick one"},
		{1, "config.toml:8: sensor.soil.bus: pick one"},
	} {
		if got := c.SensorError(tt.i, "bus", errors.New("pick one")).Error(); got != tt.want {
			t.Errorf("SensorError(%d) = %q, want %q", tt.i, got, tt.want)
		}
	}
}
