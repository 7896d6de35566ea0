package mqtt

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"math"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	paho "github.com/eclipse/paho.mqtt.golang"
	"github.com/jonboulle/clockwork"

	"github.com/vigil-iot/vigil/alert"
	"github.com/vigil-iot/vigil/device"
	"github.com/vigil-iot/vigil/transport"
)

// Defaults for zero values in Config.
const (
	DefaultTopicPrefix     = "vigil"
	DefaultDiscoveryPrefix = "homeassistant"
	DefaultKeepalive       = 30 * time.Second
	DefaultReconnectMax    = time.Minute
)

const (
	qos            = 1
	connectTimeout = 10 * time.Second
	writeTimeout   = 10 * time.Second
	opTimeout      = 10 * time.Second // subscribe, online, discovery, command replies
	offlineTimeout = 3 * time.Second  // the shutdown "offline", well under systemd's TimeoutStopSec
	disconnectWait = 250              // milliseconds paho may spend on DISCONNECT
	cmdQueue       = 8
	// maxSignal bounds the messages that only signal (homeassistant/status
	// "online", a roll call): anything longer is dropped in the handler.
	maxSignal = 64
)

// Log attribute keys.
const (
	keyErr     = "err"
	keyBroker  = "broker"
	keyTopic   = "topic"
	keyRetryIn = "retry_in"
	keyCommand = "command"
)

// Sentinel errors.
var (
	// ErrNotConnected is returned by the publishing methods while there is
	// no connection to the broker; the caller retries later.
	ErrNotConnected = errors.New("not connected")
	// ErrConnectionLost is returned when the connection dropped before the
	// broker acknowledged a message.
	ErrConnectionLost = errors.New("connection lost before puback")
)

// Config configures a Client. Secrets arrive resolved: the config's
// password files and environment variables are read when it is parsed
// (manage.Base), and the wiring (cmd/vigil) builds TLS with TLSConfig.
type Config struct {
	Broker          string   // tcp://host:1883, ssl:// or mqtts://host:8883, ws:// or wss://host:port/path
	Brokers         []string // instead of Broker: the nodes of a cluster, in the order to try them (see failover)
	ClientID        string   // default "vigil-" + DeviceID
	TopicPrefix     string   // default "vigil"
	DeviceID        string
	Username        string
	Password        string
	TLS             *tls.Config   // for ssl:// brokers; nil uses the system roots
	Keepalive       time.Duration // default 30s; the broker sends the Last Will 1.5× this after the last packet, at its next check (measured: 1.7-2.4× on mosquitto, 1.9-2.9× on RabbitMQ; docs/fleet.md)
	ReconnectMax    time.Duration // longest wait between connection attempts; default 1m
	HomeAssistant   bool          // announce entities by MQTT discovery
	DiscoveryPrefix string        // default "homeassistant"
	Commands        bool          // subscribe to <p>/<id>/cmd/+
	MinSeverity     alert.Severity
	Version         string          // reported to Home Assistant and on <p>/<id>/info as the software version
	Board           string          // the board profile, published on <p>/<id>/info
	Interval        time.Duration   // the heartbeat interval, published on <p>/<id>/info
	SampleInterval  time.Duration   // the sample interval, published on <p>/<id>/info
	Tags            []string        // [device] tags, published on <p>/<id>/info
	ConfigDigest    string          // config.Digest of the config in force, published on <p>/<id>/info
	Clock           clockwork.Clock // paces the first connection's retries; default the real clock
	// Problems, when set, is asked after every connection what is firing
	// now, and the problem sensor is rebuilt from its answer: a retained
	// value left by an earlier run or a restart never stands. Nil: the
	// sensor is rebuilt from the alerts this client has delivered.
	Problems transport.ProblemSource
}

// Client is the MQTT transport. Create it with New, then call Run; the
// publishing methods may be called at any time and fail fast with
// ErrNotConnected while there is no connection.
type Client struct {
	cfg   Config
	cmds  CmdHandler
	log   *slog.Logger
	clock clockwork.Clock
	nodes *failover // set by Run; the node connected to, for logs

	connected chan struct{} // one pending "a connection came up" signal
	ready     chan struct{} // closed at the first connection
	haOnline  chan struct{} // one pending "Home Assistant restarted" signal
	rollCall  chan struct{} // one pending roll call
	cmdq      chan inbound
	roll      rollCaller // used by loop only
	haLimit   onceEvery  // Home Assistant births; used by loop only
	// cmdDropped counts the commands that found cmdq full since the last
	// result that said so.
	cmdDropped atomic.Int64

	mu      sync.Mutex
	cli     paho.Client
	lost    chan struct{}          // closed when the current connection drops
	next    chan struct{}          // closed when the next connection comes up (NextConnect)
	sensors map[string]device.Unit // every reading key seen so far, for discovery
	active  map[string]alert.Alert // firing problems by source and rule, for the problem sensor
	connAt  time.Time              // when the current connection came up: Info's time
	// lastHeartbeat is the payload of the last heartbeat published, for
	// the roll call's answer; nil before the first.
	lastHeartbeat []byte

	// Discovery goes out once per connection: conns counts connections,
	// sensorsVer changes of sensors, and annConn/annVer say what the last
	// discovery message the broker acknowledged covered.
	conns, sensorsVer, annConn, annVer int

	announceMu sync.Mutex // one discovery message at a time, newest last
	infoMu     sync.Mutex // one retained info at a time, newest last
	// problemMu orders the changes of active with their publishing, so
	// the last problem state published is the newest (a rebuild reading
	// its source while an alert resolves cannot put it back).
	problemMu sync.Mutex
}

// New returns a Client for cfg. cmds may be nil when cfg.Commands is false.
// New starts nothing; Run connects.
func New(cfg Config, cmds CmdHandler, log *slog.Logger) *Client {
	if cfg.TopicPrefix == "" {
		cfg.TopicPrefix = DefaultTopicPrefix
	}
	if cfg.DiscoveryPrefix == "" {
		cfg.DiscoveryPrefix = DefaultDiscoveryPrefix
	}
	if cfg.ClientID == "" {
		cfg.ClientID = "vigil-" + cfg.DeviceID
	}
	if cfg.Keepalive <= 0 {
		cfg.Keepalive = DefaultKeepalive
	}
	if cfg.ReconnectMax <= 0 {
		cfg.ReconnectMax = DefaultReconnectMax
	}
	clock := cfg.Clock
	if clock == nil {
		clock = clockwork.NewRealClock()
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Client{
		cfg:       cfg,
		cmds:      cmds,
		log:       log,
		clock:     clock,
		connected: make(chan struct{}, 1),
		ready:     make(chan struct{}),
		haOnline:  make(chan struct{}, 1),
		rollCall:  make(chan struct{}, 1),
		next:      make(chan struct{}),
		cmdq:      make(chan inbound, cmdQueue),
		sensors:   map[string]device.Unit{},
		active:    map[string]alert.Alert{},
	}
}

// What TLSConfig's error wraps: which part of the TLS material is bad.
var (
	ErrCA         = errors.New("ca: no certificate found in PEM data")
	ErrClientCert = errors.New("client certificate")
)

// TLSConfig builds the TLS configuration for an ssl:// broker from PEM
// bytes: ca (optional; the system roots when empty) and a client
// certificate and key (optional, both or neither).
func TLSConfig(ca, cert, key []byte) (*tls.Config, error) {
	cfg := &tls.Config{MinVersion: tls.VersionTLS12}
	if len(ca) > 0 {
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(ca) {
			return nil, fmt.Errorf("mqtt: %w", ErrCA)
		}
		cfg.RootCAs = pool
	}
	if len(cert) > 0 || len(key) > 0 {
		kp, err := tls.X509KeyPair(cert, key)
		if err != nil {
			return nil, fmt.Errorf("mqtt: %w: %w", ErrClientCert, err)
		}
		cfg.Certificates = []tls.Certificate{kp}
	}
	return cfg, nil
}

// TLSFile is one file of a TLS setup: the key or flag that names it (for
// errors), and its path ("" for none).
type TLSFile struct{ Name, Path string }

// ReadTLS reads a CA, a client certificate and its key, in that order,
// with read, and builds the TLS configuration (TLSConfig). An error is
// given to named with the name of the file it is about: the one that
// cannot be read, or the CA or the client certificate that is bad. The
// daemon's [mqtt], vigil fleet's flags and vigil init's check all read
// their files through it.
func ReadTLS(files [3]TLSFile, read func(path string) ([]byte, error), named func(name string, err error) error) (*tls.Config, error) {
	var pem [3][]byte
	for i, f := range files {
		if f.Path == "" {
			continue
		}
		b, err := read(f.Path)
		if err != nil {
			return nil, named(f.Name, err)
		}
		pem[i] = b
	}
	tlsCfg, err := TLSConfig(pem[0], pem[1], pem[2])
	if errors.Is(err, ErrClientCert) {
		return nil, named(files[1].Name, err)
	}
	if err != nil {
		return nil, named(files[0].Name, err)
	}
	return tlsCfg, nil
}

// Name identifies the transport's outbox cursor.
func (c *Client) Name() string { return "mqtt" }

// Connected reports whether the connection to the broker is up right now.
func (c *Client) Connected() bool {
	_, _, err := c.conn()
	return err == nil
}

// Ready returns a channel that is closed once the first connection to the
// broker is up, so a caller can tell "not connected yet" at start from an
// outage.
func (c *Client) Ready() <-chan struct{} { return c.ready }

// NextConnect returns a channel that is closed when the next connection to
// the broker comes up (paho's reconnect, or the first), so the outbox
// resumes at once instead of waiting out its backoff. Take it before the
// attempt that may fail: a reconnect in between closes it too.
func (c *Client) NextConnect() <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.next
}

func (c *Client) topic(leaf string) string {
	return c.cfg.TopicPrefix + "/" + c.cfg.DeviceID + "/" + leaf
}

// Run connects to the broker and keeps a connection up until ctx ends. The
// first connection is retried with exponential backoff (1s doubling to
// ReconnectMax) on Config.Clock; after that paho reconnects on its own with
// the same bounds. Its keepalive finds a half-open connection: with no
// PINGRESP within half the keepalive, the connection is dropped and
// redialled. After every connection it publishes the retained "online",
// subscribes to what is enabled and announces the device to Home Assistant.
// When ctx ends it publishes the retained "offline" under its own short
// deadline and disconnects. Run returns nil after a clean shutdown.
func (c *Client) Run(ctx context.Context) error {
	if c.cfg.Commands && c.cmds == nil {
		c.log.Warn("mqtt commands enabled without a command handler; not subscribing")
	}
	opts, nodes := c.options()
	cli := paho.NewClient(opts)
	c.mu.Lock()
	c.cli, c.nodes = cli, nodes
	c.mu.Unlock()

	var wg sync.WaitGroup
	wg.Go(func() { c.loop(ctx) })
	if c.commandsEnabled() {
		wg.Go(func() { c.commandLoop(ctx) })
	}
	c.connect(ctx, cli)
	<-ctx.Done()
	wg.Wait()

	if cli.IsConnectionOpen() {
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), offlineTimeout)
		if err := c.publish(sctx, c.topic("status"), true, []byte("offline")); err != nil {
			c.log.Warn("mqtt publish offline", keyErr, err)
		}
		cancel()
	}
	cli.Disconnect(disconnectWait)
	return nil
}

// ClientOptions are paho's settings for reaching cfg.Broker (or the nodes
// of cfg.Brokers, with the failover order of failover) the way the daemon
// does: MQTT 3.1.1, a clean session (the durable queue is vigil's outbox,
// not the broker's session), paho's own reconnect with backoff up to
// ReconnectMax, the keepalive and its ping timeout, the credentials, and TLS
// for ssl://, mqtts:// and wss:// brokers; ws:// and wss:// go through
// paho's WebSocket dialer. Only Broker, Brokers, ClientID, Username,
// Password, TLS, Keepalive and ReconnectMax are read, so a subscriber such
// as `vigil fleet` connects exactly as the daemon does. It sets no Last Will
// and no connection or message handlers of its own: only the connection
// attempt and reconnecting handlers that keep the failover order.
func ClientOptions(cfg Config) *paho.ClientOptions {
	opts, _ := clientOptions(cfg)
	return opts
}

func clientOptions(cfg Config) (*paho.ClientOptions, *failover) {
	if cfg.Keepalive <= 0 {
		cfg.Keepalive = DefaultKeepalive
	}
	if cfg.ReconnectMax <= 0 {
		cfg.ReconnectMax = DefaultReconnectMax
	}
	opts := paho.NewClientOptions()
	for _, s := range cfg.servers() {
		opts.AddBroker(s)
	}
	nodes := newFailover(opts.Servers)
	opts.SetClientID(cfg.ClientID).
		SetProtocolVersion(4).
		SetCleanSession(true).
		SetAutoReconnect(true).
		SetConnectRetry(false).
		SetMaxReconnectInterval(cfg.ReconnectMax).
		SetKeepAlive(cfg.Keepalive).
		SetPingTimeout(pingTimeout(cfg.Keepalive)).
		SetConnectTimeout(connectTimeout).
		SetWriteTimeout(writeTimeout).
		SetConnectionAttemptHandler(func(broker *url.URL, tc *tls.Config) *tls.Config {
			nodes.attempt(broker)
			return tc
		}).
		// Called in paho's reconnect goroutine before each round, which
		// then reads Servers in the same goroutine.
		SetReconnectingHandler(func(_ paho.Client, o *paho.ClientOptions) { o.Servers = nodes.order() })
	if cfg.Username != "" {
		opts.SetUsername(cfg.Username)
		opts.SetPassword(cfg.Password)
	}
	if cfg.TLS != nil {
		opts.SetTLSConfig(cfg.TLS)
	}
	return opts, nodes
}

// servers returns the broker URLs: Brokers, or Broker alone.
func (cfg Config) servers() []string {
	if len(cfg.Brokers) > 0 {
		return cfg.Brokers
	}
	if cfg.Broker != "" {
		return []string{cfg.Broker}
	}
	return nil
}

// options are the daemon's paho settings: ClientOptions plus the retained
// Last Will, the connection handlers and a store that leaves resending to
// the outbox (outboxStore).
func (c *Client) options() (*paho.ClientOptions, *failover) {
	opts, nodes := clientOptions(c.cfg)
	return opts.
		SetStore(newOutboxStore()).
		SetBinaryWill(c.topic("status"), []byte("offline"), qos, true).
		SetOnConnectHandler(c.onConnect).
		SetConnectionLostHandler(c.onLost).
		SetDefaultPublishHandler(func(paho.Client, paho.Message) {}), nodes
}

// pingTimeout is how long paho waits for a PINGRESP: half the keepalive,
// at most 10s, so a half-open connection is found within about twice the
// keepalive.
func pingTimeout(keepalive time.Duration) time.Duration {
	return min(keepalive/2, 10*time.Second)
}

// connect makes the first connection, retrying with exponential backoff
// until it succeeds or ctx ends. Later reconnects are paho's.
func (c *Client) connect(ctx context.Context, cli paho.Client) {
	backoff := time.Second
	for {
		tok := cli.Connect()
		select {
		case <-tok.Done():
		case <-ctx.Done():
			return
		}
		err := tok.Error()
		if err == nil {
			return
		}
		// One warning per outage; each further attempt only with -v.
		level := slog.LevelDebug
		if backoff == time.Second {
			level = slog.LevelWarn
		}
		c.log.Log(ctx, level, "mqtt connect", keyBroker, c.node(), keyErr, err, keyRetryIn, backoff)
		t := c.clock.NewTimer(backoff)
		select {
		case <-t.Chan():
		case <-ctx.Done():
			t.Stop()
			return
		}
		backoff = min(backoff*2, c.cfg.ReconnectMax)
	}
}

// onConnect runs in a paho goroutine after every successful connection.
// The connection before it is gone: its waiters are released, if onLost
// (which may run after this) did not yet.
func (c *Client) onConnect(paho.Client) {
	c.mu.Lock()
	if c.lost != nil {
		closeOnce(c.lost)
	}
	c.lost = make(chan struct{})
	close(c.next)
	c.next = make(chan struct{})
	c.conns++
	if c.conns == 1 {
		close(c.ready)
	}
	c.mu.Unlock()
	c.log.Info("mqtt connected", keyBroker, c.node())
	signal(c.connected)
}

// onLost runs in a paho goroutine when the connection dropped; paho is
// already reconnecting and may even have succeeded, since the two run
// concurrently. The waiters of the lost connection are released: no
// PUBACK comes for what they sent, since paho resends nothing (session.go)
// and the outbox resends it. While the connection is down they are the
// current ones; once it is back, onConnect released them already.
func (c *Client) onLost(cli paho.Client, err error) {
	c.mu.Lock()
	if c.lost != nil && !cli.IsConnectionOpen() {
		closeOnce(c.lost)
	}
	c.mu.Unlock()
	c.log.Warn("mqtt connection lost", keyBroker, c.node(), keyErr, err)
}

// node names the broker of the last connection attempt (the one
// connected to, once connected); every node before the first attempt.
func (c *Client) node() string {
	c.mu.Lock()
	nodes := c.nodes
	c.mu.Unlock()
	if nodes == nil {
		return strings.Join(c.cfg.servers(), ", ")
	}
	return nodes.current()
}

// closeOnce closes ch unless it is closed; the caller holds the lock
// that guards ch.
func closeOnce(ch chan struct{}) {
	select {
	case <-ch:
	default:
		close(ch)
	}
}

func signal(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}

// loop does the work that follows a connection, a Home Assistant restart
// or a roll call, outside paho's goroutines so it may block on
// acknowledgements.
func (c *Client) loop(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			if c.roll.timer != nil {
				c.roll.timer.Stop()
			}
			return
		case <-c.connected:
			c.afterConnect(ctx)
			c.answerRollCall(ctx) // one owed from before the reconnect
		case <-c.haOnline:
			if !c.haLimit.allow(c.clock.Now(), ReannounceLimit) {
				c.log.Debug("mqtt home assistant birth: not re-announced", "reason", "re-announced less than "+ReannounceLimit.String()+" ago")
				continue
			}
			c.announceLogged(ctx, true)
		case <-c.rollCall:
			c.roll.owed = true
			c.answerRollCall(ctx)
		case <-c.roll.due():
			c.roll.timer = nil
			c.answerRollCall(ctx)
		}
	}
}

// afterConnect subscribes to the roll call, publishes "online" and the
// info, rebuilds the problem sensor, subscribes to what is enabled, and
// announces discovery.
func (c *Client) afterConnect(ctx context.Context) {
	octx, cancel := context.WithTimeout(ctx, opTimeout)
	defer cancel()
	c.mu.Lock()
	c.connAt = c.clock.Now().UTC()
	c.mu.Unlock()
	// The roll call first: a device that says "online" answers it.
	rc := RollCallTopic(c.cfg.TopicPrefix)
	if err := c.subscribe(octx, rc, c.onRollCall); err != nil {
		c.log.Warn("mqtt subscribe", keyTopic, rc, keyErr, err)
	}
	if err := c.publish(octx, c.topic("status"), true, []byte("online")); err != nil {
		c.log.Warn("mqtt publish online", keyErr, err)
	}
	if err := c.publishInfo(octx); err != nil {
		c.log.Warn("mqtt publish info", keyErr, err)
	}
	if c.cfg.HomeAssistant {
		c.rebuildProblem(octx)
		if err := c.subscribe(octx, c.haStatusTopic(), c.onHAStatus); err != nil {
			c.log.Warn("mqtt subscribe", keyTopic, c.haStatusTopic(), keyErr, err)
		}
	}
	if c.commandsEnabled() {
		if err := c.subscribe(octx, c.topic("cmd/+"), c.onCommand); err != nil {
			c.log.Warn("mqtt subscribe", keyTopic, c.topic("cmd/+"), keyErr, err)
		}
	}
	// Not forced: a PublishSensors that got in first has announced on
	// this connection already.
	c.announceLogged(ctx, false)
}

func (c *Client) commandsEnabled() bool { return c.cfg.Commands && c.cmds != nil }

func (c *Client) haStatusTopic() string { return c.cfg.DiscoveryPrefix + "/status" }

// onHAStatus runs in paho's router: it must not block.
// A retained "online" (the broker replaying an old birth message on
// subscribe) is no restart: the connection's own announcement covers it.
// A payload over maxSignal is dropped unread.
func (c *Client) onHAStatus(_ paho.Client, m paho.Message) {
	if len(m.Payload()) > maxSignal {
		return
	}
	if !m.Retained() && strings.TrimSpace(string(m.Payload())) == "online" {
		signal(c.haOnline)
	}
}

// subscribe subscribes at QoS 1 and waits for the SUBACK.
func (c *Client) subscribe(ctx context.Context, topic string, h paho.MessageHandler) error {
	cli, lost, err := c.conn()
	if err != nil {
		return err
	}
	return wait(ctx, cli.Subscribe(topic, qos, h), lost)
}

// conn returns the client and the channel closed when its connection drops,
// or ErrNotConnected.
func (c *Client) conn() (paho.Client, <-chan struct{}, error) {
	c.mu.Lock()
	cli, lost := c.cli, c.lost
	c.mu.Unlock()
	if cli == nil || lost == nil || !cli.IsConnectionOpen() {
		return nil, nil, ErrNotConnected
	}
	return cli, lost, nil
}

// publish sends payload at QoS 1 and waits for the PUBACK. It fails at once
// while disconnected instead of letting paho queue the message in memory:
// the caller's outbox keeps it.
func (c *Client) publish(ctx context.Context, topic string, retained bool, payload []byte) error {
	cli, lost, err := c.conn()
	if err != nil {
		return err
	}
	return wait(ctx, cli.Publish(topic, qos, retained, payload), lost)
}

// wait waits for paho's token, the end of the connection the request went
// out on, or ctx, whichever comes first, and returns the token's error.
func wait(ctx context.Context, tok paho.Token, lost <-chan struct{}) error {
	select {
	case <-tok.Done():
		return tok.Error()
	case <-lost:
		return ErrConnectionLost
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Notify publishes the alert on <p>/<id>/alert at QoS 1 and returns nil
// only after the broker acknowledged it. An alert below MinSeverity is
// acknowledged without sending. With Home Assistant enabled a problem then
// updates the problem binary sensor; a failure there is logged, not
// returned, since the alert itself was delivered. A notice (a setting
// changed, a test alert) is an event: it never touches the sensor.
func (c *Client) Notify(ctx context.Context, a alert.Alert) error {
	if a.Severity < c.cfg.MinSeverity {
		return nil
	}
	payload, err := json.Marshal(a)
	if err != nil {
		return fmt.Errorf("mqtt: encode alert %s: %w", a.ID, err)
	}
	if err := c.publish(ctx, c.topic("alert"), false, payload); err != nil {
		return fmt.Errorf("mqtt: publish alert %s: %w", a.ID, err)
	}
	if c.cfg.HomeAssistant && !a.IsNotice() {
		c.problemMu.Lock()
		defer c.problemMu.Unlock()
		c.mu.Lock()
		key := a.Key()
		if a.State == alert.StateResolved {
			delete(c.active, key)
		} else {
			c.active[key] = a
		}
		c.mu.Unlock()
		if err := c.publishProblem(ctx); err != nil {
			c.log.Warn("mqtt publish problem state", keyErr, err)
		}
	}
	return nil
}

// Info is the retained payload of <p>/<id>/info, published after every
// connect and again after every change of what it says: what a fleet view
// needs to know about a device that its other topics do not say. Time is
// when this connection came up, so a status of "online" is online since
// Time; Interval lets a subscriber tell a silent device (no heartbeat for
// 3× Interval) from a quiet one; Tags are what a view selects by; Config
// tells devices that run the same settings and checklist from those that
// do not (config.Digest: the first 12 hex digits of a SHA-256, never of a
// secret).
type Info struct {
	Time           time.Time `json:"time"`
	Board          string    `json:"board,omitempty"`
	Version        string    `json:"version,omitempty"`
	Interval       string    `json:"interval,omitempty"`        // heartbeat interval, a Go duration; "0s" when heartbeats are off
	SampleInterval string    `json:"sample_interval,omitempty"` // a Go duration
	Tags           []string  `json:"tags,omitempty"`            // [device] tags
	Config         string    `json:"config,omitempty"`          // digest of the config in force, 12 lowercase hex digits
}

// infoPayload is the Info of the current connection.
func (c *Client) infoPayload() ([]byte, error) {
	c.mu.Lock()
	info := Info{Time: c.connAt, Board: c.cfg.Board, Version: c.cfg.Version,
		Interval: c.cfg.Interval.String(), SampleInterval: c.cfg.SampleInterval.String(),
		Tags: slices.Clone(c.cfg.Tags), Config: c.cfg.ConfigDigest}
	c.mu.Unlock()
	payload, err := json.Marshal(info)
	if err != nil {
		return nil, fmt.Errorf("encode info: %w", err)
	}
	return payload, nil
}

// publishInfo publishes Info, retained, on <p>/<id>/info. Two at once go
// out one after the other, each with the state of its time, so the last
// retained is the newest.
func (c *Client) publishInfo(ctx context.Context) error {
	c.infoMu.Lock()
	defer c.infoMu.Unlock()
	payload, err := c.infoPayload()
	if err != nil {
		return err
	}
	return c.publish(ctx, c.topic("info"), true, payload)
}

// SetInfo changes what Info announces (after a run-time `vigil set`, a
// checklist set, a reload) and republishes Info at once when connected and
// something changed; while disconnected the next connection announces it.
func (c *Client) SetInfo(ctx context.Context, in transport.DeviceInfo) error {
	c.mu.Lock()
	same := c.cfg.Interval == in.Interval && c.cfg.SampleInterval == in.SampleInterval &&
		slices.Equal(c.cfg.Tags, in.Tags) && c.cfg.ConfigDigest == in.Config
	c.cfg.Interval, c.cfg.SampleInterval = in.Interval, in.SampleInterval
	c.cfg.Tags, c.cfg.ConfigDigest = slices.Clone(in.Tags), in.Config
	c.mu.Unlock()
	if same {
		return nil
	}
	if err := c.publishInfo(ctx); err != nil && !errors.Is(err, ErrNotConnected) {
		return fmt.Errorf("mqtt: publish info: %w", err)
	}
	return nil
}

// Acknowledged shows an ack in the problem sensor's attributes (acked_by,
// acked_at of the problem): rebuilt from Config.Problems, which has it,
// or without one by marking the problem this client delivered.
// The client shows an ack on its problem sensor.
var _ transport.Acknowledger = (*Client)(nil)

func (c *Client) Acknowledged(ctx context.Context, p alert.Alert, _ []string) error {
	if !c.cfg.HomeAssistant {
		return nil
	}
	if c.cfg.Problems != nil {
		c.rebuildProblem(ctx)
		return nil
	}
	c.problemMu.Lock()
	defer c.problemMu.Unlock()
	c.mu.Lock()
	if a, ok := c.active[p.Key()]; ok {
		a.AckedBy, a.AckedAt = p.AckedBy, p.AckedAt
		c.active[p.Key()] = a
	}
	c.mu.Unlock()
	if err := c.publishProblem(ctx); err != nil {
		return fmt.Errorf("mqtt: %w", err)
	}
	return nil
}

// rebuildProblem replaces what the problem sensor holds with what
// Config.Problems says is firing now, and publishes it, retained: after a
// restart or an outage the broker's retained value is the state of now,
// not of whenever it was last published. Without Problems, or when it
// fails, the alerts this client delivered stand.
func (c *Client) rebuildProblem(ctx context.Context) {
	c.problemMu.Lock()
	defer c.problemMu.Unlock()
	active := c.problemsNow(ctx)
	c.mu.Lock()
	c.active = active
	c.mu.Unlock()
	if err := c.publishProblem(ctx); err != nil {
		c.log.Warn("mqtt publish problem state", keyErr, err)
	}
}

// firing returns the problems among ps the sensor shows (no notices,
// nothing below MinSeverity), the newest of each source and rule.
func (c *Client) firing(ps []alert.Alert) map[string]alert.Alert {
	active := map[string]alert.Alert{}
	for _, a := range ps {
		if !a.IsProblem() || a.Severity < c.cfg.MinSeverity {
			continue
		}
		if was, ok := active[a.Key()]; !ok || a.Time.After(was.Time) {
			active[a.Key()] = a
		}
	}
	return active
}

// problemsNow is what is firing now: from Config.Problems when it answers,
// else what this client has delivered (with Home Assistant on).
func (c *Client) problemsNow(ctx context.Context) map[string]alert.Alert {
	if c.cfg.Problems != nil {
		ps, err := c.cfg.Problems.Problems(ctx)
		if err == nil {
			return c.firing(ps)
		}
		c.log.Warn("mqtt read problem state", keyErr, err)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return maps.Clone(c.active)
}

// problemAlert is one firing alert in the problem sensor's attributes,
// with who acknowledged it and when, if someone did.
type problemAlert struct {
	ID       string         `json:"id,omitempty"` // what cmd/ack may name
	Severity alert.Severity `json:"severity"`
	Source   string         `json:"source"`
	Rule     string         `json:"rule,omitempty"`
	Summary  string         `json:"summary"`
	Time     time.Time      `json:"time"`
	AckedBy  string         `json:"acked_by,omitempty"`
	AckedAt  time.Time      `json:"acked_at,omitzero"`
}

// problemPayloads are the problem binary sensor's state (ON while any
// alert is firing) and its attributes (the firing alerts, oldest first).
func problemPayloads(active map[string]alert.Alert) (state, attrs []byte, err error) {
	firing := make([]problemAlert, 0, len(active))
	for _, a := range active {
		firing = append(firing, problemAlert{a.ID, a.Severity, a.Source, a.Rule, a.Summary, a.Time, a.AckedBy, a.AckedAt})
	}
	slices.SortFunc(firing, func(a, b problemAlert) int {
		if c := a.Time.Compare(b.Time); c != 0 {
			return c
		}
		return strings.Compare(a.Source+"/"+a.Rule, b.Source+"/"+b.Rule)
	})
	attrs, err = json.Marshal(struct {
		Firing []problemAlert `json:"firing"`
	}{firing})
	if err != nil {
		return nil, nil, fmt.Errorf("encode problem attributes: %w", err)
	}
	state = []byte("OFF")
	if len(firing) > 0 {
		state = []byte("ON")
	}
	return state, attrs, nil
}

// publishProblem publishes the problem sensor, retained: its attributes,
// then its state.
func (c *Client) publishProblem(ctx context.Context) error {
	c.mu.Lock()
	active := maps.Clone(c.active)
	c.mu.Unlock()
	state, attrs, err := problemPayloads(active)
	if err != nil {
		return err
	}
	if err := c.publish(ctx, c.topic("problem/attributes"), true, attrs); err != nil {
		return fmt.Errorf("publish problem attributes: %w", err)
	}
	if err := c.publish(ctx, c.topic("problem"), true, state); err != nil {
		return fmt.Errorf("publish problem: %w", err)
	}
	return nil
}

// PublishHeartbeat publishes the last run, retained, on <p>/<id>/heartbeat.
// An "ok" run that ends an LLM alert queues that alert's resolution, which
// clears it from the problem sensor like any other (heartbeat's tick).
func (c *Client) PublishHeartbeat(ctx context.Context, hb transport.Heartbeat) error {
	payload, err := json.Marshal(hb)
	if err != nil {
		return fmt.Errorf("mqtt: encode heartbeat: %w", err)
	}
	c.mu.Lock()
	c.lastHeartbeat = payload
	c.mu.Unlock()
	if err := c.publish(ctx, c.topic("heartbeat"), true, payload); err != nil {
		return fmt.Errorf("mqtt: publish heartbeat: %w", err)
	}
	return nil
}

// PublishSensors publishes the snapshot, retained, on <p>/<id>/sensors.
// Readings that are not finite numbers (JSON cannot carry them) move to
// errors. With Home Assistant enabled, a reading key not seen before
// re-announces the device so the new sensor appears.
func (c *Client) PublishSensors(ctx context.Context, snap device.Snapshot) error {
	snap = finite(snap)
	payload, err := json.Marshal(snap)
	if err != nil {
		return fmt.Errorf("mqtt: encode sensors: %w", err)
	}
	if c.cfg.HomeAssistant {
		// Noted before publishing, so a snapshot taken before the broker
		// answered is in the discovery message the connection sends: a
		// start announces once, with the sensors, not twice.
		c.mu.Lock()
		for k, v := range snap.Readings {
			if u, ok := c.sensors[k]; !ok || u != v.Unit {
				c.sensors[k] = v.Unit
				c.sensorsVer++
			}
		}
		c.mu.Unlock()
	}
	if err := c.publish(ctx, c.topic("sensors"), true, payload); err != nil {
		return fmt.Errorf("mqtt: publish sensors: %w", err)
	}
	if !c.cfg.HomeAssistant {
		return nil
	}
	if err := c.announce(ctx, false); err != nil {
		return fmt.Errorf("mqtt: %w", err)
	}
	return nil
}

// finite returns snap with NaN and infinite readings moved to Errors.
func finite(snap device.Snapshot) device.Snapshot {
	bad := false
	for _, v := range snap.Readings {
		if math.IsNaN(v.Value) || math.IsInf(v.Value, 0) {
			bad = true
			break
		}
	}
	if !bad {
		return snap
	}
	out := device.Snapshot{Time: snap.Time, Readings: map[string]device.Value{}, Errors: map[string]string{}}
	maps.Copy(out.Errors, snap.Errors)
	for k, v := range snap.Readings {
		if math.IsNaN(v.Value) || math.IsInf(v.Value, 0) {
			out.Errors[k] = fmt.Sprintf("reading is not a finite number (%v)", v.Value)
			continue
		}
		out.Readings[k] = v
	}
	return out
}
