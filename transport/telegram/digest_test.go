package telegram

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"

	"github.com/vigil-iot/vigil/alert"
	"github.com/vigil-iot/vigil/schedule"
	"github.com/vigil-iot/vigil/store"
)

func berlin(t *testing.T) *time.Location {
	t.Helper()
	loc, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		t.Fatal(err)
	}
	return loc
}

// digestRig is a bot with quiet hours or a cap on a fake clock, a fake Bot
// API and a real state file. The tests drive the digest loop one step at a
// time (digestOnce); TestDigestLoopSendsAtQuietEnd runs the loop itself.
type digestRig struct {
	t     *testing.T
	f     *fakeAPI
	clock *clockwork.FakeClock
	db    *store.DB
	bot   *Bot
	cfg   Config
	logs  *logBuffer
	n     int // alerts made
}

func newDigestRig(t *testing.T, cfg Config, start time.Time) *digestRig {
	t.Helper()
	r := &digestRig{t: t, f: newFakeAPI(t), clock: clockwork.NewFakeClockAt(start), db: openDB(t), logs: &logBuffer{}}
	if cfg.Location == nil {
		cfg.Location = start.Location()
	}
	cfg.Digests = r.db
	r.cfg = cfg
	r.bot = newTestBot(t, r.f, cfg, nil, nil, r.clock, r.logs)
	return r
}

// restart replaces the bot by a new one on the same state file, as a
// restart after a power cut would.
func (r *digestRig) restart() {
	r.bot = newTestBot(r.t, r.f, r.cfg, nil, nil, r.clock, r.logs)
}

// alert makes the next alert at the clock's time.
func (r *digestRig) alert(sev alert.Severity, rule, state string) alert.Alert {
	r.n++
	return alert.Alert{ID: fmt.Sprintf("dev-%03d", r.n), Device: "greenhouse-pi", Time: r.clock.Now().UTC(),
		Severity: sev, Source: alert.SourceRule, Rule: rule, State: state, Summary: fmt.Sprintf("summary %03d of %s", r.n, rule)}
}

func (r *digestRig) advanceTo(t time.Time) { r.clock.Advance(t.Sub(r.clock.Now())) }

func (r *digestRig) notify(a alert.Alert) {
	r.t.Helper()
	if err := r.bot.Notify(context.Background(), a); err != nil {
		r.t.Fatalf("Notify(%s) = %v", a.ID, err)
	}
}

// step runs one pass of the digest loop and returns its wait.
func (r *digestRig) step() time.Duration {
	r.t.Helper()
	wait, err := r.bot.digestOnce(context.Background())
	if err != nil {
		r.t.Fatalf("digestOnce() = %v", err)
	}
	return wait
}

func (r *digestRig) held() store.TelegramHeld {
	r.t.Helper()
	var h store.TelegramHeld
	if err := r.db.View(func(tx *store.Tx) error {
		var err error
		h, err = tx.TelegramHeld()
		return err
	}); err != nil {
		r.t.Fatal(err)
	}
	return h
}

// named reports in which sent messages (indexes) the alert's summary
// appears.
func named(sent []sentMessage, a alert.Alert) []int {
	var in []int
	for i, m := range sent {
		if strings.Contains(m.Rendered, a.Summary+"\n") || strings.HasSuffix(m.Rendered, a.Summary) || strings.Contains(m.Rendered, a.Summary+" ·") {
			in = append(in, i)
		}
	}
	return in
}

// TestQuietHoursDigestAtTheEnd: during quiet hours (22:00-07:00, Berlin)
// warnings and notices are held; a critical arrives at once; nothing else
// is sent until 07:00, when one digest names every held alert with its
// time (device zone, with the offset) and severity, a resolved alert folded
// into its firing line. A bot restarted meanwhile (a power cut) still has
// them all.
func TestQuietHoursDigestAtTheEnd(t *testing.T) {
	loc := berlin(t)
	r := newDigestRig(t, Config{Quiet: &schedule.Window{Start: 22 * time.Hour, End: 7 * time.Hour}}, time.Date(2026, 1, 10, 21, 59, 0, 0, loc))
	before := r.alert(alert.Warning, "damp", alert.StateFiring)
	r.notify(before) // 21:59: not quiet yet
	if got := len(r.f.Sent()); got != 1 {
		t.Fatalf("a warning before quiet hours: %d messages, want 1", got)
	}

	r.clock.Advance(31 * time.Minute) // 22:30
	w1 := r.alert(alert.Warning, "too_hot", alert.StateFiring)
	r.notify(w1)
	notice := r.alert(alert.Info, "setting", alert.StateNotice)
	notice.Source = alert.SourceSystem
	r.notify(notice)
	r.clock.Advance(5 * time.Minute)
	crit := r.alert(alert.Critical, "freezer", alert.StateFiring)
	r.notify(crit)
	sent := r.f.Sent()
	if len(sent) != 2 || !strings.Contains(sent[1].Rendered, crit.Summary) || !strings.Contains(sent[1].Rendered, "CRITICAL") {
		t.Fatalf("during quiet hours: sent %d messages (%+v), want the earlier warning and the critical at once", len(sent), sent)
	}
	if h := r.held(); len(h.Alerts) != 2 || !h.Due.Equal(time.Date(2026, 1, 11, 7, 0, 0, 0, loc)) || h.Why != whyQuiet {
		t.Errorf("held = %d alerts due %v (%s), want 2 due 07:00 (quiet hours end)", len(h.Alerts), h.Due, h.Why)
	}

	r.restart()                       // a power cut: the held alerts are in the state file
	r.clock.Advance(25 * time.Minute) // 23:00
	w2 := r.alert(alert.Warning, "damp", alert.StateFiring)
	r.notify(w2)
	r.clock.Advance(10 * time.Minute)
	res := r.alert(alert.Warning, "too_hot", alert.StateResolved)
	r.notify(res)
	r.notify(w1) // redelivered after the power cut: held once
	if wait := r.step(); wait <= 0 || wait > digestCheck {
		t.Errorf("digestOnce at 23:10 waits %v, want up to %v", wait, digestCheck)
	}
	r.clock.Advance(7*time.Hour + 49*time.Minute + 59*time.Second) // 06:59:59
	r.step()
	if got := len(r.f.Sent()); got != 2 {
		t.Fatalf("before 07:00: %d messages, want 2", got)
	}

	r.clock.Advance(time.Second) // 07:00
	if wait := r.step(); wait != 0 {
		t.Errorf("digestOnce at 07:00 waits %v, want 0 (sent)", wait)
	}
	sent = r.f.Sent()
	if len(sent) != 3 {
		t.Fatalf("at 07:00: %d messages, want 3 (the digest)", len(sent))
	}
	d := sent[2].Rendered
	for _, want := range []string{
		"📋 DIGEST · 4 held alerts\nquiet hours 22:00-07:00\n2026-01-10 +01:00\n",
		"22:30:00 🟠 WARNING too_hot: " + w1.Summary + " · ✅ resolved 23:10:00\n",
		"22:30:00 ℹ️ NOTICE setting: " + notice.Summary + "\n",
		"23:00:00 🟠 WARNING damp: " + w2.Summary + "\n",
		"\ngreenhouse-pi",
	} {
		if !strings.Contains(d, want) {
			t.Errorf("digest lacks %q:\n%s", want, d)
		}
	}
	if strings.Contains(d, crit.Summary) || strings.Contains(d, before.Summary) || strings.Count(d, w1.Summary) != 1 {
		t.Errorf("digest names an alert that was sent, or one twice:\n%s", d)
	}
	if sent[2].ParseMode != "HTML" {
		t.Errorf("digest parse_mode %q, want HTML", sent[2].ParseMode)
	}
	if h := r.held(); len(h.Alerts) != 0 || !h.Due.IsZero() {
		t.Errorf("after the digest: %+v held, want nothing", h)
	}
	// After quiet hours a warning goes out at once again.
	r.notify(r.alert(alert.Warning, "damp", alert.StateFiring))
	if got := len(r.f.Sent()); got != 4 {
		t.Errorf("a warning after quiet hours: %d messages, want 4", got)
	}
}

// TestCapFoldsIntoOneDigest: 50 alerts in one minute with max_per_hour =
// 10 give 10 messages at once and one digest naming the other 40, an hour
// after the first message (a sliding hour).
func TestCapFoldsIntoOneDigest(t *testing.T) {
	start := time.Date(2026, 1, 10, 10, 0, 0, 0, time.UTC)
	r := newDigestRig(t, Config{MaxPerHour: 10}, start)
	var all []alert.Alert
	for i := range 50 {
		a := r.alert(alert.Warning, fmt.Sprintf("r%02d", i), alert.StateFiring)
		all = append(all, a)
		r.notify(a)
		r.clock.Advance(time.Second)
	}
	sent := r.f.Sent()
	if len(sent) != 10 {
		t.Fatalf("50 alerts with max_per_hour = 10: %d messages at once, want 10", len(sent))
	}
	if h := r.held(); len(h.Alerts) != 40 || !h.Due.Equal(start.Add(time.Hour)) || h.Why != whyCap {
		t.Errorf("held %d alerts due %v (%s), want 40 due %v (%s)", len(h.Alerts), h.Due, h.Why, start.Add(time.Hour), whyCap)
	}
	r.step()
	r.clock.Advance(time.Hour - 51*time.Second) // 10:59:59
	r.step()
	if got := len(r.f.Sent()); got != 10 {
		t.Fatalf("before the first message is an hour old: %d messages, want 10", got)
	}
	r.clock.Advance(time.Second) // 11:00:00
	r.step()
	sent = r.f.Sent()
	if len(sent) != 11 {
		t.Fatalf("at 11:00: %d messages, want 11 (one digest)", len(sent))
	}
	if !strings.HasPrefix(sent[10].Rendered, "📋 DIGEST · 40 held alerts\nat most 10 messages an hour\n") {
		t.Errorf("digest header:\n%s", sent[10].Rendered)
	}
	for i, a := range all {
		want := 0
		if i >= 10 {
			want = 1
		}
		if in := named(sent[10:], a); len(in) != want {
			t.Errorf("alert %d (%s) named %d times in the digest, want %d", i, a.Summary, len(in), want)
		}
	}
	// Once the ten are an hour old, the digest is the only message of the
	// last hour: the next alert goes out at once.
	r.clock.Advance(10 * time.Second)
	r.notify(r.alert(alert.Warning, "late", alert.StateFiring))
	if got := len(r.f.Sent()); got != 12 {
		t.Errorf("after the digest, with the first messages an hour old: %d messages, want 12", got)
	}
}

// TestCapSurvivesRestart: the cap counts the messages of the last hour from
// the state file, so a restart does not reset it.
func TestCapSurvivesRestart(t *testing.T) {
	r := newDigestRig(t, Config{MaxPerHour: 2}, time.Date(2026, 1, 10, 10, 0, 0, 0, time.UTC))
	r.notify(r.alert(alert.Warning, "a", alert.StateFiring))
	r.notify(r.alert(alert.Warning, "b", alert.StateFiring))
	r.restart()
	r.notify(r.alert(alert.Warning, "c", alert.StateFiring))
	if got, h := len(r.f.Sent()), r.held(); got != 2 || len(h.Alerts) != 1 {
		t.Errorf("third alert after a restart: %d messages, %d held; want 2 and 1", got, len(h.Alerts))
	}
}

// TestCriticalPastCapSendsDigestAtOnce: a critical past the cap goes into
// the digest, and the digest goes at once; so does the next critical's,
// right after: a critical is never delayed.
func TestCriticalPastCapSendsDigestAtOnce(t *testing.T) {
	r := newDigestRig(t, Config{MaxPerHour: 2}, time.Date(2026, 1, 10, 10, 0, 0, 0, time.UTC))
	for range 3 {
		r.notify(r.alert(alert.Warning, "w", alert.StateFiring))
	}
	if got := len(r.f.Sent()); got != 2 {
		t.Fatalf("3 warnings, max_per_hour = 2: %d messages, want 2", got)
	}
	r.clock.Advance(time.Minute)
	c1 := r.alert(alert.Critical, "freezer", alert.StateFiring)
	r.notify(c1)
	sent := r.f.Sent()
	if len(sent) != 3 || !strings.Contains(sent[2].Rendered, "📋 DIGEST · 2 held alerts") || len(named(sent[2:], c1)) != 1 {
		t.Fatalf("a critical past the cap: %d messages, want 3, the last a digest with the warning and the critical:\n%+v", len(sent), sent)
	}
	r.clock.Advance(time.Minute)
	r.notify(r.alert(alert.Warning, "w2", alert.StateFiring))
	if got := len(r.f.Sent()); got != 3 {
		t.Fatalf("a warning past the cap: %d messages, want 3 (it is held)", got)
	}
	c2 := r.alert(alert.Critical, "freezer2", alert.StateFiring)
	r.notify(c2)
	sent = r.f.Sent()
	if len(sent) != 4 || len(named(sent[3:], c2)) != 1 || !strings.Contains(sent[3].Rendered, "2 held alerts") {
		t.Errorf("a second critical 1m after the first digest: %d messages, want 4, the last a digest with the held warning and the critical:\n%+v", len(sent), sent[3:])
	}
	if h := r.held(); len(h.Alerts) != 0 {
		t.Errorf("after the critical's digest %d alerts still held, want 0", len(h.Alerts))
	}
}

// TestDigestSplitsLongDigests: a digest longer than one Telegram message
// is sent in parts numbered 1/n..n/n, each within 4096 characters, and
// every held alert is named in exactly one of them.
func TestDigestSplitsLongDigests(t *testing.T) {
	loc := berlin(t)
	r := newDigestRig(t, Config{Quiet: &schedule.Window{Start: 22 * time.Hour, End: 7 * time.Hour}}, time.Date(2026, 1, 10, 23, 0, 0, 0, loc))
	var held []alert.Alert
	for i := range 60 {
		a := r.alert(alert.Warning, fmt.Sprintf("r%02d", i), alert.StateFiring)
		a.Summary = fmt.Sprintf("%03d ", i) + strings.Repeat("ü<&", 50) // 154 characters, escaped in HTML
		held = append(held, a)
		r.notify(a)
		r.clock.Advance(5 * time.Minute) // across midnight: two days
	}
	r.advanceTo(time.Date(2026, 1, 11, 7, 0, 0, 0, loc))
	r.step()
	sent := r.f.Sent()
	if len(sent) < 3 {
		t.Fatalf("60 long alerts: %d messages, want a digest in several parts", len(sent))
	}
	for i, m := range sent {
		if want := fmt.Sprintf("📋 DIGEST %d/%d · 60 held alerts\n", i+1, len(sent)); !strings.HasPrefix(m.Rendered, want) {
			t.Errorf("part %d starts %q, want %q", i, firstLine(m.Rendered), want)
		}
		if n := len16(m.Rendered); n > maxText {
			t.Errorf("part %d has %d characters", i, n)
		}
	}
	for _, a := range held {
		if in := named(sent, a); len(in) != 1 {
			t.Errorf("%s named in parts %v, want exactly one", a.Summary[:4], in)
		}
	}
	if !strings.Contains(sent[0].Rendered, "\n2026-01-10 +01:00\n") || !strings.Contains(sent[len(sent)-1].Rendered, "\n2026-01-11 +01:00\n") {
		t.Errorf("the parts do not name the days")
	}
}

// TestDigestNoticesNeverPushOutAnAlert (issue 28, finding 2): with quiet
// hours on, one held warning and then 460 setting notices: the digest at
// the end of quiet hours still names the warning, and says that 205
// notices, and no alert, were dropped. A restart in between changes
// nothing.
func TestDigestNoticesNeverPushOutAnAlert(t *testing.T) {
	loc := berlin(t)
	r := newDigestRig(t, Config{Quiet: &schedule.Window{Start: 22 * time.Hour, End: 7 * time.Hour}}, time.Date(2026, 1, 10, 23, 0, 0, 0, loc))
	warn := r.alert(alert.Warning, "too_hot", alert.StateFiring)
	r.notify(warn)
	for range 460 {
		n := r.alert(alert.Info, alert.RuleSetting, alert.StateNotice)
		n.Source = alert.SourceSystem
		r.notify(n)
	}
	r.restart()
	r.advanceTo(time.Date(2026, 1, 11, 7, 0, 0, 0, loc))
	r.step()
	sent := r.f.Sent()
	if len(sent) == 0 {
		t.Fatal("no digest at 07:00")
	}
	if in := named(sent, warn); len(in) != 1 {
		t.Errorf("the held warning is named in digest parts %v, want exactly one", in)
	}
	if want := "205 held alerts are not listed (205 notices)"; !strings.Contains(sent[0].Rendered, want) {
		t.Errorf("the digest's first part lacks %q:\n%s", want, sent[0].Rendered[:300])
	}
}

func firstLine(s string) string { l, _, _ := strings.Cut(s, "\n"); return l }

// TestDigestWaitsForTelegram: a digest Telegram does not take stays held
// (nothing lost) and is retried; an alert that comes meanwhile waits behind
// it, so the order holds.
func TestDigestWaitsForTelegram(t *testing.T) {
	loc := berlin(t)
	r := newDigestRig(t, Config{Quiet: &schedule.Window{Start: 22 * time.Hour, End: 7 * time.Hour}}, time.Date(2026, 1, 10, 23, 0, 0, 0, loc))
	w := r.alert(alert.Warning, "w", alert.StateFiring)
	r.notify(w)
	r.advanceTo(time.Date(2026, 1, 11, 7, 0, 0, 0, loc))
	r.f.mu.Lock()
	r.f.sendHook = func(int, sendMessage) (int, string) {
		return apiErr(http.StatusForbidden, "Forbidden: bot was blocked by the user")
	}
	r.f.mu.Unlock()
	if _, err := r.bot.digestOnce(context.Background()); err == nil {
		t.Fatal("digestOnce with Telegram refusing = nil, want an error")
	}
	later := r.alert(alert.Warning, "later", alert.StateFiring)
	if err := r.bot.Notify(context.Background(), later); err == nil {
		t.Fatal("Notify while the due digest cannot go = nil, want an error (the alert waits in the outbox)")
	}
	if h := r.held(); len(h.Alerts) != 1 {
		t.Fatalf("held %d, want 1", len(h.Alerts))
	}
	r.f.mu.Lock()
	r.f.sendHook = nil
	r.f.mu.Unlock()
	r.notify(later)
	sent := r.f.Sent()
	if len(sent) != 2 || len(named(sent[:1], w)) != 1 || len(named(sent[1:], later)) != 1 {
		t.Errorf("after Telegram came back: %+v, want the digest, then the later alert", sent)
	}
}

// TestTestAlertSkipsQuietHours: vigil test-alert, which a person asked for
// now, is not held.
func TestTestAlertSkipsQuietHours(t *testing.T) {
	r := newDigestRig(t, Config{Quiet: &schedule.Window{Start: 0, End: 24 * time.Hour}, MaxPerHour: 1}, time.Date(2026, 1, 10, 3, 0, 0, 0, time.UTC))
	for range 2 {
		a := r.alert(alert.Info, alert.RuleTest, alert.StateNotice)
		a.Source = alert.SourceSystem
		r.notify(a)
	}
	if got := len(r.f.Sent()); got != 2 {
		t.Errorf("two test alerts in quiet hours, past the cap: %d messages, want 2", got)
	}
}

// TestQuietHoursNeedAPlausibleClock: a board that booted in 1970 holds
// nothing for quiet hours.
func TestQuietHoursNeedAPlausibleClock(t *testing.T) {
	r := newDigestRig(t, Config{Quiet: &schedule.Window{Start: 0, End: 24 * time.Hour}}, time.Date(1970, 1, 1, 0, 0, 5, 0, time.UTC))
	r.notify(r.alert(alert.Warning, "w", alert.StateFiring))
	if got := len(r.f.Sent()); got != 1 {
		t.Errorf("quiet hours on a clock in 1970: %d messages, want 1", got)
	}
}

// TestDigestLoopSendsAtQuietEnd runs the bot's loop: the digest goes out by
// itself when quiet hours end.
func TestDigestLoopSendsAtQuietEnd(t *testing.T) {
	r := newDigestRig(t, Config{Quiet: &schedule.Window{Start: 22 * time.Hour, End: 7 * time.Hour}}, time.Date(2026, 1, 10, 6, 59, 30, 0, time.UTC))
	w := r.alert(alert.Warning, "w", alert.StateFiring)
	r.notify(w)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- r.bot.Run(ctx) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run() = %v", err)
		}
	}()
	bctx, bcancel := context.WithTimeout(ctx, 5*time.Second)
	defer bcancel()
	if err := r.clock.BlockUntilContext(bctx, 1); err != nil {
		t.Fatalf("the digest loop does not wait for 07:00: %v", err)
	}
	r.clock.Advance(30 * time.Second)
	deadline := time.Now().Add(5 * time.Second)
	for len(r.f.Sent()) == 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if sent := r.f.Sent(); len(sent) != 1 || len(named(sent, w)) != 1 {
		t.Errorf("at 07:00 the loop sent %+v, want one digest naming the warning", sent)
	}
}
