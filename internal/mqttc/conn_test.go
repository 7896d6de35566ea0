package mqttc

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"

	"github.com/vigil-iot/vigil/internal/mosquittotest"
)

// Tests against a real mosquitto on a loopback port; paho (in
// mosquittotest) is the independent client on the other side.

const wait5 = 5 * time.Second

type inbox struct {
	mu   sync.Mutex
	msgs []Message
	ch   chan struct{}
}

func newInbox() *inbox { return &inbox{ch: make(chan struct{}, 64)} }

func (b *inbox) add(m Message) {
	b.mu.Lock()
	b.msgs = append(b.msgs, m)
	b.mu.Unlock()
	select {
	case b.ch <- struct{}{}:
	default:
	}
}

func (b *inbox) next(t *testing.T) Message {
	t.Helper()
	deadline := time.After(wait5)
	for {
		b.mu.Lock()
		if len(b.msgs) > 0 {
			m := b.msgs[0]
			b.msgs = b.msgs[1:]
			b.mu.Unlock()
			return m
		}
		b.mu.Unlock()
		select {
		case <-b.ch:
		case <-deadline:
			t.Fatal("no message within 5s")
		}
	}
}

func dial(t *testing.T, o Options) *Conn {
	t.Helper()
	if o.ClientID == "" {
		o.ClientID = "mqttc-" + strings.ReplaceAll(t.Name(), "/", "-")
	}
	ctx, cancel := context.WithTimeout(context.Background(), wait5)
	defer cancel()
	c, err := Dial(ctx, o)
	if err != nil {
		t.Fatalf("Dial(%s) = %v", o.Broker, err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func TestPublishSubscribeRoundTrip(t *testing.T) {
	b := mosquittotest.Start(t, mosquittotest.Options{})
	sub := mosquittotest.Subscribe(t, b.URL(), "v/d/#")
	in := newInbox()
	c := dial(t, Options{Broker: b.URL(), Keepalive: 5 * time.Second, OnMessage: in.add})
	ctx, cancel := context.WithTimeout(context.Background(), wait5)
	defer cancel()

	if err := c.Publish(ctx, "v/d/alert", []byte(`{"id":"a1"}`), 1, false); err != nil {
		t.Fatalf("Publish QoS 1 = %v", err)
	}
	if m := sub.Next("v/d/alert", wait5); m.Payload != `{"id":"a1"}` || m.QoS != 1 || m.Retained {
		t.Errorf("subscriber got %+v", m)
	}
	if err := c.Publish(ctx, "v/d/status", []byte("online"), 1, true); err != nil {
		t.Fatal(err)
	}
	sub.Next("v/d/status", wait5)
	if err := c.Publish(ctx, "v/d/q0", []byte("zero"), 0, false); err != nil {
		t.Fatal(err)
	}
	if m := sub.Next("v/d/q0", wait5); m.Payload != "zero" {
		t.Errorf("QoS 0 message = %+v", m)
	}

	// Inbound: a retained message arrives on subscribe, flagged; a live one after.
	if err := c.Subscribe(ctx, "v/d/+", 1); err != nil {
		t.Fatalf("Subscribe = %v", err)
	}
	if m := in.next(t); m.Topic != "v/d/status" || string(m.Payload) != "online" || !m.Retained {
		t.Errorf("retained message = %+v", m)
	}
	sub.Publish("v/d/cmd", false, "check")
	if m := in.next(t); m.Topic != "v/d/cmd" || string(m.Payload) != "check" || m.Retained {
		t.Errorf("live message = %+v", m)
	}
	big := strings.Repeat("x", 5000)
	sub.Publish("v/d/big", false, big)
	if m := in.next(t); m.Topic != "v/d/big" || m.Truncated || string(m.Payload) != big {
		t.Errorf("5000-byte message: %d bytes, truncated %v", len(m.Payload), m.Truncated)
	}
	// mosquitto stops sending QoS 1 messages to a client with 20
	// unacknowledged ones in flight: 60 arrive only if each is acknowledged.
	for i := range 60 {
		sub.Publish("v/d/n", false, strconv.Itoa(i))
	}
	for i := range 60 {
		if m := in.next(t); string(m.Payload) != strconv.Itoa(i) {
			t.Fatalf("inbound message %d = %q", i, m.Payload)
		}
	}
	// Many in flight at once, all acknowledged.
	var wg sync.WaitGroup
	errs := make(chan error, 50)
	for i := range 50 {
		wg.Go(func() { errs <- c.Publish(ctx, "v/d/many", []byte{byte(i)}, 1, false) })
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Errorf("concurrent Publish = %v", err)
		}
	}
	if c.Err() != nil {
		t.Errorf("Err() = %v on a live connection", c.Err())
	}
}

func TestTruncatedInbound(t *testing.T) {
	b := mosquittotest.Start(t, mosquittotest.Options{})
	sub := mosquittotest.Subscribe(t, b.URL(), "none")
	in := newInbox()
	c := dial(t, Options{Broker: b.URL(), MaxPayload: 16, OnMessage: in.add})
	ctx, cancel := context.WithTimeout(context.Background(), wait5)
	defer cancel()
	if err := c.Subscribe(ctx, "t/#", 1); err != nil {
		t.Fatal(err)
	}
	sub.Publish("t/big", false, strings.Repeat("y", 1000))
	sub.Publish("t/small", false, "ok")
	if m := in.next(t); m.Topic != "t/big" || len(m.Payload) != 16 || !m.Truncated {
		t.Errorf("big message = %q (%d bytes) truncated %v, want 16 bytes, truncated", m.Topic, len(m.Payload), m.Truncated)
	}
	if m := in.next(t); m.Topic != "t/small" || string(m.Payload) != "ok" || m.Truncated {
		t.Errorf("message after the big one = %+v", m)
	}
}

func TestWillOnCutNotOnClose(t *testing.T) {
	b := mosquittotest.Start(t, mosquittotest.Options{})
	sub := mosquittotest.Subscribe(t, b.URL(), "w/+")
	will := func(topic string) *Will { return &Will{Topic: topic, Payload: []byte("offline"), QoS: 1, Retain: true} }

	p := mosquittotest.StartProxy(t, b.Addr())
	c := dial(t, Options{Broker: p.URL(), ClientID: "cut", Keepalive: 2 * time.Second, Will: will("w/cut")})
	p.Cut()
	if m := sub.Next("w/cut", 10*time.Second); m.Payload != "offline" {
		t.Errorf("will after a cut = %+v", m)
	}
	select {
	case <-c.Done():
		if c.Err() == nil {
			t.Errorf("Err() = nil after Done")
		}
	case <-time.After(10 * time.Second):
		t.Error("the connection did not notice the cut")
	}
	ctx, cancel := context.WithTimeout(context.Background(), wait5)
	defer cancel()
	if err := c.Publish(ctx, "w/x", nil, 1, false); !errors.Is(err, ErrClosed) {
		t.Errorf("Publish on an ended connection = %v, want ErrClosed", err)
	}

	c2 := dial(t, Options{Broker: b.URL(), ClientID: "clean", Will: will("w/clean")})
	c2.Close()
	if m, ok := sub.Maybe("w/clean", 2*time.Second); ok {
		t.Errorf("will sent after a clean DISCONNECT: %+v", m)
	}
}

func TestKeepaliveFindsDeadBroker(t *testing.T) {
	b := mosquittotest.Start(t, mosquittotest.Options{})
	p := mosquittotest.StartProxy(t, b.Addr())
	clock := clockwork.NewFakeClock()
	c := dial(t, Options{Broker: p.URL(), Keepalive: 30 * time.Second, Clock: clock})
	ctx, cancel := context.WithTimeout(context.Background(), wait5)
	defer cancel()

	// A live broker answers the ping: the connection stays up.
	if err := clock.BlockUntilContext(ctx, 1); err != nil {
		t.Fatal(err)
	}
	clock.Advance(30 * time.Second)
	if err := clock.BlockUntilContext(ctx, 1); err != nil { // the ticker again, after PINGRESP
		t.Fatal(err)
	}
	if c.Err() != nil {
		t.Fatalf("connection ended after a good ping: %v", c.Err())
	}

	// The broker vanishes without closing the socket (power cut).
	p.Blackhole(true)
	clock.Advance(30 * time.Second)                         // PINGREQ goes out, no answer
	if err := clock.BlockUntilContext(ctx, 2); err != nil { // ticker + PINGRESP timer
		t.Fatal(err)
	}
	clock.Advance(maxPingTimeout)
	select {
	case <-c.Done():
		if !strings.Contains(c.Err().Error(), "no PINGRESP") {
			t.Errorf("Err() = %v, want no PINGRESP", c.Err())
		}
	case <-time.After(wait5):
		t.Fatal("a dead broker was not noticed after the ping timeout")
	}
}

func TestWaitsEndWithContextOrConnection(t *testing.T) {
	b := mosquittotest.Start(t, mosquittotest.Options{})
	p := mosquittotest.StartProxy(t, b.Addr())
	c := dial(t, Options{Broker: p.URL()})
	p.Blackhole(true)

	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	if err := c.Publish(ctx, "a", []byte("x"), 1, false); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Publish without PUBACK = %v, want deadline exceeded", err)
	}
	c.mu.Lock()
	n := len(c.pending)
	c.mu.Unlock()
	if n != 0 {
		t.Errorf("%d waiters left after the deadline", n)
	}

	done := make(chan error, 1)
	go func() { done <- c.Subscribe(context.Background(), "a/#", 1) }()
	time.Sleep(100 * time.Millisecond)
	p.Cut()
	select {
	case err := <-done:
		if !errors.Is(err, ErrClosed) {
			t.Errorf("Subscribe when the connection drops = %v, want ErrClosed", err)
		}
	case <-time.After(wait5):
		t.Fatal("Subscribe still waiting after the connection dropped")
	}
}

func TestDialErrors(t *testing.T) {
	b := mosquittotest.Start(t, mosquittotest.Options{Config: "listener %d 127.0.0.1\nallow_anonymous false\n"})
	ctx, cancel := context.WithTimeout(context.Background(), wait5)
	defer cancel()
	for _, tc := range []struct {
		name string
		o    Options
		want string
	}{
		{"refused by broker", Options{Broker: b.URL(), ClientID: "anon"}, "not authorized"},
		{"nothing listening", Options{Broker: "tcp://127.0.0.1:" + strconv.Itoa(mosquittotest.FreePort(t)), ClientID: "x"}, "connection refused"},
		{"bad scheme", Options{Broker: "ws://127.0.0.1:1", ClientID: "x"}, "unsupported scheme"},
		{"bad client id", Options{Broker: b.URL(), ClientID: "a\x00b"}, "not valid MQTT UTF-8"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := Dial(ctx, tc.o)
			if err == nil {
				c.Close()
				t.Fatal("Dial succeeded")
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Dial() = %v, want %q", err, tc.want)
			}
		})
	}

	// A server that accepts and never answers CONNECT: Dial ends with ctx.
	p := mosquittotest.StartProxy(t, b.Addr())
	p.Blackhole(true)
	sctx, scancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer scancel()
	if _, err := Dial(sctx, Options{Broker: p.URL(), ClientID: "slow"}); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Dial to a silent server = %v, want deadline exceeded", err)
	}
}
