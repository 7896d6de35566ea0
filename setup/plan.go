package setup

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// Plan is what vigil init writes: everything the answers decided.
type Plan struct {
	Board    string
	Sensors  []Found
	Rules    []Rule
	Telegram *TelegramPlan
	MQTT     *MQTTPlan
	LLM      *LLMPlan
	// Keep holds sections of an existing config kept as they were, by
	// section ("device", "sensor", "rule", "telegram", ...): its text.
	Keep map[string]string

	sensorRules []Rule // the starter rules of the kept sensors, offered in step 3
}

// Found is one sensor the survey found, and a [[sensor]] block to write.
type Found struct {
	Name    string // proposed name, [a-z0-9_]
	Driver  string
	Bus     string // I²C bus or SPI port; "" for 1-Wire, IIO, ...
	Addr    uint16 // I²C address; 0: none
	Extra   []KV   // further keys of its block (device = "bme680"), values as TOML
	Reading string // one reading, as shown: "21.4 °C, 48 %RH, 1012 hPa"
	Note    string // how sure: "chip id 0x60 at register 0xd0", "a guess: no ID register"
	Comment string // the block's comment: what the chip is
	Err     error  // the reading failed
}

// KV is one key and its TOML value.
type KV struct{ Key, Value string }

// Rule is a [[rule]] block.
type Rule struct {
	Name, When, Clear, For, Severity, Message string

	Sensor string // the sensor it watches (renamed with it); not written
}

// Telegram is the [telegram] section.
type TelegramPlan struct {
	Token      string // written to the credstore, never to config.toml
	Chat, User int64
	API        string // "" or the default: not written
}

// MQTT is the [mqtt] section.
type MQTTPlan struct {
	Broker, User  string
	Password      string // written to the credstore
	HomeAssistant bool
}

// LLM is the [llm] section; nil is rules-only.
type LLMPlan struct {
	Name, Provider, URL, Model string
	Key                        string // written to the credstore
}

// Credential names: the files are vigil.NAME in the credstore, and the
// unit's LoadCredential= maps them to NAME in $CREDENTIALS_DIRECTORY.
const (
	CredTelegram = "telegram_token"
	CredMQTT     = "mqtt_password"
	CredLLM      = "llm_api_key"
)

// Secrets are the credentials to write: NAME → value.
func (p *Plan) Secrets() map[string]string {
	s := map[string]string{}
	if p.Telegram != nil && p.Telegram.Token != "" {
		s[CredTelegram] = p.Telegram.Token
	}
	if p.MQTT != nil && p.MQTT.Password != "" {
		s[CredMQTT] = p.MQTT.Password
	}
	if p.LLM != nil && p.LLM.Key != "" {
		s[CredLLM] = p.LLM.Key
	}
	return s
}

type llmProvider struct {
	Provider, URL, Model string
	NeedsKey             bool
}

var llmProviders = map[string]llmProvider{
	"openai":     {"openai", "https://api.openai.com/v1", "gpt-4o-mini", true},
	"anthropic":  {"anthropic", "https://api.anthropic.com", "claude-3-5-haiku-latest", true},
	"ollama":     {"openai", "http://127.0.0.1:11434/v1", "qwen2.5:3b", false},
	"openrouter": {"openai", "https://openrouter.ai/api/v1", "openai/gpt-4o-mini", true},
}

func providerNames() []string {
	var n []string
	for k := range llmProviders {
		n = append(n, k)
	}
	sort.Strings(n)
	return n
}

// TOML renders the plan as config.toml. Same plan, same bytes: nothing in
// it depends on the time or on how the answers were given.
func (p *Plan) TOML() []byte {
	var b strings.Builder
	w := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	w("# vigil configuration, written by `vigil init` (run it again to change it).\n")
	w("# Check it with: vigil config check. Secrets are not here: the *_file keys\n")
	w("# name credentials the unit loads from /etc/credstore (LoadCredential=).\n")
	if t, ok := p.Keep["device"]; ok {
		w("\n%s", t)
	} else {
		w("\n[device]\nboard = %s\n", strconv.Quote(p.Board))
	}
	if t, ok := p.Keep["sensor"]; ok {
		w("\n%s", t)
	} else {
		for _, s := range p.Sensors {
			if s.Comment != "" {
				w("\n# %s", s.Comment)
			}
			w("\n[[sensor]]\nname = %s\ndriver = %s\n", strconv.Quote(s.Name), strconv.Quote(s.Driver))
			if s.Bus != "" {
				w("bus = %s\n", strconv.Quote(s.Bus))
			}
			if s.Addr != 0 {
				w("address = 0x%02x\n", s.Addr)
			}
			for _, kv := range s.Extra {
				w("%s = %s\n", kv.Key, kv.Value)
			}
		}
	}
	if t, ok := p.Keep["rule"]; ok {
		w("\n%s", t)
	} else {
		for _, r := range p.Rules {
			w("\n[[rule]]\nname = %s\nwhen = %s\n", strconv.Quote(r.Name), strconv.Quote(r.When))
			if r.Clear != "" {
				w("clear = %s\n", strconv.Quote(r.Clear))
			}
			if r.For != "" {
				w("for = %s\n", strconv.Quote(r.For))
			}
			w("severity = %s\n", strconv.Quote(r.Severity))
			if r.Message != "" {
				w("message = %s\n", strconv.Quote(r.Message))
			}
		}
	}
	if t, ok := p.Keep["telegram"]; ok {
		w("\n%s", t)
	} else if t := p.Telegram; t != nil {
		w("\n[telegram]\ntoken_file = %q\nchat_id = %d\nallowed_chats = [%d]\n", CredTelegram, t.Chat, t.Chat)
		if t.User != 0 {
			w("allowed_users = [%d]\n", t.User)
		}
		if t.API != "" && t.API != DefaultTelegramAPI {
			w("api_url = %s\n", strconv.Quote(t.API))
		}
	}
	if t, ok := p.Keep["mqtt"]; ok {
		w("\n%s", t)
	} else if m := p.MQTT; m != nil {
		w("\n[mqtt]\nbroker = %s\n", strconv.Quote(m.Broker))
		if m.User != "" {
			w("username = %s\n", strconv.Quote(m.User))
		}
		if m.Password != "" {
			w("password_file = %q\n", CredMQTT)
		}
		w("homeassistant = %t\n", m.HomeAssistant)
	}
	if t, ok := p.Keep["llm"]; ok {
		w("\n%s", t)
	} else if l := p.LLM; l != nil {
		w("\n[llm]\nprovider = %s\nbase_url = %s\nmodel = %s\n", strconv.Quote(l.Provider), strconv.Quote(l.URL), strconv.Quote(l.Model))
		if l.Key != "" {
			w("api_key_file = %q\n", CredLLM)
		} else {
			w("api_key_env = \"\"                # a local server: no key\n")
		}
	} else {
		w("\n# No [llm]: rules-only. The local rules above alert; no heartbeat asks a\n# model (vigil init --llm PROVIDER adds one).\n")
	}
	for _, k := range sortedKeys(p.Keep) {
		switch k {
		case "device", "sensor", "rule", "telegram", "mqtt", "llm":
			continue
		}
		w("\n%s", p.Keep[k])
	}
	return []byte(b.String())
}

func sortedKeys(m map[string]string) []string {
	var k []string
	for s := range m {
		k = append(k, s)
	}
	sort.Strings(k)
	return k
}
