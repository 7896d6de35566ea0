package setup

import (
	"context"
	"fmt"
	"time"

	"github.com/vigil-iot/vigil/config"
)

// Checks is the Channels of a real run: CheckBot, WaitStart, CheckBroker,
// CheckModel and SendTestAlerts. Their errors say what is wrong and how to
// fix it.
type Checks struct{}

var _ Channels = Checks{}

// TelegramBot checks token with getMe.
func (Checks) TelegramBot(ctx context.Context, api, token string) (string, error) {
	b, err := CheckBot(ctx, BotAPI{URL: api, Token: token})
	return b.Username, err
}

// TelegramStart waits for a /start.
func (Checks) TelegramStart(ctx context.Context, api, token string, wait time.Duration) (int64, int64, error) {
	s, err := WaitStart(ctx, BotAPI{URL: api, Token: token}, wait)
	return s.ChatID, s.UserID, err
}

// MQTTConnect connects once and waits for a PUBACK.
func (Checks) MQTTConnect(ctx context.Context, broker, user, password string) error {
	_, err := CheckBroker(ctx, Broker{URL: broker, Username: user, Password: password})
	return err
}

// LLMAsk asks the model one question.
func (Checks) LLMAsk(ctx context.Context, provider, url, model, key string) (string, error) {
	c, err := CheckModel(ctx, ModelAPI{Provider: provider, BaseURL: url, Model: model, Key: key})
	if err == nil {
		return fmt.Sprintf("%s (%.1f s)", c.Answer, c.Latency.Seconds()), nil
	}
	return "", err
}

// TestAlert sends the test alert through every channel cfg configures
// (its secrets resolved already) and waits for each acknowledgement.
func (Checks) TestAlert(ctx context.Context, cfg *config.Config) []AlertResult {
	var out []AlertResult
	for _, d := range SendTestAlerts(ctx, cfg, TestAlertOptions{}) {
		out = append(out, AlertResult{Channel: d.Channel, Detail: d.String(), Err: d.Err})
	}
	return out
}
