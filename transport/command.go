package transport

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"
)

// The one pause limit for people, whichever channel asks (the CLI, the
// control socket, MQTT cmd/pause, Telegram /pause): a day at most, so a
// forgotten pause cannot silence a device for a week. The commands
// implementation enforces it with CheckPause; transports only parse the
// number. The LLM's own pause tool has its own, shorter limit.
const (
	MinPause = time.Minute
	MaxPause = 24 * time.Hour
)

// ErrPauseRange is wrapped by CheckPause for a pause outside MinPause..MaxPause.
var ErrPauseRange = fmt.Errorf("pause: minutes must be %d..%d (at most %s)",
	int(MinPause/time.Minute), int(MaxPause/time.Minute), "24 h")

// ErrNoTransport is wrapped for a transport a command names that the
// config does not configure (`vigil test-alert --transport`): a usage
// error, exit 2.
var ErrNoTransport = errors.New("is not a configured transport")

// CheckPause reports whether d is a pause a person may ask for.
func CheckPause(d time.Duration) error {
	if d < MinPause || d > MaxPause {
		return fmt.Errorf("%w, got %d", ErrPauseRange, int64(d/time.Minute))
	}
	return nil
}

// Channels a command arrives on, for Source.Channel.
const (
	ChannelCLI      = "cli"
	ChannelSocket   = "socket"
	ChannelMQTT     = "mqtt"
	ChannelTelegram = "telegram"
	ChannelWeb      = "web"   // the status page's buttons
	ChannelModel    = "model" // the model's own tools (its set_interval)
)

// Remote reports whether s is a remote channel: MQTT, Telegram, the status
// page, or one not named here. Those are the channels [manage] remote
// bounds and the rate of changes counts. The CLI and the control socket
// (local root) are not remote, nor is the model, which has its own bounds
// (heartbeat.model_may). This is the one place that says so.
func (s Source) Remote() bool {
	switch s.Channel {
	case ChannelCLI, ChannelSocket, ChannelModel:
		return false
	}
	return true
}

// Source says who sent a command, for the audit log and `vigil status`.
type Source struct {
	Channel string // cli | socket | mqtt | telegram | web | model
	Topic   string // mqtt: the command topic
	Chat    int64  // telegram: the chat
	User    int64  // telegram: the sender (0 when Telegram gave none)
	Name    string // telegram: the sender's @username, or first and last name
}

// String is the source as `vigil status` shows it:
// "mqtt vigil/dev/cmd/pause", "telegram chat -100123 user 42", "socket".
func (s Source) String() string {
	switch {
	case s.Channel == "":
		return "unknown"
	case s.Topic != "":
		return s.Channel + " " + s.Topic
	case s.Chat != 0:
		return s.Channel + " chat " + strconv.FormatInt(s.Chat, 10) + " user " + strconv.FormatInt(s.User, 10)
	}
	return s.Channel
}

// Who is the source as an ack records it: String, and the sender's name
// when Telegram gave one ("telegram chat -100123 user 42 (@ann)").
func (s Source) Who() string {
	if s.Name != "" {
		return s.String() + " (" + s.Name + ")"
	}
	return s.String()
}

// LogAttrs are the slog attributes naming the source.
func (s Source) LogAttrs() []any {
	attrs := []any{"source", s.Channel}
	if s.Topic != "" {
		attrs = append(attrs, "topic", s.Topic)
	}
	if s.Chat != 0 {
		attrs = append(attrs, "chat", s.Chat, "user", s.User)
	}
	return attrs
}

type sourceKey struct{}

// WithSource returns ctx carrying who sent the command that ctx runs.
// A transport sets it before it calls the daemon.
func WithSource(ctx context.Context, s Source) context.Context {
	return context.WithValue(ctx, sourceKey{}, s)
}

// SourceOf returns the source WithSource put in ctx, or an unknown one.
func SourceOf(ctx context.Context) Source {
	s, _ := ctx.Value(sourceKey{}).(Source)
	return s
}
