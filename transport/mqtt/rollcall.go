package mqtt

import (
	"context"
	"time"

	paho "github.com/eclipse/paho.mqtt.golang"
	"github.com/jonboulle/clockwork"
)

// Roll call policy. A fleet view cannot count on retained messages: some
// brokers never deliver them to a wildcard subscription, or keep them per
// node of a cluster (RabbitMQ), and a view that starts after the devices
// then sees none of them. So every device subscribes to
// <prefix>/fleet/rollcall, always (with or without commands), and answers
// a roll call by publishing again, not retained, what a view needs: its
// status ("online"), its info (whose time stays the connection's), its
// last heartbeat (the last one this process published, if any) and its
// problem state (problem/attributes and problem, from the owner's durable
// state, with or without Home Assistant). It answers at most once per
// RollCallLimit, however often it is asked: a roll call within that is
// deferred, not dropped, and every roll call of the window is answered by
// one answer at its end, so a thousand views asking at once cost each
// device one answer, and each view has it within RollCallLimit. An answer
// that could not go out (the connection was down: a daemon thawed after
// SIGSTOP reads the roll calls its dead connection queued) is owed still,
// uses up nothing, and goes out once connected again. A retained roll call
// is no question (the broker would replay it at every connect) and is
// ignored.

// RollCallLimit is the least time between two answers to a roll call.
const RollCallLimit = 10 * time.Second

// ReannounceLimit is the least time between two discovery messages sent
// because Home Assistant said it came online: anyone who may publish on
// homeassistant/status could otherwise make every device re-publish its
// retained discovery as often as they like. A birth within the limit is
// dropped; Home Assistant keeps the retained message it got.
const ReannounceLimit = 10 * time.Second

// RollCallTopic is where a fleet view asks every device publishing under
// prefix to answer.
func RollCallTopic(prefix string) string { return prefix + "/fleet/rollcall" }

// onceEvery allows one event per period; the first always. What it
// turns down is dropped, not deferred.
type onceEvery struct {
	last time.Time
	done bool
}

func (l *onceEvery) allow(now time.Time, period time.Duration) bool {
	if l.done && now.Sub(l.last) < period {
		return false
	}
	l.last, l.done = now, true
	return true
}

// rollCaller is the state of the roll call's answer; used by loop only.
type rollCaller struct {
	last  time.Time       // when the last answer went out
	done  bool            // an answer went out
	owed  bool            // a roll call is not answered yet
	timer clockwork.Timer // set while an owed answer waits for its window's end
}

// wait is how long an answer must wait at now: until RollCallLimit after
// the last one went out; 0 when it may go out now.
func (r *rollCaller) wait(now time.Time) time.Duration {
	if !r.done {
		return 0
	}
	return max(r.last.Add(RollCallLimit).Sub(now), 0)
}

// due is the channel of the timer an owed answer waits on; nil (never
// ready) without one.
func (r *rollCaller) due() <-chan time.Time {
	if r.timer == nil {
		return nil
	}
	return r.timer.Chan()
}

// onRollCall runs in paho's router: it must not block.
// A payload over maxSignal is no roll call (a view sends an empty one).
func (c *Client) onRollCall(_ paho.Client, m paho.Message) {
	if len(m.Payload()) > maxSignal {
		return
	}
	if m.Retained() {
		c.log.Debug("mqtt retained roll call ignored", keyTopic, m.Topic())
		return
	}
	signal(c.rollCall)
}

// answerRollCall publishes the answer owed to a roll call: at once when
// none went out in the last RollCallLimit and the connection is up, else
// at the window's end or after the reconnect. It runs in the client's
// loop, after a roll call, a connection and the window's timer.
func (c *Client) answerRollCall(ctx context.Context) {
	r := &c.roll
	if !r.owed || r.timer != nil {
		return // nothing owed, or it waits for its window's end already
	}
	if wait := r.wait(c.clock.Now()); wait > 0 {
		r.timer = c.clock.NewTimer(wait)
		c.log.Debug("mqtt roll call answer deferred", "reason", "answered less than "+RollCallLimit.String()+" ago", "in", wait)
		return
	}
	if !c.Connected() {
		c.log.Debug("mqtt roll call answer deferred", "reason", "not connected: it goes out after the reconnect")
		return
	}
	octx, cancel := context.WithTimeout(ctx, opTimeout)
	defer cancel()
	if err := c.publishRollCallAnswer(octx); err != nil {
		// Owed still: after the reconnect, or, while the connection
		// stays up, at the end of another window.
		if c.Connected() {
			r.timer = c.clock.NewTimer(RollCallLimit)
		}
		c.log.Debug("mqtt roll call answer deferred", "reason", "it did not go out", keyErr, err)
		return
	}
	r.last, r.done, r.owed = c.clock.Now(), true, false
	c.log.Debug("mqtt roll call answered")
}

func (c *Client) publishRollCallAnswer(ctx context.Context) error {
	info, err := c.infoPayload()
	if err != nil {
		return err
	}
	c.mu.Lock()
	hb := c.lastHeartbeat
	c.mu.Unlock()
	state, attrs, err := problemPayloads(c.problemsNow(ctx))
	if err != nil {
		return err
	}
	for _, m := range []struct {
		leaf    string
		payload []byte
	}{{"status", []byte("online")}, {"info", info}, {"heartbeat", hb}, {"problem/attributes", attrs}, {"problem", state}} {
		if m.payload == nil {
			continue // no heartbeat yet in this run
		}
		if err := c.publish(ctx, c.topic(m.leaf), false, m.payload); err != nil {
			return err
		}
	}
	return nil
}
