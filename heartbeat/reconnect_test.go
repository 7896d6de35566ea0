package heartbeat

import (
	"testing"
	"time"
)

// reconnecting is a connected transport (MQTT) in an outage: Notify fails
// until reconnect, and NextConnect says when the connection came back.
type reconnecting struct {
	recorder
	ready chan struct{}
	next  chan struct{}
}

func (c *reconnecting) Name() string           { return "mqtt" }
func (c *reconnecting) Ready() <-chan struct{} { return c.ready }

func (c *reconnecting) NextConnect() <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.next
}

func (c *reconnecting) reconnect() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.fail = nil
	close(c.next)
	c.next = make(chan struct{})
}

// TestReconnectWakesDelivery: a transport back from an outage gets the
// queued alerts at once, not when the delivery loop's backoff (grown to
// 4 s here) runs out: after a broker failover the reconnect took 60 ms,
// and the outbox waited out its backoff before it drained. No time passes
// on the loop's clock between the reconnect and the deliveries.
func TestReconnectWakesDelivery(t *testing.T) {
	ready := make(chan struct{})
	close(ready) // connected before: this is an outage
	c := &reconnecting{ready: ready, next: make(chan struct{})}
	h, _, ctx := startFailing(t, c, &c.recorder)

	for _, backoff := range []time.Duration{time.Second, 2 * time.Second} {
		h.clock.BlockUntilContext(ctx, 1) // the loop waits out its backoff
		h.clock.Advance(backoff)
	}
	h.clock.BlockUntilContext(ctx, 1) // a 4 s backoff now
	at := h.clock.Now()
	c.reconnect()
	deadline := time.Now().Add(2 * time.Second)
	for len(c.alerts()) < 2 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if n := len(c.alerts()); n != 2 {
		t.Fatalf("%d of 2 alerts delivered after the reconnect with the clock standing still, want both: the loop waits out its backoff", n)
	}
	if waited := h.clock.Since(at); waited != 0 {
		t.Errorf("the deliveries waited %v on the loop's clock, want 0", waited)
	}
}
