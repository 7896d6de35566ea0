package config

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func ptr(f float64) *float64 { return &f }

// TestCalibrateParses: an offset, two points (integers read as numbers),
// and the same written as sub-tables.
func TestCalibrateParses(t *testing.T) {
	want := map[string]Calibration{
		"temperature": {Offset: ptr(-1.5)},
		"humidity":    {Points: [][]float64{{35, 33.2}, {75, 76.1}}},
	}
	for name, src := range map[string]string{
		"inline": "[[sensor]]\nname = \"air\"\ndriver = \"bme280\"\n" +
			"calibrate = { temperature = { offset = -1.5 }, humidity = { points = [[35, 33.2], [75.0, 76.1]] } }\n",
		"sub-tables": "[[sensor]]\nname = \"air\"\ndriver = \"bme280\"\n" +
			"[sensor.calibrate.temperature]\noffset = -1.5\n[sensor.calibrate.humidity]\npoints = [[35.0, 33.2], [75.0, 76.1]]\n",
	} {
		c, err := ParseWith(strings.NewReader(src), "config.toml", testOptions)
		if err != nil {
			t.Fatalf("%s: ParseWith = %v", name, err)
		}
		if diff := cmp.Diff(want, c.Sensors[0].Calibrate); diff != "" {
			t.Errorf("%s: calibrate (-want +got):\n%s", name, diff)
		}
	}
}

// TestCalibrateRefused: every calibration config check refuses, each
// error naming the file, the line and the key.
func TestCalibrateRefused(t *testing.T) {
	air := "[[sensor]]\nname = \"air\"\ndriver = \"bme280\"\n"
	cal := func(s string) string { return air + "calibrate = " + s + "\n" }
	tests := []struct{ name, src, want string }{
		{"quantity the driver lacks", cal("{ co2 = { offset = 10.0 } }"),
			`config.toml:4: sensor.air.calibrate.co2: sensor air (bme280) has temperature, humidity, pressure`},
		{"quantity misspelt", cal("{ temprature = { offset = -1.5 } }"),
			`config.toml:4: sensor.air.calibrate.temprature: sensor air (bme280) has temperature, humidity, pressure; did you mean temperature?`},
		{"ads channel not read", "[[sensor]]\nname = \"soil\"\ndriver = \"ads1115\"\nchannels = [0, 1]\ncalibrate = { ch2 = { offset = 0.1 } }\n",
			`config.toml:5: sensor.soil.calibrate.ch2: sensor soil (ads1115) has ch0, ch1; add 2 to its channels to read ch2`},
		{"not a quantity name", cal(`{ "Temp C" = { offset = 1.0 } }`),
			`config.toml:4: sensor.air.calibrate."Temp C": must be a quantity name like temperature (got "Temp C")`},
		{"offset nan", cal("{ temperature = { offset = nan } }"),
			`config.toml:4: sensor.air.calibrate.temperature.offset: must be a finite number (got NaN)`},
		{"offset inf", cal("{ temperature = { offset = -inf } }"),
			`config.toml:4: sensor.air.calibrate.temperature.offset: must be a finite number (got -Inf)`},
		{"point inf", cal("{ humidity = { points = [[35.0, 33.2], [inf, 76.1]] } }"),
			`config.toml:4: sensor.air.calibrate.humidity.points: points[1]: must be finite numbers (got [+Inf, 76.1])`},
		{"point nan", cal("{ humidity = { points = [[35.0, nan], [75.0, 76.1]] } }"),
			`config.toml:4: sensor.air.calibrate.humidity.points: points[0]: must be finite numbers (got [35, NaN])`},
		{"equal raw points", cal("{ humidity = { points = [[35.0, 33.2], [35.0, 76.1]] } }"),
			`config.toml:4: sensor.air.calibrate.humidity.points: the two raw values must differ, a line needs two different readings (got 35 twice)`},
		{"equal true values", cal("{ humidity = { points = [[35.0, 50.0], [75.0, 50.0]] } }"),
			`config.toml:4: sensor.air.calibrate.humidity.points: the two true values must differ, or every reading would become 50 (got 50 twice)`},
		{"points that overflow", cal("{ temperature = { points = [[0,0],[1e-300,1e300]] } }"),
			`config.toml:4: sensor.air.calibrate.temperature.points: give a line (true = offset + slope × raw) with slope +Inf and offset NaN: both must be finite and within ±1e+09; check the two [raw, true] pairs`},
		{"points too steep", cal("{ temperature = { points = [[0.0, 0.0], [1e-6, 1e4]] } }"),
			`config.toml:4: sensor.air.calibrate.temperature.points: give a line (true = offset + slope × raw) with slope 1e+10 and offset 0: both must be finite and within ±1e+09; check the two [raw, true] pairs`},
		{"points with a huge offset", cal("{ temperature = { points = [[1e10, 0.0], [2e10, 1e10]] } }"),
			`config.toml:4: sensor.air.calibrate.temperature.points: give a line (true = offset + slope × raw) with slope 1 and offset -1e+10: both must be finite and within ±1e+09; check the two [raw, true] pairs`},
		{"points whose slope underflows to 0", cal("{ temperature = { points = [[0.0, 0.0], [1e300, 1e-300]] } }"),
			`config.toml:4: sensor.air.calibrate.temperature.points: give a line (true = offset + slope × raw) with slope 0: every reading would become 0; check the two [raw, true] pairs`},
		{"offset beyond 1e9", cal("{ temperature = { offset = 1e10 } }"),
			`config.toml:4: sensor.air.calibrate.temperature.offset: must be within ±1e+09 (got 1e+10)`},
		{"offset and points", cal("{ temperature = { offset = -1.5, points = [[0.0, 0.0], [1.0, 1.0]] } }"),
			`config.toml:4: sensor.air.calibrate.temperature: give offset or points, not both`},
		{"neither", cal("{ temperature = {} }"),
			`config.toml:4: sensor.air.calibrate.temperature: needs offset = N (added to every reading) or points = [[raw, true], [raw, true]] (the line through two readings and their true values)`},
		{"one pair", cal("{ humidity = { points = [[35.0, 33.2]] } }"),
			`config.toml:4: sensor.air.calibrate.humidity.points: must be two [raw, true] pairs, as in [[35.0, 33.2], [75.0, 76.1]] (got 1 pair)`},
		{"three pairs", cal("{ humidity = { points = [[35.0, 33.2], [55.0, 54.0], [75.0, 76.1]] } }"),
			`config.toml:4: sensor.air.calibrate.humidity.points: must be two [raw, true] pairs, as in [[35.0, 33.2], [75.0, 76.1]] (got 3 pairs)`},
		{"a pair of three", cal("{ humidity = { points = [[35.0, 33.2], [75.0, 76.1, 1.0]] } }"),
			`config.toml:4: sensor.air.calibrate.humidity.points: points[1]: must be a [raw, true] pair of two numbers (got 3 numbers)`},
		{"a flat list", cal("{ humidity = { points = [35.0, 33.2] } }"),
			`config.toml:4: sensor.air.calibrate.humidity: points: must be two [raw, true] pairs, as in [[35.0, 33.2], [75.0, 76.1]] (got an array of numbers)`},
		{"a point not a number", cal(`{ humidity = { points = [[35.0, 33.2], [75.0, "76.1"]] } }`),
			`config.toml:4: sensor.air.calibrate.humidity: points[1][1]: must be a number (got a string)`},
		{"points a table", cal(`{ humidity = { points = { raw = 35.0 } } }`),
			`config.toml:4: sensor.air.calibrate.humidity: points: must be two [raw, true] pairs, as in [[35.0, 33.2], [75.0, 76.1]] (got a table)`},
		{"unknown key on its own line", air + "[sensor.calibrate.temperature]\noffset = -1.5\nscale = 2.0\n",
			`config.toml:4: sensor.air.calibrate.temperature: unknown key "scale" (want offset or points)`},
		{"offset a string", cal(`{ temperature = { offset = "-1.5" } }`),
			`config.toml:4: sensor.air.calibrate.temperature: offset: must be a number like -1.5 (got a string)`},
		{"a bare number", cal("{ temperature = -1.5 }"),
			`config.toml:4: sensor.air.calibrate.temperature: must be a table like { offset = -1.5 } or { points = [[35.0, 33.2], [75.0, 76.1]] } (got a float)`},
		{"unknown key", cal("{ temperature = { offset = -1.5, scale = 2.0 } }"),
			`config.toml:4: sensor.air.calibrate.temperature: unknown key "scale" (want offset or points)`},
		{"on its own line", air + "[sensor.calibrate.humidity]\n\npoints = [[35.0, 33.2], [35.0, 76.1]]\n",
			`config.toml:6: sensor.air.calibrate.humidity.points: the two raw values must differ, a line needs two different readings (got 35 twice)`},
		{"kernel sensor without quantities", "[[sensor]]\nname = \"gas\"\ndriver = \"iio\"\ndevice = \"bme680\"\ncalibrate = { temperature = { offset = -1.5 } }\n",
			`config.toml:5: sensor.gas.calibrate.temperature: sensor gas (iio) lists no quantities, so what it reads is known only when it is read: list them, as in quantities = ["temperature", "humidity"], to calibrate one`},
		{"two sensors, two errors", cal("{ temperature = { offset = nan } }") + "[[sensor]]\nname = \"b\"\ndriver = \"ds18b20\"\ncalibrate = { humidity = { offset = 1.0 } }\n",
			"config.toml:4: sensor.air.calibrate.temperature.offset: must be a finite number (got NaN)\n" +
				"config.toml:8: sensor.b.calibrate.humidity: sensor b (ds18b20) has temperature"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseWith(strings.NewReader(tt.src), "config.toml", testOptions)
			if err == nil || err.Error() != tt.want {
				t.Errorf("ParseWith:\n%s\n= %v\nwant\n%s", tt.src, err, tt.want)
			}
			for _, e := range Errors(err) {
				if e.Line == 0 || !strings.Contains(e.Key, "calibrate") {
					t.Errorf("error %q names no line or no calibrate key", e)
				}
			}
		})
	}
}

// TestCalibrateKernelSensor: an iio or hwmon sensor that lists its
// quantities may calibrate one of them, and not one it does not list.
func TestCalibrateKernelSensor(t *testing.T) {
	opts := Options{Quantities: func(s Sensor) ([]string, bool) { return s.Quantities, len(s.Quantities) > 0 }}
	src := "[[sensor]]\nname = \"rack\"\ndriver = \"hwmon\"\ndevice = \"lm75\"\nquantities = [\"temperature\"]\ncalibrate = { temperature = { offset = -0.5 } }\n"
	if _, err := ParseWith(strings.NewReader(src), "config.toml", opts); err != nil {
		t.Errorf("ParseWith = %v, want nil", err)
	}
	src = strings.Replace(src, "{ temperature = { offset", "{ humidity = { offset", 1)
	want := `config.toml:6: sensor.rack.calibrate.humidity: sensor rack (hwmon) has temperature`
	if _, err := ParseWith(strings.NewReader(src), "config.toml", opts); err == nil || err.Error() != want {
		t.Errorf("ParseWith = %v, want %s", err, want)
	}
}

// TestCalibrateWritten: the resolved config shows each calibration, in
// quantity order, as TOML that reads back the same.
func TestCalibrateWritten(t *testing.T) {
	c := mustParse(t, "[[sensor]]\nname = \"air\"\ndriver = \"bme280\"\n"+
		"calibrate = { temperature = { offset = -1.5 }, humidity = { points = [[35, 33.2], [75.0, 76.1]] }, pressure = { offset = 0 } }\n")
	out := writeString(t, c)
	want := "\ncalibrate = { humidity = { points = [[35.0, 33.2], [75.0, 76.1]] }, pressure = { offset = 0.0 }, temperature = { offset = -1.5 } }\n"
	if !strings.Contains(out, want) {
		t.Errorf("WriteTOML lacks %q:\n%s", want, out)
	}
	back := roundTrip(t, c)
	sameLines(c, back)
	if diff := cmp.Diff(c, back, cmpConfig...); diff != "" {
		t.Errorf("round trip (-want +got):\n%s", diff)
	}
	if out := writeString(t, mustParse(t, "[[sensor]]\nname = \"air\"\ndriver = \"bme280\"\n")); strings.Contains(out, "calibrate") {
		t.Errorf("WriteTOML of a sensor without calibration mentions it:\n%s", out)
	}
}
