package daemon

import (
	"context"
	"fmt"
	"time"

	"github.com/vigil-iot/vigil/heartbeat"
	"github.com/vigil-iot/vigil/manage"
	"github.com/vigil-iot/vigil/status"
	"github.com/vigil-iot/vigil/store"
)

// Status is what `vigil status` shows of the App: the one status view
// (status.Gather) with the last status.Window of every reading and the
// run-time view.
func (a *App) Status(ctx context.Context) (status.View, error) {
	return a.view(ctx, func(context.Context) (manage.Runtime, error) {
		return manage.RuntimeView(a.current(), a.db)
	})
}

// view gathers the status view with rt (nil: without the run-time view).
func (a *App) view(ctx context.Context, rt status.RuntimeFunc) (status.View, error) {
	v, err := status.Gather(ctx, appStatus{a}, rt, a.wall().Add(-status.Window))
	if err != nil {
		return v, err
	}
	if rb, err := a.rulesView(); err == nil {
		rb.Decided = nil // the status shows the rules in force and what waits
		v.RuleBook = &rb
	} else {
		a.log.Warn("status: read the rule proposals", "err", err)
	}
	return v, nil
}

// appStatus is the engine as the status view reads it. An App that is not
// the running daemon (the CLI on the state file) says the mode `vigil
// run` would start in and every configured transport's queue: only the
// daemon wires MQTT and Telegram, but their alerts wait in the state file
// all the same.
type appStatus struct{ a *App }

func (s appStatus) Status(ctx context.Context) (heartbeat.Status, error) {
	a := s.a
	st, err := a.engine.Status(ctx)
	if err != nil || a.runCtx != nil {
		return st, err
	}
	cfg := a.current()
	st.Mode = "rules-only"
	if cfg.LLMEnabled() {
		st.Mode = "llm"
	}
	err = a.db.View(func(tx *store.Tx) error {
		for _, n := range ConfiguredTransports(cfg) {
			if _, ok := st.Outbox[n]; ok {
				continue
			}
			d, err := tx.Depth(n)
			if err != nil {
				return fmt.Errorf("read %s queue: %w", n, err)
			}
			st.Outbox[n] = d
		}
		return nil
	})
	return st, err
}

func (s appStatus) History(ctx context.Context, since time.Time) ([]heartbeat.Series, error) {
	return s.a.engine.History(ctx, since)
}
