package device_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/vigil-iot/vigil/config"
	"github.com/vigil-iot/vigil/device"
)

// Every [[sensor]] and [[rule]] block the survey writes passes the
// config's validation, as `vigil config check` runs it.
func TestSurveyBlocksValidate(t *testing.T) {
	root := t.TempDir()
	for p, c := range map[string]string{
		"proc/device-tree/model":                                     "Raspberry Pi 4 Model B Rev 1.4\x00",
		"sys/bus/w1/devices/28-0316a2790eff/w1_slave":                "72 01 4b 46 7f ff 0e 10 57 : crc=57 YES\n72 01 4b 46 7f ff 0e 10 57 t=23125\n",
		"sys/bus/iio/devices/iio:device0/name":                       "bme680\n",
		"sys/bus/iio/devices/iio:device0/in_temp_input":              "21500\n",
		"sys/bus/iio/devices/iio:device1/name":                       "scd30\n",
		"sys/bus/iio/devices/iio:device1/in_concentration_co2_input": "0.06\n",
		"sys/class/hwmon/hwmon0/name":                                "lm75\n",
		"sys/class/hwmon/hwmon0/temp1_input":                         "22000\n",
		"sys/class/hwmon/hwmon1/name":                                "lm75\n",
		"sys/class/hwmon/hwmon1/temp1_input":                         "23000\n",
	} {
		full := filepath.Join(root, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	bus, err := device.NewSimI2C("bme280@0x76,bmp280@0x77,tmp102@0x48")
	if err != nil {
		t.Fatal(err)
	}
	rep, err := device.Survey(context.Background(), device.SurveyOptions{
		Root: root, Buses: bus,
		Now:   func() time.Time { return time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC) },
		Sleep: func(context.Context, time.Duration) error { return nil },
	})
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	b.WriteString("[device]\nboard = \"rpi4\"\n\n")
	for _, f := range rep.Sensors {
		if f.Err != nil {
			t.Errorf("sensor %s: %v", f.Spec.Name, f.Err)
		}
		b.WriteString(f.TOML() + "\n")
	}
	rules := append(device.StarterRules(rep.Sensors), device.BoardRules(true)...)
	for _, r := range rules {
		b.WriteString(r.TOML() + "\n")
	}
	text := b.String()
	cfg, err := config.ParseWith(strings.NewReader(text), "config.toml", config.HardwareOptions())
	if err != nil {
		t.Fatalf("the survey's blocks do not validate: %v\n%s", err, text)
	}
	if len(cfg.Sensors) != len(rep.Sensors) || len(cfg.Rules) != len(rules) {
		t.Errorf("parsed %d sensors and %d rules, want %d and %d", len(cfg.Sensors), len(cfg.Rules), len(rep.Sensors), len(rules))
	}
	for _, want := range []string{
		"name = \"air\"\ndriver = \"bme280\"\nbus = \"1\"\naddress = 0x76\n",
		"# Texas Instruments TMP102: temperature ±0.5 °C (a guess: no ID register",
		"serial = \"28-0316a2790eff\"",
		"device = \"bme680\"",
		"path = \"/sys/class/hwmon/hwmon1\"", // two lm75s: each by its path
		"when = \"air.temperature > 40\"\nclear = \"air.temperature < 38\"\nfor = \"2m\"",
		"when = \"error(air) or stale(air) > 5m\"",
		"when = \"abs(unusual(air.temperature)) > 4\"",
		"when = \"co2.co2 > 1500\"",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("the blocks do not contain %q:\n%s", want, text)
		}
	}
}

// A rule whose threshold the person changed still validates.
func TestStarterRuleAt(t *testing.T) {
	rs := device.SensorRules("air", []device.Reading{{Quantity: "temperature", Unit: device.Celsius}, {Quantity: "humidity", Unit: device.Percent}})
	var kinds []string
	for _, r := range rs {
		kinds = append(kinds, r.Kind)
	}
	if !slices.Equal(kinds, []string{"lost", "above", "unusual"}) {
		t.Fatalf("SensorRules kinds = %v, want lost, above, unusual", kinds)
	}
	hot := rs[1].At(35.5)
	if hot.When != "air.temperature > 35.5" || hot.Clear != "air.temperature < 33.5" || hot.Limit != 35.5 {
		t.Errorf("At(35.5) = %q / %q, want > 35.5 and < 33.5", hot.When, hot.Clear)
	}
	text := "[device]\nboard = \"sim\"\n[[sensor]]\nname = \"air\"\ndriver = \"sht4x\"\n" + hot.TOML()
	if _, err := config.ParseWith(strings.NewReader(text), "config.toml", config.HardwareOptions()); err != nil {
		t.Errorf("%v\n%s", err, text)
	}
}
