package telegram

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"

	"github.com/vigil-iot/vigil/internal/transporttest"
	"github.com/vigil-iot/vigil/transport"
)

const (
	allowedChat = 4242
	strangerBot = 6666
)

// runBot starts b.Run and returns a stop function that waits for it.
func runBot(t *testing.T, b *Bot) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- b.Run(ctx) }()
	stopped := false
	stop = func() {
		if stopped {
			return
		}
		stopped = true
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("Run() = %v, want nil", err)
			}
		case <-time.After(5 * time.Second):
			t.Error("Run did not return after cancel")
		}
	}
	t.Cleanup(stop)
	return stop
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func repliesTo(f *fakeAPI, chat int64) []string {
	var out []string
	for _, m := range f.Sent() {
		if m.ChatID == chat {
			out = append(out, m.Rendered)
		}
	}
	return out
}

func TestCommandsFromAllowedAndUnknownChats(t *testing.T) {
	f := newFakeAPI(t)
	cmds := &transporttest.Recorder{}
	st := newFakeState()
	logs := &logBuffer{}
	b := newTestBot(t, f, Config{AllowedChats: []int64{allowedChat}, PollTimeout: time.Second}, st, cmds, nil, logs)

	script := []struct {
		chat      int64
		text      string
		wantCall  string // "" when no command runs
		wantReply string // substring; "" when no reply is expected
	}{
		{allowedChat, "/status", "status", "next run 12:30"},
		{strangerBot, "/pause 600", "", ""},
		{allowedChat, "/pause 30", "pause 30m0s", "paused for 30m0s"},
		{allowedChat, "/pause@vigil_test_bot 5", "pause 5m0s", "paused for 5m0s"},
		{allowedChat, "/pause@some_other_bot 5", "", ""},
		{allowedChat, "/pause soon", "", "usage: /pause MINUTES"},
		{allowedChat, "/pause 0", "", "usage: /pause MINUTES"},
		{allowedChat, "/resume", "resume", "resumed"},
		{allowedChat, "/sensors", "sensors", "air.temperature 21.4 °C"},
		{allowedChat, "/check", "check", "ok: all quiet"},
		{allowedChat, "/reboot", "", "unknown command /reboot"},
		{allowedChat, "just chatting", "", ""},
		{strangerBot, "/status", "", ""},
	}
	for i, s := range script {
		f.addUpdate(int64(100+i), s.chat, s.text)
	}
	runBot(t, b)
	waitFor(t, "offset past the last update", func() bool {
		off, _ := st.Offset()
		return off == int64(100+len(script))
	})

	var wantCalls, wantReplies []string
	for _, s := range script {
		if s.wantCall != "" {
			wantCalls = append(wantCalls, s.wantCall)
		}
		if s.wantReply != "" {
			wantReplies = append(wantReplies, s.wantReply)
		}
	}
	if got := cmds.Calls(); !slices.Equal(got, wantCalls) {
		t.Errorf("commands run = %v, want %v", got, wantCalls)
	}
	replies := repliesTo(f, allowedChat)
	if len(replies) != len(wantReplies) {
		t.Fatalf("replies = %q, want %d replies", replies, len(wantReplies))
	}
	for i, want := range wantReplies {
		if !strings.Contains(replies[i], want) {
			t.Errorf("reply %d = %q, want it to contain %q", i, replies[i], want)
		}
	}
	if got := repliesTo(f, strangerBot); len(got) != 0 {
		t.Errorf("unknown chat got replies: %q", got)
	}
	if n := strings.Count(logs.String(), "not in allowed_chats"); n != 1 {
		t.Errorf("unknown chat logged %d times, want once:\n%s", n, logs)
	}
	if !strings.Contains(logs.String(), "chat=6666") {
		t.Errorf("the log line should name the unknown chat:\n%s", logs)
	}
}

func TestLongReplyIsSplit(t *testing.T) {
	f := newFakeAPI(t)
	var lines []string
	for i := range 400 {
		lines = append(lines, strings.Repeat("x", 20)+" sensor "+string(rune('a'+i%26)))
	}
	long := strings.Join(lines, "\n")
	cmds := &transporttest.Recorder{SensorsReply: long}
	st := newFakeState()
	b := newTestBot(t, f, Config{AllowedChats: []int64{allowedChat}, PollTimeout: time.Second}, st, cmds, nil, nil)
	f.addUpdate(1, allowedChat, "/sensors")
	runBot(t, b)
	waitFor(t, "offset 2", func() bool { off, _ := st.Offset(); return off == 2 })
	parts := repliesTo(f, allowedChat)
	if len(parts) < 3 {
		t.Fatalf("a %d-character reply came in %d parts, want >= 3", len(long), len(parts))
	}
	if strings.Join(parts, "") != long {
		t.Error("the parts do not add up to the reply")
	}
	for i, p := range parts[:len(parts)-1] {
		if !strings.HasSuffix(p, "\n") {
			t.Errorf("part %d does not end at a line break", i)
		}
	}
}

func TestOffsetPersistedAcrossRestart(t *testing.T) {
	f := newFakeAPI(t)
	cmds := &transporttest.Recorder{}
	st := newFakeState()
	cfg := Config{AllowedChats: []int64{allowedChat}, PollTimeout: time.Second}
	f.addUpdate(10, allowedChat, "/status")
	f.addUpdate(11, allowedChat, "/resume")

	stop := runBot(t, newTestBot(t, f, cfg, st, cmds, nil, nil))
	waitFor(t, "offset 12", func() bool { off, _ := st.Offset(); return off == 12 })
	stop()
	if got := st.setOffsets; !slices.Equal(got, []int64{12}) {
		t.Errorf("offsets persisted = %v, want [12] (once per batch)", got)
	}

	// A new process on the same state asks for updates from 12 on and
	// does not run the old commands again.
	before := len(f.Calls("getUpdates"))
	f.addUpdate(12, allowedChat, "/check")
	runBot(t, newTestBot(t, f, cfg, st, cmds, nil, nil))
	waitFor(t, "offset 13", func() bool { off, _ := st.Offset(); return off == 13 })
	polls := f.Calls("getUpdates")[before:]
	if got := num(polls[0].Body, "offset"); got != 12 {
		t.Errorf("first getUpdates after restart has offset %d, want 12", got)
	}
	if got := num(polls[0].Body, "timeout"); got != 1 {
		t.Errorf("getUpdates timeout = %d, want 1 (PollTimeout)", got)
	}
	if got := cmds.Calls(); !slices.Equal(got, []string{"status", "resume", "check"}) {
		t.Errorf("commands = %v, want each once", got)
	}
}

func TestNoPollingWithoutAllowedChats(t *testing.T) {
	f := newFakeAPI(t)
	b := newTestBot(t, f, Config{}, nil, &transporttest.Recorder{}, nil, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	if err := b.Run(ctx); err != nil {
		t.Fatalf("Run() = %v", err)
	}
	if n := len(f.Calls("getUpdates")); n != 0 {
		t.Errorf("getUpdates called %d times without allowed chats", n)
	}
}

// runFailingPolls runs a bot on a fake clock whose first failures
// getUpdates calls the API answers with code and description, and every
// later one as usual. It returns what the tests watch: the API, the clock,
// the bot's state and its log.
func runFailingPolls(t *testing.T, failures, code int, description string) (*fakeAPI, *clockwork.FakeClock, *fakeState, *logBuffer) {
	t.Helper()
	f := newFakeAPI(t)
	f.pollHook = func(n int) (int, string) {
		if n < failures {
			return apiErr(code, description)
		}
		return 0, ""
	}
	clock := clockwork.NewFakeClock()
	logs := &logBuffer{}
	st := newFakeState()
	b := newTestBot(t, f, Config{AllowedChats: []int64{allowedChat}, PollTimeout: time.Second}, st, &transporttest.Recorder{}, clock, logs)
	runBot(t, b)
	return f, clock, st, logs
}

func TestConflictLoggedOnceAndBacksOff(t *testing.T) {
	f, clock, st, logs := runFailingPolls(t, 3, 409, "Conflict: terminated by other getUpdates request; make sure that only one bot instance is running")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for i := range 3 {
		if err := clock.BlockUntilContext(ctx, 1); err != nil {
			t.Fatalf("no backoff after conflict %d: %v", i+1, err)
		}
		clock.Advance(conflictWait - time.Second)
		time.Sleep(20 * time.Millisecond)
		if n := len(f.Calls("getUpdates")); n != i+1 {
			t.Fatalf("getUpdates called %d times before the %v wait ended, want %d", n, conflictWait, i+1)
		}
		clock.Advance(time.Second)
	}
	f.addUpdate(1, allowedChat, "/status")
	waitFor(t, "polling to resume", func() bool { off, _ := st.Offset(); return off == 2 })
	if n := strings.Count(logs.String(), "getUpdates conflict"); n != 1 {
		t.Errorf("conflict logged %d times, want once:\n%s", n, logs)
	}
}

// TestOutageWarnedOnce: getUpdates failing on every retry of an outage
// is one WARN when it starts and one INFO when polling works again, not a
// WARN per retry.
func TestOutageWarnedOnce(t *testing.T) {
	f, clock, st, logs := runFailingPolls(t, 4, 502, "Bad Gateway")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for i := range 4 {
		if err := clock.BlockUntilContext(ctx, 1); err != nil {
			t.Fatalf("no backoff after failure %d: %v", i+1, err)
		}
		clock.Advance(minBackoff << i)
	}
	f.addUpdate(1, allowedChat, "/status")
	waitFor(t, "polling to resume", func() bool { off, _ := st.Offset(); return off == 2 })
	if n := strings.Count(logs.String(), "level=WARN msg=\"telegram getUpdates"); n != 1 {
		t.Errorf("an outage of 4 failed polls logged %d WARNs, want one:\n%s", n, logs)
	}
	if n := strings.Count(logs.String(), "level=INFO msg=\"telegram getUpdates works again"); n != 1 {
		t.Errorf("recovery logged %d times at INFO, want once:\n%s", n, logs)
	}
}

func TestChatMigrationServiceMessage(t *testing.T) {
	const newChat = -100777
	f := newFakeAPI(t)
	st := newFakeState()
	cmds := &transporttest.Recorder{}
	b := newTestBot(t, f, Config{ChatID: allowedChat, AllowedChats: []int64{allowedChat}, PollTimeout: time.Second}, st, cmds, nil, nil)
	f.addRawUpdate(1, `{"update_id":1,"message":{"message_id":9,"chat":{"id":4242,"type":"group"},"date":1,"migrate_to_chat_id":-100777}}`)
	f.addUpdate(2, newChat, "/status")
	runBot(t, b)
	waitFor(t, "offset 3", func() bool { off, _ := st.Offset(); return off == 3 })
	if got, _ := st.Chat(allowedChat); got != newChat {
		t.Errorf("chat after migration = %d, want %d", got, newChat)
	}
	if got := cmds.Calls(); !slices.Equal(got, []string{"status"}) {
		t.Errorf("the migrated chat's command: calls = %v, want [status]", got)
	}
}

func FuzzUpdates(f *testing.F) {
	f.Add([]byte(`{"ok":true,"result":[]}`))
	f.Add([]byte(`{"ok":true,"result":[{"update_id":5,"message":{"message_id":1,"chat":{"id":42,"type":"private"},"text":"/pause@vigil_bot 30"}}]}`))
	f.Add([]byte(`{"ok":true,"result":[{"update_id":6,"edited_message":{"chat":{"id":1}}},{"update_id":7,"message":{"chat":{"id":-1},"migrate_to_chat_id":-100}}]}`))
	f.Add([]byte(`{"ok":false,"error_code":409,"description":"Conflict"}`))
	f.Add([]byte(`{"ok":true,"result":[{"update_id":1e3}]}`))
	f.Add([]byte(`<html>502 Bad Gateway</html>`))
	f.Add([]byte(`{"ok":true,"result":[{"update_id":8,"callback_query":{"id":"q","from":{"id":7,"username":"ann"},"message":{"message_id":3,"chat":{"id":42}},"data":"ack:0123"}},{"update_id":9,"callback_query":{"id":"r","from":{"id":8}}}]}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		ups, err := decodeUpdates(body)
		if err != nil {
			if ups != nil {
				t.Fatalf("decodeUpdates returned updates with error %v", err)
			}
			return
		}
		if !json.Valid(body) {
			t.Fatalf("decodeUpdates accepted invalid JSON %q", body)
		}
		for _, u := range ups {
			if q := u.CallbackQuery; q != nil {
				if n := q.From.name(); n != strings.TrimSpace(n) {
					t.Fatalf("callback from %+v: name %q not trimmed", q.From, n)
				}
			}
			if u.Message == nil {
				continue
			}
			name, arg, ok := parseCommand(u.Message.Text, "vigil_bot")
			if !ok {
				if name != "" || arg != "" {
					t.Fatalf("parseCommand(%q) = %q, %q, false", u.Message.Text, name, arg)
				}
				continue
			}
			if name == "" || strings.ContainsAny(name, " \n\t@") || name != strings.ToLower(name) {
				t.Fatalf("parseCommand(%q) name = %q", u.Message.Text, name)
			}
			if arg != strings.TrimSpace(arg) {
				t.Fatalf("parseCommand(%q) arg = %q not trimmed", u.Message.Text, arg)
			}
		}
	})
}

// addGroupUpdate queues a message from user in the group chat.
func (f *fakeAPI) addGroupUpdate(id, chat, user int64, text string) {
	f.addRawUpdate(id, fmt.Sprintf(`{"update_id":%d,"message":{"message_id":%d,"from":{"id":%d,"is_bot":false,"first_name":"U"},"chat":{"id":%d,"type":"supergroup","title":"house"},"date":1700000000,"text":%q}}`,
		id, id, user, chat, text))
}

// TestAllowedUsersInGroup: in an allowed group, allowed_users restricts
// commands by sender too; the commands learn the chat and the user.
func TestAllowedUsersInGroup(t *testing.T) {
	const (
		group    = -1001234567890
		owner    = 1111
		stranger = 2222
	)
	f := newFakeAPI(t)
	cmds := &transporttest.Recorder{}
	st := newFakeState()
	logs := &logBuffer{}
	b := newTestBot(t, f, Config{AllowedChats: []int64{group}, AllowedUsers: []int64{owner}, PollTimeout: time.Second}, st, cmds, nil, logs)
	f.addGroupUpdate(1, group, stranger, "/pause 600")
	f.addGroupUpdate(2, group, owner, "/pause 30")
	f.addGroupUpdate(3, group, stranger, "/check")
	f.addGroupUpdate(4, group, owner, "/check")
	f.addRawUpdate(5, `{"update_id":5,"message":{"message_id":5,"chat":{"id":-1001234567890,"type":"supergroup"},"date":1,"text":"/resume"}}`) // no sender
	runBot(t, b)
	waitFor(t, "offset 6", func() bool { off, _ := st.Offset(); return off == 6 })

	if got, want := cmds.Calls(), []string{"pause 30m0s", "check"}; !slices.Equal(got, want) {
		t.Errorf("commands run = %v, want %v (only the allowed user's)", got, want)
	}
	want := transport.Source{Channel: transport.ChannelTelegram, Chat: group, User: owner, Name: "U"}
	for i, s := range cmds.Sources() {
		if s != want {
			t.Errorf("source of call %d = %+v, want %+v", i, s, want)
		}
	}
	if got := repliesTo(f, group); len(got) != 2 {
		t.Errorf("replies in the group = %q, want 2 (none to the stranger)", got)
	}
	if n := strings.Count(logs.String(), "not in allowed_users"); n != 2 {
		t.Errorf("refused senders logged %d times, want once per sender (stranger, no sender):\n%s", n, logs)
	}
	if !strings.Contains(logs.String(), "user=2222") {
		t.Errorf("the log line should name the refused user:\n%s", logs)
	}
}

// TestPauseRangeIsTheCommands: /pause passes any whole number on; the
// commands enforce the one limit for every channel, and the reply says so.
func TestPauseRangeIsTheCommands(t *testing.T) {
	f := newFakeAPI(t)
	cmds := &transporttest.Recorder{}
	st := newFakeState()
	b := newTestBot(t, f, Config{AllowedChats: []int64{allowedChat}, PollTimeout: time.Second}, st, cmds, nil, nil)
	f.addUpdate(1, allowedChat, "/pause 1441")
	f.addUpdate(2, allowedChat, "/pause 1440")
	runBot(t, b)
	waitFor(t, "offset 3", func() bool { off, _ := st.Offset(); return off == 3 })
	replies := repliesTo(f, allowedChat)
	if len(replies) != 2 || !strings.Contains(replies[0], "usage: /pause MINUTES (1..1440): pause: minutes must be 1..1440") ||
		!strings.Contains(replies[0], "got 1441") || !strings.Contains(replies[1], "paused for 24h0m0s") {
		t.Errorf("replies = %q, want a usage answer for 1441 and a pause for 1440", replies)
	}
}

// TestForwardsAndChatPostsAreNotCommands: a command someone forwards into
// an allowed chat, a channel post forwarded into its discussion group and a
// message sent on behalf of a chat (a channel, an anonymous group admin)
// run nothing; a command typed in the chat still does.
func TestForwardsAndChatPostsAreNotCommands(t *testing.T) {
	f := newFakeAPI(t)
	cmds := &transporttest.Recorder{}
	st := newFakeState()
	logs := &logBuffer{}
	b := newTestBot(t, f, Config{AllowedChats: []int64{allowedChat}, PollTimeout: time.Second}, st, cmds, nil, logs)
	msg := func(id int64, extra string) string {
		return fmt.Sprintf(`{"update_id":%d,"message":{"message_id":%d,"from":{"id":7,"is_bot":false,"first_name":"A"},"chat":{"id":%d,"type":"group"},"date":1700000000,"text":"/pause 1440"%s}}`,
			id, id, allowedChat, extra)
	}
	for i, extra := range []string{
		`,"forward_origin":{"type":"user","date":1699990000,"sender_user":{"id":99,"is_bot":false,"first_name":"M"}}`,
		`,"forward_origin":{"type":"hidden_user","date":1699990000,"sender_user_name":"M"}`,
		`,"forward_from":{"id":99,"is_bot":false,"first_name":"M"},"forward_date":1699990000`, // before Bot API 7.0
		`,"forward_from_chat":{"id":-100777,"type":"channel"},"forward_date":1699990000`,
		`,"forward_date":1699990000`,
		`,"is_automatic_forward":true,"forward_origin":{"type":"channel","date":1699990000,"chat":{"id":-100777,"type":"channel"},"message_id":3}`,
		`,"sender_chat":{"id":-100777,"type":"channel","title":"news"}`,
		`,"sender_chat":{"id":` + fmt.Sprint(allowedChat) + `,"type":"group","title":"home"}`, // an anonymous admin
	} {
		f.addRawUpdate(int64(10+i), msg(int64(10+i), extra))
	}
	f.addUpdate(30, allowedChat, "/resume")
	runBot(t, b)
	waitFor(t, "offset 31", func() bool { off, _ := st.Offset(); return off == 31 })
	if got := cmds.Calls(); !slices.Equal(got, []string{"resume"}) {
		t.Errorf("commands run = %v, want only [resume]: a forward or a chat's post is not a command", got)
	}
	if got := repliesTo(f, allowedChat); len(got) != 1 {
		t.Errorf("replies = %q, want one (to /resume)", got)
	}
	if strings.Contains(logs.String(), "level=WARN") || strings.Contains(logs.String(), "level=INFO msg=\"telegram command\" chat=4242 user=7 command=pause") {
		t.Errorf("an ignored forward was logged above debug:\n%s", logs)
	}
}

// TestGetMeRetried (issue 28, finding 8): when getMe fails at start (the
// unit came up before the network), the bot does not know its own name:
// until it does, a command that names a bot (/pause@otherbot 43) is
// ignored, while a plain /status is answered. getMe is retried with
// backoff on the bot's clock; once it answers, /pause@vigil_test_bot is
// obeyed and /pause@otherbot still ignored.
func TestGetMeRetried(t *testing.T) {
	f := newFakeAPI(t)
	f.meHook = func(n int) (int, string) {
		if n == 0 {
			return apiErr(502, "Bad Gateway")
		}
		return 0, ""
	}
	clock := clockwork.NewFakeClock()
	cmds := &transporttest.Recorder{}
	st := newFakeState()
	b := newTestBot(t, f, Config{AllowedChats: []int64{allowedChat}, PollTimeout: time.Second}, st, cmds, clock, nil)
	f.addUpdate(100, allowedChat, "/pause@otherbot 43")
	f.addUpdate(101, allowedChat, "/status")
	runBot(t, b)
	waitFor(t, "the first two updates", func() bool { off, _ := st.Offset(); return off == 102 })
	if got, want := cmds.Calls(), []string{"status"}; !slices.Equal(got, want) {
		t.Fatalf("before getMe answered: commands run = %v, want %v (a command naming a bot is ignored)", got, want)
	}

	clock.Advance(minBackoff)
	waitFor(t, "getMe retried and answered", func() bool {
		b.mu.Lock()
		defer b.mu.Unlock()
		return b.username == "vigil_test_bot"
	})
	f.addUpdate(102, allowedChat, "/pause@otherbot 43")
	f.addUpdate(103, allowedChat, "/pause@vigil_test_bot 5")
	waitFor(t, "the last two updates", func() bool { off, _ := st.Offset(); return off == 104 })
	if got, want := cmds.Calls(), []string{"status", "pause 5m0s"}; !slices.Equal(got, want) {
		t.Errorf("after getMe answered: commands run = %v, want %v", got, want)
	}
	if n := len(f.Calls("getMe")); n != 2 {
		t.Errorf("getMe called %d times, want 2 (once more after the failure, then never)", n)
	}
}
