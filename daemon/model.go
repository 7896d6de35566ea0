package daemon

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/vigil-iot/vigil/agent"
	"github.com/vigil-iot/vigil/alert"
	"github.com/vigil-iot/vigil/redact"
	"github.com/vigil-iot/vigil/store"
	"github.com/vigil-iot/vigil/transport"
)

// modelSelf is what the model may change about its own heartbeat
// (agent.Self, as heartbeat.model_may allows): its notes go to the state
// file's ring; its interval goes through setInterval, the App's
// Commander.setModelInterval, with the same validator and audit as a
// person's change (nil: not available in this build).
type modelSelf struct {
	db          *store.DB
	now         func() time.Time
	red         *redact.Redactor
	setInterval func(ctx context.Context, d time.Duration) (string, error)
	propose     func(ctx context.Context, p alert.Proposal) (string, error)
}

var (
	_ agent.Self     = (*modelSelf)(nil)
	_ agent.Proposer = (*modelSelf)(nil)
)

// ProposeRule is the model's propose_rule: Commander.proposeRule.
func (m *modelSelf) ProposeRule(ctx context.Context, p alert.Proposal) (string, error) {
	if m.propose == nil {
		return "", errors.New("not available in this build yet")
	}
	return m.propose(transport.WithSource(ctx, transport.Source{Channel: transport.ChannelModel}), p)
}

// Remember redacts note (the agent did already; this is the state file's
// own guard) and adds it to the notes ring, dropping the oldest of 16.
func (m *modelSelf) Remember(_ context.Context, note string) (string, error) {
	note = m.red.String(note)
	if err := m.db.AddNote(store.Note{Time: m.now().UTC(), Text: note}); err != nil {
		return "", fmt.Errorf("keep note: %w", err)
	}
	return fmt.Sprintf("noted; the next heartbeats show it (the last %d notes are kept)", store.MaxNotes), nil
}

func (m *modelSelf) SetInterval(ctx context.Context, d time.Duration) (string, error) {
	if m.setInterval == nil {
		return "", errors.New("not available in this build yet")
	}
	return m.setInterval(ctx, d)
}

// modelMemory keeps the agent's text-only models in the state file.
type modelMemory struct{ db *store.DB }

func (m modelMemory) TextOnly(model string) (ok bool, err error) {
	err = m.db.View(func(tx *store.Tx) error { ok, err = tx.TextOnlyModel(model); return err })
	return ok, err
}

func (m modelMemory) SetTextOnly(model string) error {
	return m.db.Update(func(tx *store.Tx) error { return tx.SetTextOnlyModel(model) })
}

var _ agent.ModelMemory = modelMemory{}
