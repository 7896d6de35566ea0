package setup

// The Telegram check of `vigil init` (INIT-SPEC step 4): the token is
// proved with getMe, then the wizard waits for the person to send /start
// to the bot and takes the chat and the person from that update, in place
// of the `curl …/getUpdates | jq` step. The Bot API client is
// transport/telegram's: the token is in every request URL, and no error or
// log line of that package, or of this file, carries it.

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"regexp"
	"time"

	"github.com/vigil-iot/vigil/internal/tlshint"
	"github.com/vigil-iot/vigil/transport/telegram"
)

// Errors of the Telegram check; test them with errors.Is.
var (
	// ErrTokenRefused: the Bot API does not know the token (401, or 404
	// for a string that is no token).
	ErrTokenRefused = errors.New("the Bot API refused the token")
	// ErrNoStart: nobody sent /start to the bot within the wait.
	ErrNoStart = errors.New("no /start arrived")
	// ErrBotBusy: another program polls the bot (409 Conflict): a running
	// vigil, another tool, or a webhook.
	ErrBotBusy = errors.New("another program receives this bot's messages")
)

// startReply is the bot's answer to the /start WaitStart waited for.
const startReply = "vigil: got it. This chat will receive the alerts, and only you may command vigil here. Finish vigil init on the board; a test alert comes at its end."

// BotAPI is how the wizard reaches a bot.
type BotAPI struct {
	URL   string // the Bot API base; "" is https://api.telegram.org
	Token string
	// HTTP sends the requests (nil: a plain client). Its Timeout must be
	// zero or longer than PollTimeout.
	HTTP *http.Client
	// PollTimeout is one getUpdates long poll while waiting for /start;
	// zero is telegram.DefaultPollTimeout. The wait is WaitStart's.
	PollTimeout time.Duration
	Log         *slog.Logger // nil: discard
}

// BotInfo is the bot behind a token.
type BotInfo struct {
	ID       int64
	Username string // without the @
	Name     string // its first name, as BotFather set it
}

// Started is what a /start told: the chat it came from, which receives
// the alerts (chat_id, allowed_chats), and the person who sent it
// (allowed_users).
type Started struct {
	ChatID   int64
	ChatType string // "private", "group", "supergroup"
	UserID   int64
	User     string // @username, or the person's name
}

// tokenShape is what a Bot API token looks like: the bot's id, a colon
// and the secret part (35 characters today). Only the shape is checked:
// a character outside it would change the request URL.
var tokenShape = regexp.MustCompile(`^[0-9]+:[A-Za-z0-9_-]+$`)

// bot returns the transport's client for api, after checking the token's
// shape.
func (api BotAPI) bot() (*telegram.Bot, error) {
	if api.Token == "" {
		return nil, errors.New("telegram: no bot token: create a bot with @BotFather and give its token")
	}
	if !tokenShape.MatchString(api.Token) {
		return nil, fmt.Errorf("telegram: %w: it is not shaped like a bot token (digits, a colon, then letters, digits, - and _): copy it again from @BotFather", ErrTokenRefused)
	}
	return telegram.New(telegram.Config{APIURL: api.URL, Token: api.Token, PollTimeout: api.PollTimeout}, noState{}, nil, api.HTTP, nil, api.Log), nil
}

// CheckBot proves the token with getMe and returns who the bot is.
func CheckBot(ctx context.Context, api BotAPI) (BotInfo, error) {
	b, err := api.bot()
	if err != nil {
		return BotInfo{}, err
	}
	me, err := b.GetMe(ctx)
	if err != nil {
		return BotInfo{}, botError(api, "getMe", err)
	}
	return BotInfo{ID: me.ID, Username: me.Username, Name: me.FirstName}, nil
}

// WaitStart checks the token (getMe, for "/start@name" in a group) and
// waits up to wait for a person to send /start to the bot, answers it in
// the chat, and returns the chat and the person. Only a /start sent after WaitStart began
// counts; other messages are passed over. It returns ErrNoStart when the
// wait ends, and ctx's error (a SIGTERM, Ctrl-C) when ctx ends first.
func WaitStart(ctx context.Context, api BotAPI, wait time.Duration) (Started, error) {
	b, err := api.bot()
	if err != nil {
		return Started{}, err
	}
	me, err := b.GetMe(ctx)
	if err != nil {
		return Started{}, botError(api, "getMe", err)
	}
	wctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	s, err := b.WaitStart(wctx)
	switch {
	case err == nil:
		// Best effort: the person sees at once that the /start was heard;
		// the test alert at the end proves delivery.
		_ = b.Say(ctx, s.ChatID, startReply)
		return Started{ChatID: s.ChatID, ChatType: s.ChatType, UserID: s.UserID, User: s.User}, nil
	case ctx.Err() != nil:
		return Started{}, fmt.Errorf("telegram: waiting for /start: %w", ctx.Err())
	case wctx.Err() != nil:
		return Started{}, fmt.Errorf("telegram: %w within %v: send /start to @%s in Telegram (open t.me/%s), then run vigil init again, or give the chat id with --telegram-chat",
			ErrNoStart, wait, me.Username, me.Username)
	}
	return Started{}, botError(api, "getUpdates", err)
}

// botError says what a failed Bot API request means and how to fix it.
func botError(api BotAPI, method string, err error) error {
	url := api.URL
	if url == "" {
		url = telegram.DefaultAPIURL
	}
	var ae *telegram.APIError
	if errors.As(err, &ae) {
		switch ae.Code {
		case http.StatusUnauthorized:
			return fmt.Errorf("telegram: %w (401 Unauthorized): copy it again from @BotFather (/mybots, API Token)", ErrTokenRefused)
		case http.StatusNotFound:
			return fmt.Errorf("telegram: %w (404 Not Found): it is not a token of a bot; copy it again from @BotFather (/mybots, API Token)", ErrTokenRefused)
		case http.StatusConflict:
			return fmt.Errorf("telegram: %w (getUpdates 409 Conflict): stop the running vigil first (systemctl stop vigil) or delete the bot's webhook, or give the chat id with --telegram-chat", ErrBotBusy)
		}
		return fmt.Errorf("telegram: the Bot API at %s refused %s: %w", url, method, ae)
	}
	if hint := tlshint.Hint(err); hint != "" {
		return fmt.Errorf("telegram: %s at %s: %w (%s)", method, url, err, hint)
	}
	return fmt.Errorf("telegram: the Bot API at %s did not answer %s: %w: check the network, or set HTTPS_PROXY if the board needs a proxy", url, method, err)
}

// noState is the State of a bot that keeps nothing: the wizard's bot has
// no state file yet, and the chat it learns goes into the config.
type noState struct{}

func (noState) Offset() (int64, error)                { return 0, nil }
func (noState) SetOffset(int64) error                 { return nil }
func (noState) Chat(configured int64) (int64, error)  { return configured, nil }
func (noState) SetChat(configured, newID int64) error { return nil }
