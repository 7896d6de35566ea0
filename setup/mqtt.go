package setup

// The MQTT check of `vigil init` (INIT-SPEC step 4) and the MQTT half of
// its test alert: one connection with the daemon's client settings
// (transport/mqtt.ClientOptions: MQTT 3.1.1, TLS for mqtts://, ssl:// and
// wss://, WebSockets for ws://), one QoS 1 publish, the PUBACK, and a
// clean disconnect. No reconnect, no Last Will, no retained message: the
// check must not disturb a daemon that is already connected, so it uses
// a client id of its own.

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/url"
	"syscall"
	"time"

	paho "github.com/eclipse/paho.mqtt.golang"
	"github.com/eclipse/paho.mqtt.golang/packets"
	"github.com/jonboulle/clockwork"

	"github.com/vigil-iot/vigil/config"
	"github.com/vigil-iot/vigil/internal/tlshint"
	"github.com/vigil-iot/vigil/transport/mqtt"
)

// Errors of the MQTT check; test them with errors.Is.
var (
	// ErrBrokerRefused: the broker answered and refused the user name or
	// password (CONNACK 4 or 5).
	ErrBrokerRefused = errors.New("the broker refused the user name or password")
	// ErrBrokerUnreachable: no broker answered at the address (refused,
	// unknown host, no CONNACK or PUBACK in time, a TLS failure).
	ErrBrokerUnreachable = errors.New("no MQTT broker answered")
)

// DefaultBrokerTimeout bounds the connection and the PUBACK of a check.
const DefaultBrokerTimeout = 10 * time.Second

// Broker is how the wizard reaches an MQTT broker.
type Broker struct {
	URL      string // mqtt://host:1883, mqtts://host:8883, tcp://, ssl://, ws://host:port/path, wss://
	Username string
	Password string
	TLS      *tls.Config // for mqtts://, ssl:// and wss://; nil: the system's CAs
	// TopicPrefix and DeviceID place the probe: <prefix>/<device>/init
	// (not retained; nothing subscribes to it). Defaults "vigil" and
	// "vigil".
	TopicPrefix, DeviceID string
	Timeout               time.Duration   // connection, then PUBACK; default DefaultBrokerTimeout
	Clock                 clockwork.Clock // measures the latencies; nil: the real clock

	urls []string // the nodes of a cluster ([mqtt] brokers), instead of URL
}

// BrokerCheck is what a check proved: how long the broker took to accept
// the connection (CONNACK) and to acknowledge the probe (PUBACK).
type BrokerCheck struct {
	Connect, PubAck time.Duration
	Topic           string // where the probe went
}

// CheckBroker connects once to the broker with the credentials, publishes
// a probe at QoS 1 and waits for its PUBACK. Home Assistant discovery
// needs nothing more than a working connection: with it proved, the
// wizard writes homeassistant = true in [mqtt]. Errors wrap
// ErrBrokerRefused or ErrBrokerUnreachable and say how to fix them; none
// carries the password.
func CheckBroker(ctx context.Context, b Broker) (BrokerCheck, error) {
	prefix, id := b.TopicPrefix, b.DeviceID
	if prefix == "" {
		prefix = mqtt.DefaultTopicPrefix
	}
	if id == "" {
		id = "vigil"
	}
	topic := prefix + "/" + id + "/init"
	c, err := publishOnce(ctx, b, topic, []byte("vigil init: connection check"))
	c.Topic = topic
	return c, err
}

// publishOnce connects to b, publishes payload on topic at QoS 1 (not
// retained), waits for the PUBACK and disconnects.
func publishOnce(ctx context.Context, b Broker, topic string, payload []byte) (BrokerCheck, error) {
	urls := b.urls
	if len(urls) == 0 {
		urls = []string{b.URL}
	}
	if _, err := config.CheckBrokers(urls); err != nil {
		if inner := errors.Unwrap(err); len(urls) == 1 && inner != nil {
			err = inner // no "brokers[0]: " for the one URL given
		}
		return BrokerCheck{}, fmt.Errorf("mqtt broker: %w", err)
	}
	timeout := b.Timeout
	if timeout <= 0 {
		timeout = DefaultBrokerTimeout
	}
	clock := b.Clock
	if clock == nil {
		clock = clockwork.NewRealClock()
	}
	var r [4]byte
	_, _ = rand.Read(r[:])
	opts := mqtt.ClientOptions(mqtt.Config{Brokers: urls, ClientID: "vigil-init-" + hex.EncodeToString(r[:]),
		Username: b.Username, Password: b.Password, TLS: b.TLS})
	opts.SetAutoReconnect(false).SetConnectRetry(false).SetConnectTimeout(timeout).
		SetDialer(&net.Dialer{Timeout: timeout}).SetWriteTimeout(timeout)
	cli := paho.NewClient(opts)

	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	start := clock.Now()
	tok := cli.Connect()
	if err := waitToken(ctx, tok); err != nil {
		// A connection that comes up after all is closed at once.
		go func() { <-tok.Done(); cli.Disconnect(0) }()
		return BrokerCheck{}, brokerError(b, timeout, err)
	}
	defer cli.Disconnect(250)
	var c BrokerCheck
	c.Connect = clock.Since(start)
	start = clock.Now()
	if err := waitToken(ctx, cli.Publish(topic, 1, false, payload)); err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			return c, fmt.Errorf("mqtt %s: %w: it accepted the connection but sent no PUBACK for %s within %v: check the broker's log (an ACL, a full queue)",
				b.URL, ErrBrokerUnreachable, topic, timeout)
		}
		return c, fmt.Errorf("mqtt %s: publish %s: %w", b.URL, topic, err)
	}
	c.PubAck = clock.Since(start)
	return c, nil
}

// waitToken waits for paho's token or ctx.
func waitToken(ctx context.Context, tok paho.Token) error {
	select {
	case <-tok.Done():
		return tok.Error()
	case <-ctx.Done():
		return ctx.Err()
	}
}

// brokerError says what a failed connection means and how to fix it.
func brokerError(b Broker, timeout time.Duration, err error) error {
	addr := b.URL
	if u, perr := url.Parse(b.URL); perr == nil && u.Host != "" {
		addr = u.Host
	}
	var dns *net.DNSError
	var ne net.Error
	switch {
	case errors.Is(err, packets.ErrorRefusedNotAuthorised), errors.Is(err, packets.ErrorRefusedBadUsernameOrPassword):
		code := "CONNACK 5 not authorized"
		if errors.Is(err, packets.ErrorRefusedBadUsernameOrPassword) {
			code = "CONNACK 4 bad user name or password"
		}
		if b.Username == "" {
			return fmt.Errorf("mqtt %s: %w (%s): it wants a user name and password: give them with --mqtt-user and --mqtt-password-file (on Home Assistant, a login of the Mosquitto add-on)",
				b.URL, ErrBrokerRefused, code)
		}
		return fmt.Errorf("mqtt %s: %w (%s): check user %q and its password (mosquitto: mosquitto_passwd on the broker's password_file; Home Assistant: the Mosquitto add-on's logins)",
			b.URL, ErrBrokerRefused, code, b.Username)
	case errors.Is(err, packets.ErrorRefusedIDRejected), errors.Is(err, packets.ErrorRefusedBadProtocolVersion), errors.Is(err, packets.ErrorRefusedServerUnavailable):
		return fmt.Errorf("mqtt %s: the broker refused the connection: %w", b.URL, err)
	case errors.Is(err, syscall.ECONNREFUSED):
		return fmt.Errorf("mqtt %s: %w: nothing listens at %s (connection refused): is the broker running, and is the port right (1883 for mqtt://, 8883 for mqtts://)?",
			b.URL, ErrBrokerUnreachable, addr)
	case errors.As(err, &dns):
		return fmt.Errorf("mqtt %s: %w: the host name %q does not resolve: check its spelling, or use the broker's IP address", b.URL, ErrBrokerUnreachable, dns.Name)
	case tlshint.Hint(err) != "":
		return fmt.Errorf("mqtt %s: %w: %w (%s)", b.URL, ErrBrokerUnreachable, err, tlshint.Hint(err))
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &ne) && ne.Timeout():
		return fmt.Errorf("mqtt %s: %w: the broker at %s did not answer within %v: check the address and the port, that it is an MQTT listener (not a web page), and that no firewall drops the packets",
			b.URL, ErrBrokerUnreachable, addr, timeout)
	case errors.Is(err, context.Canceled):
		return fmt.Errorf("mqtt %s: %w", b.URL, err)
	}
	return fmt.Errorf("mqtt %s: %w at %s: %w", b.URL, ErrBrokerUnreachable, addr, err)
}
