package heartbeat

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/vigil-iot/vigil/internal/logtest"
)

// connecting is a transport that has not made its first connection yet
// (MQTT at start): Notify fails until connect, and Ready says when it came
// up.
type connecting struct {
	recorder
	ready chan struct{}
}

func (c *connecting) Name() string           { return "mqtt" }
func (c *connecting) Ready() <-chan struct{} { return c.ready }

func (c *connecting) connect() {
	c.mu.Lock()
	c.fail = nil
	c.mu.Unlock()
	close(c.ready)
}

// startConnecting queues 2 alerts and runs the delivery loop to a
// transport that is not connected yet, until the test ends.
func startConnecting(t *testing.T) (*harness, *connecting, *logtest.Buffer, context.Context) {
	c := &connecting{ready: make(chan struct{})}
	h, buf, ctx := startFailing(t, c, &c.recorder)
	return h, c, buf, ctx
}

// startFailing queues 2 alerts and runs the delivery loop to n, whose
// recorder rec fails every delivery until the test lets them through,
// until the test ends.
func startFailing(t *testing.T, n Notifier, rec *recorder) (*harness, *logtest.Buffer, context.Context) {
	h := newHarness(t, nil)
	buf := &logtest.Buffer{}
	rec.fail = errors.New("not connected")
	h.reopenWithLog(buf, slog.LevelInfo, n)
	h.flap(2)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- h.e.deliveryLoop(ctx, n) }()
	t.Cleanup(func() { cancel(); <-done })
	return h, buf, ctx
}

// TestNoDeliveryWarningBeforeFirstConnect: alerts queued at start, a
// transport still making its first connection: the failed attempts before
// it comes up are no outage, so nothing is logged above DEBUG, and the
// alerts go out as soon as it connects.
func TestNoDeliveryWarningBeforeFirstConnect(t *testing.T) {
	h, c, buf, ctx := startConnecting(t)

	h.clock.BlockUntilContext(ctx, 1) // the loop waits after the first failed attempt
	c.connect()
	h.clock.Advance(deliverMinBackoff) // what an unaware loop would wait for
	waitFor(t, "2 deliveries", func() bool { return len(c.alerts()) == 2 })
	if strings.Contains(buf.String(), "level=WARN") || strings.Contains(buf.String(), "recovered") {
		t.Errorf("delivery before the first connect logged an outage:\n%s", buf.String())
	}
}

// TestDeliveryWarningWhenFirstConnectTakesTooLong: a transport that has not
// connected within firstConnectWait is failing: one warning, as for any
// outage.
func TestDeliveryWarningWhenFirstConnectTakesTooLong(t *testing.T) {
	h, c, buf, ctx := startConnecting(t)

	h.clock.BlockUntilContext(ctx, 1)
	if strings.Contains(buf.String(), "level=WARN") {
		t.Fatalf("warned before the first connect had its time:\n%s", buf.String())
	}
	h.clock.Advance(10 * time.Second) // firstConnectWait
	waitFor(t, "the warning", func() bool { return strings.Contains(buf.String(), "level=WARN") })
	if n := strings.Count(buf.String(), `msg="mqtt: delivery failing, 2 alerts waiting: not connected"`); n != 1 {
		t.Errorf("%d 'delivery failing' warnings, want 1:\n%s", n, buf.String())
	}
	// It connects at last: the outage ends with one line.
	h.clock.BlockUntilContext(ctx, 1)
	c.connect()
	h.clock.Advance(deliverMaxBackoff)
	waitFor(t, "the recovery line", func() bool { return strings.Contains(buf.String(), "recovered") })
}
