package config

import (
	"strings"
	"testing"
)

// TestCautions: a max_quiet below the interval, set in the file or by an
// override, is said once, naming the key and where it was set; one at its
// default, at or above the interval, "0", or with a schedule is not.
func TestCautions(t *testing.T) {
	for _, tt := range []struct {
		name, src string
		ovs       []Override
		want      string
	}{
		{"below the interval", "[heartbeat]\ninterval = \"1h\"\nmax_quiet = \"30m\"\n", nil,
			`config.toml:3: heartbeat.max_quiet: 30m is below heartbeat.interval (1h): every heartbeat calls the LLM, whether anything changed or not; if that is not meant, set it to at least 1h, or "0" to never force a call`},
		{"set at run time", "[heartbeat]\ninterval = \"1h\"\n", []Override{{Key: "heartbeat.max_quiet", Value: "10m", Origin: OriginSet, By: "cli"}},
			`set by cli: heartbeat.max_quiet: 10m is below heartbeat.interval (1h): every heartbeat calls the LLM, whether anything changed or not; if that is not meant, set it to at least 1h, or "0" to never force a call`},
		{"the default below a long interval", "[heartbeat]\ninterval = \"12h\"\n", nil, ""},
		{"equal", "[heartbeat]\ninterval = \"1h\"\nmax_quiet = \"1h\"\n", nil, ""},
		{"never forced", "[heartbeat]\ninterval = \"1h\"\nmax_quiet = \"0\"\n", nil, ""},
		{"a schedule", "[heartbeat]\nschedule = [\"07:30\"]\nmax_quiet = \"1m\"\n", nil, ""},
		{"heartbeats off", "[heartbeat]\ninterval = \"0\"\nmax_quiet = \"1m\"\n", nil, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c, err := ParseWith(strings.NewReader(tt.src), "config.toml", Options{Overrides: tt.ovs})
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, e := range c.Cautions() {
				got = append(got, e.Error())
			}
			if strings.Join(got, "\n") != tt.want {
				t.Errorf("Cautions() = %q, want %q", got, tt.want)
			}
		})
	}
}
