package setup

import (
	"context"
	"errors"
	"time"

	"github.com/vigil-iot/vigil/config"
)

// Checks is the Channels of a real run: the Bot API, the broker, the LLM.
type Checks struct{}

var _ Channels = Checks{}

var errNotYet = errors.New("channel checks are not built in yet")

func (Checks) TelegramBot(context.Context, string, string) (string, error) { return "", errNotYet }
func (Checks) TelegramStart(context.Context, string, string, time.Duration) (int64, int64, error) {
	return 0, 0, errNotYet
}
func (Checks) MQTTConnect(context.Context, string, string, string) error { return errNotYet }
func (Checks) LLMAsk(context.Context, string, string, string, string) (string, error) {
	return "", errNotYet
}
func (Checks) TestAlert(context.Context, *config.Config) []AlertResult { return nil }
