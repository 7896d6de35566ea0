package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/vigil-iot/vigil/internal/mosquittotest"
)

// TestUnsafeSetupsWarnOnce: config check names each unsafe setup once (a
// secret in clear text to another machine, commands on an open or plain
// broker, a group that may command without allowed_users, the page's basic
// auth over plain HTTP off loopback) and none for the same setups on
// loopback or over TLS; vigil run says them once at start.
func TestUnsafeSetupsWarnOnce(t *testing.T) {
	dir := t.TempDir()
	secrets := []string{"OPENAI_API_KEY=sk-e2e-secret", "E2E_MQTT_PASS=hunter2-e2e", "E2E_TG=123:tg-e2e-secret"}
	// setup is the config both halves check: where the LLM, the broker,
	// the Bot API and the page are, and who in the group may command.
	setup := func(dir, llm, broker, users, botAPI, listen string) string {
		pw := filepath.Join(dir, "page-password")
		if err := os.WriteFile(pw, []byte("page-e2e-secret\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		return writeConfig(t, dir, fmt.Sprintf(`
[llm]
base_url = %q

[mqtt]
broker = %q
username = "vigil"
password_env = "E2E_MQTT_PASS"
commands = true

[telegram]
token_env = "E2E_TG"
chat_id = -1001234567890
allowed_chats = [-1001234567890]
allowed_users = [%s]
api_url = %q

[http]
listen = %q
password_file = %q
`, llm, broker, users, botAPI, listen, pw))
	}
	unsafe := setup(dir, "http://ollama.lan:11434/v1", "tcp://broker.lan:1883", "", "http://botapi.lan:8081", "0.0.0.0:8080")
	_, errOut, code := runIn(t, dir, secrets, "-c", unsafe, "config", "check")
	if code != 0 {
		t.Fatalf("config check exit %d:\n%s", code, errOut)
	}
	for _, key := range []string{"llm.base_url", "mqtt.broker", "mqtt.commands", "telegram.api_url", "telegram.allowed_chats", "http.listen"} {
		re := regexp.MustCompile(`(?m)^warning: unsafe setup: ` + regexp.QuoteMeta(unsafe) + `:\d+: ` + regexp.QuoteMeta(key) + `: `)
		if n := len(re.FindAllString(errOut, -1)); n != 1 {
			t.Errorf("config check: %d warnings for %s, want 1:\n%s", n, key, errOut)
		}
	}
	if n := strings.Count(errOut, "unsafe setup"); n != 6 {
		t.Errorf("config check: %d warnings, want 6:\n%s", n, errOut)
	}
	for _, s := range []string{"sk-e2e-secret", "hunter2-e2e", "tg-e2e-secret", "page-e2e-secret"} {
		if strings.Contains(errOut, s) {
			t.Errorf("config check shows the secret %q:\n%s", s, errOut)
		}
	}

	// The same on loopback or over TLS, commands with a username: no word.
	safeDir := t.TempDir()
	safe := setup(safeDir, "http://127.0.0.1:11434/v1", "ssl://broker.lan:8883", "42", "http://localhost:8081", "127.0.0.1:8080")
	_, errOut, code = runIn(t, safeDir, secrets, "-c", safe, "config", "check")
	if code != 0 || strings.Contains(errOut, "unsafe setup") {
		t.Errorf("config check of a safe setup: exit %d, warns:\n%s", code, errOut)
	}

	// vigil run, everything on loopback (nothing answers there): commands
	// on a broker reached without a username, and a group without
	// allowed_users, are said once; the LLM key and the MQTT password to
	// loopback are not.
	runDir := t.TempDir()
	loop := func() int { return mosquittotest.FreePort(t) }
	cfg := writeConfig(t, runDir, fmt.Sprintf(`
[llm]
base_url = "http://127.0.0.1:%d/v1"

[mqtt]
broker = "tcp://127.0.0.1:%d"
commands = true

[telegram]
token_env = "E2E_TG"
chat_id = -1001234567890
allowed_chats = [-1001234567890]
api_url = "http://127.0.0.1:%d"
`, loop(), loop(), loop()))
	d := startChild(t, secrets, "-c", cfg, "run")
	d.waitLog(t, regexp.MustCompile(`msg="unsafe setup: .*telegram\.allowed_chats: group chat -1001234567890 may send commands`), 20*time.Second)
	log := d.logText()
	if n := strings.Count(log, "unsafe setup"); n != 2 {
		t.Errorf("vigil run: %d unsafe-setup warnings, want 2 (mqtt.commands, telegram.allowed_chats):\n%s", n, log)
	}
	if !regexp.MustCompile(`level=WARN msg="unsafe setup: \S+:\d+: mqtt\.commands: is on, but the broker tcp://127\.0\.0\.1:\d+ is reached without a username`).MatchString(log) {
		t.Errorf("vigil run: no mqtt.commands warning:\n%s", log)
	}
	for _, s := range []string{"sk-e2e-secret", "tg-e2e-secret"} {
		if strings.Contains(log, s) {
			t.Errorf("the log shows the secret %q", s)
		}
	}
}
