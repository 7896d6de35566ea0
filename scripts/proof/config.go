package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/vigil-iot/vigil/heartbeat"
)

// simConfig describes a config.toml for the simulated board.
type simConfig struct {
	ID             string
	Interval       string // heartbeat.interval
	SampleInterval string
	Broker         string // "" : no [mqtt]
	LLM            string // base URL; "" : rules-only
	Excursion      string // sim = {...} for every sensor; "" : quiet (no excursions)
	MaxAlerts      int    // heartbeat.max_alerts_per_hour (0: default)
	Extra          string // appended verbatim
	Checklist      string // HEARTBEAT.md text
	HTTP           string // [http] listen; "" : no status page
}

// fiveSensors is the default five-sensor sim config: the sensors of a small
// greenhouse and freezer monitor, with rules that stay quiet unless an
// excursion is configured.
const fiveSensors = `
[[sensor]]
name = "air"
driver = "bme280"
deadband = { temperature = 0.5, humidity = 2.0 }
%[1]s

[[sensor]]
name = "freezer"
driver = "ds18b20"
%[1]s

[[sensor]]
name = "light"
driver = "bh1750"
%[1]s

[[sensor]]
name = "co2"
driver = "scd4x"
%[1]s

[[sensor]]
name = "power"
driver = "ina219"
%[1]s

[[rule]]
name = "too_hot"
when = "air.temperature > 35"
clear = "air.temperature < 33"
severity = "critical"
message = "greenhouse at {air.temperature}"

[[rule]]
name = "co2_high"
when = "co2.co2 > 2000"
severity = "warning"
message = "CO2 at {co2.co2}"

[[rule]]
name = "sensor_lost"
when = "error(air) or stale(air) > 5m"
severity = "warning"
message = "air sensor is not answering"
`

// defaultChecklist is the repository's HEARTBEAT.md, the checklist the
// default config ships with.
func defaultChecklist() string {
	if b, err := os.ReadFile("HEARTBEAT.md"); err == nil {
		return string(b)
	}
	return "- Is the greenhouse air between 5 °C and 32 °C? If it is outside, alert.\n"
}

// write creates dir/config.toml and dir/HEARTBEAT.md and returns the config path.
func (c simConfig) write(dir string) (string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "[device]\nid = %q\nboard = \"sim\"\nstate_dir = \"state\"\ntimezone = \"Europe/Berlin\"\n\n", c.ID)
	fmt.Fprintf(&b, "[heartbeat]\ninterval = %q\nsample_interval = %q\nchecklist = \"HEARTBEAT.md\"\n", c.Interval, c.SampleInterval)
	if c.MaxAlerts > 0 {
		fmt.Fprintf(&b, "max_alerts_per_hour = %d\n", c.MaxAlerts)
	}
	if c.LLM != "" {
		fmt.Fprintf(&b, "\n[llm]\nprovider = \"openai\"\nbase_url = %q\nmodel = \"proof\"\napi_key_env = \"VIGIL_PROOF_KEY\"\ntimeout = \"2s\"\n", c.LLM)
	}
	if c.HTTP != "" {
		fmt.Fprintf(&b, "\n[http]\nlisten = %q\n", c.HTTP)
	}
	if c.Broker != "" {
		fmt.Fprintf(&b, "\n[mqtt]\nbroker = %q\nkeepalive = \"30s\"\nhomeassistant = true\n", c.Broker)
	}
	sim := c.Excursion
	if sim == "" {
		sim = `sim = { every = "0s" }`
	}
	if c.Extra != "" {
		b.WriteString("\n" + c.Extra + "\n")
	} else {
		fmt.Fprintf(&b, fiveSensors, sim)
	}
	cl := c.Checklist
	if cl == "" {
		cl = defaultChecklist()
	}
	if err := os.WriteFile(filepath.Join(dir, "HEARTBEAT.md"), []byte(cl), 0o644); err != nil {
		return "", err
	}
	path := filepath.Join(dir, "config.toml")
	return path, os.WriteFile(path, []byte(b.String()), 0o600)
}

// idWithPhase returns a device id whose heartbeat phase (SPEC §1: a hash of
// the id, anywhere in the interval) is below max, so a measurement knows
// when the first heartbeat comes.
func idWithPhase(prefix string, interval, max time.Duration) (string, time.Duration) {
	for i := 0; ; i++ {
		id := fmt.Sprintf("%s-%d", prefix, i)
		if p := heartbeat.Phase(id, interval); p < max {
			return id, p
		}
	}
}
