package store

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/vigil-iot/vigil/alert"
)

// TestProblemAckDurable: an ack survives a reopen (a restart, a power cut
// after the commit) with who and when; deleting it (the problem resolved)
// leaves none.
func TestProblemAckDurable(t *testing.T) {
	db := openTemp(t, Options{})
	want := ProblemAck{AlertID: "dev-1", By: "telegram chat 1 user 2 (@ann)", At: t0}
	update(t, db, func(tx *Tx) error { return tx.PutProblemAck("rule/too_hot", want) })
	db = reopen(t, db, Options{})
	view(t, db, func(tx *Tx) error {
		got, ok, err := tx.ProblemAck("rule/too_hot")
		if err != nil || !ok {
			t.Fatalf("ProblemAck(rule/too_hot) after reopen = %v, %v; want the ack", ok, err)
		}
		if d := cmp.Diff(want, got); d != "" {
			t.Errorf("ack after reopen (-want +got):\n%s", d)
		}
		if _, ok, _ := tx.ProblemAck("llm/"); ok {
			t.Error("ProblemAck(llm/) found an ack never put")
		}
		return nil
	})
	update(t, db, func(tx *Tx) error { return tx.DeleteProblemAck("rule/too_hot") })
	db = reopen(t, db, Options{})
	view(t, db, func(tx *Tx) error {
		all, err := tx.ProblemAcks()
		if err != nil || len(all) != 0 {
			t.Errorf("ProblemAcks() after delete = %v, %v; want none", all, err)
		}
		return nil
	})
}

// TestProblemAcksBounded: beyond MaxAcks the oldest acks go.
func TestProblemAcksBounded(t *testing.T) {
	db := openTemp(t, Options{})
	for i := range MaxAcks + 5 {
		update(t, db, func(tx *Tx) error {
			return tx.PutProblemAck(fmt.Sprintf("rule/r%03d", i), ProblemAck{AlertID: "x", By: "cli", At: t0.Add(time.Duration(i) * time.Minute)})
		})
	}
	view(t, db, func(tx *Tx) error {
		all, err := tx.ProblemAcks()
		if err != nil {
			t.Fatal(err)
		}
		if len(all) != MaxAcks {
			t.Errorf("%d acks kept, want %d", len(all), MaxAcks)
		}
		for i := range 5 {
			if _, ok := all[fmt.Sprintf("rule/r%03d", i)]; ok {
				t.Errorf("oldest ack r%03d kept", i)
			}
		}
		if _, ok := all[fmt.Sprintf("rule/r%03d", MaxAcks+4)]; !ok {
			t.Error("newest ack dropped")
		}
		return nil
	})
}

// TestAckedAlertRoundTrips: a resolved alert that carries its ack keeps
// acked_by and acked_at through the outbox and the alert log.
func TestAckedAlertRoundTrips(t *testing.T) {
	db := openTemp(t, Options{})
	a := alert.Alert{ID: "dev-2", Device: "dev", Time: t0, Severity: alert.Critical, Source: alert.SourceRule,
		Rule: "too_hot", State: alert.StateResolved, Summary: "22 °C", AckedBy: "socket", AckedAt: t0.Add(-time.Minute)}
	update(t, db, func(tx *Tx) error { _, _, err := tx.Enqueue(a); return err })
	db = reopen(t, db, Options{})
	view(t, db, func(tx *Tx) error {
		p, err := tx.Pending("mqtt", 0)
		if err != nil || len(p) != 1 {
			t.Fatalf("Pending = %v, %v", p, err)
		}
		logged, err := tx.Alerts(1)
		if err != nil || len(logged) != 1 {
			t.Fatalf("Alerts = %v, %v", logged, err)
		}
		for _, got := range []alert.Alert{p[0].Alert, logged[0]} {
			if d := cmp.Diff(a, got); d != "" {
				t.Errorf("acked alert after reopen (-want +got):\n%s", d)
			}
		}
		return nil
	})
}

// TestTelegramMessages: the bot finds the message that carried an alert
// (by alert, by chat and message) after a reopen; the ring keeps the
// newest MaxTelegramMessages.
func TestTelegramMessages(t *testing.T) {
	db := openTemp(t, Options{})
	for i := range MaxTelegramMessages + 3 {
		if err := db.PutTelegramMessage(heldAlert(i), -100, int64(1000+i)); err != nil {
			t.Fatal(err)
		}
	}
	db = reopen(t, db, Options{})
	last := MaxTelegramMessages + 2
	as, chats, msgs, err := db.TelegramMessages([]string{heldAlert(0).ID, heldAlert(last).ID, heldAlert(last - 1).ID})
	if err != nil {
		t.Fatal(err)
	}
	if got := heldIDs(as); !slices.Equal(got, []string{heldAlert(last - 1).ID, heldAlert(last).ID}) {
		t.Errorf("TelegramMessages = %v, want the two newest (the oldest fell out of the ring)", got)
	}
	if !slices.Equal(chats, []int64{-100, -100}) || !slices.Equal(msgs, []int64{int64(1000 + last - 1), int64(1000 + last)}) {
		t.Errorf("TelegramMessages chats %v msgs %v", chats, msgs)
	}
	if a, ok, err := db.TelegramMessageAlert(-100, int64(1000+last)); err != nil || !ok || a.Summary != heldAlert(last).Summary {
		t.Errorf("TelegramMessageAlert = %+v, %v, %v; want alert %d", a, ok, err, last)
	}
	if _, ok, _ := db.TelegramMessageAlert(-100, 1000); ok {
		t.Error("TelegramMessageAlert found a message the ring dropped")
	}
}

// TestAckTelegramHeld: a held alert acknowledged before the digest goes
// out carries its ack in the digest; the others do not.
func TestAckTelegramHeld(t *testing.T) {
	db := openTemp(t, Options{})
	for i := 1; i <= 3; i++ {
		if err := db.HoldTelegram(heldAlert(i), t0.Add(time.Hour), "quiet hours end"); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.AckTelegramHeld([]string{heldAlert(2).ID, "dev-99"}, "cli", t0); err != nil {
		t.Fatal(err)
	}
	db = reopen(t, db, Options{})
	held, _, _, err := db.TelegramPending()
	if err != nil || len(held) != 3 {
		t.Fatalf("TelegramPending = %v, %v", held, err)
	}
	for i, a := range held {
		acked := a.AckedBy == "cli" && a.AckedAt.Equal(t0)
		if acked != (i == 1) {
			t.Errorf("held alert %s: acked by %q at %v; want the ack on dev-02 only", a.ID, a.AckedBy, a.AckedAt)
		}
	}
}
