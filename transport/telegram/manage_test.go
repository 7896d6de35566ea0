package telegram

import (
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/vigil-iot/vigil/internal/transporttest"
	"github.com/vigil-iot/vigil/transport"
)

// runScript queues each text as an update from the allowed chat, runs the
// bot until it has handled them all, and returns the replies.
func runScript(t *testing.T, cmds *transporttest.Recorder, texts ...string) []string {
	t.Helper()
	f := newFakeAPI(t)
	st := newFakeState()
	b := newTestBot(t, f, Config{AllowedChats: []int64{allowedChat}, PollTimeout: time.Second}, st, cmds, nil, nil)
	for i, text := range texts {
		f.addUpdate(int64(1+i), allowedChat, text)
	}
	runBot(t, b)
	waitFor(t, "every update handled", func() bool { off, _ := st.Offset(); return off == int64(1+len(texts)) })
	// A reply goes out before the batch's offset is saved.
	return repliesTo(f, allowedChat)
}

// TestManagementCommands: /get, /set, /unset, /toggle, /checklist, /logs
// and /notes reach the commands with what the message says; a wrong
// argument is answered with the command's usage and runs nothing.
func TestManagementCommands(t *testing.T) {
	checklist := "- Is the greenhouse fan running?\n  - and the vent open?\n- Water tank above 20 %?"
	script := []struct {
		text      string
		wantCall  string // "" when nothing runs
		wantReply string // substring of the reply
	}{
		{"/get", "get ", "heartbeat.interval = 30m"},
		{"/get heartbeat.interval", "get heartbeat.interval", "30m"},
		{"/get heartbeat interval", "", usageGet},
		{"/set heartbeat.interval 10m", "set heartbeat.interval 10m", "heartbeat.interval set to 10m"},
		{"/set@vigil_test_bot heartbeat.active_hours  07:00-12:00 14:00-22:00 ", "set heartbeat.active_hours 07:00-12:00 14:00-22:00", "set to 07:00-12:00 14:00-22:00"},
		{"/set heartbeat.interval", "", usageSet},
		{"/set", "", usageSet},
		{"/unset heartbeat.interval", "unset heartbeat.interval", "heartbeat.interval unset"},
		{"/unset", "", usageUnset},
		{"/toggle too_hot", "toggle too_hot", "rule.too_hot.enabled set to false"},
		{"/toggle", "", usageToggle},
		{"/toggle too hot", "", usageToggle},
		{"/checklist", "checklist show", "checklist: show"},
		{"/checklist show", "checklist show", "checklist: show"},
		{"/checklist reset", "checklist reset", "checklist: reset"},
		{"/checklist set\n" + checklist, "checklist set " + strconv.Itoa(len(checklist)+1), "checklist set"},
		{"/checklist set", "", usageChecklist},
		{"/checklist drop", "", usageChecklist},
		{"/checklist show everything", "", usageChecklist},
		{"/logs", "logs 10", "12:00 ok"},
		{"/logs 50", "logs 50", "12:00 ok"},
		{"/logs 1", "logs 1", "12:00 ok"},
		{"/logs 0", "", usageLogs},
		{"/logs 51", "", usageLogs},
		{"/logs many", "", usageLogs},
		{"/notes", "notes", "no notes"},
		{"/notes clear", "notes clear", "notes cleared"},
		{"/notes all", "", usageNotes},
	}
	var texts, wantCalls []string
	for _, s := range script {
		texts = append(texts, s.text)
		if s.wantCall != "" {
			wantCalls = append(wantCalls, s.wantCall)
		}
	}
	cmds := &transporttest.Recorder{}
	replies := runScript(t, cmds, texts...)
	if got := cmds.Calls(); !slices.Equal(got, wantCalls) {
		t.Errorf("commands run = %q\nwant %q", got, wantCalls)
	}
	if len(replies) != len(script) {
		t.Fatalf("replies = %q, want one per message (%d)", replies, len(script))
	}
	for i, s := range script {
		if !strings.Contains(replies[i], s.wantReply) {
			t.Errorf("%q: reply = %q, want it to contain %q", s.text, replies[i], s.wantReply)
		}
	}
	if got, want := cmds.ChecklistText(), checklist+"\n"; got != want {
		t.Errorf("/checklist set passed %q, want the lines after the command, %q", got, want)
	}
	want := transport.Source{Channel: transport.ChannelTelegram, Chat: allowedChat, User: allowedChat, Name: "A"} // the sender's first name
	for i, s := range cmds.Sources() {
		if s != want {
			t.Errorf("source of call %d = %+v, want %+v", i, s, want)
		}
	}
}

// TestManagementNotAllowed: a verb that [manage] remote does not allow is
// refused by the commands, and the reply names the entry that allows it
// (/toggle is a set); allowed, the same /set works.
func TestManagementNotAllowed(t *testing.T) {
	var allowSet atomic.Bool
	defaults := transporttest.NotAllowed("status", "pause", "resume", "check")
	cmds := &transporttest.Recorder{}
	script := []struct{ text, verb string }{
		{"/set heartbeat.interval 10m", "set"},
		{"/toggle too_hot", "set"},
		{"/get", "get"},
		{"/unset heartbeat.interval", "unset"},
		{"/checklist", "checklist"},
		{"/logs", "logs"},
		{"/notes clear", "notes"},
		{"/sensors", "status"}, // allowed: status covers it
	}
	var texts []string
	for _, s := range script {
		texts = append(texts, s.text)
	}
	cmds.Err = func(verb string) error {
		switch verb {
		case "sensors":
			verb = "status"
		case "toggle":
			verb = "set"
		}
		if verb == "set" && allowSet.Load() {
			return nil
		}
		return defaults(verb)
	}
	replies := runScript(t, cmds, texts...)
	if len(replies) != len(script) {
		t.Fatalf("replies = %q, want %d", replies, len(script))
	}
	for i, s := range script[:len(script)-1] {
		if want := `not allowed: add "` + s.verb + `" to [manage] remote`; replies[i] != want {
			t.Errorf("%q: reply = %q, want %q", s.text, replies[i], want)
		}
	}
	if got := cmds.Calls(); !slices.Equal(got, []string{"sensors"}) {
		t.Errorf("commands run = %v, want only the allowed sensors", got)
	}

	allowSet.Store(true) // remote = ["status", "pause", "resume", "check", "set"]
	replies = runScript(t, cmds, "/set heartbeat.interval 10m", "/toggle too_hot")
	if !slices.Equal(replies, []string{"heartbeat.interval set to 10m", "rule.too_hot.enabled set to false"}) {
		t.Errorf("with set allowed: replies = %q, want the commands' answers", replies)
	}
}

func TestHelpListsManagementCommands(t *testing.T) {
	replies := runScript(t, &transporttest.Recorder{}, "/help")
	if len(replies) != 1 {
		t.Fatalf("replies = %q, want one", replies)
	}
	for _, c := range []string{"/get [KEY]", "/set KEY VALUE", "/unset KEY", "/toggle RULE", "/checklist [show|reset]", "/checklist set", "/logs [N]", "/notes", "/notes clear"} {
		if !strings.Contains(replies[0], c) {
			t.Errorf("/help does not list %s:\n%s", c, replies[0])
		}
	}
}

// TestVeryLongReplyTruncated: a reply is split into at most five messages;
// the fifth is cut short and says so, within Telegram's limit.
func TestVeryLongReplyTruncated(t *testing.T) {
	long := strings.Repeat(strings.Repeat("y", 59)+"\n", 600) // 36,000 characters
	replies := runScript(t, &transporttest.Recorder{SensorsReply: long}, "/sensors")
	if len(replies) != maxReplyParts {
		t.Fatalf("a %d-character reply came in %d messages, want %d", len(long), len(replies), maxReplyParts)
	}
	last := replies[len(replies)-1]
	if !strings.HasSuffix(last, "(truncated: the answer is longer than Telegram's messages allow; the CLI and MQTT have it whole)") {
		t.Errorf("last message ends %q, want the truncation notice", last[max(len(last)-120, 0):])
	}
	for i, r := range replies {
		if len16(r) > maxText {
			t.Errorf("message %d is %d characters, more than %d", i, len16(r), maxText)
		}
	}
	if !strings.HasPrefix(long, strings.Join(replies[:len(replies)-1], "")) {
		t.Error("the first messages are not the start of the reply")
	}
}

func TestParseChecklist(t *testing.T) {
	tests := []struct {
		arg      string
		op, text string
		ok       bool
	}{
		{"", "show", "", true},
		{"show", "show", "", true},
		{"reset", "reset", "", true},
		{"set\n- a\n  - b", "set", "- a\n  - b\n", true},
		{"set   \n\n- a", "set", "\n- a\n", true},
		{"set - a", "set", "- a\n", true},
		{"set\r\n- a", "set", "- a\n", true},
		{"set", "", "", false},
		{"set \n  ", "", "", false},
		{"reset now", "", "", false},
		{"settings", "", "", false},
		{"SHOW", "", "", false},
	}
	for _, tt := range tests {
		op, text, ok := parseChecklist(tt.arg)
		if op != tt.op || text != tt.text || ok != tt.ok {
			t.Errorf("parseChecklist(%q) = %q, %q, %v; want %q, %q, %v", tt.arg, op, text, ok, tt.op, tt.text, tt.ok)
		}
	}
}

func FuzzParseChecklist(f *testing.F) {
	for _, s := range []string{"", "show", "reset", "set\n- a", "set - a", "set", "set \r\n", "reset x", "\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, arg string) {
		op, text, ok := parseChecklist(arg)
		if !ok {
			if op != "" || text != "" {
				t.Fatalf("parseChecklist(%q) = %q, %q, false", arg, op, text)
			}
			return
		}
		switch op {
		case transport.ChecklistShow, transport.ChecklistReset:
			if text != "" {
				t.Fatalf("parseChecklist(%q) = %q with text %q", arg, op, text)
			}
		case transport.ChecklistSet:
			if strings.TrimSpace(text) == "" || !strings.HasSuffix(text, "\n") {
				t.Fatalf("parseChecklist(%q) set text %q", arg, text)
			}
		default:
			t.Fatalf("parseChecklist(%q) op = %q", arg, op)
		}
	})
}
