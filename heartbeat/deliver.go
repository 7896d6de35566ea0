package heartbeat

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/vigil-iot/vigil/device"
	"github.com/vigil-iot/vigil/store"
	"github.com/vigil-iot/vigil/transport"
)

const (
	deliverBatch      = 16
	deliverMinBackoff = time.Second
	// A transport back from an outage resumes within this; one failed
	// attempt per 15 s while it is down costs nothing worth saving.
	deliverMaxBackoff = 15 * time.Second
	// notifyTimeout bounds one delivery, so a dead link (a half-open TCP
	// connection, a long Telegram retry_after) cannot wedge a queue.
	notifyTimeout  = 2 * time.Minute
	publishTimeout = 10 * time.Second
	// firstConnectWait is how long a Connector may take to make its first
	// connection (MQTT's connect timeout) before a failed delivery counts
	// as an outage: at start, with alerts queued, the first attempts come
	// before the broker answered.
	firstConnectWait = 10 * time.Second
)

// deliveryLoop drains the outbox for one notifier, in order, at least once:
// an entry's cursor moves only after Notify returned nil. A failing transport
// backs off on its own and never holds back the others; one that is a
// Reconnector ends the backoff when its connection is back, so the queue
// drains within moments of a reconnect (a broker failover takes 60-110 ms).
//
// Logging policy: every attempt is a DEBUG line (-v). An outage is one WARN
// when the first attempt fails ("mqtt: delivery failing, 3 alerts waiting:
// not connected") and one INFO when the queue has drained again ("mqtt:
// delivery recovered after 2m10s, 5 alerts delivered"), however many
// alerts and retries lie between. A Connector that has not made its first
// connection yet is no outage: the loop waits for it, up to
// firstConnectWait, and only then counts a failure.
func (e *Engine) deliveryLoop(ctx context.Context, n Notifier) error {
	name := n.Name()
	active := e.notifierNames()
	backoff := deliverMinBackoff
	var out outage
	var awaited <-chan struct{} // the Ready channel whose first connection was waited for
	for {
		// Taken before the attempts: a reconnect while they fail ends
		// the backoff after them.
		reconnected := nextConnect(n)
		var entries []store.Entry
		err := e.deps.DB.View(func(tx *store.Tx) error {
			var err error
			entries, err = tx.Pending(name, deliverBatch)
			return err
		})
		if err != nil {
			e.log.Error("read outbox", "transport", name, "err", err)
		}
		failed := false
		var notifyErr error
		for _, ent := range entries {
			var err error
			only := ent.Alert.Transport
			if only != "" && only != name {
				e.log.Debug("deliver: skipped, meant for another transport", "transport", name, "id", ent.Alert.ID, "only", only)
			} else {
				nctx, cancel := context.WithTimeout(ctx, notifyTimeout)
				err = n.Notify(nctx, ent.Alert)
				cancel()
				if ctx.Err() != nil {
					return nil
				}
				e.logAttempt(name, ent.Alert.ID, err)
			}
			if err != nil && !errors.Is(err, transport.ErrPermanent) {
				notifyErr, failed = err, true
				break
			}
			if err != nil {
				e.log.Error("deliver: dropping alert", "transport", name, "id", ent.Alert.ID, "err", err)
			}
			if err := e.deps.DB.Update(func(tx *store.Tx) error { return tx.Ack(name, ent.Seq, active) }); err != nil {
				e.log.Error("ack", "transport", name, "err", err)
				failed = true
				break
			}
			if err == nil && (only == "" || only == name) && !out.since.IsZero() {
				out.delivered++
			}
			backoff = deliverMinBackoff
		}
		if notifyErr != nil && out.since.IsZero() && e.awaitFirstConnect(ctx, n, &awaited) {
			if ctx.Err() != nil {
				return nil
			}
			continue // connected, or its time is up: try again before counting
		}
		if notifyErr != nil {
			out.fail(e, name, notifyErr)
		}
		if failed {
			t := e.deps.Clock.NewTimer(backoff)
			select {
			case <-ctx.Done():
				t.Stop()
				return nil
			case <-t.Chan():
				backoff = min(backoff*2, deliverMaxBackoff)
			case <-reconnected:
				t.Stop()
				e.log.Debug("deliver: connected again, resuming", "transport", name)
				backoff = deliverMinBackoff
			}
			continue
		}
		if len(entries) == deliverBatch {
			continue
		}
		out.drained(e, name)
		select {
		case <-ctx.Done():
			return nil
		case <-e.wake[name]:
		}
	}
}

// nextConnect is n's NextConnect when n is a Reconnector, else nil (a
// channel that is never ready).
func nextConnect(n Notifier) <-chan struct{} {
	if r, ok := n.(Reconnector); ok {
		return r.NextConnect()
	}
	return nil
}

// awaitFirstConnect waits, after a failed delivery, for n's first
// connection when n is a Connector that has not made one yet: until Ready,
// firstConnectWait or ctx, once per Ready channel (a reload brings a new
// transport, with a new one). It reports whether it waited, so the caller
// tries again before it counts a failure.
func (e *Engine) awaitFirstConnect(ctx context.Context, n Notifier, awaited *<-chan struct{}) bool {
	c, ok := n.(Connector)
	if !ok {
		return false
	}
	ready := c.Ready()
	select {
	case <-ready:
		return false // it connected before: this is an outage
	default:
	}
	if ready == *awaited {
		return false // waited its time already
	}
	*awaited = ready
	t := e.deps.Clock.NewTimer(firstConnectWait)
	defer t.Stop()
	select {
	case <-ready:
	case <-t.Chan():
	case <-ctx.Done():
	}
	return true
}

// outage is one transport's run of failed deliveries, summarised in the log
// as one warning when it starts and one line when it ends.
type outage struct {
	since     time.Time // mono time of the first failure; zero while delivering
	delivered int       // alerts delivered since the transport came back
}

// fail notes a failed delivery and warns at the first one of an outage.
func (o *outage) fail(e *Engine, name string, err error) {
	if !o.since.IsZero() {
		return
	}
	o.since, o.delivered = e.deps.Clock.Now(), 0
	waiting := 0
	if verr := e.deps.DB.View(func(tx *store.Tx) error {
		var err error
		waiting, err = tx.Depth(name)
		return err
	}); verr != nil {
		waiting = -1
	}
	e.log.Warn(fmt.Sprintf("%s: delivery failing, %s waiting: %v", name, plural(waiting, "alert"), err),
		"transport", name, "waiting", waiting, "err", err)
}

// drained ends an outage once the queue is empty again.
func (o *outage) drained(e *Engine, name string) {
	if o.since.IsZero() {
		return
	}
	d := e.deps.Clock.Since(o.since).Round(time.Second)
	e.log.Info(fmt.Sprintf("%s: delivery recovered after %s, %s delivered", name, d, plural(o.delivered, "alert")),
		"transport", name, "outage", d, "delivered", o.delivered)
	*o = outage{}
}

// logAttempt logs one delivery attempt at DEBUG (-v).
func (e *Engine) logAttempt(name, id string, err error) {
	if !e.log.Enabled(context.Background(), slog.LevelDebug) {
		return
	}
	if err != nil {
		e.log.Debug("deliver", "transport", name, "id", id, "result", "failed", "err", err)
		return
	}
	e.log.Debug("deliver", "transport", name, "id", id, "result", "delivered")
}

func plural(n int, what string) string {
	switch {
	case n < 0:
		return "some " + what + "s"
	case n == 1:
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

// maybePublishSensors hands the snapshot to the publishers when the last
// published one is older than sensors_publish_interval or a reading moved
// beyond its deadband.
func (e *Engine) maybePublishSensors(mono time.Time) {
	if len(e.deps.Publishers) == 0 {
		return
	}
	e.mu.Lock()
	cur := e.last
	due := e.pubSnap == nil || mono.Sub(e.pubAt) >= e.cfg.SensorsPublishInterval || mono.Before(e.pubAt) ||
		e.changed(e.pubSnap, cur)
	if due {
		e.pubSnap, e.pubAt = cur, mono
	}
	e.mu.Unlock()
	if !due || cur == nil {
		return
	}
	e.sensorsOut.put(*cur)
}

// latest hands the newest value of a retained topic to the publish loop.
// put never blocks: it overwrites what the loop has not taken yet and
// nudges it through a one-slot channel. So no producer (the sample loop, a
// heartbeat, a remote check running SampleOnce) ever waits for the
// publisher, which may be busy with a slow broker or gone at shutdown.
type latest[T any] struct {
	mu    sync.Mutex
	v     T
	ok    bool
	ready chan struct{} // capacity 1
}

func newLatest[T any]() *latest[T] { return &latest[T]{ready: make(chan struct{}, 1)} }

func (l *latest[T]) put(v T) {
	l.mu.Lock()
	l.v, l.ok = v, true
	l.mu.Unlock()
	select {
	case l.ready <- struct{}{}:
	default: // a nudge is already pending; the loop will take v with it
	}
}

// take returns the value put since the last take, if any.
func (l *latest[T]) take() (T, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	v, ok := l.v, l.ok
	var zero T
	l.v, l.ok = zero, false
	return v, ok
}

// publishLoop sends the latest retained state to every publisher. Only the
// newest value of each topic matters, so a slow broker never builds a queue.
// A value that did not go out (the broker is not connected yet, or is down)
// is retried with backoff until it or a newer one does: the topics are
// retained, and a lost publish would leave them stale until the next change
// (for the sensors up to sensors_publish_interval, for the heartbeat a whole
// interval).
func (e *Engine) publishLoop(ctx context.Context) error {
	var (
		snap    *device.Snapshot
		hb      *transport.Heartbeat
		retry   <-chan time.Time
		backoff = deliverMinBackoff
	)
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-e.sensorsOut.ready:
			if s, ok := e.sensorsOut.take(); ok {
				snap = &s
			}
		case <-e.heartbeatOut.ready:
			if h, ok := e.heartbeatOut.take(); ok {
				hb = &h
			}
		case <-retry:
			retry = nil
		}
		failed := false
		if snap != nil {
			if e.publishAll(ctx, "sensors", func(ctx context.Context, p Publisher) error { return p.PublishSensors(ctx, *snap) }) {
				snap = nil
			} else {
				failed = true
			}
		}
		if hb != nil {
			if e.publishAll(ctx, "heartbeat", func(ctx context.Context, p Publisher) error { return p.PublishHeartbeat(ctx, *hb) }) {
				hb = nil
			} else {
				failed = true
			}
		}
		switch {
		case !failed:
			retry, backoff = nil, deliverMinBackoff
		case retry == nil:
			retry = e.deps.Clock.After(backoff)
			backoff = min(backoff*2, deliverMaxBackoff)
		}
	}
}

// publishAll hands one retained value to every publisher and reports
// whether all of them took it.
func (e *Engine) publishAll(ctx context.Context, what string, publish func(context.Context, Publisher) error) bool {
	ok := true
	for _, p := range e.deps.Publishers {
		pctx, cancel := context.WithTimeout(ctx, publishTimeout)
		if err := publish(pctx, p); err != nil && ctx.Err() == nil {
			e.log.Debug("publish "+what, "err", err)
			ok = false
		}
		cancel()
	}
	return ok
}
