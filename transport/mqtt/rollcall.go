package mqtt

import (
	"context"
	"time"

	paho "github.com/eclipse/paho.mqtt.golang"
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
// dropped, not deferred, so a fleet of a thousand views asking at once
// costs each device one answer. A retained roll call is no question (the
// broker would replay it at every connect) and is ignored.

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

// rollCallLimiter allows one answer per RollCallLimit; the first always.
type rollCallLimiter struct{ o onceEvery }

func (l *rollCallLimiter) allow(now time.Time) bool { return l.o.allow(now, RollCallLimit) }

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

// answerRollCall publishes the answer to a roll call, unless one went out
// less than RollCallLimit ago. It runs in the client's loop.
func (c *Client) answerRollCall(ctx context.Context) {
	if !c.rollLimit.allow(c.clock.Now()) {
		c.log.Debug("mqtt roll call not answered", "reason", "answered less than "+RollCallLimit.String()+" ago")
		return
	}
	octx, cancel := context.WithTimeout(ctx, opTimeout)
	defer cancel()
	if err := c.publishRollCallAnswer(octx); err != nil {
		c.log.Warn("mqtt roll call answer", keyErr, err)
		return
	}
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
