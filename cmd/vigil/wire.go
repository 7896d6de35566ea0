package main

import (
	"context"
	"log/slog"

	"github.com/jonboulle/clockwork"

	"github.com/vigil-iot/vigil/config"
	"github.com/vigil-iot/vigil/heartbeat"
	"github.com/vigil-iot/vigil/store"
	"github.com/vigil-iot/vigil/transport"
)

// newThinker returns the LLM step, or nil (rules-only) when no API key is set.
func newThinker(cfg *config.Config, clock clockwork.Clock, log *slog.Logger) (heartbeat.Thinker, error) {
	if !cfg.LLMEnabled() {
		return nil, nil
	}
	return nil, nil // wired when the agent lands
}

// wired holds the network transports.
type wired struct {
	notifiers  []heartbeat.Notifier
	publishers []heartbeat.Publisher
	runners    []func(ctx context.Context) error
	closers    []func() error
}

// newTransports builds MQTT and Telegram when configured.
func newTransports(ctx context.Context, cfg *config.Config, db *store.DB, cmds transport.Commands, clock clockwork.Clock, log *slog.Logger) (*wired, error) {
	return &wired{}, nil
}
