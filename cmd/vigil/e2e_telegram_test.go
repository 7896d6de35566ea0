package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

const botToken = "4242:e2e-SECRET_token"

// botAPI is a local Bot API server for getMe, sendMessage and getUpdates,
// and editMessageText, editMessageReplyMarkup and answerCallbackQuery,
// which it records.
// Unlike Telegram it never forgets an update: getUpdates returns every
// update at or after the offset asked for, so a daemon that lost its offset
// would see (and execute) old commands again.
type botAPI struct {
	t   *testing.T
	srv *httptest.Server

	mu      sync.Mutex
	sent    []botSent
	updates []botUpdate
	offsets []int64       // offset of every getUpdates, in order
	added   chan struct{} // closed and replaced when an update is added
	edits   []botSent     // editMessageText and editMessageReplyMarkup
	answers []string      // the texts of answerCallbackQuery
}

type botSent struct {
	Chat      int64
	Text      string
	ParseMode string
	Markup    string // reply_markup as sent; "" without one
	ID        int64  // the message's id (sent) or the one edited
}

// botUpdate is a message from Chat, as Chat (a private chat), or with
// Data a press of the button with that callback_data on message MsgID by
// user From (@User).
type botUpdate struct {
	ID   int64
	Chat int64
	Text string

	Data  string
	MsgID int64
	From  int64
	User  string
}

// telegramConfig is a [telegram] section talking to the fake Bot API at
// apiURL, sending to and taking commands from chat; the token comes from
// VIGIL_E2E_TG_TOKEN (pass "VIGIL_E2E_TG_TOKEN="+botToken to the daemon).
func telegramConfig(chat int64, apiURL string) string {
	return fmt.Sprintf(`
[telegram]
token_env = "VIGIL_E2E_TG_TOKEN"
chat_id = %d
allowed_chats = [%d]
api_url = %q
`, chat, chat, apiURL)
}

func newBotAPI(t *testing.T) *botAPI {
	b := &botAPI{t: t, added: make(chan struct{})}
	b.srv = httptest.NewServer(http.HandlerFunc(b.serve))
	t.Cleanup(b.srv.Close)
	return b
}

func botReply(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

func (b *botAPI) serve(w http.ResponseWriter, r *http.Request) {
	method, ok := strings.CutPrefix(r.URL.Path, "/bot"+botToken+"/")
	if !ok {
		botReply(w, 401, map[string]any{"ok": false, "error_code": 401, "description": "Unauthorized"})
		return
	}
	var body struct {
		ChatID    int64           `json:"chat_id"`
		Text      string          `json:"text"`
		ParseMode string          `json:"parse_mode"`
		Offset    int64           `json:"offset"`
		Timeout   int64           `json:"timeout"`
		MessageID int64           `json:"message_id"`
		Markup    json.RawMessage `json:"reply_markup"`
		QueryID   string          `json:"callback_query_id"`
	}
	if r.Method != http.MethodPost || json.NewDecoder(r.Body).Decode(&body) != nil {
		botReply(w, 400, map[string]any{"ok": false, "error_code": 400, "description": "Bad Request: expected a JSON POST"})
		return
	}
	switch method {
	case "getMe":
		botReply(w, 200, map[string]any{"ok": true, "result": map[string]any{
			"id": 4242, "is_bot": true, "first_name": "vigil", "username": "vigil_e2e_bot"}})
	case "sendMessage":
		if body.ChatID == 0 || body.Text == "" {
			botReply(w, 400, map[string]any{"ok": false, "error_code": 400, "description": "Bad Request: chat_id and text are required"})
			return
		}
		b.mu.Lock()
		n := int64(len(b.sent) + 1)
		b.sent = append(b.sent, botSent{body.ChatID, body.Text, body.ParseMode, string(body.Markup), n})
		b.mu.Unlock()
		botReply(w, 200, map[string]any{"ok": true, "result": map[string]any{
			"message_id": n, "date": time.Now().Unix(), "chat": map[string]any{"id": body.ChatID, "type": "private"}, "text": body.Text}})
	case "getUpdates":
		b.getUpdates(w, r, body.Offset, body.Timeout)
	case "editMessageText", "editMessageReplyMarkup":
		b.mu.Lock()
		b.edits = append(b.edits, botSent{body.ChatID, body.Text, body.ParseMode, string(body.Markup), body.MessageID})
		b.mu.Unlock()
		botReply(w, 200, map[string]any{"ok": true, "result": true})
	case "answerCallbackQuery":
		b.mu.Lock()
		b.answers = append(b.answers, body.QueryID+": "+body.Text)
		b.mu.Unlock()
		botReply(w, 200, map[string]any{"ok": true, "result": true})
	default:
		botReply(w, 404, map[string]any{"ok": false, "error_code": 404, "description": "Not Found"})
	}
}

// getUpdates long-polls: it answers as soon as there is an update at or
// after offset, or with none after the timeout (at most 2s here).
func (b *botAPI) getUpdates(w http.ResponseWriter, r *http.Request, offset, timeout int64) {
	b.mu.Lock()
	b.offsets = append(b.offsets, offset)
	b.mu.Unlock()
	deadline := time.After(min(time.Duration(timeout)*time.Second, 2*time.Second))
	for {
		b.mu.Lock()
		var res []map[string]any
		for _, u := range b.updates {
			if u.ID >= offset && u.Data != "" {
				res = append(res, map[string]any{"update_id": u.ID, "callback_query": map[string]any{
					"id": fmt.Sprint("cb", u.ID), "data": u.Data, "chat_instance": "1",
					"from":    map[string]any{"id": u.From, "is_bot": false, "first_name": "Ann", "username": u.User},
					"message": map[string]any{"message_id": u.MsgID, "date": time.Now().Unix(), "chat": map[string]any{"id": u.Chat, "type": "private"}}}})
			} else if u.ID >= offset {
				res = append(res, map[string]any{"update_id": u.ID, "message": map[string]any{
					"message_id": u.ID, "date": time.Now().Unix(), "text": u.Text,
					"chat": map[string]any{"id": u.Chat, "type": "private"},
					"from": map[string]any{"id": u.Chat, "is_bot": false, "first_name": "someone"}}})
			}
		}
		added := b.added
		b.mu.Unlock()
		if len(res) > 0 {
			botReply(w, 200, map[string]any{"ok": true, "result": res})
			return
		}
		select {
		case <-added:
		case <-deadline:
			botReply(w, 200, map[string]any{"ok": true, "result": []any{}})
			return
		case <-r.Context().Done():
			return
		}
	}
}

func (b *botAPI) addUpdate(u botUpdate) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.updates = append(b.updates, u)
	close(b.added)
	b.added = make(chan struct{})
}

// sentTo returns the messages sent to chat whose text contains sub.
func (b *botAPI) sentTo(chat int64, sub string) []botSent {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []botSent
	for _, m := range b.sent {
		if m.Chat == chat && strings.Contains(m.Text, sub) {
			out = append(out, m)
		}
	}
	return out
}

func (b *botAPI) waitSent(chat int64, sub string, timeout time.Duration) botSent {
	b.t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		if got := b.sentTo(chat, sub); len(got) > 0 {
			return got[0]
		}
		if time.Now().After(deadline) {
			b.mu.Lock()
			defer b.mu.Unlock()
			b.t.Fatalf("no message containing %q to chat %d within %v; sent: %+v", sub, chat, timeout, b.sent)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// pollsFrom returns the offsets of the getUpdates calls from the ith on.
func (b *botAPI) pollsFrom(i int) []int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]int64(nil), b.offsets[min(i, len(b.offsets)):]...)
}

// waitPoll waits for a getUpdates (the ith or later) asking for offset.
func (b *botAPI) waitPoll(i int, offset int64, timeout time.Duration) {
	b.t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		for _, o := range b.pollsFrom(i) {
			if o == offset {
				return
			}
		}
		if time.Now().After(deadline) {
			b.t.Fatalf("no getUpdates with offset %d within %v; offsets: %v", offset, timeout, b.pollsFrom(0))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestTelegramAlertsCommandsAndOffset(t *testing.T) {
	t.Parallel()
	const allowed, stranger = 1001, 666
	api := newBotAPI(t)
	cfg := writeConfig(t, t.TempDir(), steadySensors+telegramConfig(allowed, api.srv.URL))
	d := startDaemon(t, cfg, "VIGIL_E2E_TG_TOKEN="+botToken)

	// The rule's alert arrives as escaped HTML in the alert chat.
	defer func() { d.logIfFailed(t) }()
	m := api.waitSent(allowed, "always", 15*time.Second)
	if m.ParseMode != "HTML" || !strings.Contains(m.Text, "CRITICAL") || !strings.Contains(m.Text, "pressure at ") {
		t.Errorf("alert message = %+v", m)
	}
	api.waitPoll(0, 0, 10*time.Second)

	// /status from the allowed chat is answered; the stranger gets nothing.
	api.addUpdate(botUpdate{ID: 500, Chat: allowed, Text: "/status"})
	api.addUpdate(botUpdate{ID: 501, Chat: stranger, Text: "/status"})
	api.waitSent(allowed, "device:   e2e", 10*time.Second)
	api.waitPoll(0, 502, 10*time.Second) // the batch was handled and its offset committed
	d.waitLog(t, regexp.MustCompile(`msg="telegram message from a chat not in allowed_chats ignored" .*chat=666`), 5*time.Second)
	if got := api.sentTo(stranger, ""); len(got) != 0 {
		t.Errorf("the stranger's chat got messages: %+v", got)
	}
	d.kill()
	logs := d.logText()

	// After a power cut the daemon resumes at the persisted offset: the
	// old /status is not executed again, a new command is.
	polls := len(api.pollsFrom(0))
	d = startDaemon(t, cfg, "VIGIL_E2E_TG_TOKEN="+botToken)
	api.waitPoll(polls, 502, 10*time.Second)
	if first := api.pollsFrom(polls)[0]; first != 502 {
		t.Errorf("first getUpdates after the restart asked for offset %d, want 502", first)
	}
	api.addUpdate(botUpdate{ID: 502, Chat: allowed, Text: "/sensors"})
	api.waitSent(allowed, "air.temperature", 10*time.Second)
	api.waitPoll(polls, 503, 10*time.Second)
	if n := len(api.sentTo(allowed, "device:   e2e")); n != 1 {
		t.Errorf("/status answered %d times, want once (re-executed after the restart?)", n)
	}
	if n := len(api.sentTo(allowed, "pressure at ")); n != 1 {
		t.Errorf("the alert was sent %d times, want once (acknowledged, and the rule still fires after the restart)", n)
	}
	if logs += d.logText(); strings.Contains(logs, botToken) || strings.Contains(logs, "SECRET") {
		t.Errorf("the bot token appears in the log:\n%s", logs)
	}
}

// editsOf returns the edits of message id in chat.
func (b *botAPI) editsOf(chat, id int64) []botSent {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []botSent
	for _, e := range b.edits {
		if e.Chat == chat && e.ID == id {
			out = append(out, e)
		}
	}
	return out
}

// waitAnswers waits until n button presses were answered and returns
// the answers ("cb<update id>: text").
func (b *botAPI) waitAnswers(n int, timeout time.Duration) []string {
	b.t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		b.mu.Lock()
		got := append([]string(nil), b.answers...)
		b.mu.Unlock()
		if len(got) >= n {
			return got
		}
		if time.Now().After(deadline) {
			b.t.Fatalf("%d button presses answered within %v, want %d: %q", len(got), timeout, n, got)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
