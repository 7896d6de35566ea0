package main

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/vigil-iot/vigil/config"
	"github.com/vigil-iot/vigil/device"
)

// TestSensorsTableRaw: the RAW column appears when a sensor is calibrated,
// filled for calibrated readings, blank for the others and "-" for a
// sensor that failed; without calibration the table is as it was.
func TestSensorsTableRaw(t *testing.T) {
	for _, tt := range []struct{ calibrate, want string }{
		{"calibrate = { temperature = { offset = -1.5 } }", "" +
			"SENSOR   QUANTITY     VALUE    RAW   UNIT  ERROR\n" +
			"air      temperature  20.4     21.9  °C    \n" +
			"air      pressure     1013.25        hPa   \n" +
			"freezer  -            -        -     -     ds18b20: no sensor\n"},
		{"", "" +
			"SENSOR   QUANTITY     VALUE    UNIT  ERROR\n" +
			"air      temperature  21.9     °C    \n" +
			"air      pressure     1013.25  hPa   \n" +
			"freezer  -            -        -     ds18b20: no sensor\n"},
	} {
		cfg, err := config.Parse(strings.NewReader("[[sensor]]\nname = \"air\"\ndriver = \"bme280\"\n"+tt.calibrate+
			"\n[[sensor]]\nname = \"freezer\"\ndriver = \"ds18b20\"\n"), "config.toml")
		if err != nil {
			t.Fatal(err)
		}
		sensors := []device.Named{
			cfg.Sensors[0].Spec().Named(fixed{{Quantity: "temperature", Value: 21.9, Unit: device.Celsius}, {Quantity: "pressure", Value: 1013.25, Unit: device.HectoPascal}}),
			cfg.Sensors[1].Spec().Named(device.Failed{Err: errors.New("ds18b20: no sensor")}),
		}
		var b bytes.Buffer
		device.WriteTable(&b, cfg.Specs(), sensors, device.Sense(context.Background(), sensors, time.Unix(0, 0)), nil)
		if got := b.String(); got != tt.want {
			t.Errorf("WriteTable with %q =\n%s\nwant\n%s", tt.calibrate, got, tt.want)
		}
	}
}

// fixed is a sensor that always reads the same.
type fixed []device.Reading

func (f fixed) Sense(context.Context) ([]device.Reading, error) {
	return append([]device.Reading(nil), f...), nil
}
