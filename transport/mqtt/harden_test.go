package mqtt

import (
	"strings"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"

	"github.com/vigil-iot/vigil/internal/mosquittotest"
)

// TestHABirthReannounceLimited: a flood of Home Assistant births
// (homeassistant/status "online", which anyone on the broker may publish)
// re-announces the device at most once per ReannounceLimit on the client's
// clock: the first birth at once, the rest dropped until the limit passed.
func TestHABirthReannounceLimited(t *testing.T) {
	b := mosquittotest.Start(t, mosquittotest.Options{})
	const topic = "homeassistant/device/dev1/config"
	sub := mosquittotest.Subscribe(t, b.URL(), topic, "vigil/dev1/status")
	clock := clockwork.NewFakeClockAt(time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC))
	c := newTestClient(t, b.URL(), Config{HomeAssistant: true, Clock: clock}, nil)
	runClient(t, c)
	waitConnected(t, c)
	sub.WaitN(topic, 1, wait5) // the connection's own announcement

	answers := 0
	births := func(n int) {
		for range n {
			sub.Publish("homeassistant/status", false, "online")
		}
		// Barrier: a roll call behind the births, answered by the same
		// loop; then time for a re-announce still queued.
		answers++
		sub.Publish(RollCallTopic("vigil"), false, "")
		sub.Wait("vigil/dev1/status", wait5, func(mosquittotest.Message) bool {
			n := 0
			for _, m := range sub.On("vigil/dev1/status") {
				if !m.Retained {
					n++
				}
			}
			return n >= answers
		})
		time.Sleep(500 * time.Millisecond)
	}
	births(100)
	if got := len(sub.On(topic)); got != 2 {
		t.Errorf("discovery messages after 100 births = %d, want 2 (the connection's and one re-announce)", got)
	}
	clock.Advance(ReannounceLimit) // RollCallLimit too: the barrier is answered again
	births(1)
	if got := len(sub.On(topic)); got != 3 {
		t.Errorf("discovery messages after one more birth %v later = %d, want 3", ReannounceLimit, got)
	}
}

// fakeMessage is an inbound message as paho hands it to a handler.
type fakeMessage struct {
	topic    string
	payload  []byte
	retained bool
}

func (m fakeMessage) Duplicate() bool   { return false }
func (m fakeMessage) Qos() byte         { return 1 }
func (m fakeMessage) Retained() bool    { return m.retained }
func (m fakeMessage) Topic() string     { return m.topic }
func (m fakeMessage) MessageID() uint16 { return 1 }
func (m fakeMessage) Payload() []byte   { return m.payload }
func (m fakeMessage) Ack()              {}

// TestOversizedDroppedInCallback: paho's handlers drop a message that is
// over its topic's limit, or on a topic vigil does not act on, at once:
// nothing of its payload is queued (eight 10 MB publishes to cmd/x1..8
// while a check ran held 80 MB), and a Home Assistant birth or a roll
// call over 64 bytes signals nothing.
func TestOversizedDroppedInCallback(t *testing.T) {
	c := New(Config{DeviceID: "dev1", Commands: true}, nil, nil)
	big := make([]byte, 1<<20)
	copy(big, "x")
	for _, leaf := range []string{"x1", "x2", "set", "checklist", "pause", "x6", "x7", "x8"} {
		c.onCommand(nil, fakeMessage{topic: "vigil/dev1/cmd/" + leaf, payload: big})
	}
	held := 0
	for len(c.cmdq) > 0 {
		held += len((<-c.cmdq).Payload)
	}
	if held != 0 {
		t.Errorf("queued commands hold %d bytes of payload, want 0 (over the limit, or no command: dropped in the handler)", held)
	}
	c.onCommand(nil, fakeMessage{topic: "vigil/dev1/cmd/set", payload: []byte("heartbeat.interval 5m")})
	if m := <-c.cmdq; string(m.Payload) != "heartbeat.interval 5m" {
		t.Errorf("a command within its limit queued %+v, want its payload", m)
	}

	pad := []byte("online" + strings.Repeat(" ", 64))
	c.onHAStatus(nil, fakeMessage{topic: "homeassistant/status", payload: pad})
	if len(c.haOnline) != 0 {
		t.Errorf("a %d-byte homeassistant/status message counted as a birth; want it dropped (over 64 bytes)", len(pad))
	}
	c.onHAStatus(nil, fakeMessage{topic: "homeassistant/status", payload: []byte("online")})
	if len(c.haOnline) != 1 {
		t.Errorf("homeassistant/status online: no birth signalled")
	}
	c.onRollCall(nil, fakeMessage{topic: "vigil/fleet/rollcall", payload: pad})
	if len(c.rollCall) != 0 {
		t.Errorf("a %d-byte roll call was answered; want it dropped (over 64 bytes)", len(pad))
	}
}
