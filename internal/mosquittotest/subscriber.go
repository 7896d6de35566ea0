package mosquittotest

import (
	"fmt"
	"sync"
	"testing"
	"time"

	paho "github.com/eclipse/paho.mqtt.golang"
)

// Message is one message a Subscriber received.
type Message struct {
	Topic    string
	Payload  string
	Retained bool
	QoS      byte
}

// SubscriberOptions configure a Subscriber.
type SubscriberOptions struct {
	// Session, when not empty, is the client id of a persistent session:
	// the subscriber reconnects on its own and receives what the broker
	// queued for it meanwhile. Empty: a clean session under a fresh id
	// and no reconnection.
	Session string
	// Configure, when not nil, adjusts the client options (TLS).
	Configure func(*paho.ClientOptions)
}

// Subscriber is an independent paho client that keeps every message it
// receives, in arrival order. Next and Maybe consume them one by one, as a
// queue; On, Wait, WaitN and WaitPayloadN look at everything received.
type Subscriber struct {
	t   testing.TB
	cli paho.Client

	mu      sync.Mutex
	got     []Message
	read    int           // Next and Maybe have consumed got[:read]
	arrived chan struct{} // closed and replaced on every message
}

// Subscribe connects a subscriber to url with a clean session and
// subscribes to topics at QoS 1. It disconnects when the test ends.
func Subscribe(t testing.TB, url string, topics ...string) *Subscriber {
	t.Helper()
	return SubscribeWith(t, url, SubscriberOptions{}, topics...)
}

// SubscribeWith is Subscribe with options.
func SubscribeWith(t testing.TB, url string, o SubscriberOptions, topics ...string) *Subscriber {
	t.Helper()
	s := &Subscriber{t: t, arrived: make(chan struct{})}
	id := o.Session
	if id == "" {
		id = fmt.Sprintf("mosquittotest-%d", time.Now().UnixNano())
	}
	// Every message goes to the default handler, also those a persistent
	// session gets before its subscriptions are renewed.
	opts := paho.NewClientOptions().AddBroker(url).SetClientID(id).SetProtocolVersion(4).
		SetCleanSession(o.Session == "").SetAutoReconnect(o.Session != "").
		SetMaxReconnectInterval(500 * time.Millisecond).SetConnectTimeout(5 * time.Second).
		SetDefaultPublishHandler(func(_ paho.Client, m paho.Message) {
			s.add(Message{m.Topic(), string(m.Payload()), m.Retained(), m.Qos()})
		})
	if o.Configure != nil {
		o.Configure(opts)
	}
	s.cli = paho.NewClient(opts)
	for attempt := 1; ; attempt++ {
		tok := s.cli.Connect()
		if tok.WaitTimeout(5*time.Second) && tok.Error() == nil {
			break
		}
		if attempt == 3 {
			t.Fatalf("subscriber connect to %s: %v", url, tok.Error())
		}
		t.Logf("subscriber connect to %s: %v; retrying", url, tok.Error())
		time.Sleep(200 * time.Millisecond)
	}
	for _, topic := range topics {
		if tok := s.cli.Subscribe(topic, 1, nil); !tok.WaitTimeout(5*time.Second) || tok.Error() != nil {
			t.Fatalf("subscribe %s: %v", topic, tok.Error())
		}
	}
	t.Cleanup(func() { s.cli.Disconnect(100) })
	return s
}

func (s *Subscriber) add(m Message) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.got = append(s.got, m)
	close(s.arrived)
	s.arrived = make(chan struct{})
}

// Publish sends a message from the subscriber's client at QoS 1.
func (s *Subscriber) Publish(topic string, retained bool, payload string) {
	s.t.Helper()
	if tok := s.cli.Publish(topic, 1, retained, payload); !tok.WaitTimeout(5*time.Second) || tok.Error() != nil {
		s.t.Fatalf("publish %s: %v", topic, tok.Error())
	}
}

// Next consumes messages until one on topic and returns it; it fails the
// test if none comes within timeout. The messages on other topics it
// passes are consumed too.
func (s *Subscriber) Next(topic string, timeout time.Duration) Message {
	s.t.Helper()
	m, ok := s.Maybe(topic, timeout)
	if !ok {
		s.t.Fatalf("no message on %s within %v", topic, timeout)
	}
	return m
}

// Maybe is Next without failing. An empty topic matches every topic.
func (s *Subscriber) Maybe(topic string, timeout time.Duration) (Message, bool) {
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	for {
		s.mu.Lock()
		for s.read < len(s.got) {
			m := s.got[s.read]
			s.read++
			if topic == "" || m.Topic == topic {
				s.mu.Unlock()
				return m, true
			}
		}
		arrived := s.arrived
		s.mu.Unlock()
		select {
		case <-arrived:
		case <-timer.C:
			return Message{}, false
		}
	}
}

// On returns every message received so far on topic, oldest first.
func (s *Subscriber) On(topic string) []Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Message
	for _, m := range s.got {
		if m.Topic == topic {
			out = append(out, m)
		}
	}
	return out
}

// until waits until cond holds, re-checking it on every message; it
// reports false if it still does not after timeout.
func (s *Subscriber) until(timeout time.Duration, cond func() bool) bool {
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	for {
		s.mu.Lock()
		arrived := s.arrived
		s.mu.Unlock()
		if cond() {
			return true
		}
		select {
		case <-arrived:
		case <-timer.C:
			return cond()
		}
	}
}

// Wait waits until a message on topic satisfies ok (nil: any message) and
// returns the first that does, or fails the test after timeout.
func (s *Subscriber) Wait(topic string, timeout time.Duration, ok func(Message) bool) Message {
	s.t.Helper()
	var found Message
	if !s.until(timeout, func() bool {
		for _, m := range s.On(topic) {
			if ok == nil || ok(m) {
				found = m
				return true
			}
		}
		return false
	}) {
		s.t.Fatalf("no matching message on %s within %v; got %d messages there: %v", topic, timeout, len(s.On(topic)), s.On(topic))
	}
	return found
}

// WaitN waits until topic has received at least n messages and returns the
// nth, or fails the test after timeout.
func (s *Subscriber) WaitN(topic string, n int, timeout time.Duration) Message {
	s.t.Helper()
	var nth Message
	if !s.until(timeout, func() bool {
		got := s.On(topic)
		if len(got) < n {
			return false
		}
		nth = got[n-1]
		return true
	}) {
		s.t.Fatalf("%d messages on %s within %v, want %d: %v", len(s.On(topic)), topic, timeout, n, s.On(topic))
	}
	return nth
}

// WaitPayloadN waits until topic has received payload p n times, or fails
// the test after timeout.
func (s *Subscriber) WaitPayloadN(topic, p string, n int, timeout time.Duration) {
	s.t.Helper()
	if !s.until(timeout, func() bool { return s.countPayload(topic, p) >= n }) {
		s.t.Fatalf("%q on %s %d times within %v, want %d: %v", p, topic, s.countPayload(topic, p), timeout, n, s.On(topic))
	}
}

// countPayload counts the messages on topic with payload p.
func (s *Subscriber) countPayload(topic, p string) int {
	n := 0
	for _, m := range s.On(topic) {
		if m.Payload == p {
			n++
		}
	}
	return n
}
