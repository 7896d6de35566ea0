package setup

// The proof at the end of `vigil init` (INIT-SPEC step 6): one test alert
// to every channel the written config names, each waited for until the
// channel acknowledged it (Telegram's "ok": true, the broker's PUBACK),
// and what happened, per channel. The alert is the one `vigil test-alert`
// queues (alert.TestSummary: source system, rule test, a notice), sent
// directly rather than through the daemon's outbox, by the transports' own
// code: Telegram's message is the daemon's to the letter (telegram.Bot's
// Notify); on MQTT it is the alert's JSON on <prefix>/<device>/alert at
// QoS 1, as transport/mqtt publishes it, from a client id of its own, so a
// daemon already connected is not disturbed.

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/jonboulle/clockwork"

	"github.com/vigil-iot/vigil/alert"
	"github.com/vigil-iot/vigil/config"
	"github.com/vigil-iot/vigil/redact"
	"github.com/vigil-iot/vigil/transport/mqtt"
	"github.com/vigil-iot/vigil/transport/telegram"
)

// Channel names, as the config's sections and `vigil test-alert
// --transport` name them.
const (
	ChannelTelegram = "telegram"
	ChannelMQTT     = "mqtt"
)

// TestAlertOptions are what SendTestAlerts needs besides the config.
type TestAlertOptions struct {
	// CredDir is the credential store the wizard wrote the secrets to
	// (/etc/credstore): a relative *_file name NAME in the config is read
	// from CredDir/vigil.NAME (or CredDir/NAME), as the unit's
	// LoadCredential=NAME:vigil.NAME maps it. "": the config's secrets are
	// resolved already (or come from the environment).
	CredDir  string
	Getenv   func(string) string               // for *_env secrets; nil: os.Getenv
	ReadFile func(name string) ([]byte, error) // secret and TLS files; nil: os.ReadFile
	HTTP     *http.Client                      // for the Bot API; nil: a plain client
	Clock    clockwork.Clock                   // time of the alert and latencies; nil: real
	Log      *slog.Logger                      // nil: discard
	Severity alert.Severity                    // zero: info, as vigil test-alert sends
	Timeout  time.Duration                     // per channel; zero: 30 s
}

// Delivery is what became of the test alert on one channel.
type Delivery struct {
	Channel string        // ChannelTelegram, ChannelMQTT
	Latency time.Duration // until the acknowledgement
	Err     error         // nil: delivered
	// Note is what the person should know even so, e.g. that the
	// channel's min_severity keeps the daemon from sending alerts of the
	// test's severity.
	Note string
}

// String is the line the wizard prints: "telegram: delivered (0.4 s)",
// "mqtt: delivered, PUBACK in 12 ms", "mqtt: not delivered: …".
func (d Delivery) String() string { return d.Channel + ": " + d.Detail() }

// Detail is String without the channel: "delivered (0.4 s)", "delivered,
// PUBACK in 12 ms", "not delivered: …", with the Note after it.
func (d Delivery) Detail() string {
	var s string
	switch {
	case d.Err != nil:
		s = "not delivered: " + d.Err.Error()
	case d.Channel == ChannelMQTT:
		s = "delivered, PUBACK in " + short(d.Latency)
	default:
		s = fmt.Sprintf("delivered (%.1f s)", d.Latency.Seconds())
	}
	if d.Note != "" {
		s += " (" + d.Note + ")"
	}
	return s
}

// short renders a latency: milliseconds below a second, else seconds.
func short(d time.Duration) string {
	if d < time.Second {
		return fmt.Sprintf("%d ms", d.Milliseconds())
	}
	return fmt.Sprintf("%.1f s", d.Seconds())
}

// NewTestAlert is the test alert vigil test-alert queues, from device at t.
func NewTestAlert(device string, sev alert.Severity, t time.Time) alert.Alert {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return alert.Alert{
		ID: device + "-" + hex.EncodeToString(b[:]), Device: device, Time: t.UTC().Round(time.Millisecond),
		Severity: sev, Source: alert.SourceSystem, Rule: alert.RuleTest, State: alert.StateNotice,
		Summary: alert.TestSummary(device),
	}
}

// SendTestAlerts sends one test alert to every channel cfg configures
// (Telegram, MQTT; none: an empty list), all at once, and returns what
// happened on each, Telegram first. A secret it cannot read is that
// channel's error, naming the key and the file. A channel's error shows
// no secret of cfg's (redact). cfg is not changed.
func SendTestAlerts(ctx context.Context, cfg *config.Config, o TestAlertOptions) []Delivery {
	if o.Getenv == nil {
		o.Getenv = os.Getenv
	}
	if o.ReadFile == nil {
		o.ReadFile = os.ReadFile
	}
	if o.Clock == nil {
		o.Clock = clockwork.NewRealClock()
	}
	if o.Severity == 0 {
		o.Severity = alert.Info
	}
	if o.Timeout <= 0 {
		o.Timeout = 30 * time.Second
	}
	c := *cfg
	var secretErr error
	if o.CredDir != "" {
		secretErr = c.ResolveSecrets(credEnv(o.CredDir, o.Getenv), credFiles(o.CredDir, o.ReadFile))
	}
	if c.Device.ID == "" {
		host, _ := os.Hostname()
		c.SetDefaultID(host)
	}
	a := NewTestAlert(c.Device.ID, o.Severity, o.Clock.Now())
	red := redact.New(c.SecretValues()...)

	var out []Delivery
	if c.Telegram.TokenEnv != "" || c.Telegram.TokenFile != "" || c.Telegram.ChatID != 0 {
		out = append(out, Delivery{Channel: ChannelTelegram})
	}
	if c.MQTTEnabled() {
		out = append(out, Delivery{Channel: ChannelMQTT})
	}
	var wg sync.WaitGroup
	for i := range out {
		d := &out[i]
		wg.Go(func() {
			cctx, cancel := context.WithTimeout(ctx, o.Timeout)
			defer cancel()
			start := o.Clock.Now()
			var err error
			switch d.Channel {
			case ChannelTelegram:
				d.Note = belowMin(c.Telegram.MinSeverity, "telegram", o.Severity)
				err = sendTelegram(cctx, &c, a, secretErr, red, o)
			case ChannelMQTT:
				d.Note = belowMin(c.MQTT.MinSeverity, "mqtt", o.Severity)
				err = sendMQTT(cctx, &c, a, secretErr, red, o)
			}
			d.Latency = o.Clock.Since(start)
			d.Err = err
		})
	}
	wg.Wait()
	return out
}

// belowMin says when a channel's min_severity keeps the daemon from
// sending alerts of sev, as vigil test-alert does.
func belowMin(min, channel string, sev alert.Severity) string {
	if m, err := alert.ParseSeverity(min); err == nil && sev < m {
		return fmt.Sprintf("%s.min_severity is %s: the daemon will not send %s alerts such as this test", channel, m, sev)
	}
	return ""
}

// sendTelegram sends a to the configured chat and waits for "ok": true.
func sendTelegram(ctx context.Context, c *config.Config, a alert.Alert, secretErr error, red *redact.Redactor, o TestAlertOptions) error {
	tg := c.Telegram
	switch {
	case tg.Token.Value() == "" && sectionErr(secretErr, "telegram.") != nil:
		return sectionErr(secretErr, "telegram.")
	case tg.Token.Value() == "":
		return fmt.Errorf("no bot token: set telegram.token_file (or token_env)")
	case tg.ChatID == 0:
		return fmt.Errorf("no chat: set telegram.chat_id")
	}
	b := telegram.New(telegram.Config{APIURL: tg.APIURL, Token: tg.Token.Value(), ChatID: tg.ChatID,
		UserAgent: "vigil-init", Location: c.Device.Location, Redactor: red}, noState{}, nil, o.HTTP, o.Clock, o.Log)
	if err := b.Notify(ctx, a); err != nil {
		return red.Error(botError(BotAPI{URL: tg.APIURL, Token: tg.Token.Value()}, "sendMessage", err))
	}
	return nil
}

// sendMQTT publishes a on <prefix>/<device>/alert and waits for the PUBACK.
func sendMQTT(ctx context.Context, c *config.Config, a alert.Alert, secretErr error, red *redact.Redactor, o TestAlertOptions) error {
	m := c.MQTT
	if err := sectionErr(secretErr, "mqtt."); err != nil && m.Password.Value() == "" {
		return err
	}
	tlsCfg, err := brokerTLS(m, o)
	if err != nil {
		return err
	}
	payload, err := json.Marshal(a)
	if err != nil {
		return fmt.Errorf("encode alert %s: %w", a.ID, err)
	}
	prefix := m.TopicPrefix
	if prefix == "" {
		prefix = mqtt.DefaultTopicPrefix
	}
	urls := m.BrokerURLs()
	b := Broker{URL: urls[0], urls: urls, Username: m.Username, Password: m.Password.Value(), TLS: tlsCfg, Clock: o.Clock}
	b.Timeout = o.Timeout
	_, err = publishOnce(ctx, b, prefix+"/"+c.Device.ID+"/alert", payload)
	return red.Error(err)
}

// sectionErr returns the first error of err about a key starting with
// prefix ("telegram."), or nil.
func sectionErr(err error, prefix string) error {
	for _, e := range config.Errors(err) {
		if strings.HasPrefix(e.Key, prefix) {
			return e
		}
	}
	return nil
}

// brokerTLS builds [mqtt]'s TLS settings from its ca_file, cert_file and
// key_file (nil when it names none: a TLS broker then uses the system's CAs).
func brokerTLS(m config.MQTT, o TestAlertOptions) (*tls.Config, error) {
	if m.CAFile == "" && m.CertFile == "" {
		return nil, nil
	}
	read := func(path string) ([]byte, error) {
		if o.CredDir != "" && !filepath.IsAbs(path) {
			path = filepath.Join(o.CredDir, path)
		}
		return credFiles(o.CredDir, o.ReadFile)(path)
	}
	return mqtt.ReadTLS([3]mqtt.TLSFile{{Name: "mqtt.ca_file", Path: m.CAFile}, {Name: "mqtt.cert_file", Path: m.CertFile}, {Name: "mqtt.key_file", Path: m.KeyFile}},
		read, func(key string, err error) error { return fmt.Errorf("%s: %w", key, err) })
}

// credEnv is getenv with CREDENTIALS_DIRECTORY set to dir, as the unit
// sets it.
func credEnv(dir string, getenv func(string) string) func(string) string {
	return func(k string) string {
		if k == "CREDENTIALS_DIRECTORY" {
			return dir
		}
		return getenv(k)
	}
}

// credFiles reads a file the way the unit's LoadCredential=NAME:vigil.NAME
// shows it: a file directly in dir is read as dir/vigil.NAME when that
// exists, else as named.
func credFiles(dir string, readFile func(string) ([]byte, error)) func(string) ([]byte, error) {
	return func(path string) ([]byte, error) {
		if dir == "" || filepath.Dir(path) != filepath.Clean(dir) {
			return readFile(path)
		}
		b, err := readFile(filepath.Join(dir, "vigil."+filepath.Base(path)))
		if err == nil {
			return b, nil
		}
		if b, err2 := readFile(path); err2 == nil {
			return b, nil
		}
		return nil, err // the file vigil init writes is the one to name
	}
}
