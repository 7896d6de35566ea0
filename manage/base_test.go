package manage

import (
	"errors"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vigil-iot/vigil/config"
	"github.com/vigil-iot/vigil/internal/configtest"
	"github.com/vigil-iot/vigil/redact"
	"github.com/vigil-iot/vigil/store"
)

const testConfig = `
[device]
id = "d1"
state_dir = "state"

[heartbeat]
interval = "30m"
checklist = "HEARTBEAT.md"
` + configtest.OverlayRules

func testBase(t *testing.T, src string) *Base {
	t.Helper()
	return &Base{Name: filepath.Join(t.TempDir(), "config.toml"), Data: []byte(src)}
}

func setting(key, value, by string) store.Setting {
	return store.Setting{Key: key, Value: value, By: by, At: time.Date(2026, 3, 14, 12, 0, 0, 0, time.UTC)}
}

// TestResolve: the overlay goes on top of the file and the environment;
// an entry that no longer validates is left out with one ERROR naming it
// and who set it, and the others stay; paths are relative to the file.
func TestResolve(t *testing.T) {
	b := testBase(t, testConfig)
	b.Env = []config.Override{{Key: "heartbeat.interval", Value: "20m", Origin: config.OriginEnv}}
	var logged strings.Builder
	log := slog.New(slog.NewTextHandler(&logged, nil))
	cfg, used, err := b.Resolve([]store.Setting{
		setting("rule.gone.enabled", "false", "telegram chat 1 user 2"),
		setting("heartbeat.max_quiet", "6h", "cli"),
	}, log)
	if err != nil {
		t.Fatal(err)
	}
	if v, _ := cfg.Get("heartbeat.interval"); v != "20m" {
		t.Errorf("heartbeat.interval = %s, want the environment's 20m", v)
	}
	if v, _ := cfg.Get("heartbeat.max_quiet"); v != "6h" || len(used) != 1 {
		t.Errorf("max_quiet = %s with %d entries used, want the valid entry kept", v, len(used))
	}
	if n := strings.Count(logged.String(), "level=ERROR"); n != 1 || !strings.Contains(logged.String(), "key=rule.gone.enabled") ||
		!strings.Contains(logged.String(), `set_by="telegram chat 1 user 2"`) {
		t.Errorf("want one ERROR naming rule.gone.enabled and who set it, got:\n%s", logged.String())
	}
	if want := filepath.Join(filepath.Dir(b.Name), "state"); cfg.Device.StateDir != want {
		t.Errorf("state_dir = %s, want %s (relative to the file)", cfg.Device.StateDir, want)
	}
	if _, _, err := testBase(t, "bogus = 1\n").Resolve(nil, log); err == nil {
		t.Error("Resolve of a bad base = nil error")
	}
}

// TestConfiguredOnce: the config without the overlay is parsed once, and
// a Resolve with no overlay is that config.
func TestConfiguredOnce(t *testing.T) {
	b := testBase(t, testConfig)
	a, err := b.Configured()
	if err != nil {
		t.Fatal(err)
	}
	c, _ := b.Configured()
	d, _, _ := b.Resolve(nil, slog.New(slog.DiscardHandler))
	if a != c || a != d {
		t.Errorf("Configured parsed again: %p, %p, Resolve(nil) %p", a, c, d)
	}
}

// TestWith: a set is validated with the stored overlay, replacing its
// key's stored value; a stale entry does not make a valid set fail; the
// error is the validator's, naming the key.
func TestWith(t *testing.T) {
	b := testBase(t, testConfig)
	stored := []store.Setting{setting("heartbeat.interval", "10m", "cli"), setting("rule.gone.enabled", "false", "cli")}
	cfg, err := b.With(stored, setting("heartbeat.interval", "15m", "socket"))
	if err != nil {
		t.Fatal(err)
	}
	if v, _ := cfg.Get("heartbeat.interval"); v != "15m" {
		t.Errorf("heartbeat.interval = %s, want 15m", v)
	}
	_, err = b.With(stored, setting("heartbeat.interval", "30s", "socket"))
	var ce *config.Error
	if !errors.As(err, &ce) || !strings.Contains(err.Error(), `heartbeat.interval: must be at least 1m (got "30s")`) {
		t.Errorf("With(30s) = %v, want the validator's *config.Error", err)
	}
}

// TestSecretsThroughWhatTheBaseIsGiven: a secret comes from the Getenv
// the base was given (none: unset), and its redactor learns it.
func TestSecretsThroughWhatTheBaseIsGiven(t *testing.T) {
	src := testConfig + "\n[mqtt]\nbroker = \"tcp://127.0.0.1:1883\"\nusername = \"u\"\npassword_env = \"MQTT_PW\"\n"
	t.Setenv("MQTT_PW", "pw-in-the-process")
	cfg, err := testBase(t, src).Parse(nil)
	if err != nil || cfg.MQTT.Password.Value() != "" {
		t.Fatalf("Parse with no Getenv = %v, password %q; want none read", err, cfg.MQTT.Password.Value())
	}
	b := testBase(t, src)
	b.Getenv = func(k string) string { return map[string]string{"MQTT_PW": "pw-from-env"}[k] }
	b.Red = redact.New()
	cfg, err = b.Parse(nil)
	if err != nil || cfg.MQTT.Password.Value() != "pw-from-env" {
		t.Fatalf("Parse = %v, password %q; want pw-from-env", err, cfg.MQTT.Password.Value())
	}
	if got := b.Red.String("login pw-from-env"); got != "login [redacted]" {
		t.Errorf("redactor after Parse: %q", got)
	}
}
