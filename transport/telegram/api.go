package telegram

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// Bot API wire format: https://core.telegram.org/bots/api#making-requests

const maxResponse = 8 << 20 // getUpdates answers up to 100 updates

// HTTP status codes (and error_code values) the bot tells apart.
const (
	statusBadRequest      = http.StatusBadRequest
	statusForbidden       = http.StatusForbidden
	statusConflict        = http.StatusConflict
	statusTooManyRequests = http.StatusTooManyRequests
)

// response is the envelope of every Bot API answer.
type response struct {
	OK          bool            `json:"ok"`
	Result      json.RawMessage `json:"result"`
	ErrorCode   int             `json:"error_code"`
	Description string          `json:"description"`
	Parameters  *struct {
		MigrateToChatID int64 `json:"migrate_to_chat_id"`
		RetryAfter      int64 `json:"retry_after"` // seconds
	} `json:"parameters"`
}

// APIError is an answer with "ok": false.
type APIError struct {
	Method      string
	Code        int    // error_code, usually the HTTP status
	Description string // "Bad Request: chat not found"
	RetryAfter  time.Duration
	MigrateTo   int64 // the supergroup a group chat became
}

func (e *APIError) Error() string {
	s := fmt.Sprintf("%s: %d %s", e.Method, e.Code, e.Description)
	if e.RetryAfter > 0 {
		s += fmt.Sprintf(" (retry after %v)", e.RetryAfter)
	}
	return s
}

// redactedError carries a message with the token removed. It unwraps to
// the underlying cause only when that cause's text is free of the token
// too, so errors.Is(err, context.Canceled) keeps working.
type redactedError struct {
	msg   string
	cause error
}

func (e *redactedError) Error() string { return e.msg }
func (e *redactedError) Unwrap() error { return e.cause }

// redact removes the token from err's text. The token is part of every
// request URL; call already replaces net/http's *url.Error, which quotes
// the URL, by the host alone, and this is the second line of defence.
func (b *Bot) redact(err error) error {
	if err == nil || b.cfg.Token == "" || !strings.Contains(err.Error(), b.cfg.Token) { // not a match of the error's kind: the token is cut out of whatever text holds it
		return err
	}
	var cause error
	for c := errors.Unwrap(err); c != nil; c = errors.Unwrap(c) {
		if !strings.Contains(c.Error(), b.cfg.Token) { // the first cause free of the token: no match of a kind either
			cause = c
			break
		}
	}
	return &redactedError{msg: strings.ReplaceAll(err.Error(), b.cfg.Token, "<token>"), cause: cause}
}

// call POSTs params as JSON to method and decodes the result into out (if
// not nil). It returns nil only for "ok": true; *APIError for "ok": false.
// No error it returns contains the token.
func (b *Bot) call(ctx context.Context, method string, params, out any, timeout time.Duration) error {
	body, err := json.Marshal(params)
	if err != nil {
		return fmt.Errorf("%s: encode: %w", method, err)
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	u := strings.TrimRight(b.cfg.APIURL, "/") + "/bot" + b.cfg.Token + "/" + method
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, bytes.NewReader(body))
	if err != nil {
		return b.redact(fmt.Errorf("%s: %w", method, hostOnly(err)))
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", b.cfg.UserAgent)
	resp, err := b.hc.Do(req)
	if err != nil {
		return b.redact(fmt.Errorf("%s: %w", method, hostOnly(err)))
	}
	defer resp.Body.Close()
	// Decode what fits: a cut answer is not a Bot API response.
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxResponse))
	if err != nil {
		return b.redact(fmt.Errorf("%s: read response: %w", method, err))
	}
	r, err := decodeResponse(raw)
	if err != nil {
		return b.redact(fmt.Errorf("%s: http %d: %w", method, resp.StatusCode, err))
	}
	if !r.OK {
		e := &APIError{Method: method, Code: r.ErrorCode, Description: r.Description}
		if e.Code == 0 {
			e.Code = resp.StatusCode
		}
		if p := r.Parameters; p != nil {
			e.MigrateTo = p.MigrateToChatID
			if p.RetryAfter > 0 {
				e.RetryAfter = time.Duration(min(p.RetryAfter, maxRetryAfterSeconds)) * time.Second
			}
		}
		e.Description = b.redact(errors.New(e.Description)).Error()
		return e
	}
	if out != nil {
		if err := json.Unmarshal(r.Result, out); err != nil {
			return b.redact(fmt.Errorf("%s: decode result: %w", method, err))
		}
	}
	return nil
}

const maxRetryAfterSeconds = 3600

// hostOnly replaces net/http's *url.Error, whose text quotes the request
// URL and with it the token, by "post <host>: <cause>". The cause still
// unwraps, so errors.Is(err, context.Canceled) keeps working.
func hostOnly(err error) error {
	var ue *url.Error
	if !errors.As(err, &ue) {
		return err
	}
	host := "?"
	if u, perr := url.Parse(ue.URL); perr == nil {
		host = u.Host
	}
	return fmt.Errorf("%s %s: %w", strings.ToLower(ue.Op), host, ue.Err)
}

// decodeResponse decodes a Bot API envelope.
func decodeResponse(raw []byte) (response, error) {
	var r response
	if err := json.Unmarshal(raw, &r); err != nil {
		return response{}, fmt.Errorf("not a Bot API response: %w", err)
	}
	if !r.OK && r.ErrorCode == 0 && r.Description == "" {
		return response{}, errors.New(`not a Bot API response: no "ok" and no error`)
	}
	return r, nil
}

// update is the part of a getUpdates entry vigil reads.
type update struct {
	UpdateID      int64          `json:"update_id"`
	Message       *message       `json:"message"`
	CallbackQuery *callbackQuery `json:"callback_query"` // a press of a message's button
}

// user is a message's sender or the one who pressed a button.
type user struct {
	ID        int64  `json:"id"`
	FirstName string `json:"first_name"`
	LastName  string `json:"last_name"`
	Username  string `json:"username"`
}

// name is how an ack names the user: @username, or the first and last
// name ("" when Telegram gave neither).
func (u *user) name() string {
	if u == nil {
		return ""
	}
	if u.Username != "" {
		return "@" + u.Username
	}
	return strings.TrimSpace(u.FirstName + " " + u.LastName)
}

// callbackQuery is a press of an inline keyboard's button: who pressed it
// (From), on which message (absent for a message sent via inline mode,
// which vigil never sends) and the button's callback_data.
type callbackQuery struct {
	ID      string   `json:"id"`
	From    user     `json:"from"`
	Message *message `json:"message"`
	Data    string   `json:"data"`
}

type message struct {
	MessageID int64 `json:"message_id"`
	From      *user `json:"from"` // the sender; absent in channels
	Chat      struct {
		ID   int64  `json:"id"`
		Type string `json:"type"`
	} `json:"chat"`
	Text            string `json:"text"`
	MigrateToChatID int64  `json:"migrate_to_chat_id"`

	// A forward (forward_origin since Bot API 7.0, the forward_* fields
	// before it) or a message sent on behalf of a chat (a channel, an
	// anonymous group admin: sender_chat) is never a command.
	ForwardOrigin      json.RawMessage `json:"forward_origin"`
	ForwardFrom        json.RawMessage `json:"forward_from"`
	ForwardFromChat    json.RawMessage `json:"forward_from_chat"`
	ForwardSenderName  string          `json:"forward_sender_name"`
	ForwardDate        int64           `json:"forward_date"`
	IsAutomaticForward bool            `json:"is_automatic_forward"`
	SenderChat         *struct {
		ID int64 `json:"id"`
	} `json:"sender_chat"`
}

// notFromSender names why m is not a person's own message, or is "".
func (m *message) notFromSender() string {
	switch {
	case m.IsAutomaticForward || len(m.ForwardOrigin) > 0 || len(m.ForwardFrom) > 0 || len(m.ForwardFromChat) > 0 ||
		m.ForwardSenderName != "" || m.ForwardDate != 0:
		return "forwarded"
	case m.SenderChat != nil:
		return "sent on behalf of a chat"
	}
	return ""
}

// decodeUpdates decodes a whole getUpdates answer.
func decodeUpdates(raw []byte) ([]update, error) {
	r, err := decodeResponse(raw)
	if err != nil {
		return nil, err
	}
	if !r.OK {
		return nil, &APIError{Method: "getUpdates", Code: r.ErrorCode, Description: r.Description}
	}
	var ups []update
	if err := json.Unmarshal(r.Result, &ups); err != nil {
		return nil, fmt.Errorf("getUpdates: decode result: %w", err)
	}
	return ups, nil
}
