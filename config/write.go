package config

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/vigil-iot/vigil/device"
)

// WriteTOML writes the resolved configuration (defaults applied, durations
// as strings) as TOML that Parse accepts. Secrets never appear: a comment
// says whether each one was resolved and from where.
func (c *Config) WriteTOML(w io.Writer) error {
	t := &tomlWriter{w: bufio.NewWriter(w)}
	t.line("# vigil configuration as resolved: defaults applied, secrets redacted")

	d := c.Device
	t.table("device")
	if d.ID == "" {
		t.line("# id: the host name")
	} else {
		t.str("id", d.ID)
	}
	t.str("board", d.Board)
	t.str("state_dir", d.StateDir)
	t.str("timezone", d.Timezone)
	if len(d.Tags) > 0 {
		t.strs("tags", d.Tags)
	}

	h := c.Heartbeat
	t.table("heartbeat")
	if off := c.HeartbeatsOff(); off != "" {
		t.line("# heartbeats are off: " + off)
	}
	t.bool("enabled", h.Enabled)
	if len(h.Schedule) > 0 {
		t.line("# interval: not used: heartbeat.schedule is in force")
	} else {
		t.dur("interval", h.Interval)
	}
	t.dur("sample_interval", h.SampleInterval)
	t.dur("sensors_publish_interval", h.SensorsPublishInterval)
	t.str("checklist", h.Checklist)
	t.str("active_hours", h.ActiveHours)
	t.dur("max_quiet", h.MaxQuiet)
	t.dur("alert_cooldown", h.AlertCooldown)
	t.int("failure_alert_after", int64(h.FailureAlertAfter))
	t.int("max_alerts_per_hour", int64(h.MaxAlertsPerHour))
	t.int("max_llm_calls_per_day", int64(h.MaxLLMCallsPerDay))
	t.str("gate", h.Gate)
	t.raw("unusual", tomlFloat(h.Unusual))
	t.strs("schedule", h.Schedule)
	t.strs("model_may", h.ModelMay)
	t.dur("interval_min", h.IntervalMin)
	t.dur("interval_max", h.IntervalMax)

	l := c.LLM
	t.table("llm")
	t.str("provider", l.Provider)
	t.str("base_url", l.BaseURL)
	t.str("model", l.Model)
	t.str("scout_model", l.ScoutModel)
	t.str("api_key_env", l.APIKeyEnv)
	t.str("api_key_file", l.APIKeyFile)
	t.secret("api_key", l.APIKey, l.APIKeyEnv, l.APIKeyFile)
	t.dur("timeout", l.Timeout)
	t.int("max_steps", int64(l.MaxSteps))
	t.int("max_tool_calls", int64(l.MaxToolCalls))
	t.int("max_output_tokens", int64(l.MaxOutputTokens))
	t.int("max_retries", int64(l.MaxRetries))
	t.dur("retry_backoff", l.RetryBackoff)

	for _, s := range c.Sensors {
		t.blank()
		t.line("[[sensor]]")
		t.str("name", s.Name)
		t.str("driver", s.Driver)
		d, _ := device.LookupDriver(s.Driver)
		if d.Takes("bus") {
			if s.Bus == "" {
				t.line("# bus: the board's default")
			} else {
				t.str("bus", s.Bus)
			}
		}
		if d.Takes("address") {
			if s.Address == 0 {
				t.line("# address: the driver's default")
			} else {
				t.raw("address", fmt.Sprintf("0x%02x", s.Address))
			}
		}
		t.dur("timeout", s.Timeout)
		if len(s.Deadband) > 0 {
			var parts []string
			for _, q := range sortedKeys(s.Deadband) {
				parts = append(parts, tomlKey(q)+" = "+tomlFloat(s.Deadband[q]))
			}
			t.raw("deadband", "{ "+strings.Join(parts, ", ")+" }")
		}
		if len(s.Calibrate) > 0 {
			t.raw("calibrate", calibrateTOML(s.Calibrate))
		}
		if d.Takes("shunt_ohms") {
			t.raw("shunt_ohms", tomlFloat(s.ShuntOhms))
			t.raw("max_current", tomlFloat(s.MaxCurrent))
		}
		if d.Takes("channels") {
			t.raw("channels", channelsTOML(s.Channels))
		}
		if d.Takes("gain") {
			t.raw("gain", tomlFloat(s.Gain))
		}
		if d.Takes("vref") {
			t.raw("vref", tomlFloat(s.VRef))
		}
		if d.Takes("rtd") {
			t.str("rtd", s.RTD)
			t.int("wires", int64(s.Wires))
			t.raw("ref_ohms", tomlFloat(s.RefOhms))
		}
		if d.Takes("path") {
			if s.Path != "" {
				t.str("path", s.Path)
			}
			if s.Device != "" {
				t.str("device", s.Device)
			}
			if len(s.Quantities) > 0 {
				t.strs("quantities", s.Quantities)
			}
		}
		if d.Takes("serial") {
			if s.Serial == "" {
				t.line("# serial: the only DS18B20 present")
			} else {
				t.str("serial", s.Serial)
			}
			t.str("w1_dir", s.W1Dir)
		}
		if w := s.Sim; w != nil {
			start := ""
			if !w.Start.IsZero() {
				start = ", start = " + w.Start.Format(time.RFC3339Nano)
			}
			if w.Script != "" {
				t.raw("sim", fmt.Sprintf("{ script = %q%s }", w.Script, start))
			} else {
				t.raw("sim", fmt.Sprintf("{ every = %q, length = %q, rise = %s%s }", w.Every, w.Length, tomlFloat(w.Rise), start))
			}
		}
	}

	for _, r := range c.Rules {
		t.blank()
		if r.Origin != "" { // a run-time rule lives in the state file: shown, not written
			t.line(fmt.Sprintf("# run-time rule %s, %s: when = %q (vigil rule show %s --toml)", r.Name, r.Origin, r.When, r.Name))
			continue
		}
		t.rule(r)
	}

	m := c.MQTT
	t.table("mqtt")
	if len(m.Brokers) > 0 {
		t.strs("brokers", m.Brokers)
	} else {
		t.str("broker", m.Broker)
	}
	t.str("topic_prefix", m.TopicPrefix)
	t.str("username", m.Username)
	t.str("password_env", m.PasswordEnv)
	t.str("password_file", m.PasswordFile)
	t.secret("password", m.Password, m.PasswordEnv, m.PasswordFile)
	t.str("ca_file", m.CAFile)
	t.str("cert_file", m.CertFile)
	t.str("key_file", m.KeyFile)
	t.dur("keepalive", m.Keepalive)
	t.bool("homeassistant", m.HomeAssistant)
	t.str("discovery_prefix", m.DiscoveryPrefix)
	t.bool("commands", m.Commands)
	t.str("min_severity", m.MinSeverity)

	g := c.Telegram
	t.table("telegram")
	t.str("token_env", g.TokenEnv)
	t.str("token_file", g.TokenFile)
	t.secret("token", g.Token, g.TokenEnv, g.TokenFile)
	t.int("chat_id", g.ChatID)
	chats := make([]string, len(g.AllowedChats))
	for i, id := range g.AllowedChats {
		chats[i] = strconv.FormatInt(id, 10)
	}
	t.raw("allowed_chats", "["+strings.Join(chats, ", ")+"]")
	users := make([]string, len(g.AllowedUsers))
	for i, id := range g.AllowedUsers {
		users[i] = strconv.FormatInt(id, 10)
	}
	t.raw("allowed_users", "["+strings.Join(users, ", ")+"]")
	t.str("api_url", g.APIURL)
	t.str("min_severity", g.MinSeverity)
	t.str("quiet_hours", g.QuietHours)
	t.str("quiet_min_severity", g.QuietMinSeverity)
	t.int("max_per_hour", int64(g.MaxPerHour))

	hp := c.HTTP
	t.table("http")
	t.str("listen", hp.Listen)
	t.strs("allowed_hosts", hp.AllowedHosts)
	t.str("username", hp.Username)
	t.str("password_file", hp.PasswordFile)
	t.secret("password", hp.Password, "", hp.PasswordFile)

	t.table("manage")
	t.strs("remote", c.Manage.Remote)
	t.strs("models", c.Manage.Models)
	t.int("proposal_max_per_day", int64(c.Manage.ProposalMaxPerDay))

	if t.err != nil {
		return fmt.Errorf("write config: %w", t.err)
	}
	if err := t.w.Flush(); err != nil {
		return fmt.Errorf("write config: %w", err)
	}
	return nil
}

type tomlWriter struct {
	w   *bufio.Writer
	err error
}

// channelsTOML writes channels as numbers and inline tables.
func channelsTOML(chans Channels) string {
	out := make([]string, len(chans))
	for i, c := range chans {
		if c.Quantity == "" {
			out[i] = strconv.Itoa(c.Channel)
			continue
		}
		parts := []string{"channel = " + strconv.Itoa(c.Channel), "quantity = " + tomlString(c.Quantity), "unit = " + tomlString(c.Unit)}
		for _, kv := range []struct {
			key string
			v   []float64
		}{{"volts", c.Volts}, {"values", c.Values}} {
			if kv.v != nil {
				parts = append(parts, kv.key+" = ["+tomlFloat(kv.v[0])+", "+tomlFloat(kv.v[1])+"]")
			}
		}
		out[i] = "{ " + strings.Join(parts, ", ") + " }"
	}
	return "[" + strings.Join(out, ", ") + "]"
}

func (t *tomlWriter) line(s string) {
	if t.err == nil {
		_, t.err = t.w.WriteString(s + "\n")
	}
}

func (t *tomlWriter) blank()                  { t.line("") }
func (t *tomlWriter) table(name string)       { t.blank(); t.line("[" + name + "]") }
func (t *tomlWriter) raw(key, val string)     { t.line(tomlKey(key) + " = " + val) }
func (t *tomlWriter) str(key, val string)     { t.raw(key, tomlString(val)) }
func (t *tomlWriter) bool(key string, v bool) { t.raw(key, strconv.FormatBool(v)) }
func (t *tomlWriter) int(key string, v int64) { t.raw(key, strconv.FormatInt(v, 10)) }
func (t *tomlWriter) strs(key string, v []string) {
	q := make([]string, len(v))
	for i, s := range v {
		q[i] = tomlString(s)
	}
	t.raw(key, "["+strings.Join(q, ", ")+"]")
}
func (t *tomlWriter) dur(key string, d Duration) {
	t.raw(key, tomlString(d.String()))
}

// secret writes a comment saying where a secret came from, never its value.
func (t *tomlWriter) secret(stem string, s Secret, env, file string) {
	switch {
	case s.value != "":
		t.line(fmt.Sprintf("# %s: %s (from %s)", stem, redacted, s.from))
	case s.from != "":
		t.line(fmt.Sprintf("# %s: not set (%s is empty)", stem, s.from))
	case env != "" || file != "":
		t.line(fmt.Sprintf("# %s: not resolved", stem))
	}
}

func tomlKey(k string) string {
	for _, r := range k {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-') {
			return tomlString(k)
		}
	}
	if k == "" {
		return `""`
	}
	return k
}

// tomlString quotes s as a TOML basic string.
func tomlString(s string) string {
	s = strings.ToValidUTF8(s, string(utf8.RuneError))
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '\b':
			b.WriteString(`\b`)
		case '\t':
			b.WriteString(`\t`)
		case '\n':
			b.WriteString(`\n`)
		case '\f':
			b.WriteString(`\f`)
		case '\r':
			b.WriteString(`\r`)
		default:
			if r < 0x20 || r == 0x7f {
				fmt.Fprintf(&b, `\u%04X`, r)
			} else {
				b.WriteRune(r)
			}
		}
	}
	b.WriteByte('"')
	return b.String()
}

// tomlFloat writes a float that reads back as a TOML float.
func tomlFloat(f float64) string {
	switch {
	case math.IsNaN(f):
		return "nan"
	case math.IsInf(f, 1):
		return "inf"
	case math.IsInf(f, -1):
		return "-inf"
	}
	s := strconv.FormatFloat(f, 'g', -1, 64)
	if !strings.ContainsAny(s, ".e") {
		s += ".0"
	}
	return s
}

// rule writes r as a [[rule]] table.
func (t *tomlWriter) rule(r Rule) {
	t.line("[[rule]]")
	t.str("name", r.Name)
	t.str("when", r.When)
	if r.Clear == "" {
		t.line("# clear: when `when` no longer holds")
	} else {
		t.str("clear", r.Clear)
	}
	t.str("severity", r.Severity)
	t.str("message", r.Message)
	t.dur("for", r.For)
	t.dur("renotify", r.Renotify)
	t.bool("enabled", r.Enabled)
}

// RuleTOML is r as a [[rule]] table to paste into config.toml (`vigil rule
// show NAME --toml`), with its origin as a comment when it has one.
func RuleTOML(r Rule) string {
	var b strings.Builder
	t := &tomlWriter{w: bufio.NewWriter(&b)}
	if r.Origin != "" {
		t.line("# " + r.Origin)
	}
	t.rule(r)
	t.w.Flush()
	return b.String()
}
