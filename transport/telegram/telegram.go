// Package telegram sends vigil's alerts to a Telegram chat through the Bot
// API and answers commands from the allowed chats by long polling
// getUpdates: /status, /check, /pause, /resume and /sensors, and the
// management verbs /get, /set, /unset, /toggle, /checklist, /logs and
// /notes, /ack and /rule, which [manage] remote gates (the daemon behind the bot
// refuses what it does not allow, and the reply names the entry). A firing
// problem's message carries an Acknowledge button; an ack, from any
// channel, edits the problem's messages to say who acknowledged it
// (ack.go). A rule the model proposed comes with Approve and Reject
// buttons (proposal.go).
//
// Alerts go out as HTML with the text escaped (never MarkdownV2, which LLM
// text breaks); if Telegram still cannot parse the entities the alert is
// sent once more as plain text. An alert is truncated to Telegram's 4096
// characters (one message per alert keeps delivery all-or-nothing);
// command replies are split instead, into at most five messages. A 429
// answer is honoured by waiting retry_after on the injected clock and trying
// again, up to three times within the caller's context. A group that became a supergroup
// (migrate_to_chat_id) is followed and the new id persisted through State.
//
// The bot token is part of every request URL. No error or log line of this
// package contains it.
package telegram

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"
	"unicode/utf16"

	"github.com/jonboulle/clockwork"

	"github.com/vigil-iot/vigil/alert"
	"github.com/vigil-iot/vigil/schedule"
	"github.com/vigil-iot/vigil/transport"
)

// Defaults for zero values in Config.
const (
	DefaultAPIURL      = "https://api.telegram.org"
	DefaultPollTimeout = 50 * time.Second
	DefaultUserAgent   = "vigil"
)

const (
	maxText        = 4096 // characters (UTF-16 code units) after entity parsing
	maxReplyParts  = 5    // messages in one command reply: 20,480 characters
	sendTimeout    = 30 * time.Second
	maxRateRetries = 3
	minBackoff     = time.Second
	maxBackoff     = 5 * time.Minute
	conflictWait   = 30 * time.Second // another poller holds getUpdates
	commandTimeout = 5 * time.Minute
	maxUnknownLog  = 256 // unknown chats remembered for log-once
)

// Log attribute keys.
const (
	keyErr     = "err"
	keyChat    = "chat"
	keyUser    = "user"
	keyRetryIn = "retry_in"
	keyCommand = "command"
	keyAlert   = "alert"
	keyFailed  = "failed_polls"
)

// Sentinel errors, wrapped by Notify.
var (
	// ErrForbidden: the bot was blocked by the user or removed from the
	// chat. Retrying works once someone unblocks or re-adds it.
	ErrForbidden = errors.New("bot was blocked or removed from the chat")
	// ErrRateLimited: Telegram still answered 429 after the retries, or
	// the context ended while waiting for retry_after.
	ErrRateLimited = errors.New("rate limited")
)

// Config configures a Bot. The token arrives resolved from env or file.
type Config struct {
	APIURL       string // default https://api.telegram.org
	Token        string
	ChatID       int64   // where alerts go
	AllowedChats []int64 // who may send commands; empty disables polling
	// AllowedUsers, when not empty, also restricts commands by sender: in
	// an allowed chat (a group most of all) only these user ids may
	// command. Empty: anyone in an allowed chat may.
	AllowedUsers []int64
	MinSeverity  alert.Severity
	PollTimeout  time.Duration // getUpdates long-poll timeout; default 50s
	UserAgent    string        // default "vigil"
	// Location is the device's time zone: an alert's time is shown in it,
	// as the CLI shows times, and quiet hours are read in it. Nil is UTC.
	Location *time.Location

	// Quiet hours and the cap (digest.go). Quiet, when set, holds alerts
	// below QuietMinSeverity (zero: critical) for one digest at its end;
	// MaxPerHour > 0 folds alert messages beyond that many in the last
	// hour into a digest. Digests keeps what they hold; nil turns both off.
	Quiet            *schedule.Window
	QuietMinSeverity alert.Severity
	MaxPerHour       int
	Digests          Digests

	// Messages remembers which message carried which firing problem
	// (ack.go), so that an ack from any channel edits it; the message has
	// an Acknowledge button too when the alert chat is an allowed chat the
	// bot takes commands from. Nil: no button and no edit.
	Messages Messages

	// Redactor cuts what the bot shortens (an alert's summary, a reply
	// split into messages, a command quoted back) after removing the
	// secrets it knows, so no secret is left in part at a cut; the wiring
	// (cmd/vigil) passes the process's *redact.Redactor. Nil: texts are
	// cut as they are.
	Redactor Redactor
}

// Redactor removes secrets from text before the bot cuts it:
// *redact.Redactor.
type Redactor interface {
	String(s string) string
	ClipUTF16(s string, n int, mark string) string
}

// State persists what the bot learns: the getUpdates offset and chat
// migrations. store.Tx has the matching methods; cmd adapts the DB.
type State interface {
	Offset() (int64, error)
	SetOffset(off int64) error
	// Chat returns the chat that replaced configured, or configured.
	Chat(configured int64) (int64, error)
	SetChat(configured, newID int64) error
}

// Bot is the Telegram transport.
type Bot struct {
	cfg   Config
	state State
	cmds  BotHandler
	hc    *http.Client
	clock clockwork.Clock
	log   *slog.Logger

	mu       sync.Mutex
	username string         // from getMe, for /cmd@username in groups
	unknown  map[int64]bool // chats already logged as not allowed
	strange  map[int64]bool // users already logged as not in AllowedUsers

	// The digest (digest.go). dmu serialises alert messages and digests,
	// so held alerts go out before the ones after them.
	dmu       sync.Mutex
	nudge     chan struct{} // capacity 1: an alert was held
	storedDue time.Time     // the due time last written to Digests
}

// New returns a Bot; state must not be nil. hc may be nil (a plain
// http.Client); its Timeout must be zero or longer than PollTimeout, since
// every request has its own deadline. hc is copied and redirects are not
// followed: a POST is never re-sent to another URL. cmds may be nil when
// AllowedChats is empty. New starts nothing.
func New(cfg Config, state State, cmds BotHandler, hc *http.Client, clock clockwork.Clock, log *slog.Logger) *Bot {
	if cfg.APIURL == "" {
		cfg.APIURL = DefaultAPIURL
	}
	if cfg.PollTimeout <= 0 {
		cfg.PollTimeout = DefaultPollTimeout
	}
	cfg.PollTimeout = max(cfg.PollTimeout, time.Second) // 0 would be short polling in a tight loop
	c := http.Client{}
	if hc != nil {
		c = *hc
	}
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	if cfg.UserAgent == "" {
		cfg.UserAgent = DefaultUserAgent
	}
	if clock == nil {
		clock = clockwork.NewRealClock()
	}
	if cfg.Location == nil {
		cfg.Location = time.UTC
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if cfg.QuietMinSeverity == 0 {
		cfg.QuietMinSeverity = alert.Critical
	}
	return &Bot{cfg: cfg, state: state, cmds: cmds, hc: &c, clock: clock, log: log, unknown: map[int64]bool{}, strange: map[int64]bool{},
		nudge: make(chan struct{}, 1)}
}

// Name identifies the transport's outbox cursor.
func (b *Bot) Name() string { return "telegram" }

// Notify sends the alert to the configured chat and returns nil only when
// Telegram answered "ok": true, or when the alert is held, durably, for a
// digest (quiet hours, max_per_hour: see digest.go). Alerts below
// MinSeverity are acknowledged without sending. An alert Telegram rejects
// even as plain text returns an error wrapping transport.ErrPermanent: the
// caller drops it.
func (b *Bot) Notify(ctx context.Context, a alert.Alert) error {
	if a.Severity < b.cfg.MinSeverity {
		return nil
	}
	if b.cfg.Redactor != nil {
		// Before it is held too: a digest line cuts the summary as well.
		a.Summary = b.cfg.Redactor.String(a.Summary)
	}
	if b.holds() {
		return b.notifyHeld(ctx, a)
	}
	return b.sendAlert(ctx, a)
}

// sendAlert sends one alert as its own message; a firing problem's has
// an Acknowledge button (when buttons are on), and the bot remembers its
// message, for an ack to edit.
func (b *Bot) sendAlert(ctx context.Context, a alert.Alert) error {
	htmlText, plain := formatAlert(a, b.cfg.Location, b.cfg.Redactor)
	var markup *inlineKeyboard
	switch {
	case a.IsProblem() && b.buttons():
		markup = ackKeyboard(a)
	case b.decides(a):
		markup = proposalKeyboard(a.Proposal)
	}
	chat, msg, err := b.deliver(ctx, "alert "+a.ID, htmlText, plain, markup)
	if err != nil || !a.IsProblem() || b.cfg.Messages == nil {
		return err
	}
	if err := b.cfg.Messages.PutTelegramMessage(a, chat, msg); err != nil {
		// Delivered all the same: only an edit on ack is lost.
		b.log.Warn("telegram remember the message of an alert", keyAlert, a.ID, keyErr, err)
	}
	return nil
}

// deliver sends one message (what names it in errors: "alert <id>") to
// the alert chat as HTML, and once more as plain text if Telegram cannot
// parse the HTML, and returns the chat and the message id it went out as.
// Rejected as plain text too, the error wraps transport.ErrPermanent.
func (b *Bot) deliver(ctx context.Context, what, htmlText, plain string, markup *inlineKeyboard) (chat, msg int64, err error) {
	chat, err = b.state.Chat(b.cfg.ChatID)
	if err != nil {
		return 0, 0, fmt.Errorf("telegram: read chat migration: %w", err)
	}
	chat, msg, err = b.send(ctx, sendMessage{ChatID: chat, Text: htmlText, ParseMode: "HTML", ReplyMarkup: markup}, true)
	var ae *APIError
	if errors.As(err, &ae) && ae.Code == statusBadRequest && !chatNotFound(ae) {
		b.log.Warn("telegram rejected the HTML, sending plain text", keyAlert, what, keyErr, err)
		chat, _ = b.state.Chat(b.cfg.ChatID) // a migration may have happened
		chat, msg, err = b.send(ctx, sendMessage{ChatID: chat, Text: plain, ReplyMarkup: markup}, true)
		if errors.As(err, &ae) && ae.Code == statusBadRequest && !chatNotFound(ae) {
			return 0, 0, fmt.Errorf("telegram: send %s: %w: %w", what, transport.ErrPermanent, err)
		}
	}
	switch {
	case err == nil:
		return chat, msg, nil
	case errors.As(err, &ae) && ae.Code == statusForbidden:
		return 0, 0, fmt.Errorf("telegram: send %s to chat %d: %w (unblock the bot or add it back; alerts wait): %w", what, chat, ErrForbidden, err)
	}
	return 0, 0, fmt.Errorf("telegram: send %s: %w", what, err)
}

func chatNotFound(e *APIError) bool {
	return strings.Contains(strings.ToLower(e.Description), "chat not found")
}

// sendMessage is the body of a sendMessage request.
type sendMessage struct {
	ChatID      int64           `json:"chat_id"`
	Text        string          `json:"text"`
	ParseMode   string          `json:"parse_mode,omitempty"`
	ReplyMarkup *inlineKeyboard `json:"reply_markup,omitempty"`
}

// send sends one message and returns the chat it went to and its id. It
// waits out 429 answers (up to maxRateRetries) and follows a chat
// migration once; with persist set, the migration of the configured alert
// chat is saved.
func (b *Bot) send(ctx context.Context, m sendMessage, persist bool) (chat, msg int64, err error) {
	migrated := false
	chat = m.ChatID
	for attempt := 0; ; attempt++ {
		m.ChatID = chat
		var sent struct {
			MessageID int64 `json:"message_id"`
		}
		err := b.call(ctx, "sendMessage", m, &sent, sendTimeout)
		var ae *APIError
		if !errors.As(err, &ae) {
			return chat, sent.MessageID, err
		}
		switch {
		case ae.MigrateTo != 0 && !migrated:
			migrated = true
			b.log.Info("telegram chat migrated to a supergroup", keyChat, chat, "to", ae.MigrateTo)
			if persist {
				if err := b.state.SetChat(b.cfg.ChatID, ae.MigrateTo); err != nil {
					b.log.Error("telegram persist chat migration", keyErr, err)
				}
			}
			chat = ae.MigrateTo
			continue
		case ae.Code == statusTooManyRequests:
			if err := b.rateWait(ctx, attempt, ae); err != nil {
				return chat, 0, err
			}
			continue
		}
		return chat, 0, err
	}
}

// rateWait waits out a 429 answer's retry_after, or returns an error
// wrapping ErrRateLimited after maxRateRetries attempts or when ctx ends.
func (b *Bot) rateWait(ctx context.Context, attempt int, ae *APIError) error {
	if attempt >= maxRateRetries {
		return fmt.Errorf("%w: %w", ErrRateLimited, ae)
	}
	wait := max(ae.RetryAfter, minBackoff)
	b.log.Info("telegram rate limited", keyRetryIn, wait)
	if err := b.sleep(ctx, wait); err != nil {
		return fmt.Errorf("%w: %w: %w", ErrRateLimited, ae, err)
	}
	return nil
}

// sleep waits d on the clock or until ctx ends.
func (b *Bot) sleep(ctx context.Context, d time.Duration) error {
	t := b.clock.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.Chan():
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// formatAlert renders an alert as escaped HTML and as plain text, with the
// summary shortened (by red, after redaction) so that either fits one
// message; its time reads in loc. An acknowledged alert ends with who
// acknowledged it and when.
func formatAlert(a alert.Alert, loc *time.Location, red Redactor) (htmlText, plain string) {
	head, what := headOf(a)
	foot := a.Device
	if a.Time.Year() >= 2020 { // a Pi without RTC may stamp 1970
		foot += " · " + a.Time.In(loc).Format(transport.TimeLayout)
	}
	ack := ""
	if a.AckedBy != "" {
		ack = "\n" + ackLine(a, loc)
	}
	// After entity parsing the HTML is as long as the plain text.
	summary := a.Summary
	if a.Proposal != nil { // its parts, one a line, rather than the summary's one line
		summary = proposalText(a.Proposal, loc)
	}
	overhead := len16(head + " · " + what + "\n" + "\n" + foot + ack)
	summary = clip16(red, summary, maxText-overhead)
	plain = head + " · " + what + "\n" + summary + "\n" + foot + ack
	htmlText = "<b>" + esc(head) + "</b> · " + esc(what) + "\n" + esc(summary) + "\n<i>" + esc(foot) + "</i>" + esc(ack)
	return htmlText, plain
}

// headOf returns an alert's header, "🔴 CRITICAL", "✅ RESOLVED" or
// "ℹ️ NOTICE", and what raised it: its rule, or its source.
func headOf(a alert.Alert) (head, what string) {
	what = a.Name()
	head = severityMark(a.Severity) + " " + strings.ToUpper(a.Severity.String())
	switch {
	case a.State == alert.StateResolved:
		head = "✅ RESOLVED"
	case a.IsNotice(): // an event, not a problem of its severity
		head = "ℹ️ NOTICE"
	}
	return head, what
}

func severityMark(s alert.Severity) string {
	switch s {
	case alert.Critical:
		return "🔴"
	case alert.Warning:
		return "🟠"
	}
	return "🔵"
}

// esc escapes the three characters Telegram's HTML mode requires.
var esc = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace

// len16 is the length Telegram counts: UTF-16 code units. Invalid UTF-8
// counts as U+FFFD, which is what JSON encoding turns it into.
func len16(s string) int {
	n := 0
	for _, r := range s {
		n += utf16.RuneLen(r)
	}
	return n
}

// cutMark marks where the bot cut a text.
const cutMark = "… (truncated)"

// truncate16 shortens s to at most n UTF-16 code units, marking the cut.
func truncate16(s string, n int) string {
	if len16(s) <= n {
		return s
	}
	return s[:prefix16(s, max(n-len16(cutMark), 0))] + cutMark
}

// clip16 is truncate16 by red: outside text is redacted before it is cut,
// so no secret is left in part (redact.ClipUTF16). Nil red: truncate16.
func clip16(red Redactor, s string, n int) string {
	if red == nil {
		return truncate16(s, n)
	}
	return red.ClipUTF16(s, n, cutMark)
}

// prefix16 returns the byte length of the longest prefix of s that has at
// most n UTF-16 code units and ends on a rune boundary.
func prefix16(s string, n int) int {
	used := 0
	for i, r := range s {
		w := utf16.RuneLen(r)
		if used+w > n {
			return i
		}
		used += w
	}
	return len(s)
}

// split cuts s into pieces of at most n UTF-16 code units (n >= 2), at the
// last newline when one is in the second half of a piece.
func split(s string, n int) []string {
	var out []string
	for len16(s) > n {
		cut := prefix16(s, n)
		if nl := strings.LastIndexByte(s[:cut], '\n'); nl >= 0 && len16(s[:nl+1]) > n/2 {
			cut = nl + 1
		}
		out = append(out, s[:cut])
		s = s[cut:]
	}
	if s != "" {
		out = append(out, s)
	}
	return out
}
