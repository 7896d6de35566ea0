package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// credsConfig is the sim config with its secrets in the credential store,
// as docs/install.md sets them up: relative *_file names that only the
// service's $CREDENTIALS_DIRECTORY holds.
const credsConfig = `
[mqtt]
broker = "tcp://127.0.0.1:1"
username = "vigil"
password_file = "mqtt_password"

[telegram]
token_file = "telegram_token"
chat_id = 42
api_url = "http://127.0.0.1:1"
`

// TestVerbsWithoutCredentials: a person's shell has no
// $CREDENTIALS_DIRECTORY. The verbs that need no secret (they ask the
// daemon, read the state file or the hardware) work all the same, and a
// transport whose secret they cannot read still counts as configured;
// the verbs that need one say how to reach the credentials.
func TestVerbsWithoutCredentials(t *testing.T) {
	dir := t.TempDir()
	cfg := writeConfig(t, dir, overlayRules+credsConfig)
	env := []string{"CREDENTIALS_DIRECTORY="}
	for _, args := range [][]string{
		{"status"}, {"sensors"}, {"rules"}, {"history"}, {"get", "heartbeat.interval"},
		{"test-alert", "--transport", "telegram"}, {"ack", "too_hot"}, {"pause", "5"}, {"resume"},
	} {
		out, errOut, code := runIn(t, dir, env, append([]string{"-c", cfg}, args...)...)
		if code == 78 || strings.Contains(errOut, "read secret") {
			t.Errorf("vigil %s without the credentials: exit %d\n%s%s", strings.Join(args, " "), code, out, errOut)
		}
	}
	out, _, _ := runIn(t, dir, env, "-c", cfg, "status")
	if !strings.Contains(out, "telegram 1") {
		t.Errorf("status without the credentials does not count telegram's queue:\n%s", out)
	}
	for _, args := range [][]string{{"config", "check"}, {"check", "--dry-run"}} {
		_, errOut, code := runIn(t, dir, env, append([]string{"-c", cfg}, args...)...)
		if code != 78 || !strings.Contains(errOut, "mqtt.password_file: read secret") ||
			!strings.Contains(errOut, "CREDENTIALS_DIRECTORY=/run/credentials/vigil.service") {
			t.Errorf("vigil %s without the credentials: exit %d, want 78 and how to reach them:\n%s", strings.Join(args, " "), code, errOut)
		}
	}

	// With them, the daemon runs, and `check` asks it.
	creds := t.TempDir()
	for name, v := range map[string]string{"mqtt_password": "password-e2e", "telegram_token": "123456:token-e2e"} {
		if err := os.WriteFile(filepath.Join(creds, name), []byte(v+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	d := startDaemon(t, cfg, "CREDENTIALS_DIRECTORY="+creds)
	defer d.logIfFailed(t)
	d.waitLog(t, regexp.MustCompile(`msg="vigil starting"`), 10*time.Second)
	if _, errOut, code := runIn(t, dir, env, "-c", cfg, "check", "--dry-run"); code == 78 || strings.Contains(errOut, "read secret") {
		t.Errorf("vigil check --dry-run with a daemon running, without the credentials: exit %d\n%s", code, errOut)
	}
}

// TestTestAlertAsksTheDaemon: the daemon's environment, not the shell's,
// says which transports are configured. Its Telegram token comes from a
// variable the shell does not have; `vigil test-alert --transport
// telegram` is the daemon's to check and send, min_severity note and all.
func TestTestAlertAsksTheDaemon(t *testing.T) {
	dir := t.TempDir()
	cfg := writeConfig(t, dir, `
[telegram]
token_env = "E2E_TG_TOKEN"
chat_id = 42
api_url = "http://127.0.0.1:1"
min_severity = "warning"
`)
	d := startDaemon(t, cfg, "E2E_TG_TOKEN=123456:token-e2e")
	defer d.logIfFailed(t)
	d.waitLog(t, regexp.MustCompile(`msg="vigil starting"`), 10*time.Second)
	out, errOut, code := runIn(t, dir, []string{"E2E_TG_TOKEN="}, "-c", cfg, "test-alert", "--transport", "telegram")
	if code != 0 || !strings.Contains(out, "queued for telegram only (the daemon is delivering it)") ||
		!strings.Contains(out+errOut, "telegram.min_severity is warning") {
		t.Errorf("test-alert --transport telegram, the token in the daemon's environment only: exit %d\n%s%s", code, out, errOut)
	}
	_, errOut, code = runIn(t, dir, nil, "-c", cfg, "test-alert", "--transport", "mqtt")
	if code != 2 || !strings.Contains(errOut, `"mqtt" is not a configured transport (configured: log, telegram)`) {
		t.Errorf("test-alert --transport mqtt, which the daemon does not have: exit %d, want 2\n%s", code, errOut)
	}
}
