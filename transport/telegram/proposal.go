// A rule the model proposed, on Telegram: the notice that brings it shows
// the rule, the model's why, the backtest (with the word noisy when it
// is) and the command that approves it (/rule approve ID); when the bot takes commands from
// the alert chat it carries Approve and Reject buttons (callback_data
// "rule:approve:" or "rule:reject:" and the proposal's ID). A press obeys
// allowed_chats and allowed_users as the Acknowledge button does (ack.go);
// the decision is the daemon's (transport.RuleDecider, gated by [manage]
// remote's "rule"). Once decided, or found decided already, the message
// loses its buttons.

package telegram

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/vigil-iot/vigil/alert"
	"github.com/vigil-iot/vigil/transport"
)

// ruleData starts the callback_data of the Approve and Reject buttons.
const ruleData = "rule:"

// proposalKeyboard is the Approve and Reject buttons of p's notice.
func proposalKeyboard(p *alert.Proposal) *inlineKeyboard {
	data := func(op string) string {
		d := ruleData + op + ":" + p.ID
		return d[:min(len(d), maxCallbackData)]
	}
	return &inlineKeyboard{Rows: [][]inlineButton{{{Text: "Approve", Data: data(transport.RuleApprove)}, {Text: "Reject", Data: data(transport.RuleReject)}}}}
}

// decides reports whether a's message gets the Approve and Reject
// buttons: a pending proposal, and a bot that takes commands from the
// alert chat.
func (b *Bot) decides(a alert.Alert) bool {
	return a.Proposal != nil && a.Proposal.State == alert.ProposalPending && b.cmds != nil && len(b.cfg.AllowedChats) > 0 && b.allowed(b.cfg.ChatID)
}

// proposalText is what a proposal's notice says, instead of its summary.
func proposalText(p *alert.Proposal, loc *time.Location) string {
	return "The model proposes a rule (" + p.ID + ").\nrule: " + p.Name + ": " + transport.ProposedRule(*p) + "\nwhy: " + p.Why +
		"\nbacktest: " + transport.BacktestText(p.Backtest, loc) + "\nor send: /rule approve " + p.ID
}

// decide acts on a press of Approve or Reject (data after "rule:") in
// chat's message msg, the sender allowed, and returns the answer to show.
func (b *Bot) decide(ctx context.Context, q *callbackQuery, chat, msg int64, data string) string {
	op, id, _ := strings.Cut(data, ":")
	if (op != transport.RuleApprove && op != transport.RuleReject) || id == "" {
		return "this button does nothing (any more)"
	}
	b.log.Info("telegram command", keyChat, chat, keyUser, q.From.ID, keyCommand, "rule "+op+" (button)")
	ctx, cancel := context.WithTimeout(transport.WithSource(ctx, transport.Source{Channel: transport.ChannelTelegram,
		Chat: chat, User: q.From.ID, Name: q.From.name()}), commandTimeout)
	defer cancel()
	out, err := b.cmds.RuleDecide(ctx, op, id)
	switch {
	case errors.Is(err, alert.ErrNotAllowed):
		return fmt.Sprintf("not allowed: add %q to [manage] remote", "rule")
	case errors.Is(err, alert.ErrNoProposal): // decided already, on some channel
		b.dropButton(ctx, chat, msg)
		return err.Error()
	case err != nil:
		return "error: " + err.Error()
	}
	b.dropButton(ctx, chat, msg)
	return out
}
