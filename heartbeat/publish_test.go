package heartbeat

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/vigil-iot/vigil/device"
	"github.com/vigil-iot/vigil/transport"
)

// flakyPublisher fails until it is told the broker is up.
type flakyPublisher struct {
	mu      sync.Mutex
	up      bool
	tries   int
	sensors []device.Snapshot
	beats   []transport.Heartbeat
}

func (p *flakyPublisher) setUp() { p.mu.Lock(); p.up = true; p.mu.Unlock() }

func (p *flakyPublisher) PublishSensors(ctx context.Context, s device.Snapshot) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.tries++
	if !p.up {
		return errors.New("not connected")
	}
	p.sensors = append(p.sensors, s)
	return nil
}

func (p *flakyPublisher) PublishHeartbeat(ctx context.Context, hb transport.Heartbeat) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.tries++
	if !p.up {
		return errors.New("not connected")
	}
	p.beats = append(p.beats, hb)
	return nil
}

func (p *flakyPublisher) counts() (tries, sensors, beats int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.tries, len(p.sensors), len(p.beats)
}

// TestRetainedStateRetriedUntilPublished: the first snapshot is taken before
// the broker connection is up; it must still reach the broker, not wait for
// sensors_publish_interval.
func TestRetainedStateRetriedUntilPublished(t *testing.T) {
	h := newHarness(t, func(c *Config) { c.SensorsPublishInterval = time.Hour })
	pub := &flakyPublisher{}
	h.e.deps.Publishers = []Publisher{pub}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- h.e.publishLoop(ctx) }()
	defer func() { cancel(); <-done }()

	h.sample()
	h.tick()
	// Whichever arrives first fails and arms the retry; the second arrival
	// retries the first: three failed attempts.
	deadline := time.Now().Add(5 * time.Second)
	for tries, _, _ := pub.counts(); tries < 3; tries, _, _ = pub.counts() {
		if time.Now().After(deadline) {
			t.Fatalf("%d publish attempts, want 3", tries)
		}
		time.Sleep(5 * time.Millisecond)
	}
	h.clock.BlockUntilContext(ctx, 1) // waiting to retry
	if tries, s, b := pub.counts(); tries != 3 || s != 0 || b != 0 {
		t.Fatalf("before the broker is up: %d tries, %d sensors, %d heartbeats; want 3, 0, 0", tries, s, b)
	}
	pub.setUp()
	h.clock.Advance(deliverMaxBackoff)
	deadline = time.Now().Add(5 * time.Second)
	for {
		_, s, b := pub.counts()
		if s == 1 && b == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after the broker came up: %d sensors, %d heartbeats published; want 1 and 1", s, b)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
