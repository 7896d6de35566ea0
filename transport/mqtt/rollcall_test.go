package mqtt

import (
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"

	"github.com/vigil-iot/vigil/alert"
	"github.com/vigil-iot/vigil/internal/logtest"
	"github.com/vigil-iot/vigil/internal/mosquittotest"
	"github.com/vigil-iot/vigil/transport"
)

// TestRollCallLimit: an answer waits until RollCallLimit after the last
// one that went out; the first need not wait.
func TestRollCallLimit(t *testing.T) {
	t0 := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	var r rollCaller
	if w := r.wait(t0); w != 0 {
		t.Errorf("the first answer waits %v, want 0", w)
	}
	r.last, r.done = t0, true
	steps := []struct {
		at   time.Duration // after the answer
		want time.Duration
	}{
		{0, RollCallLimit},
		{RollCallLimit - time.Nanosecond, time.Nanosecond},
		{RollCallLimit, 0},
		{time.Hour, 0},
	}
	for _, s := range steps {
		if got := r.wait(t0.Add(s.at)); got != s.want {
			t.Errorf("an answer %v after the last waits %v, want %v", s.at, got, s.want)
		}
	}
}

const rollCallTopic = "vigil/fleet/rollcall"

// answers returns the non-retained messages on topic: roll-call answers
// (the retained ones are what the client published after connecting).
func answers(sub *mosquittotest.Subscriber, topic string) []mosquittotest.Message {
	var out []mosquittotest.Message
	for _, m := range sub.On(topic) {
		if !m.Retained {
			out = append(out, m)
		}
	}
	return out
}

// TestRollCallAnswer: a roll call on <p>/fleet/rollcall brings, not
// retained, the device's status, its info (the connection's time), its
// last heartbeat and its problem state (from the owner's durable state,
// even with Home Assistant off). A second roll call at once brings
// nothing; one after RollCallLimit on the client's clock brings the
// answer again.
func TestRollCallAnswer(t *testing.T) {
	b := mosquittotest.Start(t, mosquittotest.Options{})
	t0 := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	clock := clockwork.NewFakeClockAt(t0)
	src := &problems{}
	src.set([]alert.Alert{testAlert("r1", alert.Critical)}, nil)
	c := newTestClient(t, b.URL(), Config{Clock: clock, Board: "pi4", Version: "v9", Interval: time.Minute, Problems: src}, nil)
	var log logtest.Buffer
	c.log = log.Logger(slog.LevelDebug)
	runClient(t, c)
	waitConnected(t, c)
	ctx, cancel := context.WithTimeout(context.Background(), wait5)
	defer cancel()
	hb := transport.Heartbeat{Time: t0, Outcome: "ok", Reason: "changed", NextAt: t0.Add(time.Minute)}
	if err := c.PublishHeartbeat(ctx, hb); err != nil {
		t.Fatal(err)
	}

	sub := mosquittotest.Subscribe(t, b.URL(), "vigil/dev1/#", rollCallTopic)
	sub.Publish(rollCallTopic, false, "")
	m := sub.Wait("vigil/dev1/problem", wait5, func(m mosquittotest.Message) bool { return !m.Retained })
	if m.Payload != "ON" || m.QoS != 1 {
		t.Errorf("problem in the answer = %+v, want ON at QoS 1", m)
	}
	for _, topic := range []string{"vigil/dev1/status", "vigil/dev1/info", "vigil/dev1/heartbeat", "vigil/dev1/problem/attributes"} {
		if got := answers(sub, topic); len(got) != 1 || got[0].QoS != 1 {
			t.Fatalf("answers on %s = %+v, want one, not retained, at QoS 1", topic, got)
		}
	}
	if got := answers(sub, "vigil/dev1/status")[0].Payload; got != "online" {
		t.Errorf("status in the answer = %q, want online", got)
	}
	var info Info
	if err := json.Unmarshal([]byte(answers(sub, "vigil/dev1/info")[0].Payload), &info); err != nil || !info.Time.Equal(t0) || info.Board != "pi4" || info.Interval != "1m0s" {
		t.Errorf("info in the answer = %+v (%v), want board pi4, interval 1m0s, time %v (when the connection came up)", info, err, t0)
	}
	var gotHB transport.Heartbeat
	if err := json.Unmarshal([]byte(answers(sub, "vigil/dev1/heartbeat")[0].Payload), &gotHB); err != nil || !gotHB.Time.Equal(t0) || gotHB.Outcome != "ok" {
		t.Errorf("heartbeat in the answer = %+v (%v), want the last one published", gotHB, err)
	}
	var attrs struct{ Firing []problemAlert }
	if err := json.Unmarshal([]byte(answers(sub, "vigil/dev1/problem/attributes")[0].Payload), &attrs); err != nil || len(attrs.Firing) != 1 || attrs.Firing[0].Rule != "too_hot" {
		t.Errorf("problem attributes in the answer = %+v (%v), want too_hot firing", attrs, err)
	}
	if got := sub.On("vigil/dev1/problem"); len(got) != 1 {
		t.Errorf("problem messages = %+v, want only the answer (Home Assistant is off: nothing retained)", got)
	}

	// Asked again at once, and again: deferred, not dropped, and
	// answered once, at the window's end on the client's clock.
	sub.Publish(rollCallTopic, false, "")
	waitFor(t, "the second roll call deferred", wait5, func() bool { return strings.Contains(log.String(), `msg="mqtt roll call answer deferred"`) })
	for range 3 {
		sub.Publish(rollCallTopic, false, "")
	}
	time.Sleep(300 * time.Millisecond)
	if len(answers(sub, "vigil/dev1/problem")) != 1 {
		t.Fatalf("answers within %v of the first = %d, want none yet", RollCallLimit, len(answers(sub, "vigil/dev1/problem"))-1)
	}
	clock.Advance(RollCallLimit)
	sub.Wait("vigil/dev1/problem", wait5, func(mosquittotest.Message) bool { return len(answers(sub, "vigil/dev1/problem")) == 2 })
	time.Sleep(300 * time.Millisecond)
	if got := answers(sub, "vigil/dev1/info"); len(got) != 2 {
		t.Fatalf("info answers after five roll calls (four within %v of the first) = %d, want 2: the first and one at the window's end", RollCallLimit, len(got))
	}
	if err := json.Unmarshal([]byte(answers(sub, "vigil/dev1/info")[1].Payload), &info); err != nil || !info.Time.Equal(t0) {
		t.Errorf("info time in the later answer = %v, want still %v (the connection's)", info.Time, t0)
	}
}

// TestRetainedRollCallIgnored: a roll call left retained on the broker is
// no question: the client does not answer it at every connect, and a live
// one right after is answered.
func TestRetainedRollCallIgnored(t *testing.T) {
	b := mosquittotest.Start(t, mosquittotest.Options{})
	pub := mosquittotest.Subscribe(t, b.URL())
	pub.Publish(rollCallTopic, true, "left behind")
	sub := mosquittotest.Subscribe(t, b.URL(), "vigil/dev1/#")
	clock := clockwork.NewFakeClock()
	c := newTestClient(t, b.URL(), Config{Clock: clock}, nil)
	var log logtest.Buffer
	c.log = log.Logger(slog.LevelDebug)
	runClient(t, c)
	waitFor(t, "the retained roll call ignored", wait5, func() bool { return strings.Contains(log.String(), `msg="mqtt retained roll call ignored"`) })
	// Had the retained one been answered, the clock (which does not move)
	// would hold this live one back.
	pub.Publish(rollCallTopic, false, "")
	sub.Wait("vigil/dev1/info", wait5, func(m mosquittotest.Message) bool { return !m.Retained })
	waitFor(t, "the live roll call answered", wait5, func() bool { return strings.Contains(log.String(), `msg="mqtt roll call answered"`) })
	if n := strings.Count(log.String(), "roll call answered"); n != 1 || strings.Contains(log.String(), "not answered") {
		t.Errorf("roll calls answered: %d, want 1 (the live one), and none turned down:\n%s", n, log.String())
	}
}

// TestOnlineAnswersRollCall: the client subscribes to the roll call
// before it says "online", so a view that calls the roll the moment it
// sees a device come online gets the answer, however long the rest of the
// connection's work takes (here a slow problem source).
func TestOnlineAnswersRollCall(t *testing.T) {
	b := mosquittotest.Start(t, mosquittotest.Options{})
	sub := mosquittotest.Subscribe(t, b.URL(), "vigil/dev1/status")
	c := newTestClient(t, b.URL(), Config{HomeAssistant: true, Problems: slowProblems{time.Second}}, nil)
	var log logtest.Buffer
	c.log = log.Logger(slog.LevelDebug)
	runClient(t, c)
	sub.Wait("vigil/dev1/status", wait5, func(m mosquittotest.Message) bool { return m.Payload == "online" })
	sub.Publish(rollCallTopic, false, "")
	waitFor(t, "the roll call answered", wait5, func() bool { return strings.Contains(log.String(), `msg="mqtt roll call answered"`) })
}

// slowProblems answers that nothing fires, after a while.
type slowProblems struct{ delay time.Duration }

func (p slowProblems) Problems(ctx context.Context) ([]alert.Alert, error) {
	select {
	case <-time.After(p.delay):
		return nil, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// TestRollCallOwedAcrossReconnect: a roll call that comes while the
// connection is down (a daemon thawed after SIGSTOP reads what its dead
// connection queued) is owed, not dropped: no WARN, nothing used up, and
// the answer goes out after the reconnect, at the same time on the
// client's clock.
func TestRollCallOwedAcrossReconnect(t *testing.T) {
	b := mosquittotest.Start(t, mosquittotest.Options{Persist: true})
	clock := clockwork.NewFakeClockAt(time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC))
	c := newTestClient(t, b.URL(), Config{Clock: clock}, nil)
	var log logtest.Buffer
	c.log = log.Logger(slog.LevelDebug)
	runClient(t, c)
	waitConnected(t, c)
	// A viewer whose session outlives the broker's restart, so it gets
	// what the client publishes as soon as that reconnects.
	sub := mosquittotest.SubscribeWith(t, b.URL(), mosquittotest.SubscriberOptions{Session: "viewer-" + t.Name()}, "vigil/dev1/#")

	b.Stop()
	waitFor(t, "the client to notice the broker is gone", 10*time.Second, func() bool { return !c.Connected() })
	c.onRollCall(nil, fakeMessage{topic: rollCallTopic})
	waitFor(t, "the roll call owed", wait5, func() bool {
		return strings.Contains(log.String(), `msg="mqtt roll call answer deferred" reason="not connected: it goes out after the reconnect"`)
	})
	b.Start()
	// Home Assistant is off: only a roll call's answer publishes problem.
	if m := sub.Next("vigil/dev1/problem", 15*time.Second); m.Payload != "OFF" {
		t.Errorf("problem in the answer after the reconnect = %+v, want OFF", m)
	}
	waitFor(t, "the roll call answered", wait5, func() bool { return strings.Contains(log.String(), `msg="mqtt roll call answered"`) })
	if strings.Contains(log.String(), "level=WARN msg=\"mqtt roll call") || strings.Count(log.String(), `msg="mqtt roll call answered"`) != 1 {
		t.Errorf("log: want the roll call answered once, after the reconnect, and no roll call WARN:\n%s", log.String())
	}
}
