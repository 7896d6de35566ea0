package setup

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

func TestCheckBot(t *testing.T) {
	f := newFakeBotAPI(t)
	got, err := CheckBot(context.Background(), BotAPI{URL: f.srv.URL, Token: goodToken})
	if err != nil {
		t.Fatal(err)
	}
	if got.Username != botName || got.ID != 42 || got.Name != "Vigil" {
		t.Errorf("CheckBot = %+v, want @%s, id 42, Vigil", got, botName)
	}
}

// A wrong token: the Bot API's 401 says what to do, and neither the error
// nor a log line carries the token.
func TestCheckBotRefusedToken(t *testing.T) {
	f := newFakeBotAPI(t)
	var logs bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	for _, tc := range []struct {
		name, token, want string
	}{
		{"401", badToken, "the Bot API refused the token (401 Unauthorized): copy it again from @BotFather"},
		{"not a token", "12345:abc/def ghi", "the Bot API refused the token: it is not shaped like a bot token"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := CheckBot(context.Background(), BotAPI{URL: f.srv.URL, Token: tc.token, Log: log})
			if !errors.Is(err, ErrTokenRefused) {
				t.Fatalf("CheckBot = %v, want ErrTokenRefused", err)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("CheckBot = %q, want it to say %q", err, tc.want)
			}
			secret := tc.token[strings.Index(tc.token, ":")+1:]
			if strings.Contains(err.Error(), secret) || strings.Contains(logs.String(), secret) {
				t.Errorf("the token leaked: error %q, logs %q", err, logs.String())
			}
		})
	}
	// WaitStart checks the token the same way before it waits.
	_, err := WaitStart(context.Background(), BotAPI{URL: f.srv.URL, Token: badToken, Log: log}, time.Minute)
	if !errors.Is(err, ErrTokenRefused) || strings.Contains(err.Error(), badToken) {
		t.Errorf("WaitStart with a wrong token = %v, want ErrTokenRefused without the token", err)
	}
}

// A Bot API that does not answer: the error names it, not the token.
func TestCheckBotNoAnswer(t *testing.T) {
	f := newFakeBotAPI(t)
	f.hang = true
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	_, err := CheckBot(ctx, BotAPI{URL: f.srv.URL, Token: goodToken})
	if err == nil || !strings.Contains(err.Error(), "the Bot API at "+f.srv.URL+" did not answer getMe") {
		t.Fatalf("CheckBot = %v, want it to say the Bot API did not answer", err)
	}
	if strings.Contains(err.Error(), goodToken) {
		t.Errorf("the token leaked: %q", err)
	}
}

// The wait: a /start sent before it began is not the one; an unrelated
// message, a forward and a /start for another bot are passed over; the
// /start that follows gives the chat and the person, and is confirmed.
func TestWaitStart(t *testing.T) {
	f := newFakeBotAPI(t)
	f.message(555, 555, "/start", nil) // before the wait: someone else's
	api := BotAPI{URL: f.srv.URL, Token: goodToken, PollTimeout: time.Second}
	type result struct {
		s   Started
		err error
	}
	done := make(chan result, 1)
	go func() {
		s, err := WaitStart(context.Background(), api, 30*time.Second)
		done <- result{s, err}
	}()
	f.polled(2) // the last update, then the long poll
	f.message(-100777, 7, "hello", nil)
	f.message(-100777, 8, "/start", map[string]any{"forward_origin": map[string]any{"type": "user"}})
	f.message(-100777, 9, "/start@other_bot", nil)
	f.message(-100777, 7, "/start@"+botName, nil)
	f.message(-100777, 10, "/start", nil) // after: not the one
	r := <-done
	if r.err != nil {
		t.Fatalf("WaitStart: %v (%v)", r.err, f)
	}
	want := Started{ChatID: -100777, ChatType: "supergroup", UserID: 7, User: "@ada"}
	if r.s != want {
		t.Errorf("WaitStart = %+v, want %+v", r.s, want)
	}
	f.mu.Lock()
	offsets := append([]int64(nil), f.offsets...)
	f.mu.Unlock()
	if offsets[0] != -1 || offsets[1] != 102 {
		t.Errorf("getUpdates offsets %v: want -1 (skip what came before), then 102", offsets)
	}
	if last := offsets[len(offsets)-1]; last != 106 {
		t.Errorf("the last getUpdates offset is %d, want 106: the /start (105) confirmed", last)
	}
	f.mu.Lock()
	sent := f.sent
	f.mu.Unlock()
	if len(sent) != 1 || sent[0]["chat_id"] != int64(-100777) || !strings.HasPrefix(sent[0]["text"].(string), "vigil: got it.") {
		t.Errorf("the bot said %v, want one answer to chat -100777", sent)
	}
}

// Nobody sends /start: the wait ends with ErrNoStart, naming the bot and
// the way around it.
func TestWaitStartNobody(t *testing.T) {
	f := newFakeBotAPI(t)
	api := BotAPI{URL: f.srv.URL, Token: goodToken, PollTimeout: time.Second}
	_, err := WaitStart(context.Background(), api, 1500*time.Millisecond)
	if !errors.Is(err, ErrNoStart) {
		t.Fatalf("WaitStart = %v, want ErrNoStart", err)
	}
	for _, want := range []string{"no /start arrived within 1.5s", "send /start to @" + botName, "--telegram-chat"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("WaitStart = %q, want it to say %q", err, want)
		}
	}
}

// A SIGTERM (or Ctrl-C) ends the wait at once, with ctx's error.
func TestWaitStartSignal(t *testing.T) {
	f := newFakeBotAPI(t)
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
	defer stop()
	done := make(chan error, 1)
	go func() {
		_, err := WaitStart(ctx, BotAPI{URL: f.srv.URL, Token: goodToken, PollTimeout: 50 * time.Second}, time.Hour)
		done <- err
	}()
	f.polled(2)
	if err := syscall.Kill(syscall.Getpid(), syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) || errors.Is(err, ErrNoStart) {
			t.Errorf("WaitStart after SIGTERM = %v, want context.Canceled", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("WaitStart did not return after SIGTERM")
	}
}

// Another poller holds the bot (a running vigil): 409 says so.
func TestWaitStartConflict(t *testing.T) {
	f := newFakeBotAPI(t)
	f.conflict = true
	_, err := WaitStart(context.Background(), BotAPI{URL: f.srv.URL, Token: goodToken, PollTimeout: time.Second}, time.Minute)
	if !errors.Is(err, ErrBotBusy) || !strings.Contains(err.Error(), "systemctl stop vigil") {
		t.Errorf("WaitStart = %v, want ErrBotBusy naming systemctl stop vigil", err)
	}
}

// Tokens of the fake Bot API: the good one and one it refuses.
const (
	goodToken = "123456789:AAH-good-token_xxxxxxxxxxxxxxxxxxxxxx"
	badToken  = "123456789:AAH-wrong-token_xxxxxxxxxxxxxxxxxxxxx"
	botName   = "vigil_test_bot"
)

// fakeBotAPI is a Bot API on an httptest server: getMe, getUpdates (with
// offset and long polling, as Telegram serves them) and sendMessage,
// answering 401 to any token but goodToken.
type fakeBotAPI struct {
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

func newFakeBotAPI(t *testing.T) *fakeBotAPI {
	f := &fakeBotAPI{t: t, nextID: 100, arrived: make(chan struct{})}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.srv.Close)
	return f
}

// message queues a message update from user in chat.
func (f *fakeBotAPI) message(chat, user int64, text string, extra map[string]any) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.nextID++
	m := map[string]any{
		"message_id": f.nextID, "date": 1700000000, "text": text,
		"chat": map[string]any{"id": chat, "type": fakeChatType(chat)},
		"from": map[string]any{"id": user, "is_bot": false, "first_name": "Ada", "username": "ada"},
	}
	for k, v := range extra {
		m[k] = v
	}
	f.updates = append(f.updates, map[string]any{"update_id": f.nextID, "message": m})
	close(f.arrived)
	f.arrived = make(chan struct{})
}

func fakeChatType(chat int64) string {
	if chat < 0 {
		return "supergroup"
	}
	return "private"
}

func (f *fakeBotAPI) reply(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func (f *fakeBotAPI) serve(w http.ResponseWriter, r *http.Request) {
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
func (f *fakeBotAPI) getUpdates(w http.ResponseWriter, r *http.Request, offset, timeout int64) {
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
func (f *fakeBotAPI) polled(n int) {
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

func (f *fakeBotAPI) String() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return fmt.Sprintf("offsets %v, sent %v", f.offsets, f.sent)
}
