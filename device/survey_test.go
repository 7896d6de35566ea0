package device

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// writeTree writes files (path under root -> content) into a new
// temporary directory and returns it.
func writeTree(t *testing.T, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	for p, c := range files {
		full := filepath.Join(root, p)
		if strings.HasSuffix(p, "/") { // a directory
			if err := os.MkdirAll(full, 0o755); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

// pi4Tree is a Raspberry Pi 4 with SPI port 0.0 only, a DS18B20, a BME680
// the kernel drives (IIO) and the SoC's thermal hwmon.
func pi4Tree(t *testing.T) string {
	return writeTree(t, map[string]string{
		"proc/device-tree/model":                            "Raspberry Pi 4 Model B Rev 1.4\x00",
		"dev/spidev0.0":                                     "",
		"sys/bus/w1/devices/w1_bus_master1/":                "",
		"sys/bus/w1/devices/28-0316a2790eff/w1_slave":       "72 01 4b 46 7f ff 0e 10 57 : crc=57 YES\n72 01 4b 46 7f ff 0e 10 57 t=23125\n",
		"sys/bus/iio/devices/iio:device0/name":              "bme680\n",
		"sys/bus/iio/devices/iio:device0/in_temp_input":     "21500\n",
		"sys/bus/iio/devices/iio:device0/in_pressure_input": "101.3\n",
		"sys/class/hwmon/hwmon0/name":                       "cpu_thermal\n",
		"sys/class/hwmon/hwmon0/temp1_input":                "47000\n",
	})
}

func fixedNow() time.Time { return time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC) }

func noSleep(context.Context, time.Duration) error { return nil }

func TestSurvey(t *testing.T) {
	bus, err := NewSimI2C("bme280@0x76,bmp280@0x77,tmp102@0x48")
	if err != nil {
		t.Fatal(err)
	}
	rep, err := Survey(bg(), SurveyOptions{Root: pi4Tree(t), Buses: bus, Now: fixedNow, Sleep: noSleep, Taken: []string{"temp"}})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Board.Name != "rpi4" || !strings.Contains(rep.Detected, `device-tree model "Raspberry Pi 4 Model B Rev 1.4"`) {
		t.Errorf("board %q detected as %q, want rpi4 from its device-tree model", rep.Board.Name, rep.Detected)
	}
	if len(rep.I2C) != 1 || rep.I2C[0].Name != "1" || !rep.I2C[0].On || len(rep.I2C[0].Chips) != 3 {
		t.Fatalf("I2C = %+v, want bus 1 with 3 chips", rep.I2C)
	}
	// SPI: 0.0 found, 0.1 off with the line that turns it on.
	if len(rep.SPI) != 2 || rep.SPI[0].Name != "0.0" || !rep.SPI[0].On || rep.SPI[1].Name != "0.1" || rep.SPI[1].On ||
		!strings.Contains(rep.SPI[1].Hint, "dtparam=spi=on") {
		t.Errorf("SPI = %+v, want 0.0 on and 0.1 off with the dtparam hint", rep.SPI)
	}
	if len(rep.W1) != 1 || !rep.W1[0].On || !slices.Contains(rep.W1[0].Devices, "28-0316a2790eff") {
		t.Errorf("W1 = %+v, want w1_bus_master1 with the DS18B20", rep.W1)
	}
	type row struct {
		name, driver string
		guess        bool
		suggest      bool
		first        float64 // the first reading's value
	}
	var got []row
	for _, f := range rep.Sensors {
		if f.Err != nil {
			t.Errorf("sensor %s (%s): %v", f.Spec.Name, f.Spec.Driver, f.Err)
			continue
		}
		got = append(got, row{f.Spec.Name, f.Spec.Driver, f.Identity.Guess, f.Suggest, f.Readings[0].Value})
	}
	want := []row{
		{"temp2", "tmp102", true, true, 25},
		{"air", "bme280", false, true, 25.08},
		{"air2", "bmp280", false, true, 25.08},
		{"probe", "ds18b20", false, true, 23.125},
		{"air3", "iio", false, true, 21.5},
		{"temp3", "hwmon", false, false, 47},
	}
	if !slices.Equal(got, want) {
		t.Errorf("sensors:\n got %v\nwant %v", got, want)
	}
	if len(rep.Sensors) > 1 && len(rep.Sensors[1].Readings) != 3 {
		t.Errorf("bme280 readings = %v, want temperature, humidity, pressure", rep.Sensors[1].Readings)
	}
}

func TestSurveyOff(t *testing.T) {
	// A Pi with I²C, SPI and 1-Wire all off: each named with its hint.
	root := writeTree(t, map[string]string{"proc/device-tree/model": "Raspberry Pi 5 Model B Rev 1.0\x00"})
	rep, err := Survey(bg(), SurveyOptions{Root: root, Buses: &fakeBuses{}})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range [][]Port{rep.I2C, rep.SPI, rep.W1} {
		if len(p) == 0 || p[0].On || p[0].Hint == "" {
			t.Errorf("ports %+v: want off with a hint", p)
		}
	}
	if !strings.Contains(rep.I2C[0].Hint, "dtparam=i2c_arm=on") || !strings.Contains(rep.W1[0].Hint, "dtoverlay=w1-gpio") {
		t.Errorf("hints %q, %q: want dtparam=i2c_arm=on and dtoverlay=w1-gpio", rep.I2C[0].Hint, rep.W1[0].Hint)
	}
	if len(rep.Sensors) != 0 {
		t.Errorf("sensors = %v, want none", rep.Sensors)
	}
}

func TestSurveyNoSuchBus(t *testing.T) {
	bus, _ := NewSimI2C("bme280@0x76")
	_, err := Survey(bg(), SurveyOptions{Board: "rpi4", Root: t.TempDir(), Buses: bus, OnlyBuses: []string{"3"}})
	if !errors.Is(err, ErrNoBus) || !strings.Contains(err.Error(), "i2c bus 3") || !strings.Contains(err.Error(), "buses here: 1") {
		t.Errorf("Survey(--bus 3) = %v, want ErrNoBus naming bus 3 and the buses here", err)
	}
	if _, err := Survey(bg(), SurveyOptions{Board: "rpi9", Root: t.TempDir()}); err == nil || !strings.Contains(err.Error(), `board "rpi9"`) {
		t.Errorf("Survey(--board rpi9) = %v, want an unknown board error", err)
	}
}

func TestSurveySim(t *testing.T) {
	// The sim board: no bus unless VIGIL_SIM_I2C gives it one, and then
	// the emulated chips are identified and read by their drivers.
	rep, err := Survey(bg(), SurveyOptions{Board: "sim", Now: fixedNow, Sleep: noSleep, Getenv: func(string) string { return "" }})
	if err != nil || len(rep.I2C) != 0 || len(rep.Sensors) != 0 || len(rep.Notes) != 1 || !strings.Contains(rep.Notes[0], SimI2CEnv) {
		t.Errorf("sim without %s: %+v, %v; want no bus, a note naming %s", SimI2CEnv, rep, err, SimI2CEnv)
	}
	env := map[string]string{SimI2CEnv: "bme280@0x76"}
	rep, err = Survey(bg(), SurveyOptions{Board: "sim", Now: fixedNow, Sleep: noSleep, Getenv: func(k string) string { return env[k] }})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Sensors) != 1 || rep.Sensors[0].Spec.Name != "air" || rep.Sensors[0].Err != nil || rep.I2C[0].Note != "emulated by "+SimI2CEnv {
		t.Fatalf("sim with %s: %+v, want one bme280 named air, read", SimI2CEnv, rep)
	}
	env[SimI2CEnv] = "bme280"
	if _, err := Survey(bg(), SurveyOptions{Board: "sim", Getenv: func(k string) string { return env[k] }}); err == nil {
		t.Errorf("Survey with %s=bme280: err = nil, want CHIP@ADDRESS", SimI2CEnv)
	}
}
