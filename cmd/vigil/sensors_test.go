package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/vigil-iot/vigil/config"
	"github.com/vigil-iot/vigil/device"
)

// The drivers of issue 23, with a [[sensor]] for each on board = "sim" and
// the readings the simulation must give.
const newDriversConfig = `
[[sensor]]
name = "air"
driver = "sht3x"

[[sensor]]
name = "cellar"
driver = "sht4x"
address = 0x46

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
name = "garden"
driver = "mcp3008"
channels = [{ channel = 0, quantity = "soil", unit = "%", volts = [0.0, 3.3], values = [0.0, 100.0] }, 5]

[[sensor]]
name = "adc"
driver = "mcp3208"
channels = [2]

[[sensor]]
name = "gas"
driver = "iio"
device = "bme680"
quantities = ["temperature", "humidity", "pressure", "resistance"]

[[sensor]]
name = "rack"
driver = "hwmon"
device = "lm75"
quantities = ["temperature"]

[[sensor]]
name = "any"
driver = "hwmon"
path = "/sys/class/hwmon/hwmon3"
`

// TestSimNewDrivers: on board = "sim", vigil sensors --json gives every new
// driver's readings, with their units.
func TestSimNewDrivers(t *testing.T) {
	dir := t.TempDir()
	cfg := writeConfig(t, dir, newDriversConfig)
	out, errOut, code := runIn(t, dir, nil, "-c", cfg, "sensors", "--json")
	if code != 0 {
		t.Fatalf("vigil sensors --json: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	var snap device.Snapshot
	if err := json.Unmarshal([]byte(out), &snap); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if len(snap.Errors) > 0 {
		t.Errorf("errors: %v", snap.Errors)
	}
	want := map[string]device.Unit{
		"air.temperature": device.Celsius, "air.humidity": device.Percent,
		"cellar.temperature": device.Celsius, "cellar.humidity": device.Percent,
		"kiln.temperature": device.Celsius, "kiln.cold_junction": device.Celsius,
		"cold_room.temperature": device.Celsius,
		"garden.soil":           device.Percent, "garden.ch5": device.Volt,
		"adc.ch2":         device.Volt,
		"gas.temperature": device.Celsius, "gas.humidity": device.Percent, "gas.pressure": device.HectoPascal, "gas.resistance": device.Ohm,
		"rack.temperature": device.Celsius,
		// hwmon without quantities: whatever hwmon may report.
		"any.temperature": device.Celsius, "any.humidity": device.Percent, "any.voltage": device.Volt, "any.current": device.Ampere, "any.power": device.Watt,
	}
	for k, unit := range want {
		v, ok := snap.Readings[k]
		switch {
		case !ok:
			t.Errorf("no reading %s in %v", k, snap.Keys())
		case v.Unit != unit:
			t.Errorf("%s = %v %q, want unit %q", k, v.Value, v.Unit, unit)
		}
	}
	for _, k := range snap.Keys() {
		if s, _ := device.SplitKey(k); s != config.BoardSensor {
			if _, ok := want[k]; !ok {
				t.Errorf("unexpected reading %s", k)
			}
		}
	}
	// The soil channel maps 0-3.3 V to 0-100 %; the simulation's voltage
	// stays in between.
	if v := snap.Readings["garden.soil"].Value; v <= 0 || v >= 100 {
		t.Errorf("garden.soil = %v %%, want within 0-100", v)
	}
	if v := snap.Readings["gas.resistance"].Value; v < 10000 {
		t.Errorf("gas.resistance = %v Ω, want a gas sensor's tens of kΩ", v)
	}
}

// TestSensorsDriversListsNew: vigil sensors --drivers lists each new driver
// with its bus and quantities.
func TestSensorsDriversListsNew(t *testing.T) {
	out, errOut, code := runIn(t, t.TempDir(), nil, "sensors", "--drivers")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{
		`(?m)^sht3x\s+i2c\s+0x44 \(or 0x45\)\s+-\s+temperature humidity\s`,
		`(?m)^sht4x\s+i2c\s+0x44 \(0x44-0x46\)\s+-\s+temperature humidity\s`,
		`(?m)^max31855\s+spi\s+-\s+-\s+temperature cold_junction\s`,
		`(?m)^max31865\s+spi\s+-\s+rtd, wires, ref_ohms\s+temperature\s`,
		`(?m)^mcp3008\s+spi\s+-\s+channels, vref\s+ch0 ch1 ch2 ch3 ch4 ch5 ch6 ch7\s`,
		`(?m)^mcp3208\s+spi\s+-\s+channels, vref\s+ch0 ch1 ch2 ch3 ch4 ch5 ch6 ch7\s`,
		`(?m)^iio\s+sysfs\s+-\s+path, device, quantities\s+temperature humidity pressure illuminance co2 voc resistance voltage current power\s`,
		`(?m)^hwmon\s+sysfs\s+-\s+path, device, quantities\s+temperature humidity voltage current power\s`,
		`"spi:B.C" for bme280, bmp280, max31855, max31865, mcp3008, mcp3208`,
	} {
		if !regexp.MustCompile(want).MatchString(out) {
			t.Errorf("vigil sensors --drivers does not match %s:\n%s", want, out)
		}
	}
}

// TestConfigCheckBuses: config check knows which drivers take spi:BUS.CS
// and refuses the rest, and an SPI chip on an I²C bus, with exit 78.
func TestConfigCheckBuses(t *testing.T) {
	for _, tc := range []struct{ sensor, want string }{
		{"driver = \"sht3x\"\nbus = \"spi:0.0\"", `sensor.x.bus: sht3x is an I²C chip: set an I²C bus number like "1" (got "spi:0.0"); SPI works for bme280, bmp280, max31855, max31865, mcp3008, mcp3208`},
		{"driver = \"max31865\"\nwires = 4\nbus = \"1\"", `sensor.x.bus: max31865 is an SPI chip: bus must be "spi:BUS.CS" like "spi:0.0" (got "1")`},
		{"driver = \"mcp3008\"\naddress = 0x48", `sensor.x.address: not used by driver mcp3008`},
		{"driver = \"dht22\"", `sensor.x.driver: no driver "dht22" of vigil's own, but the kernel drives it: use driver = "iio" with device = "dht11"`},
		{"driver = \"iio\"\ndevice = \"bme680\"\nquantities = [\"temperature\"]\n[[rule]]\nname = \"r\"\nwhen = \"x.humidity > 80\"", `rule.r.when: x.humidity: sensor x (iio) has temperature`},
	} {
		dir := t.TempDir()
		cfg := writeConfig(t, dir, "\n[[sensor]]\nname = \"x\"\n"+tc.sensor+"\n")
		_, errOut, code := runIn(t, dir, nil, "-c", cfg, "config", "check")
		if code != 78 || !strings.Contains(errOut, tc.want) {
			t.Errorf("config check of %q: exit %d, want 78 and %q; stderr:\n%s", tc.sensor, code, tc.want, errOut)
		}
	}
}

// TestDocsSensorExamples: every TOML example in docs/hardware.md that
// configures a sensor passes `vigil config check`, and together they show
// each driver, so the docs cannot rot.
func TestDocsSensorExamples(t *testing.T) {
	md, err := os.ReadFile(filepath.Join("..", "..", "docs", "hardware.md"))
	if err != nil {
		t.Fatal(err)
	}
	blocks := regexp.MustCompile("(?s)```toml\n(.*?)```").FindAllStringSubmatch(string(md), -1)
	shown := map[string]bool{}
	n := 0
	for _, b := range blocks {
		src := b[1]
		if !strings.Contains(src, "[[sensor]]") {
			continue
		}
		n++
		for _, m := range regexp.MustCompile(`(?m)^driver = "([a-z0-9]+)"`).FindAllStringSubmatch(src, -1) {
			shown[m[1]] = true
		}
		dir := t.TempDir()
		cfg := filepath.Join(dir, "config.toml")
		writeFile(t, cfg, src)
		out, errOut, code := runIn(t, dir, nil, "-c", cfg, "config", "check")
		if code != 0 {
			t.Errorf("docs/hardware.md example fails config check (exit %d):\n%s\nstderr:\n%s", code, src, errOut)
		}
		if !strings.Contains(out, "[[sensor]]") {
			t.Errorf("config check printed no sensors for:\n%s\nstdout:\n%s", src, out)
		}
	}
	if n < 6 {
		t.Fatalf("found %d sensor examples in docs/hardware.md, want at least 6", n)
	}
	for _, d := range []string{"sht3x", "sht4x", "max31855", "max31865", "mcp3008", "iio", "hwmon"} {
		if !shown[d] {
			t.Errorf("docs/hardware.md has no example for driver %s", d)
		}
	}
}
