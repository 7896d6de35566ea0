package config

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

const overrideSrc = `[device]
timezone = "Europe/Berlin"

[heartbeat]
interval = "30m"
active_hours = "07:00-22:00"

[llm]
model = "gpt-4o-mini"

[[sensor]]
name = "air"
driver = "sim"

[[rule]]
name = "too_hot"
when = "air.temperature > 35"
`

func parseOver(t *testing.T, ovs ...Override) (*Config, error) {
	t.Helper()
	return ParseWith(strings.NewReader(overrideSrc), "config.toml", Options{Overrides: ovs})
}

func TestEnvOverrides(t *testing.T) {
	env := []string{
		"PATH=/usr/bin",
		"VIGIL_CONFIG=/etc/vigil/config.toml",    // the config's path, not a key
		"VIGIL_NO_TRIM=1",                        // make bench's knob, not a key
		"VIGIL_TEST_KEY=sk-1",                    // a secret a *_env key names
		"VIGIL_E2E_TG_TOKEN=1:a",                 //
		"VIGIL_PROOF_KEY=sk-2",                   //
		"VIGIL_SCREENSHOTS=/tmp/s",               // a test's knob
		"VIGIL_DEV=1",                            // no section_key shape
		"VIGIL_TELEGRAM_TOKEN=123:abc",           // a secret, or a mistake: Parse decides
		"VIGIL_HEARTBEAT_SCHEDULE=07:00",         // an array: Parse refuses it
		"VIGIL_SENSOR_NAME=air",                  // sensors are file-only: Parse refuses it
		"VIGIL_LLM_MODEL=gpt-4o",                 //
		"VIGIL_HEARTBEAT_MAX_QUIET=2h",           // a key with an underscore
		"VIGIL_HEARTBEAT_INTERVAL=10m",           //
		"VIGIL_MQTT_COMMANDS=true",               //
		"VIGIL_HEARTBEAT_NO_SUCH_KEY=1",          // unknown: Parse refuses it
		"VIGIL_HEARTBAET_INTERVAL=1m",            // a misspelt section: Parse refuses it
		"vigil_heartbeat_interval=1m",            // case matters for the prefix
		"VIGIL_DEVICE_STATE_DIR=/tmp/vigilstate", //
	}
	got := EnvOverrides(env)
	ov := func(key, value, name string) Override {
		return Override{Key: key, Value: value, Origin: OriginEnv, Env: name}
	}
	want := []Override{
		ov("device.state_dir", "/tmp/vigilstate", "VIGIL_DEVICE_STATE_DIR"),
		ov("", "1m", "VIGIL_HEARTBAET_INTERVAL"),
		ov("heartbeat.interval", "10m", "VIGIL_HEARTBEAT_INTERVAL"),
		ov("heartbeat.max_quiet", "2h", "VIGIL_HEARTBEAT_MAX_QUIET"),
		ov("heartbeat.no_such_key", "1", "VIGIL_HEARTBEAT_NO_SUCH_KEY"),
		ov("heartbeat.schedule", "07:00", "VIGIL_HEARTBEAT_SCHEDULE"),
		ov("llm.model", "gpt-4o", "VIGIL_LLM_MODEL"),
		ov("mqtt.commands", "true", "VIGIL_MQTT_COMMANDS"),
		ov("sensor.name", "air", "VIGIL_SENSOR_NAME"),
		ov("telegram.token", "123:abc", "VIGIL_TELEGRAM_TOKEN"),
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("EnvOverrides (-want +got):\n%s", diff)
	}
}

// TestUnknownEnvVariables: a VIGIL_ variable meant as a setting that is
// none is a config error naming the variable and the nearest real one; a
// variable a *_env key names is a secret, not a setting, and no error.
func TestUnknownEnvVariables(t *testing.T) {
	for _, tc := range []struct {
		name string
		src  string
		env  []string
		want string // "" for no error
	}{
		{"misspelt key", "", []string{"VIGIL_HEARTBEAT_INTERVALL=10m"},
			`$VIGIL_HEARTBEAT_INTERVALL: heartbeat.intervall: unknown key (did you mean VIGIL_HEARTBEAT_INTERVAL?)`},
		{"misspelt section", "", []string{"VIGIL_HEARTBAET_INTERVAL=10m"},
			`$VIGIL_HEARTBAET_INTERVAL: unknown setting (did you mean VIGIL_HEARTBEAT_INTERVAL?)`},
		{"lower case", "", []string{"VIGIL_llm_modle=x"},
			`$VIGIL_llm_modle: llm.modle: unknown key (did you mean VIGIL_LLM_MODEL?)`},
		{"nothing near", "", []string{"VIGIL_MQTT_QUALITY_OF_SERVICE=2"},
			`$VIGIL_MQTT_QUALITY_OF_SERVICE: mqtt.quality_of_service: unknown key; a variable that holds a secret must be named by mqtt.password_env`},
		{"nothing near, no secrets in the section", "", []string{"VIGIL_DEVICE_COLOUR=red"},
			`$VIGIL_DEVICE_COLOUR: device.colour: unknown key`},
		{"not a single value", "", []string{"VIGIL_HEARTBEAT_SCHEDULE=07:00"},
			`$VIGIL_HEARTBEAT_SCHEDULE: heartbeat.schedule: not a single value: set it in the config file`},
		{"sensor", "", []string{"VIGIL_SENSOR_NAME=air"},
			`$VIGIL_SENSOR_NAME: sensor.name: [[sensor]] tables are set in the config file only`},
		{"a secret no key names", "", []string{"VIGIL_TELEGRAM_TOKEN=1:abc"},
			`$VIGIL_TELEGRAM_TOKEN: telegram.token: a secret is not a setting: name the variable in the config, as in token_env = "VIGIL_TELEGRAM_TOKEN"`},
		{"a secret with only a _file key", "", []string{"VIGIL_HTTP_PASSWORD=pw"},
			`$VIGIL_HTTP_PASSWORD: http.password: a secret is not a setting: put it in a file named by http.password_file`},
		{"no _ after the section", "", []string{"VIGIL_HEARTBEATINTERVAL=10m"},
			`$VIGIL_HEARTBEATINTERVAL: unknown setting (did you mean VIGIL_HEARTBEAT_INTERVAL?)`},
		{"no _ at all, a letter off", "", []string{"VIGIL_MQTTBROKR=tcp://b:1883"},
			`$VIGIL_MQTTBROKR: unknown setting (did you mean VIGIL_MQTT_BROKER?)`},
		{"several, all reported", "", []string{"VIGIL_LLM_MODLE=x", "VIGIL_HEARTBEAT_INTERVALL=10m"},
			"$VIGIL_HEARTBEAT_INTERVALL: heartbeat.intervall: unknown key (did you mean VIGIL_HEARTBEAT_INTERVAL?)\n" +
				"$VIGIL_LLM_MODLE: llm.modle: unknown key (did you mean VIGIL_LLM_MODEL?)"},

		{"token_env names it", "[telegram]\ntoken_env = \"VIGIL_TELEGRAM_TOKEN\"\nchat_id = 1\n", []string{"VIGIL_TELEGRAM_TOKEN=1:abc"}, ""},
		{"api_key_env names it", "[llm]\napi_key_env = \"VIGIL_LLM_KEY\"\n", []string{"VIGIL_LLM_KEY=sk"}, ""},
		{"password_env names it", "[mqtt]\nusername = \"u\"\npassword_env = \"VIGIL_MQTT_PASSWORD\"\n", []string{"VIGIL_MQTT_PASSWORD=pw"}, ""},
		{"named by an override of an _env key", "", []string{"VIGIL_LLM_KEY=sk", "VIGIL_LLM_API_KEY_ENV=VIGIL_LLM_KEY"}, ""},
		{"a misspelt secret's name that a key names", "[llm]\napi_key_env = \"VIGIL_LLM_MODLE\"\n", []string{"VIGIL_LLM_MODLE=sk"}, ""},
		{"an unshaped secret's name that a key names", "[llm]\napi_key_env = \"VIGIL_LLMMODEL\"\n", []string{"VIGIL_LLMMODEL=sk"}, ""},
		{"variables that are not settings", "", []string{"VIGIL_CONFIG=/x.toml", "VIGIL_NO_TRIM=1", "VIGIL_TEST_KEY=k",
			"VIGIL_SCREENSHOTS=/tmp", "VIGIL_E2E_TG_TOKEN=t", "VIGIL_PROOF_KEY=k", "VIGIL_BIN=b", "VIGIL_DEB_ARCH=arm64",
			"VIGIL_VERSION=1", "VIGIL_MAN=m", "VIGIL_TOKEN_2=t", "VIGIL_DEV=1",
			"VIGIL_HEARTBEAT=1", "VIGIL_MQTT=1", "VIGIL_DEBUG=1"}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseWith(strings.NewReader(tc.src), "config.toml", Options{Overrides: EnvOverrides(tc.env)})
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("Parse with %q = %v, want no error", tc.env, err)
			case tc.want != "" && (err == nil || err.Error() != tc.want):
				t.Errorf("Parse with %q error:\n%v\nwant:\n%s", tc.env, err, tc.want)
			}
		})
	}
}

// TestEnvOverrideOfAPath: an override is held to the file's rules, with
// the variable named.
func TestEnvOverrideOfAPath(t *testing.T) {
	_, err := ParseWith(strings.NewReader(""), "config.toml", Options{Overrides: EnvOverrides([]string{"VIGIL_DEVICE_STATE_DIR=~/vigil"})})
	want := `$VIGIL_DEVICE_STATE_DIR: device.state_dir: must be an absolute path: ~ is not expanded (got "~/vigil")`
	if err == nil || err.Error() != want {
		t.Errorf("error:\n%v\nwant:\n%s", err, want)
	}
}

// TestConflictNamesTheOverride: an error that cites another key's value
// says where that value came from: its line in the file, or the variable
// that set it, never the line of its table.
func TestConflictNamesTheOverride(t *testing.T) {
	src := "[device]\nid = \"d\"\n\n[mqtt]\nbrokers = [\"tcp://a:1883\", \"tcp://b:1883\"]\n"
	for _, tc := range []struct {
		over []Override
		want string
	}{
		{EnvOverrides([]string{"VIGIL_MQTT_BROKER=tcp://c:1883"}),
			`config.toml:5: mqtt.brokers: is an alternative to broker (set to "tcp://c:1883" by $VIGIL_MQTT_BROKER): remove one of them`},
		{[]Override{{Key: "mqtt.broker", Value: "tcp://c:1883", Origin: OriginSet, By: "cli"}},
			`config.toml:5: mqtt.brokers: is an alternative to broker (set to "tcp://c:1883" at run time by cli): remove one of them`},
	} {
		_, err := ParseWith(strings.NewReader(src), "config.toml", Options{Overrides: tc.over})
		if err == nil || err.Error() != tc.want {
			t.Errorf("with %+v: error:\n%v\nwant:\n%s", tc.over, err, tc.want)
		}
	}
}

func TestOverridesApplyAndNameTheirOrigin(t *testing.T) {
	at := time.Date(2026, 11, 26, 14, 2, 3, 0, time.UTC)
	c, err := parseOver(t,
		Override{Key: "heartbeat.interval", Value: "10m", Origin: OriginEnv, Env: "VIGIL_HEARTBEAT_INTERVAL"},
		Override{Key: "llm.model", Value: "gpt-4o", Origin: OriginEnv, Env: "VIGIL_LLM_MODEL"},
		Override{Key: "heartbeat.interval", Value: "15m", Origin: OriginSet, By: "telegram chat 1 user 2", At: at},
		Override{Key: "rule.too_hot.enabled", Value: "false", Origin: OriginSet, By: "cli", At: at},
		Override{Key: "heartbeat.active_hours", Value: "06:00-23:30", Origin: OriginSet, By: "cli", At: at},
	)
	if err != nil {
		t.Fatal(err)
	}
	if c.Heartbeat.Interval.Duration != 15*time.Minute {
		t.Errorf("interval = %s, want the later override's 15m", c.Heartbeat.Interval)
	}
	if c.LLM.Model != "gpt-4o" {
		t.Errorf("llm.model = %q: an override must count as defined, not be replaced by the default", c.LLM.Model)
	}
	if c.Rules[0].Enabled {
		t.Error("rule.too_hot.enabled is still true")
	}
	if c.Heartbeat.Active == nil || c.Heartbeat.Active.String() != "06:00-23:30" {
		t.Errorf("active window = %v, want 06:00-23:30 parsed from the override", c.Heartbeat.Active)
	}
	for key, want := range map[string]string{
		"heartbeat.interval":     "set 2026-11-26 15:02:03 +01:00 by telegram chat 1 user 2",
		"llm.model":              "env",
		"rule.too_hot.enabled":   "set 2026-11-26 15:02:03 +01:00 by cli",
		"device.timezone":        "config.toml:2",
		"heartbeat.max_quiet":    "default",
		"rule.too_hot.renotify":  "default",
		"heartbeat.active_hours": "set 2026-11-26 15:02:03 +01:00 by cli",
	} {
		if got := c.Origin(key).String(); got != want {
			t.Errorf("Origin(%s) = %q, want %q", key, got, want)
		}
	}
	for key, want := range map[string]string{
		"heartbeat.interval":              "15m",
		"heartbeat.enabled":               "true",
		"heartbeat.max_llm_calls_per_day": "96",
		"rule.too_hot.enabled":            "false",
		"heartbeat.active_hours":          "06:00-23:30",
	} {
		if got, err := c.Get(key); err != nil || got != want {
			t.Errorf("Get(%s) = %q, %v; want %q", key, got, err, want)
		}
	}
	if got, want := c.Overridden(), []string{"heartbeat.active_hours", "heartbeat.interval", "llm.model", "rule.too_hot.enabled"}; !cmp.Equal(got, want) {
		t.Errorf("Overridden = %v, want %v", got, want)
	}
}

func TestOverrideErrorsUseTheValidatorsMessages(t *testing.T) {
	set := func(key, value string) Override {
		return Override{Key: key, Value: value, Origin: OriginSet, By: "cli"}
	}
	env := func(key, name, value string) Override {
		return Override{Key: key, Value: value, Origin: OriginEnv, Env: name}
	}
	for _, tc := range []struct {
		name string
		ov   Override
		want string
	}{
		{"too short", env("heartbeat.interval", "VIGIL_HEARTBEAT_INTERVAL", "30s"),
			`$VIGIL_HEARTBEAT_INTERVAL: heartbeat.interval: must be at least 1m (got "30s"); allowed: "0" (off) or 1m to 24h`},
		{"empty id", env("device.id", "VIGIL_DEVICE_ID", ""),
			`$VIGIL_DEVICE_ID: device.id: must not be empty (remove it to use the host name, or give an id like "greenhouse-pi")`},
		{"empty timezone", env("device.timezone", "VIGIL_DEVICE_TIMEZONE", ""),
			`$VIGIL_DEVICE_TIMEZONE: device.timezone: must not be empty (remove it for UTC, or give an IANA name like "Europe/Berlin")`},
		{"set beyond the bound", set("heartbeat.interval", "25h"),
			`set by cli: heartbeat.interval: must be at most 24h (got "25h"); allowed: "0" (off) or 1m to 24h`},
		{"set max_quiet beyond the bound", set("heartbeat.max_quiet", "200h"),
			`set by cli: heartbeat.max_quiet: must be at most 168h (got "200h"); allowed: "0" (never force a call) or 1s to 168h`},
		{"set alert_cooldown below the bound", set("heartbeat.alert_cooldown", "1s"),
			`set by cli: heartbeat.alert_cooldown: must be at least 1m (got "1s"); allowed: "0" (no cooldown) or 1m to 168h`},
		{"not a duration", set("heartbeat.interval", "soon"),
			`set by cli: heartbeat.interval: must be a duration like "30m" (got "soon")`},
		{"not a bool", set("heartbeat.enabled", "yes please"),
			`set by cli: heartbeat.enabled: must be true or false (got "yes please")`},
		{"not an int", set("heartbeat.max_llm_calls_per_day", "many"),
			`set by cli: heartbeat.max_llm_calls_per_day: must be an integer (got "many")`},
		{"beyond int64", set("heartbeat.max_llm_calls_per_day", "9223372036854775808"),
			`set by cli: heartbeat.max_llm_calls_per_day: must be an integer (got "9223372036854775808")`},
		{"below range", set("heartbeat.max_llm_calls_per_day", "0"),
			`set by cli: heartbeat.max_llm_calls_per_day: must be at least 1 (got 0)`},
		{"bad window", set("heartbeat.active_hours", "7-22"),
			`set by cli: heartbeat.active_hours: must be "HH:MM-HH:MM" on a 24-hour clock (got "7-22")`},
		{"empty model", set("llm.model", " "),
			`set by cli: llm.model: must not be empty`},
		{"escape in a variable", env("mqtt.username", "VIGIL_MQTT_USERNAME", "u\x1b[2J"),
			`$VIGIL_MQTT_USERNAME: mqtt.username: must not contain U+001B (ESC), a control character (got "u\x1b[2J"); remove it`},
		{"no such rule", set("rule.too_cold.enabled", "false"),
			`set by cli: rule.too_cold.enabled: no rule "too_cold"`},
		{"no such key", set("heartbeat.intervall", "10m"),
			`set by cli: heartbeat.intervall: unknown key`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := parseOver(t, tc.ov)
			if err == nil || err.Error() != tc.want {
				t.Errorf("error:\n%v\nwant:\n%s", err, tc.want)
			}
			if errs := Errors(err); len(errs) != 1 {
				t.Errorf("Errors = %d *Error values, want 1", len(errs))
			}
		})
	}
}

// TestOverrideBeyondInt: on a 32-bit board an int override that does not
// fit is refused, not cut to its low 32 bits (4294967297 would be 1).
func TestOverrideBeyondInt(t *testing.T) {
	c, err := parseOver(t, Override{Key: "heartbeat.max_llm_calls_per_day", Value: "4294967297", Origin: OriginSet, By: "cli"})
	if strconv.IntSize == 64 {
		if err != nil || int64(c.Heartbeat.MaxLLMCallsPerDay) != 4294967297 {
			t.Errorf("64-bit: %v, %v; want 4294967297", c, err)
		}
		return
	}
	want := `set by cli: heartbeat.max_llm_calls_per_day: must be an integer (got "4294967297")`
	if err == nil || err.Error() != want {
		t.Errorf("32-bit: error %v, want %s", err, want)
	}
}

func TestIntervalOverrideWithASchedule(t *testing.T) {
	src := overrideSrc[:strings.Index(overrideSrc, "[llm]")] + "schedule = [\"07:30\", \"19:00\"]\n\n"
	src = strings.Replace(src, "interval = \"30m\"\n", "", 1)
	_, err := ParseWith(strings.NewReader(src), "config.toml", Options{Overrides: []Override{
		{Key: "heartbeat.interval", Value: "10m", Origin: OriginSet, By: "cli"},
	}})
	want := `set by cli: heartbeat.interval: heartbeat.schedule is in force (line 7), and interval does not apply with a schedule`
	if err == nil || err.Error() != want {
		t.Errorf("error:\n%v\nwant:\n%s", err, want)
	}
}

func TestCheckSettable(t *testing.T) {
	c, err := parseOver(t)
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"heartbeat.interval", "heartbeat.enabled", "llm.scout_model", "rule.too_hot.enabled"} {
		if err := CheckSettable(key, c); err != nil {
			t.Errorf("CheckSettable(%s) = %v, want nil", key, err)
		}
	}
	for key, want := range map[string]string{
		"device.id":             "device.id: cannot be set at run time; settable keys: heartbeat.enabled, heartbeat.interval, heartbeat.active_hours, heartbeat.max_quiet, heartbeat.alert_cooldown, heartbeat.max_llm_calls_per_day, llm.model, llm.scout_model, rule.<name>.enabled",
		"rule.too_cold.enabled": `rule.too_cold.enabled: no rule "too_cold" (rules: too_hot)`,
		"heartbeat.intervl":     "heartbeat.intervl: cannot be set at run time (did you mean heartbeat.interval?)",
	} {
		if err := CheckSettable(key, c); err == nil || err.Error() != want {
			t.Errorf("CheckSettable(%s) = %v, want %s", key, err, want)
		}
	}
	if got, want := c.SettableKeys()[len(settable)], "rule.too_hot.enabled"; got != want {
		t.Errorf("SettableKeys lists %q after the fixed keys, want %q", got, want)
	}
}
