package telegram

// What `vigil init` asks of the Bot API before a config exists: who the
// bot is (getMe, the check that a token works) and who sent it /start
// (the chat and the person the config then allows). The wizard's own
// wording and deadline are package setup's; the protocol stays here.

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Me is the bot as getMe describes it.
type Me struct {
	ID        int64  `json:"id"`
	Username  string `json:"username"` // without the @
	FirstName string `json:"first_name"`
}

// GetMe asks the Bot API who the bot is, the check that the token works,
// and remembers the username, so WaitStart knows "/start@this_bot" from a
// command for another bot. A refused token is an *APIError (401
// Unauthorized; 404 Not Found for a token that is not one). No error
// contains the token.
func (b *Bot) GetMe(ctx context.Context) (Me, error) {
	var me Me
	if err := b.call(ctx, "getMe", struct{}{}, &me, sendTimeout); err != nil {
		return Me{}, fmt.Errorf("telegram: %w", err)
	}
	if me.Username == "" {
		return Me{}, errors.New("telegram: getMe answered no username")
	}
	b.mu.Lock()
	b.username = me.Username
	b.mu.Unlock()
	return me, nil
}

// Start is a /start a person sent to the bot: the chat it came from (a
// private chat's id is the person's; a group's is negative) and the person.
type Start struct {
	UpdateID int64
	ChatID   int64
	ChatType string // "private", "group", "supergroup"
	UserID   int64
	User     string // @username, or the first and last name
}

// WaitStart long-polls getUpdates until a person sends /start (or
// "/start@this_bot", with or without a deep-link argument) and returns the
// chat and the person. Updates queued before it was called are skipped:
// it first asks for the last one (offset -1, which also drops the older
// ones from Telegram's queue) and waits only for those after it. Other
// messages, forwards and posts on behalf of a chat are passed over. The
// /start is confirmed (one more getUpdates with the next offset), so a
// daemon started later does not receive it again. WaitStart returns when
// ctx ends, with its error; call GetMe first for "/start@name" in a
// group. A 409 (another poller, such as a running vigil, or a webhook
// holds the bot) is an *APIError with Code 409.
func (b *Bot) WaitStart(ctx context.Context) (Start, error) {
	offset, err := b.lastUpdate(ctx)
	if err != nil {
		return Start{}, err
	}
	b.mu.Lock()
	username := b.username
	b.mu.Unlock()
	for {
		var ups []update
		req := getUpdates{Offset: offset, Timeout: int64(b.cfg.PollTimeout / time.Second), AllowedUpdates: []string{"message"}}
		if err := b.call(ctx, "getUpdates", req, &ups, b.cfg.PollTimeout+15*time.Second); err != nil {
			return Start{}, fmt.Errorf("telegram: %w", err)
		}
		for _, u := range ups {
			if u.UpdateID < offset {
				continue // a server that ignores offset must not replay what came before
			}
			offset = max(offset, u.UpdateID+1)
			if s, ok := startOf(u, username); ok {
				// Best effort: a failure only means a later poller sees it too.
				_ = b.call(ctx, "getUpdates", getUpdates{Offset: offset, AllowedUpdates: []string{"message"}}, nil, sendTimeout)
				return s, nil
			}
		}
	}
}

// lastUpdate returns the offset after the last update queued now (0 when
// none is), asking without waiting.
func (b *Bot) lastUpdate(ctx context.Context) (int64, error) {
	var ups []update
	if err := b.call(ctx, "getUpdates", getUpdates{Offset: -1, AllowedUpdates: []string{"message"}}, &ups, sendTimeout); err != nil {
		return 0, fmt.Errorf("telegram: %w", err)
	}
	var offset int64
	for _, u := range ups {
		offset = max(offset, u.UpdateID+1)
	}
	return offset, nil
}

// startOf reports whether u is a person's own /start for this bot.
func startOf(u update, username string) (Start, bool) {
	m := u.Message
	if m == nil || m.From == nil || m.notFromSender() != "" {
		return Start{}, false
	}
	name, _, ok := parseCommand(m.Text, username)
	if !ok || name != "start" {
		return Start{}, false
	}
	return Start{UpdateID: u.UpdateID, ChatID: m.Chat.ID, ChatType: m.Chat.Type, UserID: m.From.ID, User: m.From.name()}, true
}

// Say sends text, plain, to chat: the wizard's answer to a /start. It
// waits out a 429 as alerts do.
func (b *Bot) Say(ctx context.Context, chat int64, text string) error {
	if _, _, err := b.send(ctx, sendMessage{ChatID: chat, Text: truncate16(text, maxText)}, false); err != nil {
		return fmt.Errorf("telegram: %w", err)
	}
	return nil
}
