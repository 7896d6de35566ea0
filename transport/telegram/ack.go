// Acknowledge on Telegram: the button on a firing problem's message, the
// press (a callback_query), and the edit of the messages once someone
// acknowledged the problem, on any channel.
//
//   - A firing problem's message carries an inline keyboard with one
//     button, Acknowledge (callback_data "ack:" and the alert id's random
//     part: at most 64 bytes), when the bot takes commands (allowed_chats
//     is set) from the alert chat: a button nobody may press is none. The
//     bot remembers, in the state file, which message carried which
//     firing problem's alert (Config.Messages), button or not.
//   - A press obeys allowed_chats and allowed_users exactly as a command
//     does: one from elsewhere is answered "not allowed" (in the popup
//     Telegram shows) and changes nothing. Every press is answered
//     (answerCallbackQuery), with the ack's outcome.
//   - The ack itself is the daemon's (Acker, gated by [manage] remote's
//     "ack"), which then tells the bot (Acknowledged): every message the
//     bot sent for the problem's firing is edited to say who acknowledged
//     it and when, in the device zone, and loses its button. An alert held
//     for the digest has no message yet: its digest line says it was
//     acknowledged instead.
//   - A press on the message of a firing that has resolved since is
//     answered so, and the button goes.

package telegram

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/vigil-iot/vigil/alert"
	"github.com/vigil-iot/vigil/transport"
)

// Messages remembers, durably, which message carried which alert.
// *store.DB implements it.
type Messages interface {
	// PutTelegramMessage remembers that message msg in chat carries a.
	PutTelegramMessage(a alert.Alert, chat, msg int64) error
	// TelegramMessages returns the remembered messages of the alerts ids.
	TelegramMessages(ids []string) (alerts []alert.Alert, chats, msgs []int64, err error)
	// TelegramMessageAlert returns the alert message msg in chat carries.
	TelegramMessageAlert(chat, msg int64) (a alert.Alert, ok bool, err error)
}

// ackData starts the callback_data of the Acknowledge button.
const ackData = "ack:"

// maxCallbackData is the Bot API's limit on callback_data, in bytes.
const maxCallbackData = 64

// maxCallbackText is the Bot API's limit on answerCallbackQuery's text.
const maxCallbackText = 200

// inlineKeyboard is a message's reply_markup: rows of buttons.
type inlineKeyboard struct {
	Rows [][]inlineButton `json:"inline_keyboard"`
}

type inlineButton struct {
	Text string `json:"text"`
	Data string `json:"callback_data"`
}

// ackKeyboard is the Acknowledge button of a's message.
func ackKeyboard(a alert.Alert) *inlineKeyboard {
	data := ackData + strings.TrimPrefix(a.ID, a.Device+"-")
	data = data[:min(len(data), maxCallbackData)]
	return &inlineKeyboard{Rows: [][]inlineButton{{{Text: "Acknowledge", Data: data}}}}
}

// buttons reports whether alert messages get an Acknowledge button: the
// bot takes commands from the alert chat and remembers its messages.
func (b *Bot) buttons() bool {
	return b.cfg.Messages != nil && b.cmds != nil && len(b.cfg.AllowedChats) > 0 && b.allowed(b.cfg.ChatID)
}

// answerCallback is the body of an answerCallbackQuery request.
type answerCallback struct {
	ID   string `json:"callback_query_id"`
	Text string `json:"text,omitempty"`
}

// handleCallback answers a press of a button (see the policy above).
func (b *Bot) handleCallback(ctx context.Context, q *callbackQuery) {
	answer := b.pressed(ctx, q)
	if err := b.call(ctx, "answerCallbackQuery", answerCallback{ID: q.ID, Text: clip16(b.cfg.Redactor, answer, maxCallbackText)}, nil, sendTimeout); err != nil {
		b.log.Warn("telegram answer a button press", keyUser, q.From.ID, keyErr, err)
	}
}

// pressed acts on a press and returns the answer to show.
func (b *Bot) pressed(ctx context.Context, q *callbackQuery) string {
	if q.Message == nil {
		return "this button works in the alert chat only"
	}
	chat, msg := q.Message.Chat.ID, q.Message.MessageID
	if !b.allowed(chat) {
		b.logOnce(b.unknown, chat, "telegram button pressed in a chat not in allowed_chats: refused", keyChat, chat)
		return "not allowed: this chat is not in allowed_chats"
	}
	user := q.From.ID
	if !b.userAllowed(user) {
		b.logOnce(b.strange, user, "telegram button pressed by a user not in allowed_users: refused", keyChat, chat, keyUser, user)
		return "not allowed: you are not in allowed_users"
	}
	if data, ok := strings.CutPrefix(q.Data, ruleData); ok && b.cmds != nil {
		return b.decide(ctx, q, chat, msg, data)
	}
	if !strings.HasPrefix(q.Data, ackData) || b.cmds == nil || b.cfg.Messages == nil {
		return "this button does nothing (any more)"
	}
	a, ok, err := b.cfg.Messages.TelegramMessageAlert(chat, msg)
	switch {
	case err != nil:
		return "error: " + err.Error()
	case !ok:
		return "this alert is too old to acknowledge here: send /ack with its rule"
	}
	b.log.Info("telegram command", keyChat, chat, keyUser, user, keyCommand, "ack (button)")
	ctx, cancel := context.WithTimeout(transport.WithSource(ctx, transport.Source{Channel: transport.ChannelTelegram,
		Chat: chat, User: user, Name: q.From.name()}), commandTimeout)
	defer cancel()
	out, err := b.cmds.Ack(ctx, a.ID)
	switch {
	case errors.Is(err, alert.ErrNotAllowed):
		return fmt.Sprintf("not allowed: add %q to [manage] remote", "ack")
	case errors.Is(err, transport.ErrNotFiring):
		b.dropButton(ctx, chat, msg)
		return "no longer firing: " + err.Error()
	case err != nil:
		return "error: " + err.Error()
	}
	return out
}

// logOnce logs a refusal at WARN the first time id (a chat, a user) is
// seen in seen (b.unknown or b.strange).
func (b *Bot) logOnce(seen map[int64]bool, id int64, msg string, attrs ...any) {
	b.mu.Lock()
	first := !seen[id] && len(seen) < maxUnknownLog
	if first {
		seen[id] = true
	}
	b.mu.Unlock()
	if first {
		b.log.Warn(msg, attrs...)
	}
}

// editMessage is the body of editMessageText; without a reply_markup the
// message loses its keyboard.
type editMessage struct {
	ChatID    int64  `json:"chat_id"`
	MessageID int64  `json:"message_id"`
	Text      string `json:"text"`
	ParseMode string `json:"parse_mode,omitempty"`
}

// editMarkup is the body of editMessageReplyMarkup.
type editMarkup struct {
	ChatID      int64          `json:"chat_id"`
	MessageID   int64          `json:"message_id"`
	ReplyMarkup inlineKeyboard `json:"reply_markup"`
}

// dropButton removes the keyboard of a message whose button no longer
// applies.
func (b *Bot) dropButton(ctx context.Context, chat, msg int64) {
	m := editMarkup{ChatID: chat, MessageID: msg, ReplyMarkup: inlineKeyboard{Rows: [][]inlineButton{}}}
	if err := b.callRetry(ctx, "editMessageReplyMarkup", m); err != nil {
		b.log.Debug("telegram remove a button", keyChat, chat, keyErr, err)
	}
}

// Acknowledged shows that p was acknowledged (p.AckedBy, p.AckedAt): the
// messages of the alerts ids say so and lose their button; a held one's
// digest line will. It goes on past an error and returns every one,
// joined.
// The bot shows an ack on the messages it sent for the problem.
var _ transport.Acknowledger = (*Bot)(nil)

func (b *Bot) Acknowledged(ctx context.Context, p alert.Alert, ids []string) error {
	var errs []error
	if b.cfg.Digests != nil {
		if err := b.cfg.Digests.AckTelegramHeld(ids, p.AckedBy, p.AckedAt); err != nil {
			errs = append(errs, fmt.Errorf("telegram: mark the held alerts acknowledged: %w", err))
		}
	}
	if b.cfg.Messages == nil {
		return errors.Join(errs...)
	}
	as, chats, msgs, err := b.cfg.Messages.TelegramMessages(ids)
	if err != nil {
		return errors.Join(append(errs, fmt.Errorf("telegram: read the messages of %s: %w", p.ID, err))...)
	}
	for i, a := range as {
		a.AckedBy, a.AckedAt = p.AckedBy, p.AckedAt
		htmlText, plain := formatAlert(a, b.cfg.Location, b.cfg.Redactor)
		err := b.callRetry(ctx, "editMessageText", editMessage{ChatID: chats[i], MessageID: msgs[i], Text: htmlText, ParseMode: "HTML"})
		var ae *APIError
		if errors.As(err, &ae) && ae.Code == statusBadRequest {
			err = b.callRetry(ctx, "editMessageText", editMessage{ChatID: chats[i], MessageID: msgs[i], Text: plain})
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("telegram: edit the message of alert %s: %w", a.ID, err))
			continue
		}
		b.log.Debug("telegram message edited: acknowledged", keyAlert, a.ID, keyChat, chats[i])
	}
	return errors.Join(errs...)
}

// callRetry calls method, waiting out 429 answers as send does.
func (b *Bot) callRetry(ctx context.Context, method string, params any) error {
	for attempt := 0; ; attempt++ {
		err := b.call(ctx, method, params, nil, sendTimeout)
		var ae *APIError
		if !errors.As(err, &ae) || ae.Code != statusTooManyRequests {
			return err
		}
		if err := b.rateWait(ctx, attempt, ae); err != nil {
			return err
		}
	}
}

// ackLine is the line an acknowledged alert's message ends with.
func ackLine(a alert.Alert, loc *time.Location) string {
	return "☑️ acknowledged by " + a.AckedBy + " at " + a.AckedAt.In(loc).Format(transport.TimeLayout)
}
