package telegram

import (
	"encoding/json"
	"fmt"
	"html"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vigil-iot/vigil/internal/logtest"
)

const testToken = "123456789:AAE-secret_TOKEN-value"

// fakeAPI is an httptest server speaking the Bot API's wire format for the
// methods vigil uses: getMe, sendMessage (with HTML entity parsing and the
// 4096-character limit), getUpdates (offset and long-poll timeout), and
// editMessageText, editMessageReplyMarkup and answerCallbackQuery, which
// it answers ok and records (Calls).
type fakeAPI struct {
	t   *testing.T
	srv *httptest.Server

	mu        sync.Mutex
	sent      []sentMessage // accepted sendMessage requests
	calls     []apiCall     // every request, in order
	updates   []json.RawMessage
	updateIDs []int64
	newUpdate chan struct{}
	// sendHook may answer a sendMessage instead of the default behaviour;
	// n counts sendMessage requests from 0.
	sendHook func(n int, m sendMessage) (status int, body string)
	// pollHook may answer a getUpdates instead of the default behaviour.
	pollHook func(n int) (status int, body string)
	// meHook may answer a getMe instead of the default behaviour; n
	// counts getMe requests from 0.
	meHook func(n int) (status int, body string)
	nSend  int
	nPoll  int
	nMe    int
}

type sentMessage struct {
	ChatID    int64
	Text      string // as sent
	ParseMode string
	Rendered  string // what the user sees after entity parsing
	Markup    any    // reply_markup as sent, nil without one
}

type apiCall struct {
	Method string
	Body   map[string]any
}

func newFakeAPI(t *testing.T) *fakeAPI {
	f := &fakeAPI{t: t, newUpdate: make(chan struct{}, 1)}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.srv.Close)
	return f
}

// pair is a status and a body, so apiErr fits in one argument.
type pair struct {
	status int
	body   string
}

func apiErrPair(code int, desc string) pair {
	s, b := apiErr(code, desc)
	return pair{s, b}
}

func apiReplyPair(w http.ResponseWriter, p pair) { apiReply(w, p.status, p.body) }

func apiReply(w http.ResponseWriter, status int, body string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write([]byte(body))
}

func apiErr(code int, desc string) (int, string) {
	b, _ := json.Marshal(map[string]any{"ok": false, "error_code": code, "description": desc})
	return code, string(b)
}

func (f *fakeAPI) serve(w http.ResponseWriter, r *http.Request) {
	prefix := "/bot" + testToken + "/"
	if !strings.HasPrefix(r.URL.Path, prefix) {
		apiReplyPair(w, apiErrPair(http.StatusUnauthorized, "Unauthorized"))
		return
	}
	method := strings.TrimPrefix(r.URL.Path, prefix)
	var body map[string]any
	dec := json.NewDecoder(r.Body)
	dec.UseNumber()
	if r.Method != http.MethodPost || r.Header.Get("Content-Type") != "application/json" || dec.Decode(&body) != nil {
		apiReplyPair(w, apiErrPair(http.StatusBadRequest, "Bad Request: expected a JSON POST"))
		return
	}
	f.mu.Lock()
	f.calls = append(f.calls, apiCall{method, body})
	f.mu.Unlock()
	switch method {
	case "getMe":
		f.mu.Lock()
		n, hook := f.nMe, f.meHook
		f.nMe++
		f.mu.Unlock()
		if hook != nil {
			if status, b := hook(n); status != 0 {
				apiReply(w, status, b)
				return
			}
		}
		apiReply(w, 200, `{"ok":true,"result":{"id":42424242,"is_bot":true,"first_name":"vigil","username":"vigil_test_bot"}}`)
	case "sendMessage":
		st, b := f.sendMessage(body)
		apiReply(w, st, b)
	case "getUpdates":
		f.getUpdates(w, r, body)
	case "editMessageText", "editMessageReplyMarkup", "answerCallbackQuery":
		apiReply(w, 200, `{"ok":true,"result":true}`)
	default:
		apiReplyPair(w, apiErrPair(http.StatusNotFound, "Not Found"))
	}
}

func (f *fakeAPI) sendMessage(body map[string]any) (int, string) {
	chat := num(body, "chat_id")
	text, _ := body["text"].(string)
	mode, _ := body["parse_mode"].(string)
	if chat == 0 {
		return apiErr(400, "Bad Request: chat_id is empty")
	}
	m := sendMessage{ChatID: chat, Text: text, ParseMode: mode}
	f.mu.Lock()
	n := f.nSend
	f.nSend++
	hook := f.sendHook
	f.mu.Unlock()
	if hook != nil {
		if status, b := hook(n, m); status != 0 {
			return status, b
		}
	}
	rendered := text
	switch mode {
	case "":
	case "HTML":
		var perr error
		rendered, perr = renderHTML(text)
		if perr != nil {
			return apiErr(400, "Bad Request: can't parse entities: "+perr.Error())
		}
	default:
		return apiErr(400, "Bad Request: unsupported parse_mode "+mode)
	}
	if strings.TrimSpace(rendered) == "" {
		return apiErr(400, "Bad Request: message text is empty")
	}
	if len16(rendered) > 4096 {
		return apiErr(400, "Bad Request: message is too long")
	}
	f.mu.Lock()
	f.sent = append(f.sent, sentMessage{chat, text, mode, rendered, body["reply_markup"]})
	id := len(f.sent)
	f.mu.Unlock()
	return 200, fmt.Sprintf(`{"ok":true,"result":{"message_id":%d,"chat":{"id":%d,"type":"private"},"date":1700000000,"text":%q}}`, id, chat, rendered)
}

var (
	htmlTag    = regexp.MustCompile(`^</?(b|strong|i|em|u|ins|s|strike|del|code|pre|tg-spoiler)>`)
	htmlEntity = regexp.MustCompile(`^&(lt|gt|amp|quot|#[0-9]+|#x[0-9a-fA-F]+);`)
)

// renderHTML applies Telegram's HTML parse mode rules: only the supported
// tags, and every '<' and '&' must start a tag or an entity.
func renderHTML(s string) (string, error) {
	var out strings.Builder
	for i := 0; i < len(s); {
		switch s[i] {
		case '<':
			tag := htmlTag.FindString(s[i:])
			if tag == "" {
				return "", fmt.Errorf("unsupported start tag at byte offset %d", i)
			}
			i += len(tag)
		case '&':
			ent := htmlEntity.FindString(s[i:])
			if ent == "" {
				return "", fmt.Errorf("character entity expected at byte offset %d", i)
			}
			out.WriteString(html.UnescapeString(ent))
			i += len(ent)
		case '>':
			return "", fmt.Errorf("unexpected end tag at byte offset %d", i)
		default:
			out.WriteByte(s[i])
			i++
		}
	}
	return out.String(), nil
}

// addUpdate queues a message update from chat with text.
func (f *fakeAPI) addUpdate(id, chat int64, text string) {
	u := fmt.Sprintf(`{"update_id":%d,"message":{"message_id":%d,"from":{"id":%d,"is_bot":false,"first_name":"A"},"chat":{"id":%d,"type":"private"},"date":1700000000,"text":%q}}`,
		id, id, chat, chat, text)
	f.addRawUpdate(id, u)
}

// addCallback queues a press of a button with data on message msg in
// chat, by user (with the @username given, if any).
func (f *fakeAPI) addCallback(id, chat, msg, user int64, username, data string) {
	from := fmt.Sprintf(`{"id":%d,"is_bot":false,"first_name":"Ann","username":%q}`, user, username)
	if username == "" {
		from = fmt.Sprintf(`{"id":%d,"is_bot":false,"first_name":"Ann","last_name":"Lee"}`, user)
	}
	f.addRawUpdate(id, fmt.Sprintf(`{"update_id":%d,"callback_query":{"id":"cb%d","from":%s,"message":{"message_id":%d,"chat":{"id":%d,"type":"private"},"date":1700000000,"text":"alert"},"chat_instance":"1","data":%q}}`,
		id, id, from, msg, chat, data))
}

func (f *fakeAPI) addRawUpdate(id int64, raw string) {
	f.mu.Lock()
	f.updates = append(f.updates, json.RawMessage(raw))
	f.updateIDs = append(f.updateIDs, id)
	f.mu.Unlock()
	select {
	case f.newUpdate <- struct{}{}:
	default:
	}
}

func (f *fakeAPI) getUpdates(w http.ResponseWriter, r *http.Request, body map[string]any) {
	f.mu.Lock()
	n := f.nPoll
	f.nPoll++
	hook := f.pollHook
	f.mu.Unlock()
	if hook != nil {
		if status, b := hook(n); status != 0 {
			apiReply(w, status, b)
			return
		}
	}
	offset, timeout := num(body, "offset"), num(body, "timeout")
	deadline := time.After(time.Duration(timeout) * time.Second)
	for {
		f.mu.Lock()
		// Telegram forgets updates below offset.
		var keep []json.RawMessage
		var keepIDs []int64
		for i, id := range f.updateIDs {
			if id >= offset {
				keep = append(keep, f.updates[i])
				keepIDs = append(keepIDs, id)
			}
		}
		f.updates, f.updateIDs = keep, keepIDs
		out := append([]json.RawMessage(nil), keep...)
		f.mu.Unlock()
		if len(out) > 0 {
			b, _ := json.Marshal(map[string]any{"ok": true, "result": out})
			apiReply(w, 200, string(b))
			return
		}
		select {
		case <-f.newUpdate:
		case <-deadline:
			apiReply(w, 200, `{"ok":true,"result":[]}`)
			return
		case <-r.Context().Done():
			return
		}
	}
}

// num reads an integer field of a decoded request, 0 if absent.
func num(body map[string]any, key string) int64 {
	n, _ := body[key].(json.Number)
	v, _ := n.Int64()
	return v
}

func (f *fakeAPI) Sent() []sentMessage {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]sentMessage(nil), f.sent...)
}

func (f *fakeAPI) Calls(method string) []apiCall {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []apiCall
	for _, c := range f.calls {
		if c.Method == method {
			out = append(out, c)
		}
	}
	return out
}

// fakeState is an in-memory State that counts writes.
type fakeState struct {
	mu         sync.Mutex
	offset     int64
	chats      map[int64]int64
	setOffsets []int64
}

func newFakeState() *fakeState { return &fakeState{chats: map[int64]int64{}} }

func (s *fakeState) Offset() (int64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.offset, nil
}

func (s *fakeState) SetOffset(off int64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.offset = off
	s.setOffsets = append(s.setOffsets, off)
	return nil
}

func (s *fakeState) Chat(configured int64) (int64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if c, ok := s.chats[configured]; ok {
		return c, nil
	}
	return configured, nil
}

func (s *fakeState) SetChat(configured, newID int64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.chats[configured] = newID
	return nil
}

// logBuffer collects log lines for assertions.
type logBuffer = logtest.Buffer
