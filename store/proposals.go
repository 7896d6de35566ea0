package store

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/vigil-iot/vigil/alert"
)

// Bounds of the proposals bucket: at most MaxPending proposals wait for a
// person (the next drops the oldest), and a decided proposal is kept for
// ProposalMemory, so a rejected rule is refused when proposed again.
const (
	MaxPending     = 16
	ProposalMemory = 30 * 24 * time.Hour
)

// proposalKey is the bucket key of ID "p<seq>".
func proposalKey(id string) ([]byte, bool) {
	n, err := strconv.ParseUint(strings.TrimPrefix(id, "p"), 10, 64)
	if err != nil || !strings.HasPrefix(id, "p") || n == 0 {
		return nil, false
	}
	return encodeUint(n), true
}

// AddProposal keeps p as a pending proposal with a new ID and returns it,
// in one write transaction that also forgets decided proposals older than
// ProposalMemory (at now) and, beyond MaxPending pending ones, marks the
// oldest dropped and returns it.
func (db *DB) AddProposal(p alert.Proposal, now time.Time) (added alert.Proposal, dropped *alert.Proposal, err error) {
	err = db.Update(func(tx *Tx) error {
		b, err := tx.wbucket(bucketProposals)
		if err != nil {
			return err
		}
		seq, err := b.NextSequence()
		if err != nil {
			return fmt.Errorf("next sequence: %w", err)
		}
		p.ID, p.State = "p"+strconv.FormatUint(seq, 10), alert.ProposalPending
		all, err := tx.Proposals()
		if err != nil {
			return err
		}
		var pending []alert.Proposal
		for _, q := range all {
			switch {
			case q.State == alert.ProposalPending:
				pending = append(pending, q)
			case q.State != alert.ProposalApproved && now.Sub(q.DecidedAt) > ProposalMemory:
				k, _ := proposalKey(q.ID)
				if err := b.Delete(k); err != nil {
					return fmt.Errorf("forget proposal %s: %w", q.ID, err)
				}
			}
		}
		if len(pending) >= MaxPending {
			d := pending[0]
			d.State, d.DecidedBy, d.DecidedAt = alert.ProposalDropped, "the 17th proposal", now
			if err := tx.PutProposal(d); err != nil {
				return err
			}
			dropped = &d
		}
		added = p
		return tx.PutProposal(p)
	})
	if err != nil {
		return alert.Proposal{}, nil, fmt.Errorf("keep proposal: %w", err)
	}
	return added, dropped, nil
}

// Proposals returns every kept proposal, oldest first.
func (db *DB) Proposals() ([]alert.Proposal, error) {
	var out []alert.Proposal
	err := db.View(func(tx *Tx) error {
		var err error
		out, err = tx.Proposals()
		return err
	})
	return out, err
}

// PutProposal stores p (a decision) under its ID.
func (db *DB) PutProposal(p alert.Proposal) error {
	return db.Update(func(tx *Tx) error { return tx.PutProposal(p) })
}

// Proposals returns every kept proposal, oldest first.
func (tx *Tx) Proposals() ([]alert.Proposal, error) {
	var out []alert.Proposal
	b := tx.bucket(bucketProposals)
	if b == nil {
		return out, nil // a read-only file from a vigil before proposals
	}
	err := b.ForEach(func(k, v []byte) error {
		var p alert.Proposal
		if err := json.Unmarshal(v, &p); err != nil {
			return fmt.Errorf("decode proposal %x: %w: %w", k, ErrCorrupt, err)
		}
		out = append(out, p)
		return nil
	})
	return out, err
}

// PutProposal stores p under its ID.
func (tx *Tx) PutProposal(p alert.Proposal) error {
	k, ok := proposalKey(p.ID)
	if !ok {
		return fmt.Errorf("put proposal: bad id %q", p.ID)
	}
	return tx.putJSON(bucketProposals, k, p)
}
