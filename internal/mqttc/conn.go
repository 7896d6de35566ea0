package mqttc

import (
	"bufio"
	"context"
	"crypto/tls"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"net/url"
	"sync"
	"time"

	"github.com/jonboulle/clockwork"
)

// Defaults for zero values in Options.
const (
	DefaultWriteTimeout = 10 * time.Second
	DefaultMaxPayload   = 64 << 10
	maxPingTimeout      = 10 * time.Second
	maxAckPacket        = 1 << 10 // CONNACK, PUBACK, SUBACK, PINGRESP are a few bytes
)

// ErrClosed is wrapped by the errors of operations on a connection that has
// ended; Err tells why it ended.
var ErrClosed = errors.New("connection closed")

// past is a deadline that has always expired: setting it makes a blocked
// read or write return at once, without reading the wall clock.
var past = time.Unix(1, 0)

// Will is the Last Will the broker publishes when the connection ends
// without a DISCONNECT.
type Will struct {
	Topic   string
	Payload []byte
	QoS     byte
	Retain  bool
}

// Message is an inbound PUBLISH.
type Message struct {
	Topic     string
	Payload   []byte // at most Options.MaxPayload bytes
	Retained  bool
	Truncated bool // the payload was longer than MaxPayload; the rest was discarded
}

// Options configure Dial.
type Options struct {
	Broker       string // tcp://host:port or mqtt://; ssl:// or mqtts:// for TLS
	ClientID     string
	Username     string
	Password     string
	TLS          *tls.Config   // for ssl:// and mqtts://; nil: the system roots, TLS 1.2+
	Keepalive    time.Duration // PINGREQ every Keepalive; 0 disables keepalive
	Will         *Will
	WriteTimeout time.Duration   // bound on each packet write; default 10s
	MaxPayload   int             // inbound payload bytes kept; default 64 KiB
	Clock        clockwork.Clock // paces keepalive pings; default the real clock
	// OnMessage receives inbound PUBLISH packets on the connection's reader
	// goroutine, before they are acknowledged. It must not block.
	OnMessage func(Message)
}

// Conn is one MQTT connection with a clean session. Its methods are safe
// for concurrent use.
type Conn struct {
	nc  net.Conn
	br  *bufio.Reader
	o   Options
	wmu sync.Mutex // one packet on the wire at a time

	mu      sync.Mutex
	nextID  uint16
	pending map[uint16]chan byte // PUBACK / SUBACK waiters by packet identifier

	pong     chan struct{}
	done     chan struct{}
	err      error
	doneOnce sync.Once
}

// Dial connects to the broker, sends CONNECT and waits for the CONNACK,
// all bounded by ctx. On success the connection's reader and keepalive
// goroutines run until it ends (see Done).
func Dial(ctx context.Context, o Options) (*Conn, error) {
	if o.WriteTimeout <= 0 {
		o.WriteTimeout = DefaultWriteTimeout
	}
	if o.MaxPayload <= 0 {
		o.MaxPayload = DefaultMaxPayload
	}
	if o.Clock == nil {
		o.Clock = clockwork.NewRealClock()
	}
	if o.Keepalive > 65535*time.Second {
		return nil, fmt.Errorf("keepalive %v exceeds 65535s", o.Keepalive)
	}
	addr, useTLS, err := brokerAddr(o.Broker)
	if err != nil {
		return nil, err
	}
	connect, err := connectPacket(&o, uint16(o.Keepalive/time.Second))
	if err != nil {
		return nil, err
	}
	var d net.Dialer
	nc, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	if useTLS {
		cfg := o.TLS
		if cfg == nil {
			cfg = &tls.Config{MinVersion: tls.VersionTLS12}
		}
		if cfg.ServerName == "" {
			cfg = cfg.Clone()
			cfg.ServerName, _, _ = net.SplitHostPort(addr)
		}
		tc := tls.Client(nc, cfg)
		if err := tc.HandshakeContext(ctx); err != nil {
			nc.Close()
			return nil, fmt.Errorf("tls handshake with %s: %w", addr, err)
		}
		nc = tc
	}
	c := &Conn{
		nc: nc, br: bufio.NewReaderSize(nc, 4096), o: o,
		pending: map[uint16]chan byte{},
		pong:    make(chan struct{}, 1),
		done:    make(chan struct{}),
	}
	if err := c.handshake(ctx, connect); err != nil {
		nc.Close()
		return nil, err
	}
	go c.readLoop()
	if o.Keepalive > 0 {
		go c.keepalive()
	}
	return c, nil
}

// handshake writes CONNECT and reads the CONNACK under ctx.
func (c *Conn) handshake(ctx context.Context, connect []byte) error {
	err := bounded(ctx, c.nc.SetDeadline, func() error { return c.connack(connect) })
	if err != nil && ctx.Err() != nil {
		return fmt.Errorf("connect: %w", ctx.Err())
	}
	return err
}

// bounded runs io, which blocks on the connection, so that it returns
// when ctx ends: set (a deadline setter of the connection) is then given
// an expired deadline, which is cleared again once io has returned.
func bounded(ctx context.Context, set func(time.Time) error, io func() error) error {
	fired := make(chan struct{})
	stop := context.AfterFunc(ctx, func() { set(past); close(fired) })
	err := io()
	if !stop() {
		<-fired
		set(time.Time{})
	}
	return err
}

func (c *Conn) connack(connect []byte) error {
	if _, err := c.nc.Write(connect); err != nil {
		return fmt.Errorf("write CONNECT: %w", err)
	}
	p, err := readPacket(c.br, maxAckPacket)
	if err != nil {
		return fmt.Errorf("read CONNACK: %w", err)
	}
	if p.typ != typeConnack || len(p.body) != 2 {
		return fmt.Errorf("read CONNACK: %w: got %s", errMalformed, typeName(p.typ))
	}
	if p.body[1] != 0 {
		return connackError(p.body[1])
	}
	return nil
}

// brokerAddr returns host:port and whether the broker URL asks for TLS.
func brokerAddr(broker string) (addr string, useTLS bool, err error) {
	u, err := url.Parse(broker)
	if err != nil {
		return "", false, fmt.Errorf("broker: %w", err)
	}
	switch u.Scheme {
	case "tcp", "mqtt":
	case "ssl", "mqtts", "tls":
		useTLS = true
	default:
		return "", false, fmt.Errorf("broker %q: unsupported scheme (want tcp://, mqtt://, ssl:// or mqtts://)", u.Redacted())
	}
	if u.Port() == "" {
		return "", false, fmt.Errorf("broker %q: no port", u.Redacted())
	}
	return u.Host, useTLS, nil
}

// Done is closed when the connection has ended.
func (c *Conn) Done() <-chan struct{} { return c.done }

// Err tells why the connection ended; nil while it is up.
func (c *Conn) Err() error {
	select {
	case <-c.done:
		return c.err
	default:
		return nil
	}
}

// fail ends the connection with err (the first cause wins) and releases
// every waiter.
func (c *Conn) fail(err error) {
	c.doneOnce.Do(func() {
		c.err = err
		close(c.done)
		c.nc.Close()
	})
}

// closed returns ErrClosed with the cause.
func (c *Conn) closed() error { return fmt.Errorf("%w: %w", ErrClosed, c.err) }

// Close sends DISCONNECT, so the broker discards the Last Will, and closes
// the connection.
func (c *Conn) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	c.write(ctx, []byte{typeDisconnect << 4, 0}, "DISCONNECT")
	c.fail(errors.New("closed by the client"))
	return nil
}

// write sends one packet, bounded by ctx and WriteTimeout. A failed or
// interrupted write ends the connection: a partial packet cannot be taken
// back from the stream.
func (c *Conn) write(ctx context.Context, b []byte, what string) error {
	ctx, cancel := context.WithTimeout(ctx, c.o.WriteTimeout)
	defer cancel()
	c.wmu.Lock()
	defer c.wmu.Unlock()
	select {
	case <-c.done:
		return c.closed()
	default:
	}
	err := bounded(ctx, c.nc.SetWriteDeadline, func() error { _, err := c.nc.Write(b); return err })
	if err != nil {
		if ctx.Err() != nil {
			err = ctx.Err()
		}
		err = fmt.Errorf("write %s: %w", what, err)
		c.fail(err)
		return c.closed()
	}
	return nil
}

// register reserves a packet identifier and its acknowledgement channel.
func (c *Conn) register() (uint16, chan byte, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for range 65535 {
		c.nextID++
		if c.nextID == 0 {
			c.nextID = 1
		}
		if _, busy := c.pending[c.nextID]; !busy {
			ch := make(chan byte, 1)
			c.pending[c.nextID] = ch
			return c.nextID, ch, nil
		}
	}
	return 0, nil, errors.New("all 65535 packet identifiers are in flight")
}

func (c *Conn) forget(id uint16) {
	c.mu.Lock()
	delete(c.pending, id)
	c.mu.Unlock()
}

// resolve hands an acknowledgement's code to its waiter, if any is left.
func (c *Conn) resolve(id uint16, code byte) {
	c.mu.Lock()
	ch := c.pending[id]
	delete(c.pending, id)
	c.mu.Unlock()
	if ch != nil {
		ch <- code
	}
}

// await waits for the acknowledgement of id.
func (c *Conn) await(ctx context.Context, id uint16, ch chan byte) (byte, error) {
	select {
	case code := <-ch:
		return code, nil
	case <-c.done:
		c.forget(id)
		return 0, c.closed()
	case <-ctx.Done():
		c.forget(id)
		return 0, ctx.Err()
	}
}

// Publish sends payload to topic. At QoS 1 it returns nil only after the
// broker's PUBACK; at QoS 0 once the packet is written.
func (c *Conn) Publish(ctx context.Context, topic string, payload []byte, qos byte, retain bool) error {
	if qos > 1 {
		return fmt.Errorf("publish %s: QoS %d is not supported", topic, qos)
	}
	var id uint16
	var ch chan byte
	if qos == 1 {
		var err error
		if id, ch, err = c.register(); err != nil {
			return fmt.Errorf("publish %s: %w", topic, err)
		}
	}
	b, err := publishPacket(topic, payload, qos, retain, id)
	if err == nil {
		err = c.write(ctx, b, "PUBLISH")
	}
	if err != nil {
		if ch != nil {
			c.forget(id)
		}
		return fmt.Errorf("publish %s: %w", topic, err)
	}
	if ch == nil {
		return nil
	}
	if _, err := c.await(ctx, id, ch); err != nil {
		return fmt.Errorf("publish %s: no PUBACK: %w", topic, err)
	}
	return nil
}

// Subscribe subscribes to filter at qos and waits for the SUBACK.
func (c *Conn) Subscribe(ctx context.Context, filter string, qos byte) error {
	if qos > 1 {
		return fmt.Errorf("subscribe %s: QoS %d is not supported", filter, qos)
	}
	id, ch, err := c.register()
	if err != nil {
		return fmt.Errorf("subscribe %s: %w", filter, err)
	}
	b, err := subscribePacket(filter, qos, id)
	if err == nil {
		err = c.write(ctx, b, "SUBSCRIBE")
	}
	if err != nil {
		c.forget(id)
		return fmt.Errorf("subscribe %s: %w", filter, err)
	}
	code, err := c.await(ctx, id, ch)
	if err != nil {
		return fmt.Errorf("subscribe %s: no SUBACK: %w", filter, err)
	}
	if code == 0x80 {
		return fmt.Errorf("subscribe %s: refused by the broker", filter)
	}
	return nil
}

// readLoop reads packets until the connection ends.
func (c *Conn) readLoop() {
	for {
		p, err := readPacket(c.br, c.o.MaxPayload)
		if err != nil {
			select {
			case <-c.done: // closed on purpose or after a write error
			default:
				c.fail(fmt.Errorf("read: %w", err))
			}
			return
		}
		if err := c.handle(p); err != nil {
			c.fail(err)
			return
		}
	}
}

func (c *Conn) handle(p packet) error {
	switch p.typ {
	case typePublish:
		if c.o.OnMessage != nil {
			c.o.OnMessage(Message{Topic: p.topic, Payload: p.payload, Retained: p.flags&1 != 0, Truncated: p.truncated})
		}
		if p.id != 0 {
			ctx := context.Background()
			return c.write(ctx, ackPacket(typePuback, p.id), "PUBACK")
		}
	case typePuback:
		if len(p.body) != 2 {
			return fmt.Errorf("%w: PUBACK of %d bytes", errMalformed, len(p.body))
		}
		c.resolve(binary.BigEndian.Uint16(p.body), 0)
	case typeSuback:
		if len(p.body) < 3 {
			return fmt.Errorf("%w: SUBACK of %d bytes", errMalformed, len(p.body))
		}
		c.resolve(binary.BigEndian.Uint16(p.body), p.body[2])
	case typeUnsuback:
	case typePingresp:
		select {
		case c.pong <- struct{}{}:
		default:
		}
	default:
		return fmt.Errorf("%w: unexpected %s from the broker", errMalformed, typeName(p.typ))
	}
	return nil
}

// keepalive sends PINGREQ every Keepalive and ends the connection when no
// PINGRESP comes back in time: a half-open TCP connection (a broker that
// lost power) is found within about twice the keepalive.
func (c *Conn) keepalive() {
	t := c.o.Clock.NewTicker(c.o.Keepalive)
	defer t.Stop()
	wait := min(c.o.Keepalive, maxPingTimeout)
	for {
		select {
		case <-c.done:
			return
		case <-t.Chan():
		}
		select {
		case <-c.pong: // a late answer to an earlier ping
		default:
		}
		if c.write(context.Background(), []byte{typePingreq << 4, 0}, "PINGREQ") != nil {
			return
		}
		to := c.o.Clock.NewTimer(wait)
		select {
		case <-c.pong:
			to.Stop()
		case <-c.done:
			to.Stop()
			return
		case <-to.Chan():
			c.fail(fmt.Errorf("no PINGRESP within %v", wait))
			return
		}
	}
}
