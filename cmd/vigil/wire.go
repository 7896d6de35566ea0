package main

import (
	"context"
	"crypto/tls"
	"fmt"
	"log/slog"
	"net/http"
	"os"

	"github.com/jonboulle/clockwork"

	"github.com/vigil-iot/vigil/agent"
	"github.com/vigil-iot/vigil/config"
	"github.com/vigil-iot/vigil/heartbeat"
	"github.com/vigil-iot/vigil/store"
	"github.com/vigil-iot/vigil/transport"
	"github.com/vigil-iot/vigil/transport/mqtt"
)

// newThinker returns the LLM step, or nil (rules-only) when no API key is set.
func newThinker(cfg *config.Config, clock clockwork.Clock, log *slog.Logger) (heartbeat.Thinker, error) {
	if !cfg.LLMEnabled() {
		return nil, nil
	}
	l := cfg.LLM
	a, err := agent.New(agent.Config{
		Provider: l.Provider, BaseURL: l.BaseURL, Model: l.Model, ScoutModel: l.ScoutModel,
		APIKey: l.APIKey.Value(), Timeout: l.Timeout.Duration, MaxSteps: l.MaxSteps, MaxToolCalls: l.MaxToolCalls,
		UserAgent: "vigil/" + version,
	}, &http.Client{}, clock, log.With("component", "llm"))
	if err != nil {
		return nil, configErr(fmt.Errorf("llm: %w", err))
	}
	return a, nil
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
	w := &wired{}
	if cfg.MQTTEnabled() {
		m := cfg.MQTT
		sev, err := transport.ParseSeverity(m.MinSeverity)
		if err != nil {
			return nil, configErr(fmt.Errorf("mqtt.min_severity: %w", err))
		}
		var tlsCfg *tls.Config
		if m.CAFile != "" || m.CertFile != "" {
			var ca, cert, key []byte
			for _, f := range []struct {
				key, path string
				dst       *[]byte
			}{{"mqtt.ca_file", m.CAFile, &ca}, {"mqtt.cert_file", m.CertFile, &cert}, {"mqtt.key_file", m.KeyFile, &key}} {
				if f.path == "" {
					continue
				}
				b, err := os.ReadFile(f.path)
				if err != nil {
					return nil, configErr(fmt.Errorf("%s: %w", f.key, err))
				}
				*f.dst = b
			}
			if tlsCfg, err = mqtt.TLSConfig(ca, cert, key); err != nil {
				return nil, configErr(fmt.Errorf("mqtt tls: %w", err))
			}
		}
		c := mqtt.New(mqtt.Config{
			Broker: m.Broker, TopicPrefix: m.TopicPrefix, DeviceID: cfg.Device.ID,
			Username: m.Username, Password: m.Password.Value(), TLS: tlsCfg,
			Keepalive: m.Keepalive.Duration, HomeAssistant: m.HomeAssistant, DiscoveryPrefix: m.DiscoveryPrefix,
			Commands: m.Commands, MinSeverity: sev, Version: version, Clock: clock,
		}, cmds, log.With("transport", "mqtt"))
		w.notifiers = append(w.notifiers, c)
		w.publishers = append(w.publishers, c)
		w.runners = append(w.runners, c.Run)
	}
	return w, nil
}
