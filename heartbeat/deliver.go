package heartbeat

import (
	"context"
	"errors"
	"time"

	"github.com/vigil-iot/vigil/store"
	"github.com/vigil-iot/vigil/transport"
)

const (
	deliverBatch      = 16
	deliverMinBackoff = time.Second
	deliverMaxBackoff = time.Minute
	publishTimeout    = 10 * time.Second
)

// deliveryLoop drains the outbox for one notifier, in order, at least once:
// an entry's cursor moves only after Notify returned nil. A failing transport
// backs off on its own and never holds back the others.
func (e *Engine) deliveryLoop(ctx context.Context, n Notifier) error {
	name := n.Name()
	active := e.notifierNames()
	backoff := deliverMinBackoff
	for {
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
		for _, ent := range entries {
			err := n.Notify(ctx, ent.Alert)
			if ctx.Err() != nil {
				return nil
			}
			if err != nil && !errors.Is(err, transport.ErrPermanent) {
				e.log.Warn("deliver", "transport", name, "id", ent.Alert.ID, "err", err, "retry_in", backoff)
				failed = true
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
			backoff = deliverMinBackoff
		}
		if failed {
			select {
			case <-ctx.Done():
				return nil
			case <-e.deps.Clock.After(backoff):
			}
			backoff = min(backoff*2, deliverMaxBackoff)
			continue
		}
		if len(entries) == deliverBatch {
			continue
		}
		select {
		case <-ctx.Done():
			return nil
		case <-e.wake[name]:
		}
	}
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
	select {
	case <-e.sensorsOut:
	default:
	}
	e.sensorsOut <- *cur
}

// publishLoop sends the latest retained state to every publisher. Only the
// newest value of each topic matters, so a slow broker never builds a queue.
func (e *Engine) publishLoop(ctx context.Context) error {
	for {
		select {
		case <-ctx.Done():
			return nil
		case snap := <-e.sensorsOut:
			for _, p := range e.deps.Publishers {
				pctx, cancel := context.WithTimeout(ctx, publishTimeout)
				if err := p.PublishSensors(pctx, snap); err != nil && ctx.Err() == nil {
					e.log.Debug("publish sensors", "err", err)
				}
				cancel()
			}
		case hb := <-e.heartbeatOut:
			for _, p := range e.deps.Publishers {
				pctx, cancel := context.WithTimeout(ctx, publishTimeout)
				if err := p.PublishHeartbeat(pctx, hb); err != nil && ctx.Err() == nil {
					e.log.Debug("publish heartbeat", "err", err)
				}
				cancel()
			}
		}
	}
}
