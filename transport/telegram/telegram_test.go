package telegram

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"

	"github.com/vigil-iot/vigil/alert"
	"github.com/vigil-iot/vigil/internal/transporttest"
	"github.com/vigil-iot/vigil/transport"
)

var _ interface {
	Name() string
	Notify(context.Context, alert.Alert) error
	Run(context.Context) error
} = (*Bot)(nil)

const alertChat = -4001

func newTestBot(t *testing.T, f *fakeAPI, cfg Config, st State, cmds BotHandler, clock clockwork.Clock, logs *logBuffer) *Bot {
	t.Helper()
	cfg.APIURL = f.srv.URL
	cfg.Token = testToken
	if cfg.ChatID == 0 {
		cfg.ChatID = alertChat
	}
	if st == nil {
		st = newFakeState()
	}
	if clock == nil {
		clock = clockwork.NewRealClock()
	}
	if logs == nil {
		logs = &logBuffer{}
	}
	t.Cleanup(func() {
		if strings.Contains(logs.String(), testToken) {
			t.Errorf("the token appears in the logs:\n%s", logs)
		}
		if t.Failed() {
			t.Logf("logs:\n%s", logs)
		}
	})
	return New(cfg, st, cmds, nil, clock, logs.Logger(slog.LevelDebug))
}

func testAlert(summary string) alert.Alert {
	return alert.Alert{
		ID: "a1", Device: "greenhouse-pi", Time: time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC),
		Severity: alert.Critical, Source: alert.SourceRule, Rule: "too_hot",
		State: alert.StateFiring, Summary: summary,
	}
}

func TestNotifySendsEscapedHTML(t *testing.T) {
	f := newFakeAPI(t)
	b := newTestBot(t, f, Config{}, nil, nil, nil, nil)
	summary := `Greenhouse at 36 °C <b>not bold</b> & "R&D" <script>`
	if err := b.Notify(context.Background(), testAlert(summary)); err != nil {
		t.Fatalf("Notify() = %v", err)
	}
	sent := f.Sent()
	if len(sent) != 1 {
		t.Fatalf("sent %d messages, want 1", len(sent))
	}
	m := sent[0]
	if m.ChatID != alertChat || m.ParseMode != "HTML" {
		t.Errorf("sent to chat %d with parse_mode %q, want %d HTML", m.ChatID, m.ParseMode, alertChat)
	}
	want := "🔴 CRITICAL · too_hot\n" + summary + "\ngreenhouse-pi · 2025-03-01 12:00:00 +00:00"
	if m.Rendered != want {
		t.Errorf("user sees\n%q\nwant\n%q", m.Rendered, want)
	}
}

// TestNotifyInDeviceZone: the alert's time reads in the device's zone with
// its offset, as the CLI shows it, whatever zone the stored alert carries.
func TestNotifyInDeviceZone(t *testing.T) {
	f := newFakeAPI(t)
	b := newTestBot(t, f, Config{Location: berlin(t)}, nil, nil, nil, nil)
	winter := testAlert("cold")
	summer := testAlert("warm")
	summer.Time = time.Date(2025, 7, 1, 12, 0, 0, 0, time.FixedZone("", 0)) // as decoded from the outbox
	for _, a := range []alert.Alert{winter, summer} {
		if err := b.Notify(context.Background(), a); err != nil {
			t.Fatalf("Notify() = %v", err)
		}
	}
	sent := f.Sent()
	if len(sent) != 2 {
		t.Fatalf("sent %d messages, want 2", len(sent))
	}
	for i, want := range []string{"greenhouse-pi · 2025-03-01 13:00:00 +01:00", "greenhouse-pi · 2025-07-01 14:00:00 +02:00"} {
		if !strings.HasSuffix(sent[i].Rendered, want) {
			t.Errorf("message %d ends %q, want %q", i, sent[i].Rendered, want)
		}
	}
}

func TestNotifyResolved(t *testing.T) {
	f := newFakeAPI(t)
	b := newTestBot(t, f, Config{}, nil, nil, nil, nil)
	a := testAlert("back to 30 °C")
	a.State, a.Time = alert.StateResolved, time.Unix(0, 0) // a Pi without RTC
	if err := b.Notify(context.Background(), a); err != nil {
		t.Fatalf("Notify() = %v", err)
	}
	if got, want := f.Sent()[0].Rendered, "✅ RESOLVED · too_hot\nback to 30 °C\ngreenhouse-pi"; got != want {
		t.Errorf("user sees %q, want %q", got, want)
	}
}

// TestNotifyNotice: a notice reads as one, not as an alert of its
// severity: the audit of a change, and a test alert sent as critical
// (also one queued the old way, as a firing system alert).
func TestNotifyNotice(t *testing.T) {
	f := newFakeAPI(t)
	b := newTestBot(t, f, Config{}, nil, nil, nil, nil)
	for _, a := range []alert.Alert{
		{ID: "n1", Device: "greenhouse-pi", Severity: alert.Info, Source: alert.SourceSystem, Rule: alert.RuleSetting,
			State: alert.StateNotice, Summary: "heartbeat.interval set to 10m by cli"},
		{ID: "n2", Device: "greenhouse-pi", Severity: alert.Critical, Source: alert.SourceSystem, Rule: alert.RuleTest,
			State: alert.StateFiring, Summary: "Test alert"},
	} {
		if err := b.Notify(context.Background(), a); err != nil {
			t.Fatalf("Notify(%s) = %v", a.ID, err)
		}
	}
	sent := f.Sent()
	for i, want := range []string{
		"ℹ️ NOTICE · setting\nheartbeat.interval set to 10m by cli\ngreenhouse-pi",
		"ℹ️ NOTICE · test\nTest alert\ngreenhouse-pi",
	} {
		if i >= len(sent) || sent[i].Rendered != want {
			t.Errorf("message %d: user sees %+v, want %q", i, sent, want)
		}
	}
}

func TestNotifyMinSeverity(t *testing.T) {
	f := newFakeAPI(t)
	b := newTestBot(t, f, Config{MinSeverity: alert.Critical}, nil, nil, nil, nil)
	a := testAlert("warm")
	a.Severity = alert.Warning
	if err := b.Notify(context.Background(), a); err != nil {
		t.Fatalf("Notify(warning) with min critical = %v, want nil (acknowledged, not sent)", err)
	}
	if n := len(f.Calls("sendMessage")); n != 0 {
		t.Errorf("sendMessage called %d times for a filtered alert", n)
	}
}

func TestNotifyRetryAfter(t *testing.T) {
	f := newFakeAPI(t)
	f.sendHook = func(n int, _ sendMessage) (int, string) {
		if n == 0 {
			return 429, `{"ok":false,"error_code":429,"description":"Too Many Requests: retry after 7","parameters":{"retry_after":7}}`
		}
		return 0, ""
	}
	clock := clockwork.NewFakeClock()
	b := newTestBot(t, f, Config{}, nil, nil, clock, nil)
	done := make(chan error, 1)
	go func() { done <- b.Notify(context.Background(), testAlert("hot")) }()

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := clock.BlockUntilContext(ctx, 1); err != nil {
		t.Fatalf("Notify did not wait after a 429: %v", err)
	}
	clock.Advance(6 * time.Second)
	time.Sleep(50 * time.Millisecond)
	if n := len(f.Calls("sendMessage")); n != 1 {
		t.Fatalf("sendMessage called %d times before retry_after elapsed, want 1", n)
	}
	clock.Advance(time.Second)
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Notify() after retry_after = %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Notify did not retry after retry_after")
	}
	if n := len(f.Sent()); n != 1 {
		t.Errorf("delivered %d messages, want 1", n)
	}
}

func TestNotifyRateLimitedGivesUp(t *testing.T) {
	f := newFakeAPI(t)
	f.sendHook = func(int, sendMessage) (int, string) {
		return 429, `{"ok":false,"error_code":429,"description":"Too Many Requests: retry after 1","parameters":{"retry_after":1}}`
	}
	clock := clockwork.NewFakeClock()
	b := newTestBot(t, f, Config{}, nil, nil, clock, nil)
	done := make(chan error, 1)
	go func() { done <- b.Notify(context.Background(), testAlert("hot")) }()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for range maxRateRetries {
		if err := clock.BlockUntilContext(ctx, 1); err != nil {
			t.Fatal(err)
		}
		clock.Advance(time.Second)
	}
	err := <-done
	if !errors.Is(err, ErrRateLimited) || errors.Is(err, transport.ErrPermanent) {
		t.Errorf("Notify() = %v, want ErrRateLimited (retryable)", err)
	}
	if n := len(f.Calls("sendMessage")); n != maxRateRetries+1 {
		t.Errorf("sendMessage called %d times, want %d", n, maxRateRetries+1)
	}

	// A context that ends while waiting returns at once.
	cctx, ccancel := context.WithCancel(context.Background())
	go func() { done <- b.Notify(cctx, testAlert("hot")) }()
	if err := clock.BlockUntilContext(ctx, 1); err != nil {
		t.Fatal(err)
	}
	ccancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("Notify() with cancelled context = %v, want context.Canceled", err)
	}
}

func TestNotifyCantParseEntitiesFallsBackToPlainText(t *testing.T) {
	f := newFakeAPI(t)
	// A server whose HTML parser rejects what we send.
	f.sendHook = func(_ int, m sendMessage) (int, string) {
		if m.ParseMode != "" {
			return apiErr(400, "Bad Request: can't parse entities: Unsupported start tag \"foo\" at byte offset 3")
		}
		return 0, ""
	}
	b := newTestBot(t, f, Config{}, nil, nil, nil, nil)
	if err := b.Notify(context.Background(), testAlert("1 < 2 & <foo>")); err != nil {
		t.Fatalf("Notify() = %v, want the plain text fallback to succeed", err)
	}
	sent := f.Sent()
	if len(sent) != 1 || sent[0].ParseMode != "" || !strings.Contains(sent[0].Text, "1 < 2 & <foo>") {
		t.Fatalf("sent = %+v, want one plain text message with the raw summary", sent)
	}
}

func TestNotifyRejectedTwiceIsPermanent(t *testing.T) {
	f := newFakeAPI(t)
	f.sendHook = func(int, sendMessage) (int, string) {
		return apiErr(400, "Bad Request: can't parse entities: whatever")
	}
	b := newTestBot(t, f, Config{}, nil, nil, nil, nil)
	err := b.Notify(context.Background(), testAlert("x"))
	if !errors.Is(err, transport.ErrPermanent) {
		t.Fatalf("Notify() = %v, want ErrPermanent", err)
	}
	if n := len(f.Calls("sendMessage")); n != 2 {
		t.Errorf("sendMessage called %d times, want 2 (HTML, then plain once)", n)
	}
}

func TestNotifyChatNotFoundIsRetryable(t *testing.T) {
	f := newFakeAPI(t)
	f.sendHook = func(int, sendMessage) (int, string) { return apiErr(400, "Bad Request: chat not found") }
	b := newTestBot(t, f, Config{}, nil, nil, nil, nil)
	err := b.Notify(context.Background(), testAlert("x"))
	if err == nil || errors.Is(err, transport.ErrPermanent) {
		t.Fatalf("Notify() = %v, want a retryable error (a wrong chat id is fixed by config, alerts wait)", err)
	}
}

func TestNotifyBlocked(t *testing.T) {
	f := newFakeAPI(t)
	f.sendHook = func(int, sendMessage) (int, string) { return apiErr(403, "Forbidden: bot was blocked by the user") }
	b := newTestBot(t, f, Config{}, nil, nil, nil, nil)
	err := b.Notify(context.Background(), testAlert("x"))
	if !errors.Is(err, ErrForbidden) || errors.Is(err, transport.ErrPermanent) {
		t.Fatalf("Notify() = %v, want ErrForbidden, retryable", err)
	}
	if !strings.Contains(err.Error(), "blocked") || !strings.Contains(err.Error(), fmt.Sprint(alertChat)) {
		t.Errorf("error %q should say the bot is blocked and name the chat", err)
	}
	if n := len(f.Calls("sendMessage")); n != 1 {
		t.Errorf("sendMessage called %d times, want 1 (no plain fallback for 403)", n)
	}
}

func TestChatMigration(t *testing.T) {
	const newChat = -1001234567890
	f := newFakeAPI(t)
	f.sendHook = func(_ int, m sendMessage) (int, string) {
		if m.ChatID == alertChat {
			return 400, fmt.Sprintf(`{"ok":false,"error_code":400,"description":"Bad Request: group chat was upgraded to a supergroup chat","parameters":{"migrate_to_chat_id":%d}}`, newChat)
		}
		return 0, ""
	}
	st := newFakeState()
	b := newTestBot(t, f, Config{}, st, nil, nil, nil)
	if err := b.Notify(context.Background(), testAlert("one")); err != nil {
		t.Fatalf("Notify() = %v", err)
	}
	if got, _ := st.Chat(alertChat); got != newChat {
		t.Errorf("persisted chat = %d, want %d", got, newChat)
	}
	if err := b.Notify(context.Background(), testAlert("two")); err != nil {
		t.Fatalf("second Notify() = %v", err)
	}
	var chats []int64
	for _, c := range f.Calls("sendMessage") {
		chats = append(chats, num(c.Body, "chat_id"))
	}
	if want := []int64{alertChat, newChat, newChat}; !slices.Equal(chats, want) {
		t.Errorf("sendMessage chats = %v, want %v", chats, want)
	}
	// A bot restarted on the same state goes to the new chat at once.
	b2 := newTestBot(t, f, Config{}, st, nil, nil, nil)
	if err := b2.Notify(context.Background(), testAlert("three")); err != nil {
		t.Fatal(err)
	}
	if last := f.Calls("sendMessage"); num(last[len(last)-1].Body, "chat_id") != newChat {
		t.Errorf("after restart sent to %v, want %d", last[len(last)-1].Body["chat_id"], newChat)
	}
}

func TestNotifyLongMessageIsTruncated(t *testing.T) {
	tests := []struct{ name, summary string }{
		{"ascii with escapes", strings.Repeat("a<b&c ", 2000)},
		{"astral emoji", strings.Repeat("🔥", 3000)}, // 2 UTF-16 units each
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFakeAPI(t)
			b := newTestBot(t, f, Config{}, nil, nil, nil, nil)
			if err := b.Notify(context.Background(), testAlert(tt.summary)); err != nil {
				t.Fatalf("Notify() = %v", err)
			}
			sent := f.Sent()
			if len(sent) != 1 || sent[0].ParseMode != "HTML" {
				t.Fatalf("sent = %d messages, want one HTML message", len(sent))
			}
			r := sent[0].Rendered
			if n := len16(r); n > 4096 || n < 4000 {
				t.Errorf("rendered length = %d UTF-16 units, want close to and at most 4096", n)
			}
			if !strings.Contains(r, "(truncated)") || !strings.HasSuffix(r, "greenhouse-pi · 2025-03-01 12:00:00 +00:00") {
				t.Errorf("truncated message should mark the cut and keep the footer: ...%q", r[len(r)-80:])
			}
		})
	}
}

func TestTokenNeverInErrors(t *testing.T) {
	f := newFakeAPI(t)
	// An unreachable server: the error names the host, never the path
	// that holds the token.
	dead := httptest.NewServer(http.NotFoundHandler())
	deadURL := dead.URL
	dead.Close()
	logs := &logBuffer{}
	b := New(Config{APIURL: deadURL, Token: testToken, ChatID: alertChat, AllowedChats: []int64{1}},
		newFakeState(), &transporttest.Recorder{}, nil, clockwork.NewRealClock(), logs.Logger(slog.LevelDebug))
	err := b.Notify(context.Background(), testAlert("x"))
	if err == nil {
		t.Fatal("Notify() to a dead server = nil")
	}
	if strings.Contains(err.Error(), testToken) || !strings.Contains(err.Error(), "sendMessage: post 127.0.0.1:") {
		t.Errorf("error = %q: want the method and host, without the token", err)
	}

	// Cancellation stays detectable through the redaction.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	b2 := newTestBot(t, f, Config{}, nil, nil, nil, nil)
	err = b2.Notify(ctx, testAlert("x"))
	if !errors.Is(err, context.Canceled) || strings.Contains(err.Error(), testToken) {
		t.Errorf("Notify(cancelled) = %v, want context.Canceled without the token", err)
	}

	// A server that echoes the URL back in its description.
	echo := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		apiReplyPair(w, apiErrPair(401, "Unauthorized: "+r.URL.Path))
	}))
	defer echo.Close()
	b3 := New(Config{APIURL: echo.URL, Token: testToken, ChatID: alertChat}, newFakeState(), nil, nil, nil, logs.Logger(slog.LevelDebug))
	err = b3.Notify(context.Background(), testAlert("x"))
	if err == nil || strings.Contains(err.Error(), testToken) || !strings.Contains(err.Error(), "/bot<token>/") {
		t.Errorf("Notify() = %v: the token must be replaced by <token>", err)
	}

	// Polling errors are logged, never with the token.
	ctx, cancel = context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	_ = b.Run(ctx)
	if !strings.Contains(logs.String(), "getUpdates") {
		t.Errorf("expected a getUpdates error in the logs, got:\n%s", logs)
	}
	if strings.Contains(logs.String(), testToken) {
		t.Errorf("token in logs:\n%s", logs)
	}
}

func TestFormatAlertFits(t *testing.T) {
	for _, n := range []int{0, 1, 4000, 4096, 5000} {
		a := testAlert(strings.Repeat("&", n))
		h, p := formatAlert(a, time.UTC, nil)
		r, err := renderHTML(h)
		if err != nil {
			t.Fatalf("formatAlert(%d×&) HTML does not parse: %v", n, err)
		}
		if r != p {
			t.Errorf("formatAlert(%d×&): HTML renders differently from the plain text", n)
		}
		if len16(p) > maxText {
			t.Errorf("formatAlert(%d×&) plain length %d > %d", n, len16(p), maxText)
		}
	}
}

func TestSplit(t *testing.T) {
	tests := []struct {
		name string
		in   string
		n    int
		want []string
	}{
		{"fits", "abc", 5, []string{"abc"}},
		{"empty", "", 5, nil},
		{"hard cut", "abcdefgh", 3, []string{"abc", "def", "gh"}},
		{"at newline", "abcd\nef\ngh", 6, []string{"abcd\n", "ef\ngh"}},
		{"newline too early", "a\nbcdefgh", 6, []string{"a\nbcde", "fgh"}},
		{"surrogate pairs kept whole", "😀😀😀", 3, []string{"😀", "😀", "😀"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := split(tt.in, tt.n)
			if !slices.Equal(got, tt.want) {
				t.Errorf("split(%q, %d) = %q, want %q", tt.in, tt.n, got, tt.want)
			}
			if strings.Join(got, "") != tt.in {
				t.Errorf("split(%q, %d) lost text", tt.in, tt.n)
			}
		})
	}
}

func TestParseCommand(t *testing.T) {
	tests := []struct {
		text, username string
		name, arg      string
		ok             bool
	}{
		{"/status", "vigil_bot", "status", "", true},
		{"  /pause 30 ", "vigil_bot", "pause", "30", true},
		{"/pause@vigil_bot 30", "vigil_bot", "pause", "30", true},
		{"/pause@Vigil_Bot 30", "vigil_bot", "pause", "30", true},
		{"/pause@other_bot 30", "vigil_bot", "", "", false},
		{"/pause@other_bot 30", "", "", "", false}, // getMe has not answered: may be another bot's
		{"/pause@vigil_bot 30", "", "", "", false},
		{"/Status", "", "status", "", true},
		{"/pause\n45", "", "pause", "45", true},
		{"hello", "", "", "", false},
		{"/", "", "", "", false},
		{"/@vigil_bot", "vigil_bot", "", "", false},
		{"", "", "", "", false},
	}
	for _, tt := range tests {
		name, arg, ok := parseCommand(tt.text, tt.username)
		if name != tt.name || arg != tt.arg || ok != tt.ok {
			t.Errorf("parseCommand(%q, %q) = %q, %q, %v; want %q, %q, %v", tt.text, tt.username, name, arg, ok, tt.name, tt.arg, tt.ok)
		}
	}
}

func ExampleBot_Notify() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"ok":true,"result":{"message_id":1}}`)
	}))
	defer srv.Close()
	bot := New(Config{APIURL: srv.URL, Token: "123:abc", ChatID: 42}, newFakeState(), nil, nil, nil, nil)
	err := bot.Notify(context.Background(), alert.Alert{
		ID: "a1", Device: "greenhouse-pi", Severity: alert.Critical,
		Source: alert.SourceRule, Rule: "too_hot", State: alert.StateFiring,
		Summary: "Greenhouse at 36 °C",
	})
	fmt.Println(err)
	html, plain := formatAlert(alert.Alert{Device: "pi", Severity: alert.Warning, Source: alert.SourceLLM, Summary: "soil <dry> & warm"}, time.UTC, nil)
	fmt.Println(html)
	fmt.Println(plain)
	// Output:
	// <nil>
	// <b>🟠 WARNING</b> · llm
	// soil &lt;dry&gt; &amp; warm
	// <i>pi</i>
	// 🟠 WARNING · llm
	// soil <dry> & warm
	// pi
}
