package mqtt

import (
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
