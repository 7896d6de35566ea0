package heartbeat

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/vigil-iot/vigil/alert"
	"github.com/vigil-iot/vigil/store"
)

// queue puts n rule alerts into the outbox by flapping the rule.
func (h *harness) flap(n int) {
	for i := 0; i < n; i++ {
		if i%2 == 0 {
			h.sensor.set(40)
		} else {
			h.sensor.set(20)
		}
		h.clock.Advance(h.cfg.SampleInterval)
		h.sample()
	}
}

func TestDeliveryInOrderAckBeforeDelete(t *testing.T) {
	h := newHarness(t, nil)
	h.notes.fail = errors.New("broker down")
	h.flap(6)
	if n := len(h.outbox()); n != 6 {
		t.Fatalf("outbox = %d, want 6", n)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- h.e.deliveryLoop(ctx, h.notes) }()
	// While the transport fails, nothing leaves the outbox.
	h.clock.BlockUntilContext(ctx, 1)
	if n := len(h.outbox()); n != 6 {
		t.Fatalf("outbox while failing = %d, want 6 (deleted before ack)", n)
	}
	h.notes.mu.Lock()
	h.notes.fail = nil
	h.notes.mu.Unlock()
	h.clock.Advance(time.Minute) // past the backoff
	deadline := time.Now().Add(5 * time.Second)
	for len(h.notes.alerts()) < 6 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	cancel()
	<-done
	got := h.notes.alerts()
	if len(got) != 6 {
		t.Fatalf("delivered %d alerts, want 6", len(got))
	}
	for i, a := range got {
		want := alert.StateFiring
		if i%2 == 1 {
			want = alert.StateResolved
		}
		if a.State != want {
			t.Errorf("alert %d state = %s, want %s (order kept)", i, a.State, want)
		}
	}
	if n := len(h.outbox()); n != 0 {
		t.Errorf("outbox after delivery = %d, want 0", n)
	}
}

// slowNotifier blocks until released, to prove one dead transport does not
// hold back another.
type deadNotifier struct{}

func (deadNotifier) Name() string { return "dead" }
func (deadNotifier) Notify(ctx context.Context, a alert.Alert) error {
	return fmt.Errorf("unreachable")
}

func TestDeadTransportDoesNotBlockOthers(t *testing.T) {
	h := newHarness(t, nil)
	h.db.Close()
	db, err := store.Open(h.path, store.Options{Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	h.db = db
	e, err := New(h.cfg, Deps{Clock: h.clock, Wall: h.wall.Now, DB: db, Sensors: h.e.deps.Sensors,
		Notifiers: []Notifier{h.notes, deadNotifier{}}})
	if err != nil {
		t.Fatal(err)
	}
	h.e = e
	h.flap(4)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go e.deliveryLoop(ctx, h.notes)
	go e.deliveryLoop(ctx, deadNotifier{})
	deadline := time.Now().Add(5 * time.Second)
	for len(h.notes.alerts()) < 4 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if n := len(h.notes.alerts()); n != 4 {
		t.Fatalf("healthy transport got %d alerts, want 4", n)
	}
	var depth int
	db.View(func(tx *store.Tx) error { depth, err = tx.Depth("dead"); return err })
	if depth != 4 {
		t.Fatalf("dead transport's queue = %d, want 4 still waiting", depth)
	}
}

func TestFloodGuard(t *testing.T) {
	h := newHarness(t, func(c *Config) { c.FloodLimit = 5; c.FloodWindow = time.Hour })
	h.flap(40) // 20 firings + 20 resolutions in 80 s
	firing, guard := 0, 0
	for _, e := range h.outbox() {
		switch {
		case e.Alert.Rule == "flood_guard":
			guard++
			// It never resolves: a notice, or it would leave the problem
			// sensor on for good.
			if e.Alert.State != alert.StateNotice {
				t.Errorf("flood_guard state = %q, want notice", e.Alert.State)
			}
		case e.Alert.State == alert.StateFiring:
			firing++
		}
	}
	if firing != 5 || guard != 1 {
		t.Fatalf("firing alerts = %d, guard notices = %d; want 5 and 1", firing, guard)
	}
	ps, err := h.e.Problems(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range ps {
		if p.Rule == "flood_guard" {
			t.Errorf("Problems() holds flood_guard: %+v", p)
		}
	}
}
