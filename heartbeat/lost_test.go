package heartbeat

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/vigil-iot/vigil/alert"
	"github.com/vigil-iot/vigil/device"
	"github.com/vigil-iot/vigil/store"
)

// TestStateLostNamesWhatWasLost: a real state file holding everything a
// device keeps (queued alerts, a pause, counters, a firing rule, run-time
// settings, the model's notes, the Telegram update offset) has its header
// zeroed. The daemon's store moves it aside and starts afresh; every one
// of those is gone from the new file, and the state_lost alert names each.
func TestStateLostNamesWhatWasLost(t *testing.T) {
	h := newHarness(t, nil)
	h.sensor.set(40)
	h.sample() // too_hot fires: a rule state, a queued alert, counters
	if _, err := h.e.Pause(context.Background(), time.Hour, "cli"); err != nil {
		t.Fatal(err)
	}
	if err := h.db.PutSetting(store.Setting{Key: "heartbeat.interval", Value: "10m", By: "cli", At: t0}); err != nil {
		t.Fatal(err)
	}
	if err := h.db.AddNote(store.Note{Time: t0, Text: "humidity creeps up after watering"}); err != nil {
		t.Fatal(err)
	}
	if err := h.db.Update(func(tx *store.Tx) error { return tx.SetTelegramOffset(4711) }); err != nil {
		t.Fatal(err)
	}
	// What issue 22 keeps: an ack, an alert held for the Telegram digest
	// with the cap's send times, and a Telegram alert message to edit.
	if _, err := h.e.Ack(context.Background(), "too_hot"); err != nil {
		t.Fatal(err)
	}
	held := alert.Alert{ID: "held-1", Device: "d", Time: t0, Severity: alert.Warning, Source: alert.SourceRule, Rule: "damp", State: alert.StateFiring, Summary: "damp"}
	if err := h.db.HoldTelegram(held, t0.Add(time.Hour), "quiet hours end"); err != nil {
		t.Fatal(err)
	}
	if err := h.db.TelegramSent(t0, 20, nil); err != nil {
		t.Fatal(err)
	}
	if err := h.db.PutTelegramMessage(held, 1001, 42); err != nil {
		t.Fatal(err)
	}
	h.db.Close()
	b, err := os.ReadFile(h.path)
	if err != nil {
		t.Fatal(err)
	}
	clear(b[:2*pageSize]) // both meta pages
	if err := os.WriteFile(h.path, b, 0o600); err != nil {
		t.Fatal(err)
	}

	db, err := store.Open(h.path, store.Options{Timeout: time.Second, Reset: true, Now: time.Now})
	if err != nil {
		t.Fatalf("Open with Reset on a damaged file: %v", err)
	}
	defer db.Close()
	e, err := New(h.cfg, Deps{Clock: h.clock, Wall: h.wall.Now, DB: db, Thinker: h.thinker,
		Sensors: []device.Named{{Name: "air", Sensor: h.sensor}}, Notifiers: []Notifier{h.notes}})
	if err != nil {
		t.Fatal(err)
	}
	// What the fresh file holds of it: nothing.
	settings, err := db.Settings()
	if err != nil || len(settings) != 0 {
		t.Errorf("settings in the fresh file = %v, %v; want none (lost)", settings, err)
	}
	notes, err := db.Notes()
	if err != nil || len(notes) != 0 {
		t.Errorf("notes in the fresh file = %v, %v; want none (lost)", notes, err)
	}
	var off int64
	db.View(func(tx *store.Tx) error { off, err = tx.TelegramOffset(); return err })
	if off != 0 {
		t.Errorf("Telegram offset in the fresh file = %d, want 0 (lost)", off)
	}
	if h, _, sends, err := db.TelegramPending(); err != nil || len(h) != 0 || len(sends) != 0 {
		t.Errorf("Telegram held alerts and sends in the fresh file = %v, %v, %v; want none (lost)", h, sends, err)
	}
	db.View(func(tx *store.Tx) error {
		if acks, err := tx.ProblemAcks(); err != nil || len(acks) != 0 {
			t.Errorf("acks in the fresh file = %v, %v; want none (lost)", acks, err)
		}
		return nil
	})

	if err := e.SampleOnce(context.Background()); err != nil {
		t.Fatal(err)
	}
	var lost *alert.Alert
	db.View(func(tx *store.Tx) error {
		ents, err := tx.Pending("rec", 0)
		for _, en := range ents {
			if en.Alert.Rule == RuleStateLost {
				lost = &en.Alert
			}
		}
		return err
	})
	if lost == nil {
		t.Fatal("no state_lost alert queued")
	}
	for _, what := range []string{"queued alerts", "pause", "counters", "rule states", "alert cooldowns", "run and sensor history",
		"run-time settings", "the model's notes", "Telegram update offset",
		"acknowledgements", "alerts held for the Telegram digest", "the Telegram cap's count", "Telegram's alert messages"} {
		if !strings.Contains(lost.Summary, what) {
			t.Errorf("state_lost summary does not name %q:\n%s", what, lost.Summary)
		}
	}
}
