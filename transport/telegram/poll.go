package telegram

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/vigil-iot/vigil/alert"
	"github.com/vigil-iot/vigil/transport"
)

const help = `vigil commands:
/status – next run, last runs, pause, outbox
/check – run the heartbeat checklist now
/pause MINUTES – pause heartbeats (1..1440)
/resume – resume heartbeats
/sensors – read every sensor now
/get [KEY] – a setting with its origin, or all of them
/set KEY VALUE – change a setting, e.g. /set heartbeat.interval 10m
/unset KEY – back to the config file's value
/toggle RULE – turn a rule off or on
/checklist [show|reset] – the checklist in force, or drop the one set from afar
/checklist set – with the new checklist on the next lines of the message
/logs [N] – the last N runs and commands (1..50, default 10)
/notes – the model's notes; /notes clear drops them
/ack [RULE|ID] – acknowledge a firing problem: no reminders until it resolves (or press Acknowledge on its message)
/rule approve|reject ID – decide on a rule the model proposed (or press Approve or Reject on its message); /rule drop NAME removes it

Which of these a chat may use is [manage] remote's to say.`

// Usage lines, answered when a command's argument is wrong.
const (
	usageGet       = "usage: /get [KEY], e.g. /get heartbeat.interval; /get alone lists every key"
	usageSet       = "usage: /set KEY VALUE, e.g. /set heartbeat.interval 10m"
	usageUnset     = "usage: /unset KEY, e.g. /unset heartbeat.interval"
	usageToggle    = "usage: /toggle RULE, e.g. /toggle too_hot"
	usageChecklist = "usage: /checklist [show|reset], or /checklist set with the new checklist on the next lines of the same message"
	usageLogs      = "usage: /logs [N] (N 1..50, default 10)"
	usageNotes     = "usage: /notes, or /notes clear"
	usageAck       = "usage: /ack [RULE|ID], e.g. /ack too_hot, /ack llm; /ack alone acknowledges the only problem firing"
	usageRule      = "usage: /rule approve ID, /rule reject ID (a proposal, e.g. p7, or its name), /rule drop NAME (a run-time rule)"
)

// Limits of /logs.
const (
	defaultLogs = 10
	maxLogs     = 50
)

// Run long-polls getUpdates and answers commands from the allowed chats,
// persisting the update offset after each batch, and sends the digest of
// held alerts when it is due. Without allowed chats it polls nothing.
// Errors are logged and retried with backoff; a 409 (another poller or a
// webhook holds the bot) is logged once per episode. Run returns nil when
// ctx ends.
func (b *Bot) Run(ctx context.Context) error {
	if b.holds() {
		done := make(chan struct{})
		go func() {
			defer close(done)
			b.digestLoop(ctx)
		}()
		defer func() { <-done }()
	}
	if len(b.cfg.AllowedChats) == 0 || b.cmds == nil {
		<-ctx.Done()
		return nil
	}
	offset, err := b.state.Offset()
	if err != nil {
		b.log.Error("telegram read update offset", keyErr, err)
	}
	me := meRetry{backoff: minBackoff}
	// An outage is one WARN when it starts (its retries are DEBUG) and
	// one INFO when polling works again; a conflict is its own episode.
	backoff, conflict, failed := minBackoff, false, 0
	for {
		b.whoami(ctx, &me)
		next, err := b.poll(ctx, offset)
		if ctx.Err() != nil {
			return nil
		}
		if err == nil {
			if failed > 0 && !conflict {
				b.log.Info("telegram getUpdates works again", keyFailed, failed)
			}
			offset, backoff, conflict, failed = next, minBackoff, false, 0
			continue
		}
		wait := backoff
		var ae *APIError
		switch {
		case errors.As(err, &ae) && ae.Code == statusConflict:
			wait = max(wait, conflictWait)
			if !conflict {
				b.log.Warn("telegram getUpdates conflict: another vigil or a webhook uses this bot token; commands are not received until it stops", keyErr, err)
				conflict = true
			}
		default:
			if errors.As(err, &ae) && ae.RetryAfter > 0 {
				wait = max(wait, ae.RetryAfter)
			}
			level := slog.LevelWarn
			if failed > 0 {
				level = slog.LevelDebug
			}
			b.log.Log(ctx, level, "telegram getUpdates", keyErr, err, keyRetryIn, wait)
		}
		failed++
		if b.sleep(ctx, wait) != nil {
			return nil
		}
		backoff = min(backoff*2, maxBackoff)
	}
}

// meRetry is when whoami tries getMe again, and the backoff after that.
type meRetry struct {
	next    time.Time
	backoff time.Duration
	failing bool
}

// whoami learns the bot's username, so "/status@other_bot" in a group is
// left to the other bot. Until it knows, every command that names a bot is
// ignored (parseCommand): the unit may start before the network is up, so
// a getMe that fails is tried again, before each poll once the backoff
// (1 s doubling to 5 min, on the bot's clock) has passed.
func (b *Bot) whoami(ctx context.Context, r *meRetry) {
	b.mu.Lock()
	known := b.username != ""
	b.mu.Unlock()
	if known || b.clock.Now().Before(r.next) {
		return
	}
	var me struct {
		Username string `json:"username"`
	}
	err := b.call(ctx, "getMe", struct{}{}, &me, sendTimeout)
	if err == nil && me.Username == "" {
		err = errors.New("getMe answered no username")
	}
	if err != nil {
		if ctx.Err() != nil {
			return
		}
		if !r.failing {
			b.log.Warn("telegram getMe: commands that name a bot (/status@name) are ignored until it answers", keyErr, err, keyRetryIn, r.backoff)
			r.failing = true
		} else {
			b.log.Debug("telegram getMe", keyErr, err, keyRetryIn, r.backoff)
		}
		r.next = b.clock.Now().Add(r.backoff)
		r.backoff = min(r.backoff*2, maxBackoff)
		return
	}
	if r.failing {
		b.log.Info("telegram getMe answered after a failure", "username", me.Username)
	}
	b.mu.Lock()
	b.username = me.Username
	b.mu.Unlock()
}

// getUpdates is the body of a getUpdates request.
type getUpdates struct {
	Offset         int64    `json:"offset"`
	Timeout        int64    `json:"timeout"`
	AllowedUpdates []string `json:"allowed_updates"`
}

// poll runs one getUpdates long poll, handles the batch and persists the
// next offset. It returns the offset for the next poll.
func (b *Bot) poll(ctx context.Context, offset int64) (int64, error) {
	var ups []update
	req := getUpdates{Offset: offset, Timeout: int64(b.cfg.PollTimeout / time.Second), AllowedUpdates: []string{"message", "callback_query"}}
	if err := b.call(ctx, "getUpdates", req, &ups, b.cfg.PollTimeout+15*time.Second); err != nil {
		return offset, fmt.Errorf("telegram: %w", err)
	}
	next := offset
	for _, u := range ups {
		if u.UpdateID < offset {
			continue // already handled; a server that ignores offset must not replay commands
		}
		b.handle(ctx, u)
		next = max(next, u.UpdateID+1)
	}
	if next != offset {
		if err := b.state.SetOffset(next); err != nil {
			b.log.Error("telegram persist update offset", keyErr, err)
		}
	}
	return next, nil
}

// handle answers one update.
func (b *Bot) handle(ctx context.Context, u update) {
	if u.CallbackQuery != nil {
		b.handleCallback(ctx, u.CallbackQuery)
		return
	}
	m := u.Message
	if m == nil {
		return
	}
	chat := m.Chat.ID
	if !b.allowed(chat) {
		b.logOnce(b.unknown, chat, "telegram message from a chat not in allowed_chats ignored", keyChat, chat)
		return
	}
	if m.MigrateToChatID != 0 {
		b.migrated(chat, m.MigrateToChatID)
		return
	}
	b.mu.Lock()
	username := b.username
	b.mu.Unlock()
	name, arg, ok := parseCommand(m.Text, username)
	if !ok {
		return
	}
	if why := m.notFromSender(); why != "" {
		// Whoever forwards a command, or posts as a channel or an
		// anonymous admin, is not the person allowed_users names.
		b.log.Debug("telegram command ignored: "+why, keyChat, chat, keyCommand, name)
		return
	}
	var user int64
	if m.From != nil {
		user = m.From.ID
	}
	if !b.userAllowed(user) {
		b.logOnce(b.strange, user, "telegram command from a user not in allowed_users ignored", keyChat, chat, keyUser, user, keyCommand, name)
		return
	}
	b.log.Info("telegram command", keyChat, chat, keyUser, user, keyCommand, name)
	ctx = transport.WithSource(ctx, transport.Source{Channel: transport.ChannelTelegram, Chat: chat, User: user, Name: m.From.name()})
	reply := b.execute(ctx, name, arg)
	for _, part := range replyParts(b.cfg.Redactor, reply) {
		if _, _, err := b.send(ctx, sendMessage{ChatID: chat, Text: part}, false); err != nil {
			b.log.Warn("telegram reply", keyChat, chat, keyErr, err)
			return
		}
	}
}

// replyParts cuts a reply into messages Telegram accepts, at most
// maxReplyParts of them: a longer reply (a whole checklist is 16 KiB at
// most and fits) is cut short and says so. The reply is redacted by red
// first (when not nil), so no cut splits a secret it knows.
func replyParts(red Redactor, reply string) []string {
	if red != nil {
		reply = red.String(reply)
	}
	parts := split(reply, maxText)
	if len(parts) <= maxReplyParts {
		return parts
	}
	const more = "\n… (truncated: the answer is longer than Telegram's messages allow; the CLI and MQTT have it whole)"
	last := strings.Join(parts[maxReplyParts-1:], "")
	last = last[:prefix16(last, maxText-len16(more))] + more
	return append(parts[:maxReplyParts-1:maxReplyParts-1], last)
}

// allowed reports whether chat is an allowed chat or what one became.
func (b *Bot) allowed(chat int64) bool {
	if slices.Contains(b.cfg.AllowedChats, chat) {
		return true
	}
	for _, a := range b.cfg.AllowedChats {
		if now, err := b.state.Chat(a); err == nil && now == chat {
			return true
		}
	}
	return false
}

// userAllowed reports whether user may send commands (and press
// buttons): anyone in an allowed chat, unless allowed_users names whom.
func (b *Bot) userAllowed(user int64) bool {
	return len(b.cfg.AllowedUsers) == 0 || slices.Contains(b.cfg.AllowedUsers, user)
}

// migrated records that chat became newID, for the alert chat and for the
// allowed chats that pointed at it.
func (b *Bot) migrated(chat, newID int64) {
	for _, c := range append([]int64{b.cfg.ChatID}, b.cfg.AllowedChats...) {
		if now, err := b.state.Chat(c); err == nil && now == chat {
			if err := b.state.SetChat(c, newID); err != nil {
				b.log.Error("telegram persist chat migration", keyErr, err)
			}
		}
	}
	b.log.Info("telegram chat migrated to a supergroup", keyChat, chat, "to", newID)
}

// parseCommand splits "/pause@vigil_bot 30" into "pause" and "30". ok is
// false for text that is not a command, or a command for another bot. A
// command that names a bot while username is unknown ("": getMe has not
// answered yet) may be for another bot, and is not ours either.
func parseCommand(text, username string) (name, arg string, ok bool) {
	text = strings.TrimSpace(text)
	if !strings.HasPrefix(text, "/") {
		return "", "", false
	}
	word, rest, _ := strings.Cut(text, " ")
	if i := strings.IndexAny(word, "\n\t"); i >= 0 {
		word, rest = word[:i], word[i+1:]+" "+rest
	}
	word, at, hasAt := strings.Cut(word[1:], "@")
	if hasAt && (username == "" || !strings.EqualFold(at, username)) {
		return "", "", false
	}
	if word == "" {
		return "", "", false
	}
	return strings.ToLower(word), strings.TrimSpace(rest), true
}

// execute runs a command and returns the reply text.
func (b *Bot) execute(ctx context.Context, name, arg string) string {
	ctx, cancel := context.WithTimeout(ctx, commandTimeout)
	defer cancel()
	var (
		out string
		err error
	)
	switch name {
	case "status":
		out, err = b.cmds.Status(ctx)
	case "check":
		out, err = b.cmds.Check(ctx)
	case "pause":
		// The range is checked once for every channel, by the commands.
		n, perr := strconv.Atoi(arg)
		if perr != nil {
			return "usage: /pause MINUTES (1..1440)"
		}
		out, err = b.cmds.Pause(ctx, time.Duration(n)*time.Minute)
		if errors.Is(err, transport.ErrPauseRange) {
			return "usage: /pause MINUTES (1..1440): " + err.Error()
		}
	case "resume":
		out, err = b.cmds.Resume(ctx)
	case "sensors":
		out, err = b.cmds.Sensors(ctx)
	case "get":
		if !oneWord(arg) && arg != "" {
			return usageGet
		}
		out, err = b.cmds.Get(ctx, arg)
	case "set":
		key, value, ok := cutWord(arg)
		if !ok || value == "" {
			return usageSet
		}
		out, err = b.cmds.Set(ctx, key, value)
	case "unset":
		if !oneWord(arg) {
			return usageUnset
		}
		out, err = b.cmds.Unset(ctx, arg)
	case "toggle":
		if !oneWord(arg) {
			return usageToggle
		}
		out, err = b.cmds.Toggle(ctx, arg)
	case "checklist":
		op, text, ok := parseChecklist(arg)
		if !ok {
			return usageChecklist
		}
		out, err = b.cmds.Checklist(ctx, op, text)
	case "logs":
		n := defaultLogs
		if arg != "" {
			var perr error
			n, perr = strconv.Atoi(arg)
			if perr != nil || n < 1 || n > maxLogs {
				return usageLogs
			}
		}
		out, err = b.cmds.Logs(ctx, n)
	case "notes":
		if arg != "" && arg != "clear" {
			return usageNotes
		}
		out, err = b.cmds.Notes(ctx, arg == "clear")
	case "ack":
		if arg != "" && !oneWord(arg) {
			return usageAck
		}
		out, err = b.cmds.Ack(ctx, arg)
	case "rule":
		op, target, _ := cutWord(arg)
		if (op != transport.RuleApprove && op != transport.RuleReject && op != transport.RuleDrop) || !oneWord(target) {
			return usageRule
		}
		out, err = b.cmds.RuleDecide(ctx, op, target)
	case "start", "help":
		return help
	default:
		return "unknown command /" + clip16(b.cfg.Redactor, name, 32) + "\n\n" + help
	}
	if errors.Is(err, alert.ErrNotAllowed) {
		return fmt.Sprintf("not allowed: add %q to [manage] remote", remoteVerb(name))
	}
	if err != nil {
		return "error: " + err.Error()
	}
	if strings.TrimSpace(out) == "" {
		return "done"
	}
	return out
}

// remoteVerb is the [manage] remote entry that allows a command: /toggle
// sets rule.<name>.enabled, and /sensors shows a part of the status.
func remoteVerb(name string) string {
	switch name {
	case "toggle":
		return "set"
	case "sensors":
		return "status"
	}
	return name
}

// oneWord reports whether s is one word, as a key or a rule name is.
func oneWord(s string) bool {
	return s != "" && !strings.ContainsFunc(s, unicode.IsSpace)
}

// cutWord splits "heartbeat.active_hours 07:00-12:00 14:00-22:00" into
// the first word and the rest, trimmed. ok is false without a first word.
func cutWord(s string) (word, rest string, ok bool) {
	s = strings.TrimSpace(s)
	if s == "" {
		return "", "", false
	}
	i := strings.IndexFunc(s, unicode.IsSpace)
	if i < 0 {
		return s, "", true
	}
	return s[:i], strings.TrimSpace(s[i:]), true
}

// parseChecklist reads the argument of /checklist: nothing or "show",
// "reset", or "set" with the new checklist after it, on the lines after
// the command (or the rest of its line). ok is false for anything else and
// for a set without text.
func parseChecklist(arg string) (op, text string, ok bool) {
	word, _, _ := cutWord(arg)
	switch word {
	case "", transport.ChecklistShow:
		if strings.TrimSpace(strings.TrimPrefix(arg, word)) != "" {
			return "", "", false
		}
		return transport.ChecklistShow, "", true
	case transport.ChecklistReset:
		if strings.TrimSpace(strings.TrimPrefix(arg, word)) != "" {
			return "", "", false
		}
		return transport.ChecklistReset, "", true
	case transport.ChecklistSet:
		// The text keeps its own indentation and line breaks: only the
		// blanks after "set" and the line break that ends that line go.
		text = strings.TrimLeft(strings.TrimPrefix(arg, word), " \t")
		text = strings.TrimPrefix(strings.TrimPrefix(text, "\r"), "\n")
		if strings.TrimSpace(text) == "" {
			return "", "", false
		}
		return transport.ChecklistSet, text + "\n", true
	}
	return "", "", false
}
