package config

import (
	"strings"
	"testing"
)

// TestUsualNeedsBaseline: usual() and unusual() are refused on a key that
// has no baseline (the board's flags and uptime) and on a key that does
// not exist, with the same "did you mean" as other references.
func TestUsualNeedsBaseline(t *testing.T) {
	opts := testOptions
	opts.Board = []string{"soc_temperature", "load1", "uptime", "throttled"}
	opts.BoardBaselines = []string{"soc_temperature", "load1"}
	const src = "[[sensor]]\nname = \"air\"\ndriver = \"bme280\"\n\n[[rule]]\nname = \"r\"\nwhen = %q\n"
	tests := []struct{ when, want string }{
		{"unusual(air.temperature) > 4 and usual(board.soc_temperature) < 60", ""},
		{"unusual(air.temprature) > 4",
			"config.toml:7: rule.r.when: air.temprature: sensor air (bme280) has temperature, humidity, pressure; did you mean air.temperature?"},
		{"unusual(board.uptime) > 4",
			"config.toml:7: rule.r.when: board.uptime has no baseline, so usual() and unusual() cannot use it (the board's quantities with one: soc_temperature, load1)"},
		{"usual(board.throttled) > 0",
			"config.toml:7: rule.r.when: board.throttled has no baseline, so usual() and unusual() cannot use it (the board's quantities with one: soc_temperature, load1)"},
		{"board.uptime > 60 and unusual(board.load) > 3",
			"config.toml:7: rule.r.when: board.load: the board health sensor has soc_temperature, load1, uptime, throttled; did you mean board.load1?"},
		{"unusual(nope.temperature) > 3", `config.toml:7: rule.r.when: unknown sensor "nope" (configured: board, air)`},
	}
	for _, tt := range tests {
		_, err := ParseWith(strings.NewReader(strings.Replace(src, "%q", `"`+tt.when+`"`, 1)), "config.toml", opts)
		got := ""
		if err != nil {
			got = err.Error()
		}
		if got != tt.want {
			t.Errorf("when = %q: ParseWith = %q, want %q", tt.when, got, tt.want)
		}
	}
}

// TestGate: heartbeat.gate takes deadband (the default) or unusual, and
// heartbeat.unusual a |z| from 1 to 20.
func TestGate(t *testing.T) {
	tests := []struct{ src, want string }{
		{"", ""},
		{"[heartbeat]\ngate = \"unusual\"\nunusual = 4.5\n", ""},
		{"[heartbeat]\ngate = \"usual\"\n", `config.toml:2: heartbeat.gate: must be "deadband" or "unusual" (got "usual")`},
		{"[heartbeat]\nunusual = 0.5\n", "config.toml:2: heartbeat.unusual: must be a robust |z| from 1 to 20, as in 3 (got 0.5)"},
		{"[heartbeat]\nunusual = \"3\"\n", "heartbeat.unusual"},
	}
	for _, tt := range tests {
		c, err := Parse(strings.NewReader(tt.src), "config.toml")
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("Parse(%q) = %v, want nil", tt.src, err)
		case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
			t.Errorf("Parse(%q) = %v, want %q", tt.src, err, tt.want)
		}
		if tt.src == "" && (c.Heartbeat.Gate != GateDeadband || c.Heartbeat.Unusual != 3) {
			t.Errorf("defaults: gate %q, unusual %v, want deadband, 3", c.Heartbeat.Gate, c.Heartbeat.Unusual)
		}
	}
}
