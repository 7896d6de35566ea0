package config

import (
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"strconv"
	"strings"
)

const redacted = "[redacted]"

// Value returns the secret itself. It is the only way to get it.
func (s Secret) Value() string { return s.value }

// set reports whether the secret has a value, or names a file that
// ResolveSecretsLater could not read (the daemon, with its credentials,
// would have it).
func (s Secret) set() bool { return s.value != "" || s.err != nil }

// Source says where the secret came from: "$NAME", a file path, or "".
func (s Secret) Source() string { return s.from }

// String returns "[redacted]", or "" when the secret is unset.
func (s Secret) String() string {
	if s.value == "" {
		return ""
	}
	return redacted
}

// GoString redacts %#v.
func (s Secret) GoString() string { return strconv.Quote(s.String()) }

// Format redacts every verb (%v %+v %#v %s %q %x ...).
func (s Secret) Format(f fmt.State, verb rune) {
	switch verb {
	case 'q':
		fmt.Fprint(f, strconv.Quote(s.String()))
	case 'v':
		if f.Flag('#') {
			fmt.Fprint(f, s.GoString())
			return
		}
		fmt.Fprint(f, s.String())
	default:
		fmt.Fprint(f, s.String())
	}
}

// MarshalText redacts encoding/json, TOML and friends.
func (s Secret) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// LogValue redacts log/slog.
func (s Secret) LogValue() slog.Value { return slog.StringValue(s.String()) }

// ResolveSecrets fills LLM.APIKey, MQTT.Password and Telegram.Token from the
// environment variables or files the config names. Relative *_file paths are
// resolved against $CREDENTIALS_DIRECTORY (systemd credentials) when set. An
// empty environment variable is not an error (the feature stays off, see
// LLMEnabled and TelegramEnabled); a file that cannot be read, or is empty,
// is an *Error naming the key.
func (c *Config) ResolveSecrets(getenv func(string) string, readFile func(string) ([]byte, error)) error {
	c.resolveSecrets(getenv, readFile)
	return c.SecretsErr()
}

// ResolveSecretsLater is ResolveSecrets for what needs to know only whether
// a secret is set, not its value: the CLI's verbs that ask the daemon, read
// the state file or the hardware, in a shell that does not have the
// service's credentials. A file that cannot be read is no error here: its
// secret counts as set (LLMEnabled, TelegramEnabled), and SecretsErr says
// why it could not be read, for a verb that needs its value after all.
func (c *Config) ResolveSecretsLater(getenv func(string) string, readFile func(string) ([]byte, error)) {
	c.resolveSecrets(getenv, readFile)
}

// SecretsErr says why the secrets' files could not be read (an *Error for
// each, naming the key), or nil.
func (c *Config) SecretsErr() error {
	var errs []error
	for _, k := range c.secretKeys() {
		if k.dst.err != nil {
			errs = append(errs, k.dst.err)
		}
	}
	if len(errs) == 1 {
		return errs[0]
	}
	return errors.Join(errs...)
}

// credentialsHint says how to reach the service's credentials, for a
// relative *_file name read without $CREDENTIALS_DIRECTORY.
const credentialsHint = "a relative name is read from $CREDENTIALS_DIRECTORY, which systemd sets for the service alone; " +
	"while it runs, run this as root with CREDENTIALS_DIRECTORY=/run/credentials/vigil.service"

func (c *Config) resolveSecrets(getenv func(string) string, readFile func(string) ([]byte, error)) {
	resolve := func(dst *Secret, section, stem, env, file string) {
		*dst = Secret{}
		switch {
		case file != "":
			path, dir := file, getenv("CREDENTIALS_DIRECTORY")
			if dir != "" && !filepath.IsAbs(path) {
				path = filepath.Join(dir, path)
			}
			key := section + "." + stem + "_file"
			b, err := readFile(path)
			if err != nil {
				err = fmt.Errorf("read secret: %w", err)
				if dir == "" && !filepath.IsAbs(path) {
					err = fmt.Errorf("%w (%s)", err, credentialsHint)
				}
				*dst = Secret{from: path, err: &Error{File: c.file, Key: key, Line: c.lines[key], Err: err}}
				return
			}
			v := strings.TrimRight(string(b), "\r\n")
			if v == "" {
				*dst = Secret{from: path, err: &Error{File: c.file, Key: key, Line: c.lines[key], Err: fmt.Errorf("secret file %s is empty", path)}}
				return
			}
			*dst = Secret{value: v, from: path}
		case env != "":
			*dst = Secret{value: getenv(env), from: "$" + env}
		}
	}
	for _, k := range c.secretKeys() {
		resolve(k.dst, k.section, k.stem, k.env, k.file)
	}
}

// secretKey is one secret of the config and the keys that name it.
type secretKey struct {
	dst           *Secret
	section, stem string // "llm", "api_key"
	env, file     string // the values of its *_env and *_file keys
}

// secretKeys lists every secret the config resolves: ResolveSecrets fills
// them, SecretValues lists them for redaction. A new secret goes here.
func (c *Config) secretKeys() []secretKey {
	return []secretKey{
		{&c.LLM.APIKey, "llm", "api_key", c.LLM.APIKeyEnv, c.LLM.APIKeyFile},
		{&c.MQTT.Password, "mqtt", "password", c.MQTT.PasswordEnv, c.MQTT.PasswordFile},
		{&c.Telegram.Token, "telegram", "token", c.Telegram.TokenEnv, c.Telegram.TokenFile},
		{&c.HTTP.Password, "http", "password", "", c.HTTP.PasswordFile},
	}
}

// SecretValues returns the values of the resolved secrets that are set,
// for what must never show them (package redact).
func (c *Config) SecretValues() []string {
	var out []string
	for _, k := range c.secretKeys() {
		if v := k.dst.value; v != "" {
			out = append(out, v)
		}
	}
	return out
}

// KeyError returns err as an *Error naming key (e.g. "mqtt.ca_file") with
// the file and line it was set on, for problems found after Parse, such as
// a file the key names that cannot be read.
func (c *Config) KeyError(key string, err error) error {
	return &Error{File: c.file, Key: key, Line: c.lines[key], Err: err}
}

// LLMEnabled reports whether the heartbeat may call the LLM: an API key was
// resolved, or the config names no key at all (an OpenAI-compatible local
// server such as Ollama). Without it vigil runs rules-only.
func (c *Config) LLMEnabled() bool {
	if c.LLM.APIKey.set() {
		return true
	}
	return c.LLM.Provider == "openai" && c.LLM.APIKeyEnv == "" && c.LLM.APIKeyFile == ""
}

// HeartbeatEnabled reports whether the heartbeat loop runs at all
// (heartbeat.enabled and a schedule or a non-zero interval; Parse refuses
// a negative one): HeartbeatsOff names no key.
func (c *Config) HeartbeatEnabled() bool { return c.HeartbeatsOff() == "" }

// HeartbeatsOff names the key that keeps the heartbeat loop from running
// ("heartbeat.enabled = false", `heartbeat.interval = "0"`), or "" when it
// runs; `vigil status` shows it in place of the next run.
func (c *Config) HeartbeatsOff() string {
	switch {
	case c.off != "":
		return c.off
	case !c.Heartbeat.Enabled:
		return "heartbeat.enabled = false"
	case len(c.Heartbeat.Schedule) == 0 && c.Heartbeat.Interval.Duration == 0:
		return `heartbeat.interval = "0"`
	}
	return ""
}

// MQTTEnabled reports whether a broker (or a list of brokers) is configured.
func (c *Config) MQTTEnabled() bool { return c.MQTT.Broker != "" || len(c.MQTT.Brokers) > 0 }

// BrokerURLs returns the broker URLs in force: Brokers, or Broker alone.
func (m *MQTT) BrokerURLs() []string {
	if len(m.Brokers) > 0 {
		return m.Brokers
	}
	if m.Broker != "" {
		return []string{m.Broker}
	}
	return nil
}

// TelegramEnabled reports whether a bot token was resolved and a chat is set.
func (c *Config) TelegramEnabled() bool {
	return c.Telegram.Token.set() && c.Telegram.ChatID != 0
}

// SetDefaultID sets Device.ID from the hostname when the file left it empty:
// the short name, lowercased, with characters outside [a-z0-9_-] replaced by
// "-".
func (c *Config) SetDefaultID(hostname string) {
	if c.Device.ID != "" {
		return
	}
	host, _, _ := strings.Cut(strings.ToLower(strings.TrimSpace(hostname)), ".")
	var b strings.Builder
	for _, r := range host {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '_' || r == '-' {
			b.WriteRune(r)
		} else {
			b.WriteByte('-')
		}
	}
	id := strings.Trim(b.String(), "-")
	if len(id) > 64 {
		id = strings.TrimRight(id[:64], "-")
	}
	if id == "" {
		id = "vigil"
	}
	c.Device.ID = id
}
