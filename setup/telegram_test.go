package setup

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"os/signal"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestCheckBot(t *testing.T) {
	f := newFakeBot(t)
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
	f := newFakeBot(t)
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
	f := newFakeBot(t)
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
	f := newFakeBot(t)
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
}

// Nobody sends /start: the wait ends with ErrNoStart, naming the bot and
// the way around it.
func TestWaitStartNobody(t *testing.T) {
	f := newFakeBot(t)
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
	f := newFakeBot(t)
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
	f := newFakeBot(t)
	f.conflict = true
	_, err := WaitStart(context.Background(), BotAPI{URL: f.srv.URL, Token: goodToken, PollTimeout: time.Second}, time.Minute)
	if !errors.Is(err, ErrBotBusy) || !strings.Contains(err.Error(), "systemctl stop vigil") {
		t.Errorf("WaitStart = %v, want ErrBotBusy naming systemctl stop vigil", err)
	}
}
