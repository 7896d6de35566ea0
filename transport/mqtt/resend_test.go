package mqtt

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/vigil-iot/vigil/alert"
	"github.com/vigil-iot/vigil/internal/mosquittotest"
)

// TestInFlightAlertSentOnceAcrossRestart: an alert in flight when the
// broker goes away (its PUBLISH lost on the wire, no PUBACK) is resent by
// one party only. The outbox owns it, being durable: Notify says the
// connection was lost and the caller resends after the reconnect; paho,
// whose store is in memory, does not resend it too. The viewer's session
// outlives the broker's restart, so it counts every copy.
func TestInFlightAlertSentOnceAcrossRestart(t *testing.T) {
	b := mosquittotest.Start(t, mosquittotest.Options{Persist: true})
	p := mosquittotest.StartProxy(t, b.Addr())
	sub := mosquittotest.SubscribeWith(t, b.URL(), mosquittotest.SubscriberOptions{Session: "viewer-" + t.Name()}, "vigil/dev1/alert")
	c := newTestClient(t, p.URL(), Config{}, nil)
	runClient(t, c)
	waitConnected(t, c)

	p.Blackhole(true) // the PUBLISH goes nowhere, no PUBACK comes back
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	a := testAlert("inflight", alert.Critical)
	done := make(chan error, 1)
	go func() { done <- c.Notify(ctx, a) }()
	time.Sleep(300 * time.Millisecond) // it is on the wire
	b.Stop()
	select {
	case err := <-done:
		if !errors.Is(err, ErrConnectionLost) {
			t.Fatalf("Notify() when the broker went away = %v, want ErrConnectionLost", err)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("Notify() still blocked 15s after the broker went away")
	}
	next := c.NextConnect()
	select {
	case <-next:
		t.Fatal("NextConnect closed while the broker is down")
	default:
	}
	p.Blackhole(false)
	b.Start()
	select {
	case <-next: // what wakes the outbox
	case <-time.After(15 * time.Second):
		t.Fatal("NextConnect not closed 15s after the broker came back")
	}
	waitConnected(t, c)
	// The caller's outbox resends it, as heartbeat's delivery loop does.
	if err := c.Notify(ctx, a); err != nil {
		t.Fatalf("Notify() again after the reconnect = %v", err)
	}
	if err := c.Notify(ctx, testAlert("after", alert.Critical)); err != nil {
		t.Fatalf("Notify() after the reconnect = %v", err)
	}
	sub.Wait("vigil/dev1/alert", 10*time.Second, func(m mosquittotest.Message) bool {
		var got alert.Alert
		return json.Unmarshal([]byte(m.Payload), &got) == nil && got.ID == "after"
	})
	time.Sleep(500 * time.Millisecond) // a resend by paho would be here by now
	var ids []string
	for _, m := range sub.On("vigil/dev1/alert") {
		var got alert.Alert
		if err := json.Unmarshal([]byte(m.Payload), &got); err != nil {
			t.Fatalf("alert %q: %v", m.Payload, err)
		}
		ids = append(ids, got.ID)
	}
	n := 0
	for _, id := range ids {
		if id == "inflight" {
			n++
		}
	}
	if n != 1 {
		t.Errorf("the in-flight alert arrived %d times (alerts seen: %v), want once: the outbox's resend alone", n, ids)
	}
}
