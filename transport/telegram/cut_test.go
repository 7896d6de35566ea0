package telegram

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/vigil-iot/vigil/alert"
	"github.com/vigil-iot/vigil/redact"
)

// cutSecret is a configured secret (say the MQTT password) that reached an
// alert's summary unredacted: from before a reload made it known.
const cutSecret = "q7Zt9wLmN3xK2pR8vB4cMQTT"

// TestCutAfterRedaction: where the bot shortens a text (an alert to fit
// one message, a reply split into messages, a command quoted back), a
// secret its Redactor knows is replaced whole, never left in part.
func TestCutAfterRedaction(t *testing.T) {
	start := cutSecret[:redact.MinPrefix]
	red := redact.New(cutSecret)
	t.Run("alert", func(t *testing.T) {
		f := newFakeAPI(t)
		b := newTestBot(t, f, Config{Redactor: red}, nil, nil, nil, nil)
		// The summary's cut falls inside the secret.
		_, empty := formatAlert(testAlert(""), time.UTC, nil)
		cut := maxText - len16(empty) - len16("… (truncated)")
		summary := strings.Repeat("x", cut-10) + cutSecret + strings.Repeat("y", 100)
		if err := b.Notify(context.Background(), testAlert(summary)); err != nil {
			t.Fatalf("Notify() = %v", err)
		}
		sent := f.Sent()
		if len(sent) != 1 {
			t.Fatalf("sent %d messages, want 1", len(sent))
		}
		if m := sent[0]; strings.Contains(m.Text, start) || !strings.Contains(m.Text, "xxxxxxxx") || len16(m.Rendered) > maxText {
			i := strings.Index(m.Text, "xxxxx") + maxText - 100
			t.Errorf("sent %d units ending …%q: want the secret replaced, not cut", len16(m.Rendered), m.Text[min(max(i, 0), len(m.Text)):])
		}
	})
	t.Run("reply parts", func(t *testing.T) {
		reply := strings.Repeat("x", maxText-10) + cutSecret + " and more"
		for i, p := range replyParts(red, reply) {
			if strings.Contains(p, start) {
				t.Errorf("part %d holds the start of the secret: …%q", i, p[max(len(p)-30, 0):])
			}
		}
	})
}

// TestDigestCutsAfterRedaction: an alert held for a digest is redacted
// before it is held, so its line's cut (300 units) splits no secret.
func TestDigestCutsAfterRedaction(t *testing.T) {
	r := newDigestRig(t, Config{Redactor: redact.New(cutSecret), MaxPerHour: 1}, time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC))
	for i := range 2 {
		a := r.alert(alert.Warning, "too_hot", alert.StateFiring)
		if i == 1 {
			a.Summary = strings.Repeat("x", redact.CutTelegramLine-20) + cutSecret
		}
		r.notify(a)
	}
	held, _, _, err := r.db.TelegramPending()
	if err != nil || len(held) != 1 {
		t.Fatalf("TelegramPending() = %d held, %v; want 1", len(held), err)
	}
	if s := held[0].Summary; strings.Contains(s, cutSecret[:redact.MinPrefix]) {
		t.Errorf("held summary holds the secret's start: …%q", s[max(len(s)-40, 0):])
	}
}

// TestCutLengthsListed: the lengths the bot cuts at are among those
// redact's fuzz test places secrets across (redact.CutLengths).
func TestCutLengthsListed(t *testing.T) {
	for _, n := range []int{maxText, lineSummary, maxCallbackText, 32} {
		if !slices.Contains(redact.CutLengths, n) {
			t.Errorf("the bot cuts at %d, which redact.CutLengths lacks", n)
		}
	}
}
