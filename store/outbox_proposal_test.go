package store

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/vigil-iot/vigil/alert"
)

// TestOutboxKeepsProposal: a proposal notice comes out of the outbox (after
// a reopen) with its proposal, which the transports show: Telegram's
// Approve and Reject buttons, MQTT's proposal object.
func TestOutboxKeepsProposal(t *testing.T) {
	db := openTemp(t, Options{})
	a := testAlert(1)
	a.State = alert.StateNotice
	a.Proposal = &alert.Proposal{ID: "p1", Name: "too_warm", When: "air.temperature > 34", For: "10s", Severity: "warning",
		Message: "air at {air.temperature}", Why: "it went past 34", At: time.Date(2026, 11, 28, 18, 0, 0, 0, time.UTC),
		State: alert.ProposalPending, Backtest: alert.Backtest{Samples: 120, Fired: 1, OnPrompt: true}}
	update(t, db, func(tx *Tx) error { _, _, err := tx.Enqueue(a); return err })
	db = reopen(t, db, Options{})
	view(t, db, func(tx *Tx) error {
		got, err := tx.Pending("mqtt", 0)
		if err != nil || len(got) != 1 {
			t.Fatalf("Pending = %d entries, %v", len(got), err)
		}
		if d := cmp.Diff(a.Proposal, got[0].Alert.Proposal); d != "" {
			t.Errorf("the proposal out of the outbox (-want +got):\n%s", d)
		}
		return nil
	})
}
