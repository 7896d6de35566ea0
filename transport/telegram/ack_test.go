package telegram

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vigil-iot/vigil/alert"
	"github.com/vigil-iot/vigil/internal/transporttest"
	"github.com/vigil-iot/vigil/schedule"
	"github.com/vigil-iot/vigil/store"
	"github.com/vigil-iot/vigil/transport"
)

const (
	ackOwner    = 1111
	ackStranger = 2222
)

// ackingCommands acknowledges as the daemon does: it records the ack and
// tells the bot, which edits the problem's messages. notFiring names the
// targets to refuse with transport.ErrNotFiring.
type ackingCommands struct {
	*transporttest.Recorder
	bot       *Bot
	notFiring []string

	mu     sync.Mutex
	acked  []string
	by     []transport.Source
	editOK chan error
}

func (c *ackingCommands) Ack(ctx context.Context, target string) (string, error) {
	if slices.Contains(c.notFiring, target) {
		return "", fmt.Errorf("alert %s is no longer firing: it resolved: %w", target, transport.ErrNotFiring)
	}
	src := transport.SourceOf(ctx)
	c.mu.Lock()
	c.acked, c.by = append(c.acked, target), append(c.by, src)
	c.mu.Unlock()
	p := testAlert("")
	p.ID, p.AckedBy, p.AckedAt = target, src.Who(), time.Date(2025, 3, 1, 12, 5, 0, 0, time.UTC)
	c.editOK <- c.bot.Acknowledged(ctx, p, []string{target})
	return "acknowledged too_hot by " + src.Who(), nil
}

func (c *ackingCommands) calls() ([]string, []transport.Source) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.acked), slices.Clone(c.by)
}

// openDB opens a state file in a temporary directory, closed when the
// test ends.
func openDB(t *testing.T) *store.DB {
	t.Helper()
	db, err := store.Open(filepath.Join(t.TempDir(), "vigil.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// newAckBot is a bot that takes commands from the alert chat, from
// ackOwner only, remembering its messages in a real state file.
func newAckBot(t *testing.T, f *fakeAPI) (*Bot, *ackingCommands, *store.DB) {
	t.Helper()
	db := openDB(t)
	cmds := &ackingCommands{Recorder: &transporttest.Recorder{}, editOK: make(chan error, 4)}
	b := newTestBot(t, f, Config{AllowedChats: []int64{alertChat}, AllowedUsers: []int64{ackOwner}, Messages: db, Digests: db}, nil, cmds, nil, nil)
	cmds.bot = b
	return b, cmds, db
}

// keyboardData returns the callback_data of the buttons of a sent message.
func keyboardData(t *testing.T, m sentMessage) []string {
	t.Helper()
	if m.Markup == nil {
		return nil
	}
	raw, _ := json.Marshal(m.Markup)
	var kb inlineKeyboard
	if err := json.Unmarshal(raw, &kb); err != nil {
		t.Fatalf("reply_markup %s: %v", raw, err)
	}
	var out []string
	for _, row := range kb.Rows {
		for _, bt := range row {
			if bt.Text != "Acknowledge" {
				t.Errorf("button %q, want Acknowledge", bt.Text)
			}
			out = append(out, bt.Data)
		}
	}
	return out
}

// TestAcknowledgeButton: a firing problem's message carries one
// Acknowledge button whose callback_data fits Telegram's 64 bytes, also
// with the longest device id; a resolved alert, a notice and a bot that
// takes no commands from the alert chat get none.
func TestAcknowledgeButton(t *testing.T) {
	f := newFakeAPI(t)
	b, _, _ := newAckBot(t, f)
	long := testAlert("hot")
	long.Device = strings.Repeat("d", 64)
	long.ID = long.Device + "-0123456789abcdef"
	resolved := testAlert("cool again")
	resolved.State = alert.StateResolved
	notice := testAlert("heartbeat.interval set")
	notice.Source, notice.Rule, notice.State = alert.SourceSystem, alert.RuleSetting, alert.StateNotice
	for _, a := range []alert.Alert{testAlert("hot"), long, resolved, notice} {
		if err := b.Notify(context.Background(), a); err != nil {
			t.Fatal(err)
		}
	}
	sent := f.Sent()
	if got := keyboardData(t, sent[0]); !slices.Equal(got, []string{"ack:a1"}) {
		t.Errorf("firing alert's buttons = %q, want one Acknowledge with ack:a1", got)
	}
	if got := keyboardData(t, sent[1]); len(got) != 1 || got[0] != "ack:0123456789abcdef" || len(got[0]) > maxCallbackData {
		t.Errorf("buttons with a 64-byte device id = %q, want ack: and the id's random part", got)
	}
	for i, what := range []string{"resolved", "notice"} {
		if got := keyboardData(t, sent[2+i]); got != nil {
			t.Errorf("%s alert has buttons %q, want none", what, got)
		}
	}

	// No commands from the alert chat: no button.
	f2 := newFakeAPI(t)
	b2 := newTestBot(t, f2, Config{AllowedChats: []int64{999}, Messages: openDB(t)}, nil, &transporttest.Recorder{}, nil, nil)
	if err := b2.Notify(context.Background(), testAlert("hot")); err != nil {
		t.Fatal(err)
	}
	if got := keyboardData(t, f2.Sent()[0]); got != nil {
		t.Errorf("buttons with the alert chat not in allowed_chats = %q, want none", got)
	}
	// An ack from another channel edits the message all the same.
	p := testAlert("hot")
	p.AckedBy, p.AckedAt = "cli", time.Date(2025, 3, 1, 12, 5, 0, 0, time.UTC)
	if err := b2.Acknowledged(context.Background(), p, []string{"a1"}); err != nil {
		t.Fatal(err)
	}
	if e := f2.Calls("editMessageText"); len(e) != 1 || num(e[0].Body, "message_id") != 1 || !strings.Contains(fmt.Sprint(e[0].Body["text"]), "acknowledged by cli at 2025-03-01 12:05:00 +00:00") {
		t.Errorf("edits after an ack from the CLI = %v, want message 1 saying so", e)
	}
}

// TestAcknowledgePress: a press of the button, posted by the Bot API as a
// callback_query, acknowledges the message's alert as the user who
// pressed it (named); the message is edited to say who acknowledged it
// and when, and loses its button; the press is answered. A press from a
// user outside allowed_users is refused in its answer and changes
// nothing.
func TestAcknowledgePress(t *testing.T) {
	f := newFakeAPI(t)
	b, cmds, _ := newAckBot(t, f)
	a := testAlert("Greenhouse at 36 °C")
	a.ID = "greenhouse-pi-0123456789abcdef"
	if err := b.Notify(context.Background(), a); err != nil {
		t.Fatal(err)
	}
	msg := int64(len(f.Sent())) // the fake's message ids count the messages
	runBot(t, b)

	f.addCallback(1, alertChat, msg, ackStranger, "mallory", "ack:0123456789abcdef")
	waitFor(t, "the stranger's press answered", func() bool { return len(f.Calls("answerCallbackQuery")) == 1 })
	if got := f.Calls("answerCallbackQuery")[0].Body; got["callback_query_id"] != "cb1" || !strings.Contains(fmt.Sprint(got["text"]), "not allowed: you are not in allowed_users") {
		t.Errorf("answer to the stranger = %v, want not allowed", got)
	}
	if acked, _ := cmds.calls(); len(acked) != 0 || len(f.Calls("editMessageText")) != 0 {
		t.Fatalf("a stranger's press acknowledged %v and edited %d messages, want nothing", acked, len(f.Calls("editMessageText")))
	}

	f.addCallback(2, alertChat, msg, ackOwner, "ann", "ack:0123456789abcdef")
	waitFor(t, "the owner's press answered", func() bool { return len(f.Calls("answerCallbackQuery")) == 2 })
	if err := <-cmds.editOK; err != nil {
		t.Fatalf("Acknowledged() = %v", err)
	}
	acked, by := cmds.calls()
	want := transport.Source{Channel: transport.ChannelTelegram, Chat: alertChat, User: ackOwner, Name: "@ann"}
	if !slices.Equal(acked, []string{a.ID}) || by[0] != want {
		t.Fatalf("press acknowledged %v by %+v, want %s by %+v", acked, by, a.ID, want)
	}
	if got := f.Calls("answerCallbackQuery")[1].Body; got["callback_query_id"] != "cb2" || !strings.Contains(fmt.Sprint(got["text"]), "acknowledged too_hot") {
		t.Errorf("answer to the owner = %v, want acknowledged", got)
	}
	edits := f.Calls("editMessageText")
	if len(edits) != 1 {
		t.Fatalf("%d edits, want 1", len(edits))
	}
	e := edits[0].Body
	text, _ := renderHTML(fmt.Sprint(e["text"]))
	if num(e, "chat_id") != alertChat || num(e, "message_id") != msg || e["reply_markup"] != nil ||
		!strings.Contains(text, "Greenhouse at 36 °C") ||
		!strings.HasSuffix(text, "☑️ acknowledged by telegram chat -4001 user 1111 (@ann) at 2025-03-01 12:05:00 +00:00") {
		t.Errorf("edit = %v (user sees %q), want message %d in the alert chat naming who acknowledged it, without a button", e, text, msg)
	}
}

// TestAcknowledgePressResolved: a press on the message of a firing that
// resolved since is answered so, and the button goes; a press on a
// message the bot does not remember acknowledges nothing.
func TestAcknowledgePressResolved(t *testing.T) {
	f := newFakeAPI(t)
	b, cmds, _ := newAckBot(t, f)
	if err := b.Notify(context.Background(), testAlert("hot")); err != nil {
		t.Fatal(err)
	}
	cmds.notFiring = []string{"a1"}
	runBot(t, b)
	f.addCallback(1, alertChat, 1, ackOwner, "", "ack:a1")
	f.addCallback(2, alertChat, 99, ackOwner, "", "ack:zz")
	waitFor(t, "both presses answered", func() bool { return len(f.Calls("answerCallbackQuery")) == 2 })
	answers := f.Calls("answerCallbackQuery")
	if got := fmt.Sprint(answers[0].Body["text"]); !strings.HasPrefix(got, "no longer firing: ") {
		t.Errorf("answer on a resolved alert = %q, want no longer firing", got)
	}
	if got := fmt.Sprint(answers[1].Body["text"]); !strings.Contains(got, "too old") {
		t.Errorf("answer on an unknown message = %q, want too old", got)
	}
	drops := f.Calls("editMessageReplyMarkup")
	if len(drops) != 1 || num(drops[0].Body, "message_id") != 1 {
		t.Errorf("keyboard removals = %v, want message 1's", drops)
	}
	if acked, _ := cmds.calls(); len(acked) != 0 {
		t.Errorf("acknowledged %v, want nothing", acked)
	}
}

// TestAckCommand: /ack takes nothing or one word, names the sender, and
// says which entry of [manage] remote would allow it.
func TestAckCommand(t *testing.T) {
	f := newFakeAPI(t)
	cmds := &transporttest.Recorder{}
	b := newTestBot(t, f, Config{AllowedChats: []int64{alertChat}}, nil, cmds, nil, nil)
	runBot(t, b)
	f.addUpdate(1, alertChat, "/ack too_hot")
	f.addUpdate(2, alertChat, "/ack")
	f.addUpdate(3, alertChat, "/ack too hot")
	waitFor(t, "three replies", func() bool { return len(repliesTo(f, alertChat)) == 3 })
	if got := cmds.Calls(); !slices.Equal(got, []string{"ack too_hot", "ack "}) {
		t.Errorf("acks = %q, want too_hot and the one firing", got)
	}
	if r := repliesTo(f, alertChat); r[0] != "acknowledged too_hot" || r[2] != usageAck {
		t.Errorf("replies = %q", r)
	}
	if s := cmds.Sources()[0]; s.Name != "A" || s.Chat != alertChat {
		t.Errorf("source = %+v, want the sender named", s)
	}

	f2 := newFakeAPI(t)
	refusing := &transporttest.Recorder{Err: transporttest.NotAllowed("status")}
	b2 := newTestBot(t, f2, Config{AllowedChats: []int64{alertChat}}, nil, refusing, nil, nil)
	runBot(t, b2)
	f2.addUpdate(1, alertChat, "/ack too_hot")
	waitFor(t, "a reply", func() bool { return len(repliesTo(f2, alertChat)) == 1 })
	if r := repliesTo(f2, alertChat)[0]; r != `not allowed: add "ack" to [manage] remote` {
		t.Errorf("reply without ack in [manage] remote = %q", r)
	}
}

// TestAckOfHeldAlert: an alert held for the digest has no message to
// edit; acknowledged meanwhile, its digest line says who acknowledged it
// and when.
func TestAckOfHeldAlert(t *testing.T) {
	loc := berlin(t)
	r := newDigestRig(t, Config{Quiet: &schedule.Window{Start: 22 * time.Hour, End: 7 * time.Hour}}, time.Date(2026, 1, 10, 23, 0, 0, 0, loc))
	damp := r.alert(alert.Warning, "damp", alert.StateFiring)
	dry := r.alert(alert.Warning, "dry", alert.StateFiring)
	r.notify(damp)
	r.notify(dry)
	p := damp
	p.AckedBy, p.AckedAt = "cli", time.Date(2026, 1, 11, 2, 30, 0, 0, loc)
	if err := r.bot.Acknowledged(context.Background(), p, []string{damp.ID}); err != nil {
		t.Fatalf("Acknowledged() = %v", err)
	}
	r.advanceTo(time.Date(2026, 1, 11, 7, 0, 0, 0, loc))
	r.step()
	sent := r.f.Sent()
	if len(sent) != 1 {
		t.Fatalf("%d messages, want the digest", len(sent))
	}
	lines := strings.Split(sent[0].Rendered, "\n")
	var dampLine, dryLine string
	for _, l := range lines {
		switch {
		case strings.Contains(l, damp.Summary):
			dampLine = l
		case strings.Contains(l, dry.Summary):
			dryLine = l
		}
	}
	if !strings.HasSuffix(dampLine, "☑️ acknowledged by cli 02:30:00") || strings.Contains(dryLine, "acknowledged") {
		t.Errorf("digest lines = %q / %q, want the ack on damp's only:\n%s", dampLine, dryLine, sent[0].Rendered)
	}
}
