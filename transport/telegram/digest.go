// Quiet hours and the cap: which alerts Telegram holds back, and when the
// digest of held alerts goes out. Telegram is the channel a person reads;
// MQTT and the log still get every alert at once.
//
//   - Quiet hours (Config.Quiet, "22:00-07:00" in the device zone, may wrap
//     midnight): an alert below QuietMinSeverity (default critical) is held;
//     one at or above it is sent at once. Criticals are never held by quiet
//     hours. While the wall clock reads before 2020 (a board without an RTC
//     before NTP) quiet hours do not apply: better a message at night than
//     alerts held on a clock that is wrong.
//   - The cap (Config.MaxPerHour): once that many alert messages went out
//     in the last 60 minutes (a sliding hour; digests count, command
//     replies do not), further alerts are held until the oldest of them is
//     an hour old. The send times are in the state file, so a restart does
//     not reset the count.
//   - A critical past the cap is held like the rest, and the digest goes
//     out at once, every time: a critical is never delayed. What bounds a
//     flapping critical rule is its own hysteresis and the flood guard
//     (heartbeat.max_alerts_per_hour), which holds alerts back from every
//     transport; the cap only folds the rest into the critical's digest.
//   - One digest carries every held alert, in order: at the end of quiet
//     hours, or once the cap frees a slot, whichever is later. It names each
//     alert with its time, severity and summary; a resolved alert whose
//     firing is in the same digest is folded into that line ("resolved
//     06:40:02"). A digest longer than one Telegram message is split into
//     parts ("digest 1/3"), each naming its share.
//   - Held alerts go first: an alert that comes while the digest is due
//     waits until the digest went out.
//   - Notices are held like alerts of their severity, except a test alert
//     (vigil test-alert), which a person asked for now: it goes out at once
//     (and counts against the cap).
//   - The digest is bounded (the state file keeps 256 held alerts). When it
//     is full, notices go first, oldest first: a flood of notices never
//     pushes out an alert. Alerts go only when nothing but alerts is held,
//     the lowest severity first; the digest says how many of each kind
//     were dropped.
//   - Durability: an alert is committed to the state file as held before
//     Notify returns nil, so the outbox lets go of it only then, and a
//     power cut loses none. An alert redelivered after a crash is found
//     held and neither held twice nor sent on its own. A digest part
//     releases its alerts only after Telegram answered ok; a crash between
//     the two sends that part again (at least once, like every alert).

package telegram

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/vigil-iot/vigil/alert"
	"github.com/vigil-iot/vigil/transport"
)

// Digests keeps, durably, the alerts the bot holds for its digest and the
// send times of its alert messages. *store.DB implements it.
type Digests interface {
	// HoldTelegram holds a (once per a.ID) and records the due time.
	HoldTelegram(a alert.Alert, due time.Time, why string) error
	// SetTelegramDue records when the digest goes out, and why then.
	SetTelegramDue(due time.Time, why string) error
	// TelegramPending returns the held alerts (oldest first), how many
	// were dropped from a full ring, and the send times (oldest first).
	TelegramPending() (held []alert.Alert, dropped alert.Dropped, sends []time.Time, err error)
	// TelegramSent records a message sent at at, keeping the newest keep
	// send times, and releases the held alerts it carried.
	TelegramSent(at time.Time, keep int, release []string) error
	// AckTelegramHeld marks the held alerts among ids acknowledged.
	AckTelegramHeld(ids []string, by string, at time.Time) error
}

const (
	capWindow   = time.Hour   // the cap counts the messages of the last hour
	digestCheck = time.Minute // the longest the digest loop waits before it reads the wall clock again
	plausible   = 2020        // a wall clock before this year is not set
	lineSummary = 300         // characters of a summary in a digest line
	dayLayout   = "2006-01-02 -07:00"
)

// Why a digest waits, as `vigil status` shows it.
const (
	whyQuiet  = "quiet hours end"
	whyCap    = "max_per_hour frees a slot"
	whyUrgent = "a critical past max_per_hour"
	whyNow    = "due now"
)

// holds reports whether quiet hours or the cap are on.
func (b *Bot) holds() bool {
	return b.cfg.Digests != nil && (b.cfg.Quiet != nil || b.cfg.MaxPerHour > 0)
}

// pending is what the state file holds for the digest.
type pending struct {
	held    []alert.Alert
	dropped alert.Dropped
	sends   []time.Time
}

func (b *Bot) pending() (pending, error) {
	var p pending
	var err error
	p.held, p.dropped, p.sends, err = b.cfg.Digests.TelegramPending()
	if err != nil {
		return p, fmt.Errorf("telegram: read held alerts: %w", err)
	}
	return p, nil
}

func (p pending) has(id string) bool {
	return slices.ContainsFunc(p.held, func(a alert.Alert) bool { return a.ID == id })
}

// isTest reports whether a is a test alert (vigil test-alert).
func isTest(a alert.Alert) bool { return a.Source == alert.SourceSystem && a.Rule == alert.RuleTest }

// urgent reports whether a is a firing critical: past the cap, it sends the
// digest at once.
func urgent(a alert.Alert) bool { return a.Severity >= alert.Critical && a.IsProblem() }

// notifyHeld is Notify with quiet hours or the cap on.
func (b *Bot) notifyHeld(ctx context.Context, a alert.Alert) error {
	b.dmu.Lock()
	defer b.dmu.Unlock()
	p, err := b.pending()
	if err != nil {
		return err
	}
	if p.has(a.ID) {
		return nil // redelivered after a crash: it waits in the digest
	}
	now := b.clock.Now()
	if !isTest(a) && a.Severity < b.cfg.QuietMinSeverity && b.quiet(now) {
		return b.hold(a, p, now)
	}
	if due, _ := b.due(p.held, p.sends, now); len(p.held) > 0 && !due.After(now) {
		// Held alerts go first.
		if err := b.flush(ctx, p); err != nil {
			return err
		}
		if p, err = b.pending(); err != nil {
			return err
		}
		now = b.clock.Now()
	}
	if !isTest(a) && b.slotFree(p.sends, now).After(now) {
		if err := b.hold(a, p, now); err != nil {
			return err
		}
		if urgent(a) {
			if err := b.digestDue(ctx); err != nil {
				b.log.Warn("telegram digest for a critical past max_per_hour", keyAlert, a.ID, keyErr, err)
			}
		}
		return nil
	}
	if err := b.sendAlert(ctx, a); err != nil {
		return err
	}
	if err := b.cfg.Digests.TelegramSent(b.clock.Now(), b.cfg.MaxPerHour, nil); err != nil {
		b.log.Error("telegram record a sent alert for max_per_hour", keyAlert, a.ID, keyErr, err)
	}
	return nil
}

// quiet reports whether now is in quiet hours.
func (b *Bot) quiet(now time.Time) bool {
	return b.cfg.Quiet != nil && now.Year() >= plausible && b.cfg.Quiet.Contains(now, b.cfg.Location)
}

// slotFree returns when the cap lets the next message go at or after at:
// at itself, or the time the oldest of the last MaxPerHour sends before at
// is an hour old.
func (b *Bot) slotFree(sends []time.Time, at time.Time) time.Time {
	n := b.cfg.MaxPerHour
	if n <= 0 {
		return at
	}
	var recent []time.Time
	for _, s := range sends {
		if s.After(at.Add(-capWindow)) && !s.After(at) {
			recent = append(recent, s)
		}
	}
	if len(recent) < n {
		return at
	}
	return recent[len(recent)-n].Add(capWindow)
}

// due returns when the digest of held goes out, and why then.
func (b *Bot) due(held []alert.Alert, sends []time.Time, now time.Time) (time.Time, string) {
	if len(held) == 0 {
		return time.Time{}, ""
	}
	if slices.ContainsFunc(held, urgent) {
		return now, whyUrgent
	}
	t, why := now, whyNow
	if b.quiet(now) {
		t, why = b.cfg.Quiet.EndAfter(now, b.cfg.Location), whyQuiet
	}
	if free := b.slotFree(sends, t); free.After(t) {
		t, why = free, whyCap
	}
	return t, why
}

// hold commits a as held, with the digest's new due time.
func (b *Bot) hold(a alert.Alert, p pending, now time.Time) error {
	due, why := b.due(append(slices.Clip(p.held), a), p.sends, now)
	if err := b.cfg.Digests.HoldTelegram(a, due, why); err != nil {
		return fmt.Errorf("telegram: hold alert %s: %w", a.ID, err)
	}
	b.storedDue = due
	at := due.In(b.cfg.Location).Format(transport.TimeLayout)
	if len(p.held) == 0 {
		b.log.Info("telegram holds alerts for a digest", keyAlert, a.ID, "due", at, "why", why)
	} else {
		b.log.Debug("telegram alert held for the digest", keyAlert, a.ID, "held", len(p.held)+1, "due", at)
	}
	select {
	case b.nudge <- struct{}{}:
	default:
	}
	return nil
}

// digestLoop sends the digest when it is due, until ctx ends. It sleeps at
// most digestCheck at a time, so a step of the wall clock (NTP at boot) is
// noticed within that.
func (b *Bot) digestLoop(ctx context.Context) {
	backoff, failing := minBackoff, false
	for {
		wait, err := b.digestOnce(ctx)
		if ctx.Err() != nil {
			return
		}
		switch {
		case err != nil:
			if !failing {
				b.log.Warn("telegram digest failing, the held alerts wait", keyErr, err, keyRetryIn, backoff)
				failing = true
			}
			wait, backoff = backoff, min(backoff*2, maxBackoff)
		case failing:
			b.log.Info("telegram digest delivered after a failure")
			backoff, failing = minBackoff, false
		}
		if wait == 0 {
			continue
		}
		if !b.digestWait(ctx, wait) {
			return
		}
	}
}

// digestWait waits d (d < 0: until a nudge) or until an alert is held; it
// reports false when ctx ended.
func (b *Bot) digestWait(ctx context.Context, d time.Duration) bool {
	var timer <-chan time.Time
	if d > 0 {
		t := b.clock.NewTimer(d)
		defer t.Stop()
		timer = t.Chan()
	}
	select {
	case <-ctx.Done():
		return false
	case <-timer:
	case <-b.nudge:
	}
	return true
}

// digestOnce sends the digest if it is due. It returns how long to wait
// before the next look: 0 after a digest went out, -1 when nothing is held
// (wait for a nudge).
func (b *Bot) digestOnce(ctx context.Context) (time.Duration, error) {
	b.dmu.Lock()
	defer b.dmu.Unlock()
	p, err := b.pending()
	if err != nil || len(p.held) == 0 {
		return -1, err
	}
	now := b.clock.Now()
	due, why := b.due(p.held, p.sends, now)
	if due.After(now) {
		if !due.Equal(b.storedDue) {
			if err := b.cfg.Digests.SetTelegramDue(due, why); err != nil {
				b.log.Warn("telegram record when the digest goes out", keyErr, err)
			}
			b.storedDue = due
		}
		return min(due.Sub(now), digestCheck), nil
	}
	return 0, b.flush(ctx, p)
}

// digestDue sends the digest now if it is due (a critical past the cap).
// Caller holds dmu.
func (b *Bot) digestDue(ctx context.Context) error {
	p, err := b.pending()
	if err != nil {
		return err
	}
	now := b.clock.Now()
	if due, _ := b.due(p.held, p.sends, now); len(p.held) == 0 || due.After(now) {
		return nil
	}
	return b.flush(ctx, p)
}

// flush sends the digest of p's held alerts, part by part, releasing each
// part's alerts once Telegram took it. Caller holds dmu.
func (b *Bot) flush(ctx context.Context, p pending) error {
	parts := renderDigest(p.held, p.dropped, b.policy(), b.cfg.Location)
	for i, part := range parts {
		what := "digest"
		if len(parts) > 1 {
			what = fmt.Sprintf("digest %d/%d", i+1, len(parts))
		}
		_, _, err := b.deliver(ctx, what, part.html, part.plain, nil)
		if errors.Is(err, transport.ErrPermanent) {
			b.log.Error("telegram rejected a digest: dropping it (MQTT and the log have every alert)", keyAlert, what, keyErr, err)
		} else if err != nil {
			return err
		}
		if err := b.cfg.Digests.TelegramSent(b.clock.Now(), b.cfg.MaxPerHour, part.ids); err != nil {
			return fmt.Errorf("telegram: release the alerts of the %s: %w", what, err)
		}
	}
	b.storedDue = time.Time{}
	b.log.Info("telegram digest sent", "alerts", len(p.held), "messages", len(parts))
	return nil
}

// policy describes what holds alerts back, for the digest's second line.
func (b *Bot) policy() string {
	var p []string
	if b.cfg.Quiet != nil {
		p = append(p, "quiet hours "+b.cfg.Quiet.String())
	}
	if b.cfg.MaxPerHour > 0 {
		p = append(p, "at most "+strconv.Itoa(b.cfg.MaxPerHour)+" messages an hour")
	}
	return strings.Join(p, " · ")
}

// digestPart is one message of a digest and the held alerts it names.
type digestPart struct {
	html, plain string
	ids         []string
}

// digestLine is one alert of a digest, with the resolution of a firing
// alert folded in.
type digestLine struct {
	ids      []string
	day      string // the date and offset its time reads in
	text     string
	src      string // source and rule, to find the firing a resolved alert ends
	resolved bool
}

// renderDigest renders the held alerts as one message or, when that is too
// long for Telegram, as parts numbered 1/n..n/n, in order; every alert is
// named in exactly one part. dropped (alerts the full ring lost, by kind)
// is said in the first.
func renderDigest(held []alert.Alert, dropped alert.Dropped, policy string, loc *time.Location) []digestPart {
	var lines []*digestLine
	for _, a := range held {
		src := a.Key()
		if a.State == alert.StateResolved {
			if l := openLine(lines, src); l != nil {
				l.ids, l.resolved = append(l.ids, a.ID), true
				l.text += " · ✅ resolved " + clockOf(a.Time, loc)
				continue
			}
		}
		l := &digestLine{ids: []string{a.ID}, day: dayOf(a.Time, loc), text: digestText(a, loc)}
		if a.IsProblem() {
			l.src = src
		} else {
			l.resolved = true // nothing to fold into a resolved or a notice
		}
		lines = append(lines, l)
	}

	device := ""
	if len(held) > 0 {
		device = held[0].Device
	}
	title := func(i, n int) string {
		part := ""
		if n > 1 {
			part = fmt.Sprintf(" %d/%d", i, n)
		}
		return fmt.Sprintf("📋 DIGEST%s · %d held alerts", part, len(held))
	}
	var drop string
	if n := dropped.Total(); n > 0 {
		drop = fmt.Sprintf("%d held alerts are not listed (%s): the digest keeps %d and drops notices first (MQTT and the log have every alert)", n, dropped, len(held))
	}
	// The room for lines in one message: the longest title, the policy,
	// the drop note and the footer, with their line breaks.
	room := maxText - len16(title(99, 99)) - len16(policy) - len16(drop) - len16(device) - 6

	// Fill each part with lines; a part opens with the day of its first.
	var chunks [][]*digestLine
	used, day := 0, ""
	for _, l := range lines {
		n := len16(l.text) + 1
		if l.day != day {
			n += len16(l.day) + 1
		}
		if len(chunks) == 0 || used+n > room {
			chunks = append(chunks, nil)
			used, n = 0, len16(l.text)+1+len16(l.day)+1
		}
		chunks[len(chunks)-1] = append(chunks[len(chunks)-1], l)
		used += n
		day = l.day
	}

	parts := make([]digestPart, len(chunks))
	for i, chunk := range chunks {
		var pl, ht strings.Builder
		head := title(i+1, len(chunks))
		pl.WriteString(head + "\n" + policy)
		ht.WriteString("<b>" + esc(head) + "</b>\n" + esc(policy))
		if i == 0 && drop != "" {
			pl.WriteString("\n" + drop)
			ht.WriteString("\n" + esc(drop))
		}
		day := ""
		for _, l := range chunk {
			if l.day != day {
				day = l.day
				pl.WriteString("\n" + day)
				ht.WriteString("\n<b>" + esc(day) + "</b>")
			}
			pl.WriteString("\n" + l.text)
			ht.WriteString("\n" + esc(l.text))
			parts[i].ids = append(parts[i].ids, l.ids...)
		}
		pl.WriteString("\n" + device)
		ht.WriteString("\n<i>" + esc(device) + "</i>")
		parts[i].plain, parts[i].html = pl.String(), ht.String()
	}
	return parts
}

// openLine returns the latest line of a firing alert from src that no
// resolved alert folded into yet, or nil.
func openLine(lines []*digestLine, src string) *digestLine {
	for i := len(lines) - 1; i >= 0; i-- {
		if l := lines[i]; l.src == src && !l.resolved {
			return l
		}
	}
	return nil
}

// digestText is an alert's line in a digest: its time, severity, what
// raised it and its summary, and who acknowledged it while it was held.
func digestText(a alert.Alert, loc *time.Location) string {
	head, what := headOf(a)
	line := clockOf(a.Time, loc) + " " + head + " " + what + ": " + truncate16(a.Summary, lineSummary)
	if a.AckedBy != "" && a.IsProblem() {
		line += " · ☑️ acknowledged by " + a.AckedBy + " " + clockOf(a.AckedAt, loc)
	}
	return line
}

func clockOf(t time.Time, loc *time.Location) string { return t.In(loc).Format(time.TimeOnly) }

func dayOf(t time.Time, loc *time.Location) string {
	if t.Year() < plausible {
		return "clock not set"
	}
	return t.In(loc).Format(dayLayout)
}
