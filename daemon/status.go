package daemon

import (
	"context"
	"fmt"

	"github.com/vigil-iot/vigil/heartbeat"
	"github.com/vigil-iot/vigil/manage"
	"github.com/vigil-iot/vigil/store"
)

// Status is what `vigil status` shows of the App: the engine's status, the
// last statusWindow of every reading and the run-time view. An App that is
// not the running daemon (the CLI on the state file) says the mode `vigil
// run` would start in and every configured transport's queue: only the
// daemon wires MQTT and Telegram, but their alerts wait in the state file
// all the same.
func (a *App) Status(ctx context.Context) (heartbeat.Status, []heartbeat.Series, manage.Runtime, error) {
	cfg := a.current()
	st, err := a.engine.Status(ctx)
	if err != nil {
		return st, nil, manage.Runtime{}, err
	}
	series, err := a.engine.History(ctx, a.wall().Add(-statusWindow))
	if err != nil {
		return st, nil, manage.Runtime{}, err
	}
	if a.runCtx == nil {
		st.Mode = "rules-only"
		if cfg.LLMEnabled() {
			st.Mode = "llm"
		}
		if err := a.db.View(func(tx *store.Tx) error {
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
		}); err != nil {
			return st, nil, manage.Runtime{}, err
		}
	}
	rt, err := manage.RuntimeView(cfg, a.db)
	return st, series, rt, err
}
