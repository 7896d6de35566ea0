package config

import (
	"strings"
	"testing"
)

// testQuantities stands in for package device's table.
func testQuantities(s Sensor) ([]string, bool) {
	switch s.Driver {
	case "bme280":
		return []string{"temperature", "humidity", "pressure"}, true
	case "ds18b20":
		return []string{"temperature"}, true
	case "ads1115":
		var q []string
		for _, ch := range s.Channels.Numbers() {
			q = append(q, "ch"+string(rune('0'+ch)))
		}
		return q, true
	}
	return nil, false
}

var testOptions = Options{Quantities: testQuantities, Board: []string{"soc_temperature", "load1", "disk_free"}}

func TestQuantityReferences(t *testing.T) {
	const sensors = `[[sensor]]
name = "air"
driver = "bme280"
deadband = { temperature = 0.5 }

[[sensor]]
name = "freezer"
driver = "ds18b20"

[[sensor]]
name = "soil"
driver = "ads1115"
channels = [0, 1]
`
	rule := func(lines ...string) string {
		return sensors + "\n[[rule]]\nname = \"r\"\n" + strings.Join(lines, "\n") + "\n"
	}
	tests := []struct {
		name, src, want string
	}{
		{"when typo", rule(`when = "air.temprature > 35"`),
			`config.toml:17: rule.r.when: air.temprature: sensor air (bme280) has temperature, humidity, pressure; did you mean air.temperature?`},
		{"clear typo", rule(`when = "air.temperature > 35"`, `clear = "air.temperatur < 33"`),
			`config.toml:18: rule.r.clear: air.temperatur: sensor air (bme280) has temperature, humidity, pressure; did you mean air.temperature?`},
		{"delta", rule(`when = "delta(air.humid, 10m) > 5"`),
			`config.toml:17: rule.r.when: air.humid: sensor air (bme280) has temperature, humidity, pressure; did you mean air.humidity?`},
		{"board", rule(`when = "board.soc_temp > 80"`),
			`config.toml:17: rule.r.when: board.soc_temp: the board health sensor has soc_temperature, load1, disk_free; did you mean board.soc_temperature?`},
		{"quantity of another chip", rule(`when = "freezer.humidity > 80"`),
			`config.toml:17: rule.r.when: freezer.humidity: sensor freezer (ds18b20) has temperature`},
		{"ads channel not configured", rule(`when = "soil.ch2 < 1"`),
			`config.toml:17: rule.r.when: soil.ch2: sensor soil (ads1115) has ch0, ch1; add 2 to its channels to read ch2`},
		{"message", rule(`when = "air.temperature > 35"`, `message = "hot: {air.temp}"`),
			`config.toml:18: rule.r.message: {air.temp} would print as ?: sensor air (bme280) has temperature, humidity, pressure; did you mean {air.temperature}?`},
		{"deadband", strings.Replace(sensors, "temperature = 0.5", "temprature = 0.5", 1),
			`config.toml:4: sensor.air.deadband.temprature: sensor air (bme280) has temperature, humidity, pressure; did you mean temperature?`},
		{"two in one expression", rule(`when = "air.pressure > 1 and freezer.temp > -10 or board.load > 4"`),
			"config.toml:17: rule.r.when: board.load: the board health sensor has soc_temperature, load1, disk_free; did you mean board.load1?\n" +
				"config.toml:17: rule.r.when: freezer.temp: sensor freezer (ds18b20) has temperature; did you mean freezer.temperature?"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseWith(strings.NewReader(tt.src), "config.toml", testOptions)
			if err == nil || err.Error() != tt.want {
				t.Errorf("ParseWith(%s) = %v, want\n%s", tt.name, err, tt.want)
			}
			// Without the table, only sensor names are checked.
			if _, err := Parse(strings.NewReader(tt.src), "config.toml"); err != nil {
				t.Errorf("Parse(%s) = %v, want nil", tt.name, err)
			}
		})
	}
}

func TestQuantityReferencesValid(t *testing.T) {
	src := `[[sensor]]
name = "air"
driver = "bme280"
deadband = { humidity = 2 }

[[sensor]]
name = "soil"
driver = "ads1115"
channels = [3]

[[rule]]
name = "r"
when = "air.temperature > 35 and delta(air.pressure, 1h) < -3 or soil.ch3 < 1 or board.soc_temperature > 80 or error(air)"
clear = "air.temperature < 33"
message = "{air.temperature} {{air.temp}} {soil.ch3}"
`
	if _, err := ParseWith(strings.NewReader(src), "config.toml", testOptions); err != nil {
		t.Errorf("ParseWith = %v, want nil", err)
	}
}

func TestClosest(t *testing.T) {
	have := []string{"temperature", "humidity", "pressure"}
	tests := []struct{ q, want string }{
		{"temprature", "temperature"},
		{"temp", "temperature"},
		{"humidty", "humidity"},
		{"co2", ""},
		{"pa", ""},
	}
	for _, tt := range tests {
		if got := closest(tt.q, have); got != tt.want {
			t.Errorf("closest(%q) = %q, want %q", tt.q, got, tt.want)
		}
	}
}
