package config

import (
	"errors"
	"fmt"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/vigil-iot/vigil/rule"
)

var cmpConfig = []cmp.Option{
	cmpopts.IgnoreUnexported(Config{}, Secret{}),
	cmp.Comparer(func(a, b *time.Location) bool { return a.String() == b.String() }),
	cmpopts.EquateEmpty(),
}

func parseString(t *testing.T, src string) (*Config, error) {
	t.Helper()
	return Parse(strings.NewReader(src), "config.toml")
}

func mustParse(t *testing.T, src string) *Config {
	t.Helper()
	c, err := parseString(t, src)
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	return c
}

func TestDefaults(t *testing.T) {
	got := mustParse(t, "")
	want := &Config{
		Device: Device{Board: "auto", StateDir: "/var/lib/vigil", Timezone: "UTC", Location: time.UTC},
		Heartbeat: Heartbeat{
			Enabled:                true,
			Interval:               Duration{30 * time.Minute},
			SampleInterval:         Duration{30 * time.Second},
			SensorsPublishInterval: Duration{5 * time.Minute},
			Checklist:              "/etc/vigil/HEARTBEAT.md",
			MaxQuiet:               Duration{6 * time.Hour},
			AlertCooldown:          Duration{6 * time.Hour},
			FailureAlertAfter:      3,
			MaxLLMCallsPerDay:      96, MaxAlertsPerHour: 30,
			Gate: GateDeadband, Unusual: 3,
			ModelMay:    []string{"pause", "propose_rule"},
			IntervalMin: Duration{10 * time.Minute},
			IntervalMax: Duration{6 * time.Hour},
		},
		LLM: LLM{
			Provider:        "openai",
			BaseURL:         "https://api.openai.com/v1",
			Model:           "gpt-4o-mini",
			APIKeyEnv:       "OPENAI_API_KEY",
			Timeout:         Duration{60 * time.Second},
			MaxSteps:        6,
			MaxToolCalls:    12,
			MaxOutputTokens: 1024,
			MaxRetries:      2,
			RetryBackoff:    Duration{time.Second},
		},
		MQTT: MQTT{
			TopicPrefix:     "vigil",
			Keepalive:       Duration{30 * time.Second},
			HomeAssistant:   true,
			DiscoveryPrefix: "homeassistant",
			MinSeverity:     "info",
		},
		Telegram: Telegram{APIURL: "https://api.telegram.org", MinSeverity: "info", QuietMinSeverity: "critical", MaxPerHour: 20},
		HTTP:     HTTP{Username: "vigil"},
		Manage:   Manage{Remote: []string{"status", "pause", "resume", "check", "ack", "rule"}, ProposalMaxPerDay: 3},
	}
	if diff := cmp.Diff(want, got, cmpConfig...); diff != "" {
		t.Errorf("Parse(\"\") mismatch (-want +got):\n%s", diff)
	}
	if got.MQTTEnabled() || got.TelegramEnabled() || got.LLMEnabled() {
		t.Errorf("empty config: MQTTEnabled=%v TelegramEnabled=%v LLMEnabled=%v, want all false",
			got.MQTTEnabled(), got.TelegramEnabled(), got.LLMEnabled())
	}
	if !got.HeartbeatEnabled() {
		t.Error("empty config: HeartbeatEnabled() = false, want true")
	}
}

func TestDefaultsDependOnKeys(t *testing.T) {
	tests := []struct {
		name  string
		src   string
		check func(*Config) string
	}{
		{"enabled absent is true", "[heartbeat]\ninterval = \"1h\"\n", func(c *Config) string {
			return want(c.Heartbeat.Enabled, true)
		}},
		{"enabled false", "[heartbeat]\nenabled = false\n", func(c *Config) string {
			return want(c.HeartbeatEnabled(), false) + want(c.Heartbeat.Enabled, false)
		}},
		{"interval 0 disables", "[heartbeat]\ninterval = \"0\"\n", func(c *Config) string {
			return want(c.HeartbeatEnabled(), false) + want(c.Heartbeat.Interval.Duration, time.Duration(0))
		}},
		{"interval integer 0", "[heartbeat]\ninterval = 0\n", func(c *Config) string {
			return want(c.Heartbeat.Interval.Duration, time.Duration(0))
		}},
		{"schedule with the default interval written out", "[heartbeat]\ninterval = \"30m\"\nschedule = [\"07:30\", \"19:00\"]\n", func(c *Config) string {
			return want(c.HeartbeatEnabled(), true) + want(len(c.Heartbeat.Schedule), 2)
		}},
		{"schedule, enabled false", "[heartbeat]\nenabled = false\nschedule = [\"30 7 * * 1-5\"]\n", func(c *Config) string {
			return want(c.HeartbeatEnabled(), false)
		}},
		{"anthropic defaults", "[llm]\nprovider = \"anthropic\"\n", func(c *Config) string {
			return want(c.LLM.BaseURL, "https://api.anthropic.com") + want(c.LLM.Model, "claude-3-5-haiku-latest") +
				want(c.LLM.APIKeyEnv, "ANTHROPIC_API_KEY")
		}},
		{"api_key_file drops the default env", "[llm]\napi_key_file = \"k\"\n", func(c *Config) string {
			return want(c.LLM.APIKeyEnv, "")
		}},
		{"explicit empty api_key_env: keyless server", "[llm]\nbase_url = \"http://127.0.0.1:11434/v1/\"\napi_key_env = \"\"\n", func(c *Config) string {
			return want(c.LLM.APIKeyEnv, "") + want(c.LLMEnabled(), true) + want(c.LLM.BaseURL, "http://127.0.0.1:11434/v1")
		}},
		{"anthropic needs a key", "[llm]\nprovider = \"anthropic\"\napi_key_env = \"\"\n", func(c *Config) string {
			return want(c.LLMEnabled(), false)
		}},
		{"homeassistant false", "[mqtt]\nhomeassistant = false\n", func(c *Config) string {
			return want(c.MQTT.HomeAssistant, false)
		}},
		{"timezone", "[device]\ntimezone = \"Europe/Berlin\"\n", func(c *Config) string {
			return want(c.Device.Location.String(), "Europe/Berlin")
		}},
		{"active hours", "[heartbeat]\nactive_hours = \"22:00-06:30\"\n", func(c *Config) string {
			return want(*c.Heartbeat.Active, Window{Start: 22 * time.Hour, End: 6*time.Hour + 30*time.Minute})
		}},
		{"no active hours", "", func(c *Config) string {
			return want(c.Heartbeat.Active == nil, true)
		}},
		{"sensor defaults", "[[sensor]]\nname = \"a\"\ndriver = \"ina219\"\n[[sensor]]\nname = \"b\"\ndriver = \"ads1015\"\n[[sensor]]\nname = \"c\"\ndriver = \"ds18b20\"\n[[sensor]]\nname = \"d\"\ndriver = \"bme280\"\n", func(c *Config) string {
			s := c.Sensors
			return want(s[0].ShuntOhms, 0.1) + want(s[0].MaxCurrent, 3.2) + want(s[0].Timeout.Duration, 5*time.Second) +
				want(s[1].Channels.Numbers(), []int{0}) + want(s[1].Gain, 4.096) +
				want(s[2].W1Dir, "/sys/bus/w1/devices") +
				want(s[3].ShuntOhms, 0.0) + want(s[3].Gain, 0.0) + want(len(s[3].Channels), 0)
		}},
		{"rule severity default", "[[rule]]\nname = \"r\"\nwhen = \"board.disk_used > 90\"\n", func(c *Config) string {
			return want(c.Rules[0].Severity, "warning")
		}},
		{"inline array of tables", "sensor = [{ name = \"a\", driver = \"sim\" }]\n", func(c *Config) string {
			return want(c.Sensors[0].Name, "a") + want(c.Sensors[0].Line, 1)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := mustParse(t, tt.src)
			if msg := tt.check(c); msg != "" {
				t.Errorf("Parse(%q): %s", tt.src, msg)
			}
		})
	}
}

func want[T any](got, want T) string {
	if d := cmp.Diff(want, got); d != "" {
		return "(-want +got) " + d
	}
	return ""
}

func TestFullExample(t *testing.T) {
	f, err := os.Open("testdata/full.toml")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	c, err := Parse(f, "full.toml")
	if err != nil {
		t.Fatalf("Parse(testdata/full.toml): %v", err)
	}
	if len(c.Sensors) != 4 || len(c.Rules) != 3 {
		t.Fatalf("got %d sensors, %d rules; want 4, 3", len(c.Sensors), len(c.Rules))
	}
	lines := map[string]int{}
	for _, s := range c.Sensors {
		lines["sensor."+s.Name] = s.Line
	}
	for _, r := range c.Rules {
		lines["rule."+r.Name] = r.Line
	}
	wantLines := map[string]int{
		"sensor.air": 35, "sensor.solar": 43, "sensor.soil": 51, "sensor.freezer": 57,
		"rule.too_hot": 63, "rule.freezer_warm": 72, "rule.soc_hot": 79,
	}
	if diff := cmp.Diff(wantLines, lines); diff != "" {
		t.Errorf("header lines (-want +got):\n%s", diff)
	}
	if got := c.Sensors[0].Deadband; !cmp.Equal(got, map[string]float64{"temperature": 0.5, "humidity": 2, "pressure": 1}) {
		t.Errorf("air deadband = %v", got)
	}
	if c.Sensors[0].Address != 0x76 || c.Heartbeat.Active.String() != "07:00-22:00" || c.Device.Location.String() != "Europe/Berlin" {
		t.Errorf("address %#x, active %v, location %v", c.Sensors[0].Address, c.Heartbeat.Active, c.Device.Location)
	}
	spec, err := c.RuleSpec(c.Rules[0])
	if err != nil {
		t.Fatalf("Rules[0].Spec: %v", err)
	}
	if spec.Name != "too_hot" || spec.When.String() != "air.temperature > 35" || spec.Clear == nil ||
		spec.For != time.Minute || spec.Renotify != 2*time.Hour {
		t.Errorf("Rules[0].Spec() = %+v", spec)
	}
	if spec, _ := c.RuleSpec(c.Rules[1]); spec.Clear != nil {
		t.Errorf("Rules[1].Spec().Clear = %v, want nil", spec.Clear)
	}
}

// TestErrors checks the exact text users see for each kind of mistake.
func TestErrors(t *testing.T) {
	tests := []struct {
		name string
		src  string
		want string // one error per line
	}{
		{"syntax", "[device]\nid = \n", `config.toml:2: invalid TOML: expected value but found '\n' instead`},
		{"syntax error without a line from the decoder", "[device]\nid = \"\\", `config.toml:2: invalid TOML: invalid escape in string '\U+0000'`},
		{"unknown key", "[device]\nid = \"a\"\nname = \"x\"\n", `config.toml:3: device.name: unknown key`},
		{"unknown table", "[devices]\nid = \"a\"\n", `config.toml:1: devices: unknown key (did you mean device?)`},
		{"unknown subtable once", "[device.extra]\nx = 1\ny = 2\n", `config.toml:1: device.extra: unknown key`},
		{"unknown dotted key", "[device]\nextra.x = 1\n", `config.toml:2: device.extra: unknown key`},
		{"secret in file", "[llm]\napi_key = \"sk-123\"\n[mqtt]\npassword = \"hunter2\"\n[telegram]\ntoken = \"1:abc\"\n",
			"config.toml:2: llm.api_key: unknown key: secrets never go in the file; use api_key_env or api_key_file\n" +
				"config.toml:4: mqtt.password: unknown key: secrets never go in the file; use password_env or password_file\n" +
				"config.toml:6: telegram.token: unknown key: secrets never go in the file; use token_env or token_file"},
		{"unknown key in second sensor", "[[sensor]]\nname = \"a\"\ndriver = \"sim\"\n\n[[sensor]]\nname = \"b\"\ndriver = \"sim\"\nadress = 0x40\n",
			`config.toml:8: sensor.b.adress: unknown key (did you mean address?)`},
		{"unknown key in unnamed sensor", "[[sensor]]\ndriver = \"sim\"\nfoo = 1\n",
			"config.toml:1: sensor[0].name: missing (every [[sensor]] needs a name)\nconfig.toml:3: sensor[0].foo: unknown key"},
		{"wrong type", "[heartbeat]\nmax_quiet = \"1h\"\nfailure_alert_after = \"3\"\n", `config.toml:3: heartbeat.failure_alert_after: must be an integer (got a string)`},
		{"wrong type per section", "[device]\nid = 1\n[llm]\nmax_steps = 1.5\n[[sensor]]\nname = \"a\"\ndriver = \"sim\"\n[[sensor]]\nname = \"b\"\ntimeout = 5\ndriver = \"sim\"\n[mqtt]\ncommands = \"yes\"\n",
			"config.toml:2: device.id: must be a string (got an integer)\n" +
				"config.toml:4: llm.max_steps: must be an integer (got a float)\n" +
				"config.toml:10: sensor.b.timeout: must be a duration like \"30m\" (got \"5\")\n" +
				"config.toml:13: mqtt.commands: must be a boolean (got a string)"},
		{"flood guard", "[heartbeat]\nmax_alerts_per_hour = 0\n", `config.toml:2: heartbeat.max_alerts_per_hour: must be at least 1 (got 0)`},
		{"sim wave unknown key", "[[sensor]]\nname = \"a\"\ndriver = \"sim\"\nsim = { every = \"10s\", speed = 2 }\n", `config.toml:4: sensor.a.sim.speed: unknown key`},
		{"sim wave longer than its period", "[[sensor]]\nname = \"a\"\ndriver = \"bme280\"\nsim = { every = \"10s\", length = \"20s\" }\n",
			`config.toml:4: sensor.a.sim.length: must not exceed sim.every (20s > 10s)`},
		{"misspelt key in a table", "[mqtt]\nbrokr = \"tcp://127.0.0.1:1883\"\n", `config.toml:2: mqtt.brokr: unknown key (did you mean broker?)`},
		{"keys are case-sensitive", "[device]\nID = \"a\"\n", `config.toml:2: device.ID: unknown key (did you mean id?)`},
		{"a key that failed is not validated again", "[[sensor]]\nname = 7\ndriver = \"sim\"\n", `config.toml:2: sensor[0].name: must be a string (got an integer)`},
		{"one bad deadband entry", "[[sensor]]\nname = \"a\"\ndriver = \"sim\"\ndeadband = { humidity = 1, temperature = \"x\", co2 = 5 }\n",
			`config.toml:4: sensor.a.deadband.temperature: must be a float (got a string)`},
		{"wrong type in deadband", "[[sensor]]\nname = \"a\"\ndriver = \"sim\"\ndeadband = { temperature = \"x\" }\n",
			`config.toml:4: sensor.a.deadband.temperature: must be a float (got a string)`},
		{"table for a value", "[device]\nid = { x = 1 }\n", `config.toml:2: device.id: must be a string (got a table)`},
		{"value for a table", "device = 1\n", `config.toml:1: device: must be a table (got an integer)`},
		{"sensor not an array", "[sensor]\nname = \"a\"\n", `config.toml:1: sensor: must be an array of tables: write [[sensor]]`},
		{"sensor array of numbers", "sensor = [1]\n", `config.toml:1: sensor[0]: must be a table (got an integer)`},
		{"negative duration", "[mqtt]\nkeepalive = \"-5s\"\n", `config.toml:2: mqtt.keepalive: must not be negative (got "-5s")`},
		{"bad duration", "[heartbeat]\nmax_quiet = \"6 hours\"\n", `config.toml:2: heartbeat.max_quiet: must be a duration like "30m" (got "6 hours")`},

		{"device id", "[device]\nid = \"Greenhouse Pi\"\n", `config.toml:2: device.id: must match [a-z0-9_-]{1,64} (got "Greenhouse Pi")`},
		{"device id too long", "[device]\nid = \"" + strings.Repeat("a", 65) + "\"\n", `config.toml:2: device.id: must match [a-z0-9_-]{1,64} (got "` + strings.Repeat("a", 65) + `")`},
		{"board", "[device]\nboard = \"Pi 4\"\n", `config.toml:2: device.board: must be auto, sim or a board profile name (got "Pi 4")`},
		{"state_dir", "[device]\nstate_dir = \"\"\n", `config.toml:2: device.state_dir: must not be empty`},
		{"timezone", "[device]\ntimezone = \"Mars/Olympus\"\n", `config.toml:2: device.timezone: unknown time zone "Mars/Olympus" (want an IANA name like "Europe/Berlin")`},

		{"interval", "[heartbeat]\ninterval = \"30s\"\n", `config.toml:2: heartbeat.interval: must be at least 1m (got "30s"); allowed: "0" (off) or 1m to 24h`},
		{"sample_interval", "[heartbeat]\nsample_interval = \"500ms\"\n", `config.toml:2: heartbeat.sample_interval: must be at least 1s (got "500ms"); allowed: 1s to 1h`},
		{"sample_interval 0", "[heartbeat]\nsample_interval = \"0\"\n", `config.toml:2: heartbeat.sample_interval: must be at least 1s (got "0"); allowed: 1s to 1h`},
		{"checklist", "[heartbeat]\nchecklist = \"\"\n", `config.toml:2: heartbeat.checklist: must not be empty`},
		{"active_hours format", "[heartbeat]\nactive_hours = \"7-22\"\n", `config.toml:2: heartbeat.active_hours: must be "HH:MM-HH:MM" on a 24-hour clock (got "7-22")`},
		{"active_hours no dash", "[heartbeat]\nactive_hours = \"07:00\"\n", `config.toml:2: heartbeat.active_hours: must be "HH:MM-HH:MM" (got "07:00")`},
		{"active_hours 25h", "[heartbeat]\nactive_hours = \"07:00-25:00\"\n", `config.toml:2: heartbeat.active_hours: must be "HH:MM-HH:MM" on a 24-hour clock (got "07:00-25:00")`},
		{"active_hours equal", "[heartbeat]\nactive_hours = \"07:00-07:00\"\n", `config.toml:2: heartbeat.active_hours: start and end must differ (got "07:00-07:00")`},
		{"failure_alert_after", "[heartbeat]\nfailure_alert_after = 0\n", `config.toml:2: heartbeat.failure_alert_after: must be at least 1 (got 0)`},
		{"max_llm_calls_per_day", "[heartbeat]\nmax_llm_calls_per_day = -1\n", `config.toml:2: heartbeat.max_llm_calls_per_day: must be at least 1 (got -1)`},

		{"provider", "[llm]\nprovider = \"gemini\"\n", `config.toml:2: llm.provider: must be openai or anthropic (got "gemini")`},
		{"base_url scheme", "[llm]\nbase_url = \"ftp://x\"\n", `config.toml:2: llm.base_url: must be an http:// or https:// URL (got "ftp://x")`},
		{"base_url no host", "[llm]\nbase_url = \"https://\"\n", `config.toml:2: llm.base_url: must be an http:// or https:// URL (got "https://")`},
		{"base_url credentials", "[llm]\nbase_url = \"https://u:secret@x/v1\"\n", `config.toml:2: llm.base_url: must be a plain base URL without credentials, query or fragment (got "https://u:xxxxx@x/v1")`},
		{"model", "[llm]\nmodel = \"\"\n", `config.toml:2: llm.model: must not be empty`},
		{"api_key_env name", "[llm]\napi_key_env = \"sk-live-abc\"\n", `config.toml:2: llm.api_key_env: must be an environment variable name (got "sk-live-abc")`},
		{"api_key env and file", "[llm]\napi_key_env = \"K\"\napi_key_file = \"k\"\n", `config.toml:3: llm.api_key_file: set either api_key_env or api_key_file, not both`},
		{"llm timeout", "[llm]\ntimeout = \"0\"\n", `config.toml:2: llm.timeout: must be at least 1s (got "0"); allowed: 1s to 10m`},
		{"max_steps", "[llm]\nmax_steps = 21\n", `config.toml:2: llm.max_steps: must be between 1 and 20 (got 21)`},
		{"max_tool_calls", "[llm]\nmax_tool_calls = 0\n", `config.toml:2: llm.max_tool_calls: must be between 1 and 100 (got 0)`},
		{"max_output_tokens", "[llm]\nmax_output_tokens = 8\n", `config.toml:2: llm.max_output_tokens: must be between 16 and 65536 (got 8)`},

		{"sensor name", "[[sensor]]\nname = \"Air\"\ndriver = \"sim\"\n", `config.toml:2: sensor[0].name: must match [a-z0-9_]{1,32} (got "Air")`},
		{"sensor name board", "[[sensor]]\nname = \"board\"\ndriver = \"sim\"\n", `config.toml:2: sensor.board.name: "board" is reserved for the board's own health sensor`},
		{"sensor name duplicate", "[[sensor]]\nname = \"a\"\ndriver = \"sim\"\n[[sensor]]\nname = \"a\"\ndriver = \"sim\"\n", `config.toml:5: sensor.a.name: duplicate sensor name "a" (first on line 1)`},
		{"driver missing", "[[sensor]]\nname = \"a\"\n", `config.toml:1: sensor.a.driver: missing (one of bme280, bmp280, aht20, sht3x, sht4x, mcp9808, tmp102, ina219, bh1750, scd4x, ads1015, ads1115, max31855, max31865, mcp3008, mcp3208, ds18b20, iio, hwmon, sim)`},
		{"driver unknown", "[[sensor]]\nname = \"a\"\ndriver = \"dht23\"\n", `config.toml:3: sensor.a.driver: unknown driver "dht23" (want one of bme280, bmp280, aht20, sht3x, sht4x, mcp9808, tmp102, ina219, bh1750, scd4x, ads1015, ads1115, max31855, max31865, mcp3008, mcp3208, ds18b20, iio, hwmon, sim)`},
		{"driver of the kernel's", "[[sensor]]\nname = \"a\"\ndriver = \"dht22\"\n", `config.toml:3: sensor.a.driver: no driver "dht22" of vigil's own, but the kernel drives it: use driver = "iio" with device = "dht11" (dtoverlay=dht11,gpiopin=N drives the DHT22 too) (see vigil sensors --drivers)`},
		{"address range", "[[sensor]]\nname = \"a\"\ndriver = \"tmp102\"\naddress = 0x78\n", `config.toml:4: sensor.a.address: must be an I²C address from 0x03 to 0x77 (got 0x78)`},
		{"address low", "[[sensor]]\nname = \"a\"\ndriver = \"tmp102\"\naddress = 2\n", `config.toml:4: sensor.a.address: must be an I²C address from 0x03 to 0x77 (got 0x2)`},
		{"bus", "[[sensor]]\nname = \"a\"\ndriver = \"tmp102\"\nbus = \"i2c 1\"\n", `config.toml:4: sensor.a.bus: must be an I²C bus number or name like "1" (got "i2c 1")`},
		{"spi bus format", "[[sensor]]\nname = \"a\"\ndriver = \"bme280\"\nbus = \"spi:0\"\n", `config.toml:4: sensor.a.bus: must be "spi:BUS.CS" like "spi:0.0" (got "spi:0")`},
		{"spi not supported", "[[sensor]]\nname = \"a\"\ndriver = \"aht20\"\nbus = \"spi:0.0\"\n", `config.toml:4: sensor.a.bus: aht20 is an I²C chip: set an I²C bus number like "1" (got "spi:0.0"); SPI works for bme280, bmp280, max31855, max31865, mcp3008, mcp3208`},
		{"sht3x on spi", "[[sensor]]\nname = \"a\"\ndriver = \"sht3x\"\nbus = \"spi:0.1\"\n", `config.toml:4: sensor.a.bus: sht3x is an I²C chip: set an I²C bus number like "1" (got "spi:0.1"); SPI works for bme280, bmp280, max31855, max31865, mcp3008, mcp3208`},
		{"spi chip on i2c", "[[sensor]]\nname = \"a\"\ndriver = \"max31855\"\nbus = \"1\"\n", `config.toml:4: sensor.a.bus: max31855 is an SPI chip: bus must be "spi:BUS.CS" like "spi:0.0" (got "1"), or unset for the board's first SPI port`},
		{"spi chip with address", "[[sensor]]\nname = \"a\"\ndriver = \"mcp3008\"\naddress = 0x48\n", `config.toml:4: sensor.a.address: not used by driver mcp3008`},
		{"max31865 wires missing", "[[sensor]]\nname = \"a\"\ndriver = \"max31865\"\n", `config.toml:1: sensor.a.wires: missing: how the RTD is connected, 2, 3 or 4 wires (count the probe's wires)`},
		{"max31865 wires", "[[sensor]]\nname = \"a\"\ndriver = \"max31865\"\nwires = 5\n", `config.toml:4: sensor.a.wires: must be 2, 3 or 4 (got 5)`},
		{"max31865 rtd", "[[sensor]]\nname = \"a\"\ndriver = \"max31865\"\nwires = 3\nrtd = \"pt500\"\n", `config.toml:5: sensor.a.rtd: must be "pt100" or "pt1000" (got "pt500")`},
		{"max31865 ref_ohms", "[[sensor]]\nname = \"a\"\ndriver = \"max31865\"\nwires = 3\nrtd = \"pt1000\"\nref_ohms = 430.0\n", `config.toml:6: sensor.a.ref_ohms: must be the reference resistor in ohms, more than the pt1000's 1000 Ω at 0 °C (got 430; boards use 4300)`},
		{"mcp3008 channel 8", "[[sensor]]\nname = \"a\"\ndriver = \"mcp3008\"\nchannels = [8]\n", `config.toml:4: sensor.a.channels: channels must be 0-7 (got 8)`},
		{"mcp3008 vref", "[[sensor]]\nname = \"a\"\ndriver = \"mcp3008\"\nvref = 6.0\n", `config.toml:4: sensor.a.vref: must be the volts at VREF, more than 0 and at most 5.5 (got 6)`},
		{"mcp3008 volts beyond vref", "[[sensor]]\nname = \"a\"\ndriver = \"mcp3008\"\nchannels = [{ channel = 1, quantity = \"soil\", unit = \"%\", volts = [0.0, 5.0], values = [0.0, 100.0] }]\n", `config.toml:4: sensor.a.channels: channel 1: volts must lie within 0 and vref 3.3 V, what the ADC can read (got [0, 5])`},
		{"mcp3008 volts no range", "[[sensor]]\nname = \"a\"\ndriver = \"mcp3008\"\nchannels = [{ channel = 1, quantity = \"soil\", unit = \"%\", volts = [1.0, 1.0], values = [0.0, 100.0] }]\n", `config.toml:4: sensor.a.channels: channel 1: volts must be a range, from and to differ (got [1, 1])`},
		{"mcp3008 quantity twice", "[[sensor]]\nname = \"a\"\ndriver = \"mcp3008\"\nchannels = [{ channel = 1, quantity = \"soil\" }, { channel = 2, quantity = \"soil\" }]\n", `config.toml:4: sensor.a.channels: channel 2: quantity "soil" is channel 1's already`},
		{"mcp3008 bad quantity", "[[sensor]]\nname = \"a\"\ndriver = \"mcp3008\"\nchannels = [{ channel = 1, quantity = \"Soil\" }]\n", `config.toml:4: sensor.a.channels: channel 1: quantity must match [a-z0-9_]{1,32} (got "Soil")`},
		{"mcp3008 values without unit", "[[sensor]]\nname = \"a\"\ndriver = \"mcp3008\"\nchannels = [{ channel = 1, quantity = \"soil\", values = [0, 100] }]\n", `config.toml:4: sensor.a.channels: channels[0]: needs unit = "..." for its values ("%", "lx"; "" for a plain number)`},
		{"mcp3008 unknown channel key", "[[sensor]]\nname = \"a\"\ndriver = \"mcp3008\"\nchannels = [0, { channel = 1, quantty = \"soil\" }]\n", `config.toml:4: sensor.a.channels: channels[1]: unknown key "quantty" (want channel, quantity, unit, volts, values)`},
		{"mcp3008 volts not a pair", "[[sensor]]\nname = \"a\"\ndriver = \"mcp3008\"\nchannels = [{ channel = 1, quantity = \"soil\", volts = [3.3] }]\n", `config.toml:4: sensor.a.channels: channels[0]: volts: must be two numbers like [0.0, 3.3]`},
		{"mcp3008 unit without values", "[[sensor]]\nname = \"a\"\ndriver = \"mcp3008\"\nchannels = [{ channel = 1, quantity = \"light\", unit = \"lx\" }]\n", `config.toml:4: sensor.a.channels: channels[0]: unit "lx" needs values: without values the reading is the input in volts`},
		{"channels not an array", "[[sensor]]\nname = \"a\"\ndriver = \"mcp3008\"\nchannels = 3\n", `config.toml:4: sensor.a.channels: must be an array like [0, 1] or [{ channel = 0, quantity = "soil", unit = "%", volts = [0.0, 3.3], values = [0.0, 100.0] }] (got an integer)`},
		{"ads with a table", "[[sensor]]\nname = \"a\"\ndriver = \"ads1115\"\nchannels = [{ channel = 1, quantity = \"soil\" }]\n", `config.toml:4: sensor.a.channels: the ads1115 reads channels in volts: list their numbers, as in channels = [0, 1] (a table with a quantity is for mcp3008 and mcp3208)`},
		{"iio needs a device", "[[sensor]]\nname = \"a\"\ndriver = \"iio\"\n", `config.toml:3: sensor.a.driver: iio needs device = "name" (the kernel's name for it, as in /sys/bus/iio/devices/*/name) or path = "/sys/bus/iio/devices/iio:device0"`},
		{"iio both", "[[sensor]]\nname = \"a\"\ndriver = \"iio\"\ndevice = \"bme680\"\npath = \"/sys/bus/iio/devices/iio:device0\"\n", `config.toml:4: sensor.a.device: give device or path, not both`},
		{"hwmon relative path", "[[sensor]]\nname = \"a\"\ndriver = \"hwmon\"\npath = \"hwmon0\"\n", `config.toml:4: sensor.a.path: must be an absolute, clean path like "/sys/class/hwmon/hwmon0" (got "hwmon0")`},
		{"iio quantity", "[[sensor]]\nname = \"a\"\ndriver = \"iio\"\ndevice = \"bme680\"\nquantities = [\"temperature\", \"gas\"]\n", `config.toml:5: sensor.a.quantities: quantities[1]: "gas" is not one of temperature, humidity, pressure, illuminance, co2, voc, resistance, voltage, current, power (a later channel of a kind is numbered: temperature_2)`},
		{"iio quantity twice", "[[sensor]]\nname = \"a\"\ndriver = \"iio\"\ndevice = \"bme680\"\nquantities = [\"temperature_2\", \"temperature_2\"]\n", `config.toml:5: sensor.a.quantities: quantities[1]: "temperature_2" is listed twice`},
		{"device on bme280", "[[sensor]]\nname = \"a\"\ndriver = \"bme280\"\ndevice = \"bme280\"\n", `config.toml:4: sensor.a.device: not used by driver bme280`},
		{"spi with address", "[[sensor]]\nname = \"a\"\ndriver = \"bmp280\"\nbus = \"spi:0.1\"\naddress = 0x76\n", `config.toml:5: sensor.a.address: not used with an SPI bus`},
		{"key of another driver", "[[sensor]]\nname = \"a\"\ndriver = \"bme280\"\ngain = 4.096\n", `config.toml:4: sensor.a.gain: not used by driver bme280`},
		{"address on ds18b20", "[[sensor]]\nname = \"a\"\ndriver = \"ds18b20\"\naddress = 0x40\n", `config.toml:4: sensor.a.address: not used by driver ds18b20`},
		{"sensor timeout 0", "[[sensor]]\nname = \"a\"\ndriver = \"sim\"\ntimeout = \"0s\"\n", `config.toml:4: sensor.a.timeout: must be at least 10ms (got "0"); allowed: 10ms to 1m`},
		{"deadband negative", "[[sensor]]\nname = \"a\"\ndriver = \"sim\"\ndeadband = { temperature = -0.5 }\n", `config.toml:4: sensor.a.deadband.temperature: must be a non-negative number (got -0.5)`},
		{"deadband nan", "[[sensor]]\nname = \"a\"\ndriver = \"sim\"\n[sensor.deadband]\nhumidity = nan\n", `config.toml:5: sensor.a.deadband.humidity: must be a non-negative number (got NaN)`},
		{"deadband quantity", "[[sensor]]\nname = \"a\"\ndriver = \"sim\"\ndeadband = { \"Temp C\" = 1 }\n", `config.toml:4: sensor.a.deadband."Temp C": must be a quantity name like temperature (got "Temp C")`},
		{"ina219 shunt", "[[sensor]]\nname = \"a\"\ndriver = \"ina219\"\nshunt_ohms = 0\nmax_current = -1\n", "config.toml:4: sensor.a.shunt_ohms: must be more than 0 (got 0)\nconfig.toml:5: sensor.a.max_current: must be more than 0 (got -1)"},
		{"ads channels", "[[sensor]]\nname = \"a\"\ndriver = \"ads1115\"\nchannels = [0, 4, 0]\n", "config.toml:4: sensor.a.channels: channels must be 0-3 (got 4)\nconfig.toml:4: sensor.a.channels: channel 0 listed twice"},
		{"ads no channels", "[[sensor]]\nname = \"a\"\ndriver = \"ads1015\"\nchannels = []\n", `config.toml:4: sensor.a.channels: must list at least one channel (0-3)`},
		{"ads gain", "[[sensor]]\nname = \"a\"\ndriver = \"ads1015\"\ngain = 5\n", `config.toml:4: sensor.a.gain: must be one of 6.144, 4.096, 2.048, 1.024, 0.512, 0.256 (got 5)`},
		{"ds18b20 serial", "[[sensor]]\nname = \"a\"\ndriver = \"ds18b20\"\nserial = \"28-xyz\"\n", `config.toml:4: sensor.a.serial: must be a 1-Wire id like "28-0316a2794aff" (got "28-xyz")`},

		{"rule syntax", "[[sensor]]\nname = \"air\"\ndriver = \"bme280\"\n\n[[rule]]\nname = \"too_hot\"\nwhen = \"air.temperature > 35)\"\n", `config.toml:7: rule.too_hot.when: column 21: unexpected ")"`},
		{"rule unknown sensor", "[[sensor]]\nname = \"air\"\ndriver = \"bme280\"\n[[rule]]\nname = \"r\"\nwhen = \"air.temperature > 1 and soil.ch0 < 1\"\nclear = \"stale(fridge) > 5m\"\n",
			"config.toml:6: rule.r.when: unknown sensor \"soil\" (configured: board, air)\nconfig.toml:7: rule.r.clear: unknown sensor \"fridge\" (configured: board, air)"},
		{"rule name", "[[rule]]\nname = \"Too Hot\"\nwhen = \"board.cpu_temperature > 80\"\n", `config.toml:2: rule[0].name: must match [a-z0-9_]{1,64} (got "Too Hot")`},
		{"rule name duplicate", "[[rule]]\nname = \"r\"\nwhen = \"board.load1 > 4\"\n[[rule]]\nname = \"r\"\nwhen = \"board.load1 > 8\"\n", `config.toml:5: rule.r.name: duplicate rule name "r" (first on line 1)`},
		{"rule when missing", "[[rule]]\nname = \"r\"\n", `config.toml:1: rule.r.when: missing (the condition that fires the rule)`},
		{"rule severity", "[[rule]]\nname = \"r\"\nwhen = \"board.load1 > 4\"\nseverity = \"error\"\n", `config.toml:4: rule.r.severity: must be info, warning or critical (got "error")`},
		{"rule message placeholder", "[[rule]]\nname = \"r\"\nwhen = \"board.load1 > 4\"\nmessage = \"load {board.load1}, air {air.temperature}\"\n", `config.toml:4: rule.r.message: {air.temperature} names no configured sensor "air"`},
		{"rule negative for", "[[rule]]\nname = \"r\"\nwhen = \"board.load1 > 4\"\nfor = \"-1m\"\n", `config.toml:4: rule.r.for: must not be negative (got "-1m")`},

		{"broker scheme", "[mqtt]\nbroker = \"http://127.0.0.1:1883\"\n", `config.toml:2: mqtt.broker: must start with tcp://, ssl://, mqtt://, mqtts://, ws:// or wss:// (got "http://127.0.0.1:1883")`},
		{"password without username", "[mqtt]\nbroker = \"tcp://h:1883\"\npassword_env = \"P\"\n", `config.toml:3: mqtt.password_env: needs a username: MQTT 3.1.1 cannot send a password without one (set mqtt.username)`},
		{"ws query", "[mqtt]\nbroker = \"ws://h:80/mqtt?x=1\"\n", `config.toml:2: mqtt.broker: must be ws://host:port (got "ws://h:80/mqtt?x=1")`},
		{"broker port", "[mqtt]\nbroker = \"tcp://127.0.0.1\"\n", `config.toml:2: mqtt.broker: must be tcp://host:port (got "tcp://127.0.0.1")`},
		{"broker path", "[mqtt]\nbroker = \"tcp://h:1883/x\"\n", `config.toml:2: mqtt.broker: must be tcp://host:port (got "tcp://h:1883/x")`},
		{"broker credentials", "[mqtt]\nbroker = \"tcp://u:pw@h:1883\"\n", `config.toml:2: mqtt.broker: must not contain credentials (use username and password_env) (got "tcp://u:xxxxx@h:1883")`},
		{"topic_prefix wildcard", "[mqtt]\ntopic_prefix = \"vigil/#\"\n", `config.toml:2: mqtt.topic_prefix: must not contain "#" (the MQTT multi-level wildcard: no broker takes it in a topic name) (got "vigil/#")`},
		{"topic_prefix slash", "[mqtt]\ntopic_prefix = \"/vigil\"\n", `config.toml:2: mqtt.topic_prefix: must not start or end with / or contain empty levels (got "/vigil")`},
		{"topic_prefix empty", "[mqtt]\ntopic_prefix = \"\"\n", `config.toml:2: mqtt.topic_prefix: must not be empty`},
		{"topic_prefix $", "[mqtt]\ntopic_prefix = \"$SYS\"\n", `config.toml:2: mqtt.topic_prefix: must not start with "$" (reserved for the broker: $SYS on every broker, $share/ on mosquitto, EMQX, HiveMQ and VerneMQ, $queue/ and $exclusive/ on EMQX; a wildcard subscription never matches it) (got "$SYS")`},
		{"topic_prefix dot", "[mqtt]\ntopic_prefix = \"site.a\"\n", `config.toml:2: mqtt.topic_prefix: must not contain "." (RabbitMQ's MQTT plugin turns it into "/", so the topics would have levels that vigil fleet and Home Assistant do not look for) (got "site.a")`},
		{"discovery_prefix dot", "[mqtt]\n\ndiscovery_prefix = \"home.assistant\"\n", `config.toml:3: mqtt.discovery_prefix: must not contain "." (RabbitMQ's MQTT plugin turns it into "/", so the topics would have levels that vigil fleet and Home Assistant do not look for) (got "home.assistant")`},
		{"topic_prefix star", "[mqtt]\ntopic_prefix = \"site*\"\n", `config.toml:2: mqtt.topic_prefix: must not contain "*" (RabbitMQ's MQTT plugin delivers it as "+", and a "*" level is a wildcard in its topic exchange) (got "site*")`},
		{"topic_prefix NUL", "[mqtt]\ntopic_prefix = \"a\\u0000b\"\n", `config.toml:2: mqtt.topic_prefix: must not contain NUL (MQTT forbids it: every broker closes the connection) (got "a\x00b")`},
		{"topic_prefix tab", "[mqtt]\ntopic_prefix = \"site\\ta\"\n", `config.toml:2: mqtt.topic_prefix: must not contain U+0009, a control character (MQTT 3.1.1 §1.5.3 lets a broker close the connection over one) (got "site\ta")`},
		{"topic_prefix C1 control", "[mqtt]\ntopic_prefix = \"site\\u0085\"\n", `config.toml:2: mqtt.topic_prefix: must not contain U+0085, a control character (MQTT 3.1.1 §1.5.3 lets a broker close the connection over one) (got "site\u0085")`},
		{"topic_prefix noncharacter", "[mqtt]\ntopic_prefix = \"site\\uFFFF\"\n", `config.toml:2: mqtt.topic_prefix: must not contain U+FFFF, a Unicode non-character (MQTT 3.1.1 §1.5.3 lets a broker close the connection over one) (got "site\uffff")`},
		{"topic_prefix long", "[mqtt]\ntopic_prefix = \"" + strings.Repeat("v", 129) + "\"\n", `config.toml:2: mqtt.topic_prefix: must be at most 128 bytes, so every topic stays within RabbitMQ's 255-byte routing keys (got 129)`},
		{"broker and brokers", "[mqtt]\nbroker = \"tcp://a:1883\"\nbrokers = [\"tcp://b:1883\"]\n", `config.toml:3: mqtt.brokers: is an alternative to broker (set to "tcp://a:1883" on line 2): remove one of them`},
		{"brokers empty", "[mqtt]\nbrokers = []\n", `config.toml:2: mqtt.brokers: must list at least one broker URL, as in ["tcp://a:1883", "tcp://b:1883"] (or remove the key)`},
		{"brokers bad URL", "[mqtt]\nbrokers = [\"tcp://a:1883\", \"http://b:1883\"]\n", `config.toml:2: mqtt.brokers: brokers[1]: must start with tcp://, ssl://, mqtt://, mqtts://, ws:// or wss:// (got "http://b:1883")`},
		{"brokers twice", "[mqtt]\nbrokers = [\"tcp://a:1883\", \"tcp://b:1883\", \"tcp://a:1883\"]\n", `config.toml:2: mqtt.brokers: brokers[2]: "tcp://a:1883" is listed twice (also brokers[0])`},
		{"brokers TLS and plain", "[mqtt]\nbrokers = [\"ssl://a:8883\", \"tcp://b:1883\"]\n", `config.toml:2: mqtt.brokers: brokers[1]: "tcp://b:1883" is not TLS while brokers[0] ("ssl://a:8883") is: a failover would send the credentials and alerts in the clear (use ssl://, mqtts:// or wss:// for every node, or for none)`},
		{"tls files need ssl brokers", "[mqtt]\nbrokers = [\"tcp://a:1883\", \"ws://b:80\"]\nca_file = \"/etc/ca.pem\"\n", `config.toml:3: mqtt.ca_file: needs an ssl://, mqtts:// or wss:// broker`},
		{"tls files need ssl", "[mqtt]\nbroker = \"tcp://h:1883\"\nca_file = \"/etc/ca.pem\"\n", `config.toml:3: mqtt.ca_file: needs an ssl://, mqtts:// or wss:// broker`},
		{"cert without key", "[mqtt]\nbroker = \"ssl://h:8883\"\ncert_file = \"/c.pem\"\n", `config.toml:3: mqtt.cert_file: cert_file and key_file go together`},
		{"keepalive", "[mqtt]\nkeepalive = \"2s\"\n", `config.toml:2: mqtt.keepalive: must be at least 5s (got "2s"); allowed: 5s to 18h12m15s`},
		{"discovery_prefix", "[mqtt]\ndiscovery_prefix = \"ha/+\"\n", `config.toml:2: mqtt.discovery_prefix: must not contain "+" (the MQTT single-level wildcard: no broker takes it in a topic name) (got "ha/+")`},
		{"mqtt min_severity", "[mqtt]\nmin_severity = \"debug\"\n", `config.toml:2: mqtt.min_severity: must be info, warning or critical (got "debug")`},
		{"password env and file", "[mqtt]\npassword_env = \"P\"\npassword_file = \"p\"\n", `config.toml:3: mqtt.password_file: set either password_env or password_file, not both`},

		{"telegram chat_id", "[telegram]\ntoken_env = \"T\"\n", `config.toml:1: telegram.chat_id: required when token_env or token_file is set`},
		{"telegram no token", "[telegram]\nchat_id = 42\n", `config.toml:1: telegram.token_env: set token_env or token_file to use Telegram`},
		{"telegram allowed 0", "[telegram]\ntoken_env = \"T\"\nchat_id = -100\nallowed_chats = [1, 0]\n", `config.toml:4: telegram.allowed_chats: chat ids must not be 0`},
		{"telegram allowed_users negative", "[telegram]\ntoken_env = \"T\"\nchat_id = -100\nallowed_chats = [-100]\nallowed_users = [7, -100]\n", `config.toml:5: telegram.allowed_users: user ids are positive numbers (got -100); a negative id is a group: put it in allowed_chats`},
		{"telegram allowed_users 0", "[telegram]\ntoken_env = \"T\"\nchat_id = -100\nallowed_chats = [-100]\nallowed_users = [0]\n", `config.toml:5: telegram.allowed_users: user ids are positive numbers (got 0); a negative id is a group: put it in allowed_chats`},
		{"telegram allowed_users without chats", "[telegram]\ntoken_env = \"T\"\nchat_id = -100\nallowed_users = [7]\n", `config.toml:4: telegram.allowed_users: has no effect without allowed_chats: commands are answered only in allowed chats; add the chats the users write in`},
		{"telegram api_url", "[telegram]\napi_url = \"api.telegram.org\"\n", `config.toml:2: telegram.api_url: must be an http:// or https:// URL (got "api.telegram.org")`},
		{"telegram min_severity", "[telegram]\nmin_severity = \"Warning\"\n", `config.toml:2: telegram.min_severity: must be info, warning or critical (got "Warning")`},
		{"telegram quiet_hours", "[telegram]\nquiet_hours = \"22:00\"\n", `config.toml:2: telegram.quiet_hours: must be "HH:MM-HH:MM" (got "22:00")`},
		{"telegram quiet_hours clock", "[telegram]\nquiet_hours = \"22:00-7:00\"\n", `config.toml:2: telegram.quiet_hours: must be "HH:MM-HH:MM" on a 24-hour clock (got "22:00-7:00")`},
		{"telegram quiet_hours empty window", "[telegram]\nquiet_hours = \"07:00-07:00\"\n", `config.toml:2: telegram.quiet_hours: start and end must differ (got "07:00-07:00")`},
		{"telegram quiet_min_severity", "[telegram]\nquiet_min_severity = \"high\"\n", `config.toml:2: telegram.quiet_min_severity: must be info, warning or critical (got "high")`},
		{"telegram max_per_hour negative", "[telegram]\nmax_per_hour = -1\n", `config.toml:2: telegram.max_per_hour: must be 0 (no cap) to 1000 (got -1)`},
		{"telegram max_per_hour too many", "[telegram]\nmax_per_hour = 5000\n", `config.toml:2: telegram.max_per_hour: must be 0 (no cap) to 1000 (got 5000)`},

		{"http listen off loopback without a password", "[http]\nlisten = \"0.0.0.0:8080\"\n",
			`config.toml:2: http.listen: "0.0.0.0:8080" is reachable from the network: set http.password_file (basic auth), or listen on 127.0.0.1`},
		{"http listen on every interface", "[http]\nlisten = \":8080\"\n",
			`config.toml:2: http.listen: ":8080" is reachable from the network: set http.password_file (basic auth), or listen on 127.0.0.1`},
		{"http listen without a port", "[http]\nlisten = \"127.0.0.1\"\n",
			`config.toml:2: http.listen: must be host:port, as in 127.0.0.1:8080 (got "127.0.0.1")`},
		{"manage remote unknown verb", "[manage]\nremote = [\"status\", \"reboot\"]\n",
			`config.toml:2: manage.remote: remote[1]: unknown command "reboot" (known: status, pause, resume, check, test-alert, get, set, unset, checklist, logs, notes, ack, rule)`},
		{"manage remote twice", "[manage]\nremote = [\"pause\", \"pause\"]\n",
			`config.toml:2: manage.remote: remote[1]: "pause" is listed twice`},
		{"manage models path", "[manage]\nmodels = [\"gpt-4o\", \"../x\"]\n",
			`config.toml:2: manage.models: models[1]: must be a model name, not a path with . or .. in it (got "../x")`},
		{"manage models twice", "[manage]\nmodels = [\"gpt-4o\", \"o3\", \"gpt-4o\"]\n",
			`config.toml:2: manage.models: models[2]: "gpt-4o" is listed twice (also models[0])`},
		{"manage models empty", "[manage]\nmodels = [\"\"]\n",
			`config.toml:2: manage.models: models[0]: must not be empty`},
		{"schedule bad time", "[device]\nid = \"a\"\n[heartbeat]\nschedule = [\"07:30\", \"25:00\"]\n",
			`config.toml:4: heartbeat.schedule: schedule[1]: "25:00" is not a time of day (want "HH:MM", 24-hour clock)`},
		{"schedule short time", "[heartbeat]\nschedule = [\"7:3\"]\n",
			`config.toml:2: heartbeat.schedule: schedule[0]: "7:3" is not a time of day (want "HH:MM", 24-hour clock)`},
		{"schedule duplicate time", "[heartbeat]\nschedule = [\"07:30\", \"12:00\", \"07:30\"]\n",
			`config.toml:2: heartbeat.schedule: schedule[2]: "07:30" is listed twice (also schedule[0])`},
		{"schedule mixes times and cron", "[heartbeat]\nschedule = [\"07:30\", \"30 7 * * 1-5\"]\n",
			`config.toml:2: heartbeat.schedule: schedule[1]: "30 7 * * 1-5" looks like a cron expression: a cron expression must be the only element, not mixed with times of day`},
		{"schedule bad cron", "[heartbeat]\nschedule = [\"30 25 * * *\"]\n",
			`config.toml:2: heartbeat.schedule: schedule[0]: "30 25 * * *" is not a cron expression: end of range (25) above maximum (23): 25 (want five fields: minute hour day-of-month month day-of-week, as in "30 7 * * 1-5")`},
		{"schedule cron with a time zone", "[heartbeat]\nschedule = [\"CRON_TZ=UTC 30 7 * * *\"]\n",
			`config.toml:2: heartbeat.schedule: schedule[0]: "CRON_TZ=UTC 30 7 * * *": a time zone prefix is not allowed; the schedule runs in device.timezone`},
		{"schedule and interval", "[heartbeat]\ninterval = \"1h\"\nmax_quiet = \"6h\"\nschedule = [\"07:30\"]\n",
			`config.toml:4: heartbeat.schedule: is an alternative to interval (set to "1h" on line 2): remove one of them`},
		{"schedule and interval 0", "[heartbeat]\nschedule = [\"07:30\"]\ninterval = \"0\"\n",
			`config.toml:2: heartbeat.schedule: is an alternative to interval (set to "0" on line 3): remove one of them`},
		{"several, in file order", "[[sensor]]\nname = \"a\"\ndriver = \"x\"\n[heartbeat]\ninterval = \"1s\"\n[device]\nid = \"A\"\nfoo = 1\n",
			"config.toml:3: sensor.a.driver: unknown driver \"x\" (want one of bme280, bmp280, aht20, sht3x, sht4x, mcp9808, tmp102, ina219, bh1750, scd4x, ads1015, ads1115, max31855, max31865, mcp3008, mcp3208, ds18b20, iio, hwmon, sim)\n" +
				"config.toml:5: heartbeat.interval: must be at least 1m (got \"1s\"); allowed: \"0\" (off) or 1m to 24h\n" +
				"config.toml:7: device.id: must match [a-z0-9_-]{1,64} (got \"A\")\n" +
				"config.toml:8: device.foo: unknown key"},
		{"deadband a string", "[[sensor]]\nname = \"air\"\ndriver = \"sim\"\ndeadband = \"x\"\n", `config.toml:4: sensor.air.deadband: must be a table (got a string)`},
		{"deadband an integer", "[[sensor]]\nname = \"air\"\ndriver = \"sim\"\ndeadband = 5\n", `config.toml:4: sensor.air.deadband: must be a table (got an integer)`},
		{"deadband a boolean", "[[sensor]]\nname = \"air\"\ndriver = \"sim\"\ndeadband = true\n", `config.toml:4: sensor.air.deadband: must be a table (got a boolean)`},
		{"deadband an array", "[[sensor]]\nname = \"air\"\ndriver = \"sim\"\ndeadband = [1, 2]\n", `config.toml:4: sensor.air.deadband: must be a table (got an array)`},
		{"deadband an empty array", "[[sensor]]\nname = \"air\"\ndriver = \"sim\"\n\ndeadband = []\n", `config.toml:5: sensor.air.deadband: must be a table (got an array)`},
		{"deadband a float", "[[sensor]]\nname = \"air\"\ndriver = \"sim\"\ndeadband = 0.5\n", `config.toml:4: sensor.air.deadband: must be a table (got a float)`},
		{"deadband a date-time", "[[sensor]]\nname = \"air\"\ndriver = \"sim\"\ndeadband = 1979-05-27T07:32:00Z\n", `config.toml:4: sensor.air.deadband: must be a table (got a date-time)`},
		{"deadband a string in the second sensor", "[[sensor]]\nname = \"a\"\ndriver = \"sim\"\ndeadband = { temperature = 1 }\n[[sensor]]\nname = \"b\"\ndriver = \"sim\"\ndeadband = \"x\"\n",
			`config.toml:8: sensor.b.deadband: must be a table (got a string)`},

		{"checklist under ~", "[heartbeat]\nchecklist = \"~/HEARTBEAT.md\"\n",
			`config.toml:2: heartbeat.checklist: must be an absolute path: ~ is not expanded (got "~/HEARTBEAT.md")`},
		{"state_dir ~", "[device]\nstate_dir = \"~\"\n", `config.toml:2: device.state_dir: must be an absolute path: ~ is not expanded (got "~")`},
		{"state_dir ~user", "[device]\nstate_dir = \"~pi/vigil\"\n", `config.toml:2: device.state_dir: must be an absolute path: ~ is not expanded (got "~pi/vigil")`},
		{"every path-valued key under ~", "[llm]\napi_key_file = \"~/k\"\n[[sensor]]\nname = \"t\"\ndriver = \"ds18b20\"\nw1_dir = \"~/w1\"\n" +
			"[mqtt]\nbroker = \"ssl://h:8883\"\nusername = \"u\"\npassword_file = \"~/p\"\nca_file = \"~/ca.pem\"\ncert_file = \"~/c.pem\"\nkey_file = \"~/k.pem\"\n" +
			"[telegram]\ntoken_file = \"~/t\"\nchat_id = 1\n[http]\npassword_file = \"~/h\"\n",
			"config.toml:2: llm.api_key_file: must be an absolute path: ~ is not expanded (got \"~/k\")\n" +
				"config.toml:6: sensor.t.w1_dir: must be an absolute path: ~ is not expanded (got \"~/w1\")\n" +
				"config.toml:10: mqtt.password_file: must be an absolute path: ~ is not expanded (got \"~/p\")\n" +
				"config.toml:11: mqtt.ca_file: must be an absolute path: ~ is not expanded (got \"~/ca.pem\")\n" +
				"config.toml:12: mqtt.cert_file: must be an absolute path: ~ is not expanded (got \"~/c.pem\")\n" +
				"config.toml:13: mqtt.key_file: must be an absolute path: ~ is not expanded (got \"~/k.pem\")\n" +
				"config.toml:15: telegram.token_file: must be an absolute path: ~ is not expanded (got \"~/t\")\n" +
				"config.toml:18: http.password_file: must be an absolute path: ~ is not expanded (got \"~/h\")"},

		{"model path", "[llm]\nmodel = \"../../etc/passwd\"\n", `config.toml:2: llm.model: must be a model name, not a path with . or .. in it (got "../../etc/passwd")`},
		{"model with a space", "[llm]\nmodel = \"gpt 4o\"\n", `config.toml:2: llm.model: must be printable ASCII without spaces (got "gpt 4o")`},
		{"model with a newline", "[llm]\nmodel = \"gpt-4o\\nmini\"\n", `config.toml:2: llm.model: must be printable ASCII without spaces (got "gpt-4o\nmini")`},
		{"model with an escape", "[llm]\nmodel = \"gpt\\u001b[2J\"\n", `config.toml:2: llm.model: must be printable ASCII without spaces (got "gpt\x1b[2J")`},
		{"model too long", "[llm]\nmodel = \"" + strings.Repeat("m", 129) + "\"\n", `config.toml:2: llm.model: must be at most 128 bytes (got 129)`},
		{"scout_model path", "[llm]\nscout_model = \"./x\"\n", `config.toml:2: llm.scout_model: must be a model name, not a path with . or .. in it (got "./x")`},
		{"scout_model space", "[llm]\nscout_model = \" \"\n", `config.toml:2: llm.scout_model: must be printable ASCII without spaces (got " ")`},

		{"control characters in a rule message", "[[rule]]\nname = \"r\"\nwhen = \"board.load1 > 4\"\nmessage = \"a\\u0000b\\u001b[31m\"\n",
			`config.toml:4: rule.r.message: must not contain U+0000 (NUL), a control character (got "a\x00b\x1b[31m"); only tabs and newlines may be in a rule's message, when and clear; remove it`},
		{"control characters in every other string", "[device]\nstate_dir = \"/var/lib/\\tvigil\"\n[heartbeat]\nchecklist = \"/etc/vigil/\\u0007.md\"\n" +
			"[[sensor]]\nname = \"t\"\ndriver = \"hwmon\"\ndevice = \"lm\\u001b75\"\n" +
			"[mqtt]\nbroker = \"tcp://127.0.0.1:1883\"\nusername = \"u\\u009b\"\n[http]\nusername = \"me\\u007f\"\n",
			"config.toml:2: device.state_dir: must not contain U+0009 (TAB), a control character (got \"/var/lib/\\tvigil\"); remove it\n" +
				"config.toml:4: heartbeat.checklist: must not contain U+0007 (BEL), a control character (got \"/etc/vigil/\\a.md\"); remove it\n" +
				"config.toml:8: sensor.t.device: must not contain U+001B (ESC), a control character (got \"lm\\x1b75\"); remove it\n" +
				"config.toml:11: mqtt.username: must not contain U+009B (CSI), a control character (got \"u\\u009b\"); remove it\n" +
				"config.toml:13: http.username: must not contain U+007F (DEL), a control character (got \"me\\x7f\"); remove it"},
		{"empty id", "[device]\nid = \"\"\n", `config.toml:2: device.id: must not be empty (remove it to use the host name, or give an id like "greenhouse-pi")`},
		{"empty timezone", "[device]\ntimezone = \"\"\n", `config.toml:2: device.timezone: must not be empty (remove it for UTC, or give an IANA name like "Europe/Berlin")`},
		{"Local timezone", "[device]\ntimezone = \"Local\"\n", `config.toml:2: device.timezone: "Local" is whatever the machine's clock is set to, not an IANA name: give one like "Europe/Berlin", or "UTC"`},
		{"empty bus", "[[sensor]]\nname = \"a\"\ndriver = \"tmp102\"\nbus = \"\"\n", `config.toml:4: sensor.a.bus: must not be empty (remove it to use the board's default bus, or name one like "1")`},
		{"empty serial", "[[sensor]]\nname = \"a\"\ndriver = \"ds18b20\"\nserial = \"\"\n", `config.toml:4: sensor.a.serial: must not be empty (remove it to use the only DS18B20 present, or give its id like "28-0316a2794aff")`},
		{"blank clear", "[[rule]]\nname = \"r\"\nwhen = \"board.load1 > 4\"\nclear = \" \"\n", `config.toml:4: rule.r.clear: must not be empty (remove it to resolve when the condition no longer holds)`},
		{"llm timeout 26h1m", "[llm]\ntimeout = \"26h1m\"\n", `config.toml:2: llm.timeout: must be at most 10m (got "26h1m"); allowed: 1s to 10m`},
		{"sample_interval 26h1m", "[heartbeat]\nsample_interval = \"26h1m\"\n", `config.toml:2: heartbeat.sample_interval: must be at most 1h (got "26h1m"); allowed: 1s to 1h`},
		{"renotify 1s", "[[rule]]\nname = \"r\"\nwhen = \"board.load1 > 4\"\nrenotify = \"1s\"\n", `config.toml:4: rule.r.renotify: must be at least 1m (got "1s"); allowed: "0" (never) or 1m to 168h`},
		{"interval beyond a day", "[heartbeat]\ninterval = \"25h\"\nmax_quiet = \"30h\"\n", `config.toml:2: heartbeat.interval: must be at most 24h (got "25h"); allowed: "0" (off) or 1m to 24h`},
		{"every other duration out of bounds", "[heartbeat]\nsensors_publish_interval = \"0\"\nmax_quiet = \"200h\"\nalert_cooldown = \"30s\"\ninterval_max = \"25h\"\n" +
			"[[sensor]]\nname = \"a\"\ndriver = \"sim\"\ntimeout = \"2m\"\nsim = { every = \"25h\" }\n" +
			"[[rule]]\nname = \"r\"\nwhen = \"a.temperature > 4\"\nfor = \"25h\"\n",
			"config.toml:2: heartbeat.sensors_publish_interval: must be at least 1s (got \"0\"); allowed: 1s to 24h\n" +
				"config.toml:3: heartbeat.max_quiet: must be at most 168h (got \"200h\"); allowed: \"0\" (never force a call) or 1s to 168h\n" +
				"config.toml:4: heartbeat.alert_cooldown: must be at least 1m (got \"30s\"); allowed: \"0\" (no cooldown) or 1m to 168h\n" +
				"config.toml:5: heartbeat.interval_max: must be at most 24h (got \"25h\"); allowed: 1m to 24h\n" +
				"config.toml:9: sensor.a.timeout: must be at most 1m (got \"2m\"); allowed: 10ms to 1m\n" +
				"config.toml:10: sensor.a.sim.every: must be at most 24h (got \"25h\"); allowed: \"0\" (no excursions) or 1s to 24h\n" +
				"config.toml:14: rule.r.for: must be at most 24h (got \"25h\"); allowed: \"0\" (at once) or 1s to 24h"},
		{"multi-line strings keep lines", "[[rule]]\nname = \"r\"\nmessage = \"\"\"\nline one\nline two\n\"\"\"\nwhen = '''\nboard.load1\n> 4'''\nseverity = \"bad\"\n",
			`config.toml:10: rule.r.severity: must be info, warning or critical (got "bad")`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := parseString(t, tt.src)
			if err == nil {
				t.Fatalf("Parse(%q) = %+v, nil; want error %q", tt.src, c, tt.want)
			}
			if err.Error() != tt.want {
				t.Errorf("Parse(%q) error:\n%s\nwant:\n%s", tt.src, err, tt.want)
			}
			for _, e := range Errors(err) {
				if e.Key == "" && e.Line == 0 {
					t.Errorf("error %q names neither key nor line", e)
				}
			}
			if n, want := len(Errors(err)), strings.Count(tt.want, "\n")+1; n != want {
				t.Errorf("Errors() returned %d errors, want %d", n, want)
			}
		})
	}
}

// TestEveryMapKeyMustBeATable finds every map-typed key of the config by
// reflection (deadband today) and gives it each kind of value that is not a
// table: each is refused with its line, never decoded into an empty map.
func TestEveryMapKeyMustBeATable(t *testing.T) {
	// What a [[table]] element needs before the key under test.
	element := map[string]string{
		"sensor": "[[sensor]]\nname = \"a\"\ndriver = \"sim\"\n",
		"rule":   "[[rule]]\nname = \"a\"\nwhen = \"board.load1 > 1\"\n",
	}
	values := map[string]string{
		`"x"`: "a string", "5": "an integer", "0.5": "a float", "true": "a boolean",
		"[1, 2]": "an array", "[]": "an array", "1979-05-27T07:32:00Z": "a date-time",
	}
	found := 0
	ct := reflect.TypeOf(Config{})
	for i := range ct.NumField() {
		sec, _, _ := strings.Cut(ct.Field(i).Tag.Get("toml"), ",")
		if sec == "" || sec == "-" {
			continue
		}
		st, prefix, name := ct.Field(i).Type, "["+sec+"]\n", sec
		if st.Kind() == reflect.Slice {
			st, prefix, name = st.Elem(), element[sec], sec+".a"
		}
		if st.Kind() != reflect.Struct {
			continue
		}
		for j := range st.NumField() {
			key, _, _ := strings.Cut(st.Field(j).Tag.Get("toml"), ",")
			if st.Field(j).Type.Kind() != reflect.Map || key == "" || key == "-" {
				continue
			}
			if prefix == "" {
				t.Fatalf("%s.%s is a map: give this test the keys a [[%s]] needs", sec, key, sec)
			}
			found++
			line := strings.Count(prefix, "\n") + 1
			for v, kind := range values {
				src := prefix + key + " = " + v + "\n"
				want := fmt.Sprintf("config.toml:%d: %s.%s: must be a table (got %s)", line, name, key, kind)
				if _, err := parseString(t, src); err == nil || err.Error() != want {
					t.Errorf("Parse(%q) = %v, want %s", src, err, want)
				}
			}
		}
	}
	if found == 0 {
		t.Fatal("no map-typed key found: the test looks in the wrong place")
	}
}

// TestHeartbeatsOff names the key that turns heartbeats off, for status.
func TestHeartbeatsOff(t *testing.T) {
	for src, want := range map[string]string{
		"":                                      "",
		"[heartbeat]\nenabled = false\n":        "heartbeat.enabled = false",
		"[heartbeat]\ninterval = \"0\"\n":       `heartbeat.interval = "0"`,
		"[heartbeat]\nschedule = [\"07:30\"]\n": "",
		"[heartbeat]\nenabled = false\ninterval = \"0\"\n": "heartbeat.enabled = false",
	} {
		c := mustParse(t, src)
		if got := c.HeartbeatsOff(); got != want {
			t.Errorf("HeartbeatsOff() for %q = %q, want %q", src, got, want)
		}
		if (want == "") != c.HeartbeatEnabled() {
			t.Errorf("HeartbeatEnabled() for %q = %v, but HeartbeatsOff() = %q", src, c.HeartbeatEnabled(), want)
		}
	}
}

func TestErrorType(t *testing.T) {
	_, err := parseString(t, "[[rule]]\nname = \"hot\"\nwhen = \"board.cpu_temperature >\"\n[heartbeat]\ninterval = \"10s\"\n")
	errs := Errors(err)
	if len(errs) != 2 {
		t.Fatalf("Errors(%v) = %d errors, want 2", err, len(errs))
	}
	if e := errs[0]; e.File != "config.toml" || e.Key != "rule.hot.when" || e.Line != 3 {
		t.Errorf("errs[0] = %+v", e)
	}
	var se *rule.SyntaxError
	if !errors.As(errs[0], &se) {
		t.Errorf("errors.As(%v, *rule.SyntaxError) = false", errs[0])
	}
	var ce *Error
	if !errors.As(err, &ce) || ce.Key != "rule.hot.when" {
		t.Errorf("errors.As(joined, *Error) = %+v", ce)
	}
	for _, tt := range []struct {
		e    *Error
		want string
	}{
		{&Error{File: "config.toml", Key: "device.id", Err: errors.New("bad")}, "config.toml: device.id: bad"},
		{&Error{Key: "device.id", Line: 3, Err: errors.New("bad")}, "line 3: device.id: bad"},
		{&Error{Key: "device.id", Err: errors.New("bad")}, "device.id: bad"},
	} {
		if got := tt.e.Error(); got != tt.want {
			t.Errorf("(%+v).Error() = %q, want %q", tt.e, got, tt.want)
		}
	}
}

func TestTooLarge(t *testing.T) {
	_, err := Parse(strings.NewReader("# "+strings.Repeat("x", MaxSize)), "big.toml")
	if err == nil || err.Error() != "big.toml: file is larger than 1024 KiB" {
		t.Errorf("Parse(huge) error = %v", err)
	}
}

func TestSetDefaultID(t *testing.T) {
	tests := []struct{ host, want string }{
		{"greenhouse-pi", "greenhouse-pi"},
		{"Greenhouse-Pi.local", "greenhouse-pi"},
		{"my pi (2)", "my-pi--2"},
		{"", "vigil"},
		{"...", "vigil"},
		{strings.Repeat("a", 70), strings.Repeat("a", 64)},
		{"émile", "mile"},
	}
	for _, tt := range tests {
		c := mustParse(t, "")
		c.SetDefaultID(tt.host)
		if c.Device.ID != tt.want {
			t.Errorf("SetDefaultID(%q): ID = %q, want %q", tt.host, c.Device.ID, tt.want)
		}
		if !idRE.MatchString(c.Device.ID) {
			t.Errorf("SetDefaultID(%q) = %q, not a valid id", tt.host, c.Device.ID)
		}
	}
	c := mustParse(t, "[device]\nid = \"set\"\n")
	c.SetDefaultID("host")
	if c.Device.ID != "set" {
		t.Errorf("SetDefaultID overwrote id %q with %q", "set", c.Device.ID)
	}
}

func TestDurationString(t *testing.T) {
	for d, want := range map[time.Duration]string{
		0: "0", 30 * time.Second: "30s", 30 * time.Minute: "30m", 6 * time.Hour: "6h",
		90 * time.Minute: "1h30m", 90 * time.Second: "1m30s", 500 * time.Millisecond: "500ms",
		time.Hour + time.Second: "1h0m1s",
	} {
		if got := (Duration{d}).String(); got != want {
			t.Errorf("Duration{%v}.String() = %q, want %q", d, got, want)
		}
		var back Duration
		if err := back.UnmarshalText([]byte(want)); err != nil || back.Duration != d {
			t.Errorf("UnmarshalText(%q) = %v, %v; want %v", want, back.Duration, err, d)
		}
	}
}

func TestSimWave(t *testing.T) {
	src := "[[sensor]]\nname = \"a\"\ndriver = \"bme280\"\nsim = { every = \"0s\" }\n\n[[sensor]]\nname = \"b\"\ndriver = \"sim\"\nsim = { every = \"2s\", length = \"1s\", rise = 5 }\n"
	cfg, err := Parse(strings.NewReader(src), "config.toml")
	if err != nil {
		t.Fatal(err)
	}
	a, b := cfg.Sensors[0].Sim, cfg.Sensors[1].Sim
	if a == nil || a.Every.Duration != 0 || a.Length.Duration != 90*time.Second || a.Rise != 20 {
		t.Errorf("sensor a sim = %+v, want every 0, defaults for the rest", a)
	}
	if b == nil || b.Every.Duration != 2*time.Second || b.Length.Duration != time.Second || b.Rise != 5 {
		t.Errorf("sensor b sim = %+v, want every 2s, length 1s, rise 5", b)
	}
	if cfg.Heartbeat.MaxAlertsPerHour != 30 {
		t.Errorf("max_alerts_per_hour default = %d, want 30", cfg.Heartbeat.MaxAlertsPerHour)
	}
}

// TestSimScript: sim.script = "week" gives the simulated sensor the
// scripted week in the device's zone; another script, or an excursion key
// beside the week, is refused with the key and line.
func TestSimScript(t *testing.T) {
	cfg := mustParse(t, "[device]\ntimezone = \"Europe/Berlin\"\n\n[[sensor]]\nname = \"air\"\ndriver = \"bme280\"\nsim = { script = \"week\" }\n")
	spec := cfg.Specs()[0]
	if spec.Sim == nil || spec.Sim.Script != "week" || spec.Sim.Location == nil || spec.Sim.Location.String() != "Europe/Berlin" {
		t.Fatalf("Specs()[0].Sim = %+v, want script week in Europe/Berlin", spec.Sim)
	}
	for _, tc := range []struct{ sim, want string }{
		{`{ script = "month" }`, `config.toml:4: sensor.air.sim.script: must be "week", or left out for the excursion (got "month")`},
		{`{ script = "week", rise = 5 }`, `config.toml:4: sensor.air.sim.rise: not used with sim.script = "week" (the week has no excursion): remove it`},
	} {
		_, err := parseString(t, "[[sensor]]\nname = \"air\"\ndriver = \"bme280\"\nsim = "+tc.sim+"\n")
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("sim = %s: error %v, want %q", tc.sim, err, tc.want)
		}
	}
}

// TestTelegramQuietHours: quiet_hours parses like active_hours (it may
// wrap midnight), quiet_min_severity defaults to critical, max_per_hour to
// 20, and 0 turns the cap off.
func TestTelegramQuietHours(t *testing.T) {
	c := mustParse(t, "[telegram]\nquiet_hours = \"22:30-07:00\"\nquiet_min_severity = \"warning\"\nmax_per_hour = 0\n")
	g := c.Telegram
	if g.Quiet == nil || g.Quiet.Start != 22*time.Hour+30*time.Minute || g.Quiet.End != 7*time.Hour {
		t.Errorf("Quiet = %+v, want 22:30-07:00", g.Quiet)
	}
	if g.QuietMinSeverity != "warning" || g.MaxPerHour != 0 {
		t.Errorf("quiet_min_severity = %q, max_per_hour = %d; want warning, 0", g.QuietMinSeverity, g.MaxPerHour)
	}
	d := mustParse(t, "").Telegram
	if d.Quiet != nil || d.QuietMinSeverity != "critical" || d.MaxPerHour != 20 {
		t.Errorf("defaults: Quiet = %v, quiet_min_severity = %q, max_per_hour = %d; want nil, critical, 20", d.Quiet, d.QuietMinSeverity, d.MaxPerHour)
	}
}

func TestBrokerURLs(t *testing.T) {
	for _, broker := range []string{
		"tcp://127.0.0.1:1883", "mqtt://h:1883", "ssl://h:8883", "mqtts://h:8883",
		"ws://h:80", "ws://h:9001/mqtt", "wss://broker.example:443/mqtt",
	} {
		c := mustParse(t, "[mqtt]\nbroker = \""+broker+"\"\n")
		if c.MQTT.Broker != broker {
			t.Errorf("broker = %q, want %q", c.MQTT.Broker, broker)
		}
	}
	// A CA file goes with every TLS scheme, WebSockets over TLS included.
	for _, broker := range []string{"ssl://h:8883", "mqtts://h:8883", "wss://h:443/mqtt"} {
		mustParse(t, "[mqtt]\nbroker = \""+broker+"\"\nca_file = \"/etc/vigil/ca.pem\"\n")
	}
}

// TestBrokersList: brokers takes every URL form broker takes, a node of
// each form in one list, and enables MQTT like broker; a CA file goes with
// a list whose nodes all use TLS.
func TestBrokersList(t *testing.T) {
	c := mustParse(t, "[mqtt]\nbrokers = [\"tcp://a:1883\", \"mqtt://b:1883\", \"ws://c:9001/mqtt\"]\n")
	if want := []string{"tcp://a:1883", "mqtt://b:1883", "ws://c:9001/mqtt"}; !slices.Equal(c.MQTT.Brokers, want) || c.MQTT.Broker != "" || !c.MQTTEnabled() {
		t.Errorf("brokers = %q, broker = %q, MQTTEnabled = %v; want %q, \"\", true", c.MQTT.Brokers, c.MQTT.Broker, c.MQTTEnabled(), want)
	}
	mustParse(t, "[mqtt]\nbrokers = [\"ssl://a:8883\", \"mqtts://b:8883\", \"wss://c:443/mqtt\"]\nca_file = \"/etc/vigil/ca.pem\"\ncert_file = \"/etc/vigil/c.pem\"\nkey_file = \"/etc/vigil/k.pem\"\n")
}

// TestCheckTopicPrefix: what every broker takes passes (levels, a space,
// non-ASCII letters); malformed UTF-8, which a file cannot hold but an
// environment variable or a flag can, does not.
func TestCheckTopicPrefix(t *testing.T) {
	for _, ok := range []string{"vigil", "site-a/vigil", "green house", "Grünhaus/vigil", "a_b", strings.Repeat("v", MaxTopicPrefix)} {
		if err := CheckTopicPrefix(ok); err != nil {
			t.Errorf("CheckTopicPrefix(%q) = %v, want nil", ok, err)
		}
	}
	want := `must be valid UTF-8: MQTT requires it, and HiveMQ (by default) and EMQX in strict mode close the connection over a malformed topic (got "site\xff")`
	if err := CheckTopicPrefix("site\xff"); err == nil || err.Error() != want {
		t.Errorf("CheckTopicPrefix(%q) = %v, want %s", "site\xff", err, want)
	}
}

// TestAllowedHosts: [http] allowed_hosts takes host names alone; a URL, a
// port or a blank is an error that says what to write.
func TestAllowedHosts(t *testing.T) {
	c := mustParse(t, "[http]\nallowed_hosts = [\"vigil.lan\", \"Greenhouse.local.\", \"greenhouse\", \"xn--grnhaus-n2a.example\"]\n")
	if got := strings.Join(c.HTTP.AllowedHosts, " "); got != "vigil.lan Greenhouse.local. greenhouse xn--grnhaus-n2a.example" {
		t.Errorf("allowed_hosts = %q", got)
	}
	for _, bad := range []string{"http://vigil.lan", "vigil.lan:8080", "", "vigil lan", "vigil.lan/", "-vigil.lan", "vigil..lan", "*.lan"} {
		_, err := parseString(t, "[http]\nallowed_hosts = [\"ok.lan\", \""+bad+"\"]\n")
		want := `config.toml:2: http.allowed_hosts: allowed_hosts[1]: "` + bad + `" is not a host name: give the name alone, as in vigil.lan (no scheme, port, path or wildcard)`
		if err == nil || err.Error() != want {
			t.Errorf("allowed_hosts [%q]: error %v, want %s", bad, err, want)
		}
	}
}
