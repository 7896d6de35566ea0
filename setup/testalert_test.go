package setup

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	paho "github.com/eclipse/paho.mqtt.golang"

	"github.com/vigil-iot/vigil/alert"
	"github.com/vigil-iot/vigil/config"
	"github.com/vigil-iot/vigil/internal/mosquittotest"
)

// parseInitConfig parses a config as vigil init writes it: the secrets are
// credential names, and the credential store holds vigil.NAME files.
func parseInitConfig(t *testing.T, botURL, broker, extra string) *config.Config {
	t.Helper()
	text := fmt.Sprintf(`
[device]
id = "pi"
board = "sim"

[telegram]
token_file = "telegram_token"
chat_id = 4242
allowed_chats = [4242]
allowed_users = [7]
api_url = %q

[mqtt]
broker = %q
username = "vigil"
password_file = "mqtt_password"
homeassistant = true
%s`, botURL, broker, extra)
	cfg, err := config.Parse(strings.NewReader(text), "config.toml")
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// writeCredstore writes the secrets as vigil init does: dir/vigil.NAME, 0600.
func writeCredstore(t *testing.T, secrets map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, v := range secrets {
		if err := os.WriteFile(filepath.Join(dir, "vigil."+name), []byte(v+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// The test alert reaches both channels, and each says how long its
// acknowledgement took: Telegram's message is the daemon's, MQTT's the
// alert's JSON on vigil/pi/alert.
func TestSendTestAlerts(t *testing.T) {
	t.Parallel()
	bot := newFakeBotAPI(t)
	b := mosquittoWithPassword(t, "vigil", "s3cret-pass")
	sub := mosquittotest.SubscribeWith(t, "tcp://"+b.Addr(), mosquittotest.SubscriberOptions{
		Configure: func(o *paho.ClientOptions) { o.SetUsername("vigil").SetPassword("s3cret-pass") }}, "vigil/#")
	cfg := parseInitConfig(t, bot.srv.URL, "mqtt://"+b.Addr(), "")
	dir := writeCredstore(t, map[string]string{"telegram_token": goodToken, "mqtt_password": "s3cret-pass"})

	got := SendTestAlerts(context.Background(), cfg, TestAlertOptions{CredDir: dir})
	if len(got) != 2 || got[0].Channel != ChannelTelegram || got[1].Channel != ChannelMQTT {
		t.Fatalf("SendTestAlerts = %v, want telegram then mqtt", got)
	}
	for _, d := range got {
		if d.Err != nil || d.Note != "" {
			t.Errorf("%s", d)
		}
	}
	if s := got[0].String(); !strings.HasPrefix(s, "telegram: delivered (") || !strings.HasSuffix(s, " s)") {
		t.Errorf("telegram's line %q, want \"telegram: delivered (0.0 s)\"", s)
	}
	if s := got[1].String(); !strings.HasPrefix(s, "mqtt: delivered, PUBACK in ") || !strings.HasSuffix(s, " ms") {
		t.Errorf("mqtt's line %q, want \"mqtt: delivered, PUBACK in 3 ms\"", s)
	}

	bot.mu.Lock()
	sent := bot.sent
	bot.mu.Unlock()
	if len(sent) != 1 || sent[0]["chat_id"] != int64(4242) || !strings.Contains(sent[0]["text"].(string), alert.TestSummary("pi")) {
		t.Errorf("Telegram got %v, want one message to chat 4242 with the test alert's summary", sent)
	}
	m := sub.Next("vigil/pi/alert", 5*time.Second)
	var a alert.Alert
	if err := json.Unmarshal([]byte(m.Payload), &a); err != nil {
		t.Fatalf("vigil/pi/alert: %v: %s", err, m.Payload)
	}
	if a.Rule != alert.RuleTest || a.Source != alert.SourceSystem || a.State != alert.StateNotice || a.Severity != alert.Info ||
		a.Device != "pi" || a.Summary != alert.TestSummary("pi") || m.Retained {
		t.Errorf("vigil/pi/alert = %+v (retained %t), want the test alert of vigil test-alert", a, m.Retained)
	}
}

// Each channel fails on its own, says why, and shows no secret.
func TestSendTestAlertsFailures(t *testing.T) {
	t.Parallel()
	bot := newFakeBotAPI(t)
	b := mosquittoWithPassword(t, "vigil", "s3cret-pass")
	cfg := parseInitConfig(t, bot.srv.URL, "mqtt://"+b.Addr(), "min_severity = \"warning\"\n")
	dir := writeCredstore(t, map[string]string{"telegram_token": badToken, "mqtt_password": "wrong-password-99"})

	got := SendTestAlerts(context.Background(), cfg, TestAlertOptions{CredDir: dir})
	if len(got) != 2 {
		t.Fatalf("SendTestAlerts = %v, want telegram and mqtt", got)
	}
	if !errors.Is(got[0].Err, ErrTokenRefused) {
		t.Errorf("telegram: %v, want ErrTokenRefused", got[0].Err)
	}
	if !errors.Is(got[1].Err, ErrBrokerRefused) {
		t.Errorf("mqtt: %v, want ErrBrokerRefused", got[1].Err)
	}
	if !strings.Contains(got[1].Note, "mqtt.min_severity is warning") {
		t.Errorf("mqtt's note %q, want it to name mqtt.min_severity", got[1].Note)
	}
	for _, d := range got {
		s := d.String()
		if !strings.HasPrefix(s, d.Channel+": not delivered: ") {
			t.Errorf("%q: want %q", s, d.Channel+": not delivered: …")
		}
		for _, secret := range []string{badToken[10:], "wrong-password-99"} {
			if strings.Contains(s, secret) {
				t.Errorf("%q shows a secret", s)
			}
		}
	}

	// A credential that is not there names its key and the file vigil
	// init writes.
	empty := t.TempDir()
	got = SendTestAlerts(context.Background(), cfg, TestAlertOptions{CredDir: empty})
	for _, d := range got {
		want := map[string]string{ChannelTelegram: "telegram.token_file: read secret: open " + filepath.Join(empty, "vigil.telegram_token"),
			ChannelMQTT: "mqtt.password_file: read secret: open " + filepath.Join(empty, "vigil.mqtt_password")}[d.Channel]
		if d.Err == nil || !strings.Contains(d.Err.Error(), want) {
			t.Errorf("%s: want it to say %q", d, want)
		}
	}
}

// No channel: nothing to send, nothing to say.
func TestSendTestAlertsNone(t *testing.T) {
	cfg, err := config.Parse(strings.NewReader("[device]\nid = \"pi\"\nboard = \"sim\"\n"), "config.toml")
	if err != nil {
		t.Fatal(err)
	}
	if got := SendTestAlerts(context.Background(), cfg, TestAlertOptions{}); len(got) != 0 {
		t.Errorf("SendTestAlerts = %v, want none", got)
	}
}

// What the wizard prints for each channel after the test alert.
func ExampleDelivery_String() {
	fmt.Println(Delivery{Channel: ChannelTelegram, Latency: 420 * time.Millisecond})
	fmt.Println(Delivery{Channel: ChannelTelegram, Latency: 1260 * time.Millisecond, Note: "telegram.min_severity is warning: the daemon will not send info alerts such as this test"}.Detail())
	fmt.Println(Delivery{Channel: ChannelMQTT, Latency: 12 * time.Millisecond})
	fmt.Println(Delivery{Channel: ChannelMQTT, Err: fmt.Errorf("mqtt mqtt://10.0.0.2:1883: %w (CONNACK 5 not authorized)", ErrBrokerRefused)})
	// Output:
	// telegram: delivered (0.4 s)
	// delivered (1.3 s) (telegram.min_severity is warning: the daemon will not send info alerts such as this test)
	// mqtt: delivered, PUBACK in 12 ms
	// mqtt: not delivered: mqtt mqtt://10.0.0.2:1883: the broker refused the user name or password (CONNACK 5 not authorized)
}

// As the wizard calls it: the config's secrets resolved already (it read
// them from the credstore when it validated the file), no CredDir.
func TestSendTestAlertsResolved(t *testing.T) {
	t.Parallel()
	bot := newFakeBotAPI(t)
	b := mosquittoWithPassword(t, "vigil", "s3cret-pass")
	cfg := parseInitConfig(t, bot.srv.URL, "mqtt://"+b.Addr(), "")
	secrets := map[string]string{"telegram_token": goodToken, "mqtt_password": "s3cret-pass"}
	err := cfg.ResolveSecrets(func(string) string { return "/run/credentials/vigil.service" }, func(path string) ([]byte, error) {
		if v, ok := secrets[filepath.Base(path)]; ok {
			return []byte(v), nil
		}
		return nil, os.ErrNotExist
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range SendTestAlerts(context.Background(), cfg, TestAlertOptions{}) {
		if d.Err != nil {
			t.Errorf("%s", d)
		}
	}
	bot.mu.Lock()
	defer bot.mu.Unlock()
	if len(bot.sent) != 1 {
		t.Errorf("Telegram got %v, want the test alert", bot.sent)
	}
}
