package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const secretsSrc = `[llm]
api_key_env = "OPENAI_API_KEY"

[mqtt]
broker = "tcp://127.0.0.1:1883"
username = "vigil"
password_file = "mqtt.pass"

[telegram]
token_file = "/etc/vigil/telegram.token"
chat_id = 42
`

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func files(m map[string]string) func(string) ([]byte, error) {
	return func(path string) ([]byte, error) {
		v, ok := m[path]
		if !ok {
			return nil, &fs.PathError{Op: "open", Path: path, Err: fs.ErrNotExist}
		}
		return []byte(v), nil
	}
}

func TestResolveSecrets(t *testing.T) {
	tests := []struct {
		name     string
		env      map[string]string
		files    map[string]string
		wantErr  string
		llm      string
		mqtt     string
		telegram string
	}{
		{
			name:     "env and relative file against CREDENTIALS_DIRECTORY",
			env:      map[string]string{"OPENAI_API_KEY": "sk-env", "CREDENTIALS_DIRECTORY": "/run/credentials/vigil.service"},
			files:    map[string]string{"/run/credentials/vigil.service/mqtt.pass": "pw\n", "/etc/vigil/telegram.token": "123:abc\r\n"},
			llm:      "sk-env",
			mqtt:     "pw",
			telegram: "123:abc",
		},
		{
			name:     "relative file without CREDENTIALS_DIRECTORY",
			files:    map[string]string{"mqtt.pass": "pw with trailing space \n\n", "/etc/vigil/telegram.token": "t"},
			mqtt:     "pw with trailing space ",
			telegram: "t",
		},
		{
			name:    "missing files are errors naming the key",
			env:     map[string]string{"CREDENTIALS_DIRECTORY": "/creds"},
			files:   map[string]string{},
			wantErr: "config.toml:7: mqtt.password_file: read secret: open /creds/mqtt.pass: file does not exist\nconfig.toml:10: telegram.token_file: read secret: open /etc/vigil/telegram.token: file does not exist",
		},
		{
			name:    "empty file",
			files:   map[string]string{"mqtt.pass": "x", "/etc/vigil/telegram.token": "\n"},
			wantErr: "config.toml:10: telegram.token_file: secret file /etc/vigil/telegram.token is empty",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := mustParse(t, secretsSrc)
			err := c.ResolveSecrets(env(tt.env), files(tt.files))
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("ResolveSecrets() error = %v, want %q", err, tt.wantErr)
				}
				var ce *Error
				if !errors.As(err, &ce) || ce.Key == "" {
					t.Errorf("errors.As(*Error) = %v", ce)
				}
				if !errors.Is(err, fs.ErrNotExist) && strings.Contains(tt.wantErr, "does not exist") {
					t.Errorf("errors.Is(err, fs.ErrNotExist) = false")
				}
				return
			}
			if err != nil {
				t.Fatalf("ResolveSecrets() = %v", err)
			}
			got := [3]string{c.LLM.APIKey.Value(), c.MQTT.Password.Value(), c.Telegram.Token.Value()}
			if want := [3]string{tt.llm, tt.mqtt, tt.telegram}; got != want {
				t.Errorf("secrets = %q, want %q", got, want)
			}
			var set []string // SecretValues lists every one that is set
			for _, v := range got {
				if v != "" {
					set = append(set, v)
				}
			}
			if vs := c.SecretValues(); fmt.Sprint(vs) != fmt.Sprint(set) {
				t.Errorf("SecretValues() = %q, want %q", vs, set)
			}
			if c.LLMEnabled() != (tt.llm != "") {
				t.Errorf("LLMEnabled() = %v with key %q", c.LLMEnabled(), tt.llm)
			}
			if !c.TelegramEnabled() || !c.MQTTEnabled() {
				t.Errorf("TelegramEnabled() = %v, MQTTEnabled() = %v; want true", c.TelegramEnabled(), c.MQTTEnabled())
			}
		})
	}
}

func TestResolveSecretsEmptyEnv(t *testing.T) {
	c := mustParse(t, "[telegram]\ntoken_env = \"TG\"\nchat_id = 1\n")
	if err := c.ResolveSecrets(env(nil), files(nil)); err != nil {
		t.Fatalf("ResolveSecrets with empty env = %v, want nil (rules-only)", err)
	}
	if c.LLMEnabled() || c.TelegramEnabled() {
		t.Errorf("LLMEnabled() = %v, TelegramEnabled() = %v; want false, false", c.LLMEnabled(), c.TelegramEnabled())
	}
	if c.LLM.APIKey.Source() != "$OPENAI_API_KEY" {
		t.Errorf("APIKey.Source() = %q", c.LLM.APIKey.Source())
	}
	// Resolving again with the variable set replaces the old value.
	if err := c.ResolveSecrets(env(map[string]string{"OPENAI_API_KEY": "k", "TG": "t"}), files(nil)); err != nil {
		t.Fatal(err)
	}
	if !c.LLMEnabled() || !c.TelegramEnabled() {
		t.Errorf("after setting env: LLMEnabled() = %v, TelegramEnabled() = %v", c.LLMEnabled(), c.TelegramEnabled())
	}
}

// TestResolveSecretsLater: without the service's credentials, a secret
// whose file cannot be read counts as set, and SecretsErr says how to
// reach the credentials for a verb that needs the value.
func TestResolveSecretsLater(t *testing.T) {
	c := mustParse(t, secretsSrc)
	c.ResolveSecretsLater(env(nil), files(nil))
	if !c.TelegramEnabled() || c.Telegram.Token.Value() != "" || c.SecretValues() != nil {
		t.Errorf("TelegramEnabled() = %v, token %q, SecretValues() = %q; want true, none, none", c.TelegramEnabled(), c.Telegram.Token.Value(), c.SecretValues())
	}
	want := "config.toml:7: mqtt.password_file: read secret: open mqtt.pass: file does not exist (" + credentialsHint + ")\n" +
		"config.toml:10: telegram.token_file: read secret: open /etc/vigil/telegram.token: file does not exist"
	if err := c.SecretsErr(); err == nil || err.Error() != want {
		t.Errorf("SecretsErr() = %v, want %q", err, want)
	}
	if err := c.ResolveSecrets(env(nil), files(nil)); err == nil || err.Error() != want {
		t.Errorf("ResolveSecrets() = %v, want %q", err, want)
	}
	c.ResolveSecretsLater(env(nil), files(map[string]string{"mqtt.pass": "pw", "/etc/vigil/telegram.token": "t"}))
	if err := c.SecretsErr(); err != nil || c.Telegram.Token.Value() != "t" {
		t.Errorf("with the files: SecretsErr() = %v, token %q", err, c.Telegram.Token.Value())
	}
}

// TestResolveSecretsRealFile reads through os.ReadFile, as cmd does.
func TestResolveSecretsRealFile(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "llm.key"), []byte("sk-file\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	c := mustParse(t, "[llm]\nprovider = \"anthropic\"\napi_key_file = \"llm.key\"\n")
	if err := c.ResolveSecrets(env(map[string]string{"CREDENTIALS_DIRECTORY": dir}), os.ReadFile); err != nil {
		t.Fatal(err)
	}
	if c.LLM.APIKey.Value() != "sk-file" || !c.LLMEnabled() {
		t.Errorf("APIKey = %q, LLMEnabled() = %v", c.LLM.APIKey.Value(), c.LLMEnabled())
	}
	if want := filepath.Join(dir, "llm.key"); c.LLM.APIKey.Source() != want {
		t.Errorf("Source() = %q, want %q", c.LLM.APIKey.Source(), want)
	}
}

func TestSecretRedaction(t *testing.T) {
	const value = "sk-live-0123456789"
	c := mustParse(t, "[llm]\napi_key_env = \"K\"\n[telegram]\ntoken_env = \"T\"\nchat_id = 5\n[mqtt]\nbroker = \"tcp://h:1\"\nusername = \"u\"\npassword_env = \"P\"\n")
	if err := c.ResolveSecrets(env(map[string]string{"K": value, "T": value, "P": value}), files(nil)); err != nil {
		t.Fatal(err)
	}
	s := c.LLM.APIKey
	var outputs []string
	for _, f := range []string{"%v", "%+v", "%#v", "%s", "%q", "%x", "%X", "%10s", "%d"} {
		outputs = append(outputs, fmt.Sprintf(f, s), fmt.Sprintf(f, &s), fmt.Sprintf(f, c), fmt.Sprintf(f, *c), fmt.Sprintf(f, c.LLM))
	}
	outputs = append(outputs, s.String(), s.GoString(), fmt.Sprint(s), fmt.Sprintln(c.Telegram))
	for _, v := range []any{s, c, c.LLM, map[string]Secret{"k": s}} {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatalf("json.Marshal(%T): %v", v, err)
		}
		outputs = append(outputs, string(b))
	}
	var logs bytes.Buffer
	log := slog.New(slog.NewJSONHandler(&logs, nil))
	log.Info("cfg", "key", s, "llm", c.LLM)
	slog.New(slog.NewTextHandler(&logs, nil)).Info("cfg", "key", s, "config", c)
	outputs = append(outputs, logs.String())
	var toml bytes.Buffer
	if err := c.WriteTOML(&toml); err != nil {
		t.Fatal(err)
	}
	outputs = append(outputs, toml.String())
	for _, out := range outputs {
		if strings.Contains(out, value) || strings.Contains(out, fmt.Sprintf("%x", value)) || strings.Contains(out, fmt.Sprintf("%X", value)) {
			t.Errorf("secret leaked: %s", out)
		}
	}
	for _, tt := range []struct{ got, want string }{
		{fmt.Sprintf("%v", s), "[redacted]"},
		{fmt.Sprintf("%s", s), "[redacted]"},
		{fmt.Sprintf("%q", s), `"[redacted]"`},
		{fmt.Sprintf("%#v", s), `"[redacted]"`},
		{fmt.Sprintf("%v", Secret{}), ""},
		{mustJSON(t, s), `"[redacted]"`},
		{mustJSON(t, Secret{}), `""`},
	} {
		if tt.got != tt.want {
			t.Errorf("got %q, want %q", tt.got, tt.want)
		}
	}
	if s.Value() != value {
		t.Errorf("Value() = %q, want the secret", s.Value())
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
