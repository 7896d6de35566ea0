package telegram

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/vigil-iot/vigil/alert"
	"github.com/vigil-iot/vigil/internal/transporttest"
	"github.com/vigil-iot/vigil/transport"
)

// proposalNotice is the notice that brings a proposal to a person.
func proposalNotice(id string, noisy bool) alert.Alert {
	at := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	return alert.Alert{ID: "greenhouse-pi-n1", Device: "greenhouse-pi", Time: at, Severity: alert.Info, Source: alert.SourceLLM,
		Rule: "door_warm", State: alert.StateNotice, Summary: "the model proposes a rule: door_warm",
		Proposal: &alert.Proposal{ID: id, Name: "door_warm", When: "air.temperature > 34", For: "10s", Severity: "warning",
			Message: "warm after the door", Why: "It climbs <0.3 °C> an hour after each door opening.", At: at, State: alert.ProposalPending,
			Backtest: alert.Backtest{From: at.Add(-48 * time.Hour), To: at, Samples: 2880, Fired: 2, FiringS: 1200, PerDay: 1,
				First: at.Add(-30 * time.Hour), Last: at.Add(-time.Hour), OnPrompt: true, Noisy: noisy}}}
}

// buttons returns the text and callback_data of a sent message's buttons.
func buttons(t *testing.T, m sentMessage) (texts, data []string) {
	t.Helper()
	if m.Markup == nil {
		return nil, nil
	}
	raw, _ := json.Marshal(m.Markup)
	var kb inlineKeyboard
	if err := json.Unmarshal(raw, &kb); err != nil {
		t.Fatalf("reply_markup %s: %v", raw, err)
	}
	for _, row := range kb.Rows {
		for _, bt := range row {
			texts, data = append(texts, bt.Text), append(data, bt.Data)
		}
	}
	return texts, data
}

// TestProposalNotice: a proposal reaches the alert chat as a notice with
// the rule, the model's why (escaped), the backtest, the word noisy when
// it is, and Approve and Reject buttons naming its ID; a bot that takes no
// commands from the alert chat sends it without buttons.
func TestProposalNotice(t *testing.T) {
	f := newFakeAPI(t)
	b := newTestBot(t, f, Config{AllowedChats: []int64{alertChat}}, nil, &transporttest.Recorder{}, nil, nil)
	for _, a := range []alert.Alert{proposalNotice("p7", false), proposalNotice("p8", true)} {
		if err := b.Notify(context.Background(), a); err != nil {
			t.Fatal(err)
		}
	}
	sent := f.Sent()
	text := sent[0].Rendered
	for _, want := range []string{"ℹ️ NOTICE · door_warm\nThe model proposes a rule (p7).\nrule: door_warm: air.temperature > 34 for 10s → warning: warm after the door",
		"why: It climbs <0.3 °C> an hour after each door opening.", "backtest: would have fired 2 times over 48 h of history", "or send: /rule approve p7"} {
		if !strings.Contains(text, want) {
			t.Errorf("proposal notice reads\n%s\nwant %q in it", text, want)
		}
	}
	if strings.Contains(text, "noisy") || !strings.Contains(sent[1].Rendered, "backtest: noisy: would have fired") {
		t.Errorf("noisy only on the noisy one:\n%s\n---\n%s", text, sent[1].Rendered)
	}
	texts, data := buttons(t, sent[0])
	if !slices.Equal(texts, []string{"Approve", "Reject"}) || !slices.Equal(data, []string{"rule:approve:p7", "rule:reject:p7"}) {
		t.Errorf("buttons = %q %q, want Approve rule:approve:p7 and Reject rule:reject:p7", texts, data)
	}

	f2 := newFakeAPI(t)
	b2 := newTestBot(t, f2, Config{AllowedChats: []int64{999}}, nil, &transporttest.Recorder{}, nil, nil)
	if err := b2.Notify(context.Background(), proposalNotice("p7", false)); err != nil {
		t.Fatal(err)
	}
	if texts, _ := buttons(t, f2.Sent()[0]); texts != nil {
		t.Errorf("buttons with the alert chat not in allowed_chats = %q, want none", texts)
	}
}

// TestProposalPress: a stranger's press (not in allowed_users) is refused
// and decides nothing; the owner's Approve approves the proposal by its
// ID, as the owner, and the buttons go; without "rule" in [manage] remote
// the press is answered with the entry to add, and a decided proposal's
// press says so.
func TestProposalPress(t *testing.T) {
	f := newFakeAPI(t)
	cmds := &transporttest.Recorder{}
	b := newTestBot(t, f, Config{AllowedChats: []int64{alertChat}, AllowedUsers: []int64{ackOwner}}, nil, cmds, nil, nil)
	if err := b.Notify(context.Background(), proposalNotice("p7", false)); err != nil {
		t.Fatal(err)
	}
	runBot(t, b)
	f.addCallback(1, alertChat, 1, ackStranger, "mallory", "rule:approve:p7")
	waitFor(t, "the stranger's press answered", func() bool { return len(f.Calls("answerCallbackQuery")) == 1 })
	if got := fmt.Sprint(f.Calls("answerCallbackQuery")[0].Body["text"]); !strings.Contains(got, "not allowed: you are not in allowed_users") {
		t.Errorf("answer to the stranger = %q, want not allowed", got)
	}
	if got := cmds.Calls(); len(got) != 0 {
		t.Fatalf("a stranger's press decided %q, want nothing", got)
	}

	f.addCallback(2, alertChat, 1, ackOwner, "ann", "rule:approve:p7")
	f.addCallback(3, alertChat, 1, ackOwner, "ann", "rule:reject:unknown")
	waitFor(t, "the owner's presses answered", func() bool { return len(f.Calls("answerCallbackQuery")) == 3 })
	want := transport.Source{Channel: transport.ChannelTelegram, Chat: alertChat, User: ackOwner, Name: "@ann"}
	if got := cmds.Calls(); !slices.Equal(got, []string{"rule approve p7"}) || cmds.Sources()[0] != want {
		t.Fatalf("decisions = %q by %+v, want approve p7 by %+v", got, cmds.Sources(), want)
	}
	answers := f.Calls("answerCallbackQuery")
	if got := fmt.Sprint(answers[1].Body["text"]); got != "approved p7" {
		t.Errorf("answer to the owner = %q, want the daemon's answer", got)
	}
	if got := fmt.Sprint(answers[2].Body["text"]); !strings.Contains(got, "no such proposal") {
		t.Errorf("answer on a decided proposal = %q, want no such proposal", got)
	}
	if drops := f.Calls("editMessageReplyMarkup"); len(drops) != 2 || num(drops[0].Body, "message_id") != 1 {
		t.Errorf("keyboard removals = %v, want message 1's after each decision", drops)
	}

	f2 := newFakeAPI(t)
	refusing := &transporttest.Recorder{Err: transporttest.NotAllowed("status", "ack")}
	b2 := newTestBot(t, f2, Config{AllowedChats: []int64{alertChat}}, nil, refusing, nil, nil)
	runBot(t, b2)
	f2.addCallback(1, alertChat, 1, ackOwner, "", "rule:reject:p7")
	waitFor(t, "the press answered", func() bool { return len(f2.Calls("answerCallbackQuery")) == 1 })
	if got := fmt.Sprint(f2.Calls("answerCallbackQuery")[0].Body["text"]); got != `not allowed: add "rule" to [manage] remote` {
		t.Errorf("answer without rule in [manage] remote = %q", got)
	}
}

// TestRuleCommand: /rule approve|reject ID and /rule drop NAME decide as
// the buttons do; anything else is answered with the usage.
func TestRuleCommand(t *testing.T) {
	f := newFakeAPI(t)
	cmds := &transporttest.Recorder{}
	b := newTestBot(t, f, Config{AllowedChats: []int64{alertChat}}, nil, cmds, nil, nil)
	runBot(t, b)
	for i, text := range []string{"/rule approve p7", "/rule drop door_warm", "/rule show p7", "/rule approve", "/rule reject p7 p8"} {
		f.addUpdate(int64(i+1), alertChat, text)
	}
	waitFor(t, "five replies", func() bool { return len(repliesTo(f, alertChat)) == 5 })
	if got := cmds.Calls(); !slices.Equal(got, []string{"rule approve p7", "rule drop door_warm"}) {
		t.Errorf("decisions = %q, want approve p7 and drop door_warm", got)
	}
	r := repliesTo(f, alertChat)
	if r[0] != "approved p7" || r[1] != "dropped door_warm" || r[2] != usageRule || r[3] != usageRule || r[4] != usageRule {
		t.Errorf("replies = %q", r)
	}
}
