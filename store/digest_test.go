package store

import (
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/vigil-iot/vigil/alert"
)

func heldAlert(i int) alert.Alert {
	return alert.Alert{ID: fmt.Sprintf("dev-%02d", i), Device: "dev", Time: t0.Add(time.Duration(i) * time.Minute),
		Severity: alert.Warning, Source: alert.SourceRule, Rule: "r", State: alert.StateFiring, Summary: fmt.Sprintf("alert %d", i)}
}

func heldIDs(as []alert.Alert) []string {
	ids := make([]string, len(as))
	for i, a := range as {
		ids[i] = a.ID
	}
	return ids
}

// TestTelegramHold: held alerts survive a reopen in order with their due
// time; holding an alert again (redelivered after a crash) keeps one copy;
// a digest part that went out releases its alerts, and the due time goes
// with the last of them.
func TestTelegramHold(t *testing.T) {
	db := openTemp(t, Options{})
	due := t0.Add(7 * time.Hour)
	for _, i := range []int{1, 2, 1, 3} {
		if err := db.HoldTelegram(heldAlert(i), due, "quiet hours end"); err != nil {
			t.Fatalf("HoldTelegram(%d): %v", i, err)
		}
	}
	db = reopen(t, db, Options{})
	held, dropped, sends, err := db.TelegramPending()
	if err != nil || dropped.Total() != 0 || len(sends) != 0 {
		t.Fatalf("TelegramPending() = _, %d, %v, %v; want no drops, no sends", dropped, sends, err)
	}
	if diff := cmp.Diff([]alert.Alert{heldAlert(1), heldAlert(2), heldAlert(3)}, held); diff != "" {
		t.Errorf("held alerts (-want +got):\n%s", diff)
	}
	view(t, db, func(tx *Tx) error {
		h, err := tx.TelegramHeld()
		if err != nil {
			return err
		}
		if len(h.Alerts) != 3 || !h.Due.Equal(due) || h.Why != "quiet hours end" {
			t.Errorf("TelegramHeld() = %d alerts due %v (%q), want 3 due %v (quiet hours end)", len(h.Alerts), h.Due, h.Why, due)
		}
		return nil
	})

	later := due.Add(time.Minute)
	if err := db.SetTelegramDue(later, "a free slot under max_per_hour"); err != nil {
		t.Fatal(err)
	}
	if err := db.TelegramSent(due, 10, []string{"dev-01", "dev-03"}); err != nil {
		t.Fatal(err)
	}
	held, _, sends, err = db.TelegramPending()
	if err != nil || !cmp.Equal(heldIDs(held), []string{"dev-02"}) || len(sends) != 1 || !sends[0].Equal(due) {
		t.Fatalf("after releasing 1 and 3: held %v, sends %v, %v; want [dev-02], [%v]", heldIDs(held), sends, err, due)
	}
	view(t, db, func(tx *Tx) error {
		h, err := tx.TelegramHeld()
		if err == nil && (!h.Due.Equal(later) || h.Why != "a free slot under max_per_hour") {
			t.Errorf("due = %v (%q), want %v", h.Due, h.Why, later)
		}
		return err
	})
	if err := db.TelegramSent(later, 10, []string{"dev-02"}); err != nil {
		t.Fatal(err)
	}
	view(t, db, func(tx *Tx) error {
		h, err := tx.TelegramHeld()
		if err == nil && (len(h.Alerts) != 0 || !h.Due.IsZero() || h.Why != "") {
			t.Errorf("after the last release: TelegramHeld() = %+v, want nothing held, no due time", h)
		}
		return err
	})
}

// TestTelegramHoldBounded: the held alerts are a bounded ring; the ones
// dropped are counted until the digest has gone out whole.
func TestTelegramHoldBounded(t *testing.T) {
	db := openTemp(t, Options{HeldCap: 3})
	for i := range 5 {
		if err := db.HoldTelegram(heldAlert(i), t0, "cap"); err != nil {
			t.Fatal(err)
		}
	}
	held, dropped, _, err := db.TelegramPending()
	if err != nil || dropped.Total() != 2 || !cmp.Equal(heldIDs(held), []string{"dev-02", "dev-03", "dev-04"}) {
		t.Fatalf("TelegramPending() = %v, %d, %v; want the newest 3, 2 dropped", heldIDs(held), dropped, err)
	}
	if err := db.TelegramSent(t0, 1, heldIDs(held)); err != nil {
		t.Fatal(err)
	}
	if held, dropped, _, err = db.TelegramPending(); err != nil || dropped.Total() != 0 || len(held) != 0 {
		t.Errorf("after the digest: %v, %d dropped, %v; want nothing held, the count reset", heldIDs(held), dropped, err)
	}
}

// TestTelegramSends: the send times the cap counts survive a reopen and
// keep only the newest `keep`, oldest first.
func TestTelegramSends(t *testing.T) {
	db := openTemp(t, Options{})
	for i := range 5 {
		if err := db.TelegramSent(t0.Add(time.Duration(i)*time.Second), 3, nil); err != nil {
			t.Fatal(err)
		}
	}
	db = reopen(t, db, Options{})
	_, _, sends, err := db.TelegramPending()
	want := []time.Time{t0.Add(2 * time.Second), t0.Add(3 * time.Second), t0.Add(4 * time.Second)}
	if err != nil || !cmp.Equal(sends, want) {
		t.Errorf("sends = %v, %v; want %v", sends, err, want)
	}
	// keep 0 records nothing (no cap).
	if err := db.TelegramSent(t0.Add(time.Hour), 0, nil); err != nil {
		t.Fatal(err)
	}
	if _, _, sends, _ = db.TelegramPending(); len(sends) != 3 {
		t.Errorf("keep 0 changed the sends: %v", sends)
	}
}

// TestTelegramHeldReadOnlyOldFile: a file from before the digest buckets,
// opened read-only (vigil status without a daemon), holds nothing.
func TestTelegramHeldReadOnlyOldFile(t *testing.T) {
	db := openTemp(t, Options{})
	update(t, db, func(tx *Tx) error {
		for _, name := range [][]byte{bucketTelegramHeld, bucketTelegramSent} {
			if err := tx.tx.DeleteBucket(name); err != nil {
				return err
			}
		}
		return nil
	})
	db = reopen(t, db, Options{ReadOnly: true})
	view(t, db, func(tx *Tx) error {
		h, err := tx.TelegramHeld()
		if err != nil || len(h.Alerts) != 0 {
			t.Errorf("TelegramHeld() = %+v, %v; want nothing", h, err)
		}
		return nil
	})
}

// TestTelegramHoldNoticesGoFirst: notices never push an alert out of the
// full digest (issue 28, finding 2): one held warning and then 460 setting
// notices keep the warning and drop the 205 oldest notices; only when
// nothing but alerts is held do alerts go, lowest severity and oldest
// first, and the drops are counted by kind, across a restart.
func TestTelegramHoldNoticesGoFirst(t *testing.T) {
	db := openTemp(t, Options{})
	warn := heldAlert(0)
	if err := db.HoldTelegram(warn, t0, "quiet hours end"); err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= 460; i++ {
		n := heldAlert(i)
		n.Source, n.Rule, n.State, n.Severity = alert.SourceSystem, alert.RuleSetting, alert.StateNotice, alert.Info
		if err := db.HoldTelegram(n, t0, "quiet hours end"); err != nil {
			t.Fatalf("HoldTelegram(notice %d): %v", i, err)
		}
	}
	db = reopen(t, db, Options{})
	held, dropped, _, err := db.TelegramPending()
	if err != nil {
		t.Fatal(err)
	}
	if len(held) != DefaultHeldCap || held[0].ID != warn.ID || held[1].ID != "dev-206" {
		t.Errorf("held %d alerts from %v, want %d from [%s dev-206 ...]", len(held), heldIDs(held[:2]), DefaultHeldCap, warn.ID)
	}
	if want := (alert.Dropped{Notices: 205}); dropped != want {
		t.Errorf("dropped = %+v, want %+v", dropped, want)
	}

	// Only alerts left: the lowest severity goes first, then the oldest.
	db = reopen(t, db, Options{HeldCap: 3})
	if err := db.TelegramSent(t0, 1, heldIDs(held)); err != nil {
		t.Fatal(err)
	}
	sevs := []alert.Severity{alert.Critical, alert.Warning, alert.Critical, alert.Info, alert.Warning, alert.Critical}
	for i, s := range sevs {
		a := heldAlert(500 + i)
		a.Severity = s
		if err := db.HoldTelegram(a, t0, "quiet hours end"); err != nil {
			t.Fatal(err)
		}
	}
	db = reopen(t, db, Options{HeldCap: 3})
	held, dropped, _, err = db.TelegramPending()
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"dev-500", "dev-502", "dev-505"}; !cmp.Equal(heldIDs(held), want) {
		t.Errorf("held %v, want the three criticals %v", heldIDs(held), want)
	}
	if want := (alert.Dropped{Info: 1, Warning: 2}); dropped != want {
		t.Errorf("dropped = %+v, want %+v", dropped, want)
	}
}
