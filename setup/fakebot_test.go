package setup

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// Tokens of the fake Bot API: the good one and one it refuses.
const (
	goodToken = "123456789:AAH-good-token_xxxxxxxxxxxxxxxxxxxxxx"
	badToken  = "123456789:AAH-wrong-token_xxxxxxxxxxxxxxxxxxxxx"
	botName   = "vigil_test_bot"
)

// fakeBot is a Bot API on an httptest server: getMe, getUpdates (with
// offset and long polling, as Telegram serves them) and sendMessage,
// answering 401 to any token but goodToken.
type fakeBot struct {
	t   *testing.T
	srv *httptest.Server

	mu       sync.Mutex
	updates  []map[string]any // queued, oldest first
	nextID   int64
	offsets  []int64 // the offset of every getUpdates, in order
	sent     []map[string]any
	arrived  chan struct{} // closed and replaced when an update is queued
	conflict bool          // getUpdates answers 409
	hang     bool          // getMe never answers (until the request ends)
}

func newFakeBot(t *testing.T) *fakeBot {
	f := &fakeBot{t: t, nextID: 100, arrived: make(chan struct{})}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.srv.Close)
	return f
}

// message queues a message update from user in chat.
func (f *fakeBot) message(chat, user int64, text string, extra map[string]any) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.nextID++
	m := map[string]any{
		"message_id": f.nextID, "date": 1700000000, "text": text,
		"chat": map[string]any{"id": chat, "type": chatType(chat)},
		"from": map[string]any{"id": user, "is_bot": false, "first_name": "Ada", "username": "ada"},
	}
	for k, v := range extra {
		m[k] = v
	}
	f.updates = append(f.updates, map[string]any{"update_id": f.nextID, "message": m})
	close(f.arrived)
	f.arrived = make(chan struct{})
}

func chatType(chat int64) string {
	if chat < 0 {
		return "supergroup"
	}
	return "private"
}

func (f *fakeBot) reply(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func (f *fakeBot) serve(w http.ResponseWriter, r *http.Request) {
	token, method, ok := strings.Cut(strings.TrimPrefix(r.URL.Path, "/bot"), "/")
	if !ok || token != goodToken {
		f.reply(w, http.StatusUnauthorized, map[string]any{"ok": false, "error_code": 401, "description": "Unauthorized"})
		return
	}
	var body struct {
		Offset  int64  `json:"offset"`
		Timeout int64  `json:"timeout"`
		ChatID  int64  `json:"chat_id"`
		Text    string `json:"text"`
	}
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
		f.reply(w, http.StatusBadRequest, map[string]any{"ok": false, "error_code": 400, "description": "Bad Request: " + err.Error()})
		return
	}
	switch method {
	case "getMe":
		f.mu.Lock()
		hang := f.hang
		f.mu.Unlock()
		if hang {
			<-r.Context().Done()
			return
		}
		f.reply(w, http.StatusOK, map[string]any{"ok": true, "result": map[string]any{"id": 42, "is_bot": true, "first_name": "Vigil", "username": botName}})
	case "getUpdates":
		f.getUpdates(w, r, body.Offset, body.Timeout)
	case "sendMessage":
		f.mu.Lock()
		f.sent = append(f.sent, map[string]any{"chat_id": body.ChatID, "text": body.Text})
		f.mu.Unlock()
		f.reply(w, http.StatusOK, map[string]any{"ok": true, "result": map[string]any{"message_id": 7, "chat": map[string]any{"id": body.ChatID}}})
	default:
		f.reply(w, http.StatusNotFound, map[string]any{"ok": false, "error_code": 404, "description": "Not Found"})
	}
}

// getUpdates answers as Telegram does: offset -1 is the last update (and
// forgets the older ones), a positive offset confirms everything before
// it; with nothing to give it waits up to timeout seconds.
func (f *fakeBot) getUpdates(w http.ResponseWriter, r *http.Request, offset, timeout int64) {
	f.mu.Lock()
	f.offsets = append(f.offsets, offset)
	if f.conflict {
		f.mu.Unlock()
		f.reply(w, http.StatusConflict, map[string]any{"ok": false, "error_code": 409, "description": "Conflict: terminated by other getUpdates request; make sure that only one bot instance is running"})
		return
	}
	f.mu.Unlock()
	deadline := time.NewTimer(time.Duration(timeout) * time.Second)
	defer deadline.Stop()
	for {
		f.mu.Lock()
		var out []map[string]any
		switch {
		case offset < 0 && len(f.updates) > 0:
			out = f.updates[len(f.updates)-1:]
		case offset >= 0:
			for _, u := range f.updates {
				if u["update_id"].(int64) >= offset {
					out = append(out, u)
				}
			}
		}
		arrived := f.arrived
		f.mu.Unlock()
		if len(out) > 0 || timeout == 0 {
			f.reply(w, http.StatusOK, map[string]any{"ok": true, "result": out})
			return
		}
		select {
		case <-arrived:
		case <-deadline.C:
			timeout = 0
		case <-r.Context().Done():
			return
		}
	}
}

// polled waits until getUpdates was asked n times.
func (f *fakeBot) polled(n int) {
	f.t.Helper()
	for i := 0; i < 500; i++ {
		f.mu.Lock()
		got := len(f.offsets)
		f.mu.Unlock()
		if got >= n {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	f.t.Fatalf("getUpdates was not asked %d times", n)
}

func (f *fakeBot) String() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return fmt.Sprintf("offsets %v, sent %v", f.offsets, f.sent)
}
