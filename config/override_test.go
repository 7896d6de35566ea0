package config

import (
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
		"VIGIL_CONFIG=/etc/vigil/config.toml",    // not a key
		"VIGIL_TELEGRAM_TOKEN=123:abc",           // a secret named by token_env, not a key
		"VIGIL_HEARTBEAT_SCHEDULE=07:00",         // an array, not a scalar
		"VIGIL_SENSOR_NAME=air",                  // sensors are not a section
		"VIGIL_LLM_MODEL=gpt-4o",                 //
		"VIGIL_HEARTBEAT_MAX_QUIET=2h",           // a key with an underscore
		"VIGIL_HEARTBEAT_INTERVAL=10m",           //
		"VIGIL_MQTT_COMMANDS=true",               //
		"VIGIL_HEARTBEAT_NO_SUCH_KEY=1",          // unknown: ignored
		"vigil_heartbeat_interval=1m",            // case matters for the prefix
		"VIGIL_DEVICE_STATE_DIR=/tmp/vigilstate", //
	}
	got := EnvOverrides(env)
	want := []Override{
		{Key: "device.state_dir", Value: "/tmp/vigilstate", Origin: OriginEnv, Env: "VIGIL_DEVICE_STATE_DIR"},
		{Key: "heartbeat.interval", Value: "10m", Origin: OriginEnv, Env: "VIGIL_HEARTBEAT_INTERVAL"},
		{Key: "heartbeat.max_quiet", Value: "2h", Origin: OriginEnv, Env: "VIGIL_HEARTBEAT_MAX_QUIET"},
		{Key: "llm.model", Value: "gpt-4o", Origin: OriginEnv, Env: "VIGIL_LLM_MODEL"},
		{Key: "mqtt.commands", Value: "true", Origin: OriginEnv, Env: "VIGIL_MQTT_COMMANDS"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("EnvOverrides (-want +got):\n%s", diff)
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
			`$VIGIL_HEARTBEAT_INTERVAL: heartbeat.interval: must be at least 1m (got "30s")`},
		{"not a duration", set("heartbeat.interval", "soon"),
			`set by cli: heartbeat.interval: must be a duration like "30m" (got "soon")`},
		{"not a bool", set("heartbeat.enabled", "yes please"),
			`set by cli: heartbeat.enabled: must be true or false (got "yes please")`},
		{"not an int", set("heartbeat.max_llm_calls_per_day", "many"),
			`set by cli: heartbeat.max_llm_calls_per_day: must be an integer (got "many")`},
		{"below range", set("heartbeat.max_llm_calls_per_day", "0"),
			`set by cli: heartbeat.max_llm_calls_per_day: must be at least 1 (got 0)`},
		{"bad window", set("heartbeat.active_hours", "7-22"),
			`set by cli: heartbeat.active_hours: must be "HH:MM-HH:MM" on a 24-hour clock (got "7-22")`},
		{"empty model", set("llm.model", " "),
			`set by cli: llm.model: must not be empty`},
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
