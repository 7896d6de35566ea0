package main

import (
	"context"
	"crypto/tls"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"slices"
	"time"

	"github.com/jonboulle/clockwork"

	"github.com/vigil-iot/vigil/agent"
	"github.com/vigil-iot/vigil/alert"
	"github.com/vigil-iot/vigil/config"
	"github.com/vigil-iot/vigil/daemon"
	"github.com/vigil-iot/vigil/heartbeat"
	"github.com/vigil-iot/vigil/manage"
	"github.com/vigil-iot/vigil/redact"
	"github.com/vigil-iot/vigil/store"
	"github.com/vigil-iot/vigil/transport"
	"github.com/vigil-iot/vigil/transport/mqtt"
	"github.com/vigil-iot/vigil/transport/telegram"
)

// newThinker returns the LLM step, or nil (rules-only) when no API key is set.
// self carries out what the model may change about its own heartbeat,
// memory remembers the models that refused tools (the daemon's, on the
// state file; nil: none); red removes the secrets from what the model
// writes.
func newThinker(cfg *config.Config, self agent.Self, memory agent.ModelMemory, red *redact.Redactor, clock clockwork.Clock, log *slog.Logger) (heartbeat.Thinker, error) {
	if !cfg.LLMEnabled() {
		return nil, nil
	}
	l, h := cfg.LLM, cfg.Heartbeat
	retries := l.MaxRetries
	if retries == 0 {
		retries = -1 // agent.Config: 0 takes the default, negative means none
	}
	may := append([]string{}, h.ModelMay...) // non-nil: an empty list allows nothing
	if len(h.Schedule) > 0 {
		// With a schedule the interval does not apply: no set_interval tool
		// whose every call the validator would refuse.
		may = slices.DeleteFunc(may, func(v string) bool { return v == "interval" })
	}
	a, err := agent.New(agent.Config{
		Provider: l.Provider, BaseURL: l.BaseURL, Model: l.Model, ScoutModel: l.ScoutModel,
		APIKey: l.APIKey.Value(), Timeout: l.Timeout.Duration, MaxSteps: l.MaxSteps, MaxToolCalls: l.MaxToolCalls,
		MaxTokens: l.MaxOutputTokens, Memory: memory,
		UserAgent:  "vigil/" + version,
		MaxRetries: retries, RetryBase: l.RetryBackoff.Duration,
		ModelMay:    may,
		IntervalMin: h.IntervalMin.Duration, IntervalMax: h.IntervalMax.Duration,
		Self:     self,
		Redactor: red,
	}, newHTTPClient(http.ProxyFromEnvironment, l.Timeout.Duration), clock, log.With("component", "llm"))
	if err != nil {
		return nil, configErr(fmt.Errorf("llm: %w", err))
	}
	return a, nil
}

// mqttTLS reads the CA and client certificate files of [mqtt] and builds
// the TLS configuration, or returns nil when none is named (a TLS broker
// then uses the system's CAs). `config check` runs it too, so it refuses
// what `run` would, with the file and line of the key.
func mqttTLS(cfg *config.Config) (*tls.Config, error) {
	m := cfg.MQTT
	if m.CAFile == "" && m.CertFile == "" {
		return nil, nil
	}
	return mqtt.ReadTLS([3]mqtt.TLSFile{{Name: "mqtt.ca_file", Path: m.CAFile}, {Name: "mqtt.cert_file", Path: m.CertFile}, {Name: "mqtt.key_file", Path: m.KeyFile}}, os.ReadFile, cfg.KeyError)
}

// newTransports builds MQTT and Telegram when configured; board is the
// resolved board profile, which MQTT publishes on <p>/<id>/info; problems
// is what MQTT rebuilds its Home Assistant problem sensor from after every
// connect (Wiring.Transports); red cuts what Telegram shortens.
func newTransports(ctx context.Context, cfg *config.Config, board string, db *store.DB, cmds *daemon.Commander, problems transport.ProblemSource, red *redact.Redactor, clock clockwork.Clock, log *slog.Logger) ([]daemon.Transport, error) {
	var w []daemon.Transport
	if cfg.MQTTEnabled() {
		m := cfg.MQTT
		sev, err := alert.ParseSeverity(m.MinSeverity)
		if err != nil {
			return nil, configErr(fmt.Errorf("mqtt.min_severity: %w", err))
		}
		tlsCfg, err := mqttTLS(cfg)
		if err != nil {
			return nil, configErr(err)
		}
		c := mqtt.New(mqtt.Config{
			Broker: m.Broker, Brokers: m.Brokers, TopicPrefix: m.TopicPrefix, DeviceID: cfg.Device.ID,
			Username: m.Username, Password: m.Password.Value(), TLS: tlsCfg,
			Keepalive: m.Keepalive.Duration, HomeAssistant: m.HomeAssistant, DiscoveryPrefix: m.DiscoveryPrefix,
			Commands: m.Commands, MinSeverity: sev, Version: version, Clock: clock,
			Board: board, Interval: daemon.HeartbeatSpacing(cfg), SampleInterval: cfg.Heartbeat.SampleInterval.Duration,
			Problems: problems, Tags: cfg.Device.Tags, ConfigDigest: manage.Digest(cfg),
		}, cmds, log.With("transport", "mqtt"))
		w = append(w, daemon.Transport{Notifier: c, Publisher: c, Run: c.Run})
	}
	if cfg.TelegramEnabled() {
		tg := cfg.Telegram
		sev, err := alert.ParseSeverity(tg.MinSeverity)
		if err != nil {
			return nil, configErr(fmt.Errorf("telegram.min_severity: %w", err))
		}
		quietSev, err := alert.ParseSeverity(tg.QuietMinSeverity)
		if err != nil {
			return nil, configErr(fmt.Errorf("telegram.quiet_min_severity: %w", err))
		}
		b := telegram.New(telegram.Config{
			APIURL: tg.APIURL, Token: tg.Token.Value(), ChatID: tg.ChatID, AllowedChats: tg.AllowedChats, AllowedUsers: tg.AllowedUsers, MinSeverity: sev,
			UserAgent: "vigil/" + version, Location: cfg.Device.Location,
			Quiet: tg.Quiet, QuietMinSeverity: quietSev, MaxPerHour: tg.MaxPerHour, Digests: db, Messages: db,
			Redactor: red,
		}, telegramState{db}, cmds, newHTTPClient(http.ProxyFromEnvironment, telegram.DefaultPollTimeout+15*time.Second), clock, log.With("transport", "telegram"))
		w = append(w, daemon.Transport{Notifier: b, Run: b.Run})
	}
	return w, nil
}

// Where the concrete transports meet the daemon: the roles the cmd topics
// and the bot call (declared in package transport), and the reconnects
// the engine hears of.
var (
	_ mqtt.CmdHandler       = (*daemon.Commander)(nil)
	_ telegram.BotHandler   = (*daemon.Commander)(nil)
	_ heartbeat.Connector   = (*mqtt.Client)(nil)
	_ heartbeat.Reconnector = (*mqtt.Client)(nil)
)

// The state file keeps what Telegram holds for its digest and its alert messages.
var (
	_ telegram.Digests  = (*store.DB)(nil)
	_ telegram.Messages = (*store.DB)(nil)
)

// telegramState keeps the bot's update offset and chat migration in the state file.
type telegramState struct{ db *store.DB }

func (s telegramState) Offset() (off int64, err error) {
	err = s.db.View(func(tx *store.Tx) error { off, err = tx.TelegramOffset(); return err })
	return off, err
}

func (s telegramState) SetOffset(off int64) error {
	return s.db.Update(func(tx *store.Tx) error { return tx.SetTelegramOffset(off) })
}

// Chat returns the chat that replaced configured, or configured itself: the
// store answers 0 when no migration was recorded.
func (s telegramState) Chat(configured int64) (id int64, err error) {
	err = s.db.View(func(tx *store.Tx) error { id, err = tx.TelegramChat(configured); return err })
	if err == nil && id == 0 {
		id = configured
	}
	return id, err
}

func (s telegramState) SetChat(configured, newID int64) error {
	return s.db.Update(func(tx *store.Tx) error { return tx.SetTelegramChat(configured, newID) })
}
