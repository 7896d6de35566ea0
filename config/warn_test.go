package config

import (
	"strconv"
	"strings"
	"testing"
)

// TestWarnings: each unsafe setup vigil runs with anyway gives one warning
// naming its key, its line and the fix; a setup on loopback or over TLS
// gives none.
func TestWarnings(t *testing.T) {
	secrets := env(map[string]string{"KEY": "sk-abcdefgh", "MQTT_PASS": "hunter2-pass", "TG": "1:tokentoken",
		"SHORT_KEY": "sk-abc", "SHORT_PASS": "hunter2", "SHORT_TG": "1:tok", "EIGHT": "12345678"})
	secretFiles := files(map[string]string{"/run/pw": "xyzzy\n", "/run/key": "sk-x", "/run/page": "page-password-1\n"})
	tests := []struct {
		name string
		src  string
		want []string
	}{
		{"commands on a plain broker without a username", `[mqtt]
broker = "tcp://192.0.2.10:1883"
commands = true
`, []string{`config.toml:3: mqtt.commands: is on, but the broker tcp://192.0.2.10:1883 is reached without TLS and without a username or client certificate: anyone who can publish to vigil/d1/cmd/# may command this device (pause it, change its settings); use ssl://, mqtts:// or wss://, and set mqtt.username with a broker ACL that lets only vigil write there`}},
		{"commands without a username on loopback", `[mqtt]
broker = "tcp://127.0.0.1:1883"
commands = true
`, []string{`config.toml:3: mqtt.commands: is on, but the broker tcp://127.0.0.1:1883 is reached without a username or client certificate: anyone who can publish to vigil/d1/cmd/# may command this device (pause it, change its settings); set mqtt.username with a broker ACL that lets only vigil write there`}},
		{"commands with a username but no TLS, and the password in clear", `[mqtt]
broker = "mqtt://broker.lan:1883"
username = "vigil"
password_env = "MQTT_PASS"
commands = true
`, []string{
			`config.toml:2: mqtt.broker: sends the MQTT password in clear text to broker.lan (mqtt://, not TLS): use ssl://, mqtts:// or wss://`,
			`config.toml:5: mqtt.commands: is on, but the broker mqtt://broker.lan:1883 is reached without TLS: anyone who can publish to vigil/d1/cmd/# may command this device (pause it, change its settings); use ssl://, mqtts:// or wss://`,
		}},
		{"websocket password in clear", `[mqtt]
broker = "ws://broker.lan:9001/mqtt"
username = "vigil"
password_env = "MQTT_PASS"
`, []string{`config.toml:2: mqtt.broker: sends the MQTT password in clear text to broker.lan (ws://, not TLS): use ssl://, mqtts:// or wss://`}},
		{"a cluster's nodes: the password in clear", `[mqtt]
brokers = ["tcp://a.lan:1883", "tcp://b.lan:1883", "tcp://127.0.0.1:1883"]
username = "vigil"
password_env = "MQTT_PASS"
`, []string{`config.toml:2: mqtt.brokers: sends the MQTT password in clear text to a.lan, b.lan (tcp://, not TLS): use ssl://, mqtts:// or wss://`}},
		{"a cluster's nodes: commands without TLS or a username", `[mqtt]
brokers = ["tcp://a.lan:1883", "tcp://127.0.0.1:1883"]
commands = true
`, []string{`config.toml:3: mqtt.commands: is on, but the brokers tcp://a.lan:1883, tcp://127.0.0.1:1883 are reached without TLS and without a username or client certificate: anyone who can publish to vigil/d1/cmd/# may command this device (pause it, change its settings); use ssl://, mqtts:// or wss://, and set mqtt.username with a broker ACL that lets only vigil write there`}},
		{"LLM key over http", `[llm]
base_url = "http://ollama.lan:11434/v1"
api_key_env = "KEY"
`, []string{`config.toml:2: llm.base_url: sends the API key in clear text to ollama.lan (http://): use https://, or a server on this machine`}},
		{"Telegram token over http", `[telegram]
token_env = "TG"
chat_id = 5
api_url = "http://botapi.lan:8081"
`, []string{`config.toml:4: telegram.api_url: sends the bot token in clear text to botapi.lan (http://): use https://`}},
		{"a group that may command without allowed_users", `[telegram]
token_env = "TG"
chat_id = 5
allowed_chats = [5, -1001234567890, -42]
`, []string{`config.toml:4: telegram.allowed_chats: group chats -1001234567890, -42 may send commands and telegram.allowed_users is empty: every member may pause this device or change its settings; list the user ids that may in telegram.allowed_users`}},

		{"the page's password in clear on every interface", `[http]
listen = "0.0.0.0:8080"
password_file = "/run/page"
`, []string{`config.toml:2: http.listen: serves the status page on 0.0.0.0:8080, reachable from the network, over plain HTTP: basic auth sends the page's password in clear text with every request; listen on 127.0.0.1 and reach the page through an ssh tunnel or a TLS reverse proxy`}},
		{"the page's password in clear on a LAN address", `[http]
password_file = "/run/page"
listen = "[2001:db8::5]:80"
`, []string{`config.toml:3: http.listen: serves the status page on [2001:db8::5]:80, reachable from the network, over plain HTTP: basic auth sends the page's password in clear text with every request; listen on 127.0.0.1 and reach the page through an ssh tunnel or a TLS reverse proxy`}},
		{"the page's password in clear on every interface, no host", `[http]
listen = ":8080"
password_file = "/run/page"
`, []string{`config.toml:2: http.listen: serves the status page on :8080, reachable from the network, over plain HTTP: basic auth sends the page's password in clear text with every request; listen on 127.0.0.1 and reach the page through an ssh tunnel or a TLS reverse proxy`}},

		{"safe: the page on loopback with a password", `[http]
listen = "127.0.0.1:8080"
password_file = "/run/page"
`, nil},
		{"safe: the page on loopback without a password", `[http]
listen = "[::1]:8080"
`, nil},
		{"safe: TLS broker with a username, commands on", `[mqtt]
broker = "ssl://broker.example:8883"
username = "vigil"
password_env = "MQTT_PASS"
commands = true
`, nil},
		{"safe: client certificate instead of a username", `[mqtt]
broker = "mqtts://broker.example:8883"
cert_file = "c.pem"
key_file = "k.pem"
commands = true
`, nil},
		{"safe: loopback broker with a password in clear", `[mqtt]
broker = "tcp://localhost:1883"
username = "vigil"
password_env = "MQTT_PASS"
commands = true
`, nil},
		{"safe: local LLM over http with a key", `[llm]
base_url = "http://127.0.0.1:11434/v1"
api_key_env = "KEY"
`, nil},
		{"safe: remote LLM over http without a key", `[llm]
base_url = "http://ollama.lan:11434/v1"
api_key_env = ""
`, nil},
		{"safe: LLM key unset", `[llm]
base_url = "http://ollama.lan:11434/v1"
api_key_env = "UNSET"
`, nil},
		{"safe: local Bot API server over http", `[telegram]
token_env = "TG"
chat_id = 5
api_url = "http://[::1]:8081"
`, nil},
		{"safe: a group with allowed_users", `[telegram]
token_env = "TG"
chat_id = -42
allowed_chats = [-42]
allowed_users = [7]
`, nil},
		{"safe: commands off on a plain broker", `[mqtt]
broker = "tcp://192.0.2.10:1883"
`, nil},
		{"secrets too short to redact", `[llm]
api_key_env = "SHORT_KEY"

[mqtt]
broker = "ssl://broker.example:8883"
username = "vigil"
password_env = "SHORT_PASS"

[telegram]
token_env = "SHORT_TG"
chat_id = 5

[http]
listen = "127.0.0.1:8080"
password_file = "/run/pw"
`, []string{
			`config.toml:2: llm.api_key_env: the secret in $SHORT_KEY is shorter than 8 bytes: vigil does not redact it from what it keeps and shows (notes, alerts, logs); give it at least 8 characters`,
			`config.toml:7: mqtt.password_env: the secret in $SHORT_PASS is shorter than 8 bytes: vigil does not redact it from what it keeps and shows (notes, alerts, logs); give it at least 8 characters`,
			`config.toml:10: telegram.token_env: the secret in $SHORT_TG is shorter than 8 bytes: vigil does not redact it from what it keeps and shows (notes, alerts, logs); give it at least 8 characters`,
			`config.toml:15: http.password_file: the secret in /run/pw is shorter than 8 bytes: vigil does not redact it from what it keeps and shows (notes, alerts, logs); give it at least 8 characters`,
		}},
		{"a short key from a file", `[llm]
api_key_file = "/run/key"
`, []string{`config.toml:2: llm.api_key_file: the secret in /run/key is shorter than 8 bytes: vigil does not redact it from what it keeps and shows (notes, alerts, logs); give it at least 8 characters`}},
		{"safe: secrets of 8 bytes", `[llm]
api_key_env = "EIGHT"

[mqtt]
broker = "ssl://broker.example:8883"
username = "vigil"
password_env = "EIGHT"
`, nil},
		{"safe: the defaults", ``, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := mustParse(t, "[device]\nid = \"d1\"\n"+tt.src)
			if err := c.ResolveSecrets(secrets, secretFiles); err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, w := range c.Warnings() {
				got = append(got, w.Error())
			}
			// The src starts on line 3 of the parsed text.
			var want []string
			for _, w := range tt.want {
				want = append(want, shiftLine(w, 2))
			}
			if strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Errorf("Warnings():\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
			for _, w := range got {
				for _, secret := range []string{"sk-abc", "hunter2", "1:tok", "xyzzy", "sk-x", "page-password-1"} {
					if strings.Contains(w, secret) {
						t.Errorf("warning %q shows a secret", w)
					}
				}
			}
		})
	}
}

// shiftLine adds n to the line number of "config.toml:L: ...".
func shiftLine(s string, n int) string {
	rest, ok := strings.CutPrefix(s, "config.toml:")
	num, rest, ok2 := strings.Cut(rest, ":")
	line, err := strconv.Atoi(num)
	if !ok || !ok2 || err != nil {
		return s
	}
	return "config.toml:" + strconv.Itoa(line+n) + ":" + rest
}
