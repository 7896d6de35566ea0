package store

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/vigil-iot/vigil/alert"
)

// alertRecord is how an outbox entry is stored. Severity is kept as its
// number so that no alert value can make an entry undecodable and block the
// outbox (alert.Severity's text form rejects unknown values).
type alertRecord struct {
	ID       string    `json:"id"`
	Device   string    `json:"device"`
	Time     time.Time `json:"time"`
	Severity int       `json:"severity"`
	Source   string    `json:"source"`
	Rule     string    `json:"rule"`
	State    string    `json:"state"`
	Summary  string    `json:"summary"`
	Only     string    `json:"transport,omitempty"` // alert.Alert.Transport
	AckedBy  string    `json:"acked_by,omitempty"`
	AckedAt  time.Time `json:"acked_at,omitzero"`
	// Proposal is alert.Alert.Proposal: the notice of a rule the model
	// proposed carries it to every transport.
	Proposal *alert.Proposal `json:"proposal,omitempty"`
}

func toRecord(a alert.Alert) alertRecord {
	return alertRecord{a.ID, a.Device, a.Time, int(a.Severity), a.Source, a.Rule, a.State, a.Summary, a.Transport, a.AckedBy, a.AckedAt, a.Proposal}
}

// alert decodes the record. A notice queued by a vigil from before
// alert.StateNotice (a firing system alert with a notice rule) reads back as
// a notice, so it never turns a problem indicator on after an upgrade.
func (r alertRecord) alert() alert.Alert {
	return alert.Alert{ID: r.ID, Device: r.Device, Time: r.Time, Severity: alert.Severity(r.Severity),
		Source: r.Source, Rule: r.Rule, State: r.State, Summary: r.Summary, Transport: r.Only,
		AckedBy: r.AckedBy, AckedAt: r.AckedAt, Proposal: r.Proposal}.Normalized()
}

// Enqueue appends an alert to the outbox. When the outbox holds OutboxCap
// entries it drops the oldest ones first, adds their number to the persisted
// drop counter and returns it (the number dropped by this call; Dropped
// returns the total). Sequence numbers are never reused, even after the
// outbox emptied.
func (tx *Tx) Enqueue(a alert.Alert) (seq uint64, dropped int, err error) {
	raw, err := json.Marshal(toRecord(a))
	if err != nil {
		return 0, 0, fmt.Errorf("enqueue: encode alert %q: %w", a.ID, err)
	}
	b, err := tx.wbucket(bucketOutbox)
	if err != nil {
		return 0, 0, err
	}
	if seq, err = appendSeq(b, raw); err != nil {
		return 0, 0, fmt.Errorf("enqueue: %w", err)
	}
	tx.db.seenSeq(seq)
	if err := tx.logAlert(raw); err != nil {
		return 0, 0, fmt.Errorf("enqueue: %w", err)
	}
	if dropped, err = trimRing(b, tx.opts().OutboxCap); err != nil {
		return 0, 0, fmt.Errorf("enqueue: drop oldest: %w", err)
	}
	if dropped > 0 {
		total, err := tx.getUint(bucketMeta, droppedKey)
		if err != nil {
			return 0, 0, fmt.Errorf("enqueue: %w", err)
		}
		if err := tx.putUint(bucketMeta, droppedKey, total+uint64(dropped)); err != nil {
			return 0, 0, fmt.Errorf("enqueue: %w", err)
		}
	}
	return seq, dropped, nil
}

// cursor returns the last sequence number the named transport acknowledged.
func (tx *Tx) cursor(name string) (uint64, error) {
	b := tx.bucket(bucketCursors)
	if b == nil {
		return 0, nil
	}
	raw := b.Get([]byte(name))
	if raw == nil {
		return 0, nil
	}
	v, ok := decodeUint(raw)
	if !ok {
		return 0, fmt.Errorf("cursor %q: %w: malformed value %x", name, ErrCorrupt, raw)
	}
	return v, nil
}

// Pending returns up to limit outbox entries the named transport has not yet
// acknowledged, oldest first. limit <= 0 returns all of them.
func (tx *Tx) Pending(transportName string, limit int) ([]Entry, error) {
	cur, err := tx.cursor(transportName)
	if err != nil {
		return nil, fmt.Errorf("pending: %w", err)
	}
	b := tx.bucket(bucketOutbox)
	if b == nil {
		return nil, nil
	}
	var out []Entry
	c := b.Cursor()
	for k, v := c.Seek(encodeUint(cur + 1)); k != nil && (limit <= 0 || len(out) < limit); k, v = c.Next() {
		seq, _ := decodeUint(k)
		tx.db.seenSeq(seq)
		var r alertRecord
		if err := json.Unmarshal(v, &r); err != nil {
			return nil, fmt.Errorf("pending: decode entry %d: %w: %w", seq, ErrCorrupt, err)
		}
		out = append(out, Entry{Seq: seq, Alert: r.alert()})
	}
	return out, nil
}

// Ack moves the named transport's cursor to seq and deletes every entry that
// all active transports have acknowledged. A transport without a cursor has
// acknowledged nothing. The cursor never moves backwards, nor beyond the last
// sequence number handed out. The acknowledging transport always counts as
// active, whether or not it is listed.
func (tx *Tx) Ack(transportName string, seq uint64, active []string) error {
	if transportName == "" {
		return errors.New("ack: empty transport name")
	}
	out, err := tx.wbucket(bucketOutbox)
	if err != nil {
		return err
	}
	curs, err := tx.wbucket(bucketCursors)
	if err != nil {
		return err
	}
	cur, err := tx.cursor(transportName)
	if err != nil {
		return fmt.Errorf("ack: %w", err)
	}
	seq = min(seq, out.Sequence())
	if seq > cur {
		if err := curs.Put([]byte(transportName), encodeUint(seq)); err != nil {
			return fmt.Errorf("ack: put cursor %q: %w", transportName, err)
		}
		cur = seq
	}
	low := cur
	for _, name := range active {
		c, err := tx.cursor(name)
		if err != nil {
			return fmt.Errorf("ack: %w", err)
		}
		low = min(low, c)
	}
	if _, err := dropThrough(out, low); err != nil {
		return fmt.Errorf("ack: delete acknowledged: %w", err)
	}
	return nil
}

// Depth returns how many entries the named transport has not acknowledged.
func (tx *Tx) Depth(transportName string) (int, error) {
	cur, err := tx.cursor(transportName)
	if err != nil {
		return 0, fmt.Errorf("depth: %w", err)
	}
	b := tx.bucket(bucketOutbox)
	if b == nil {
		return 0, nil
	}
	n := 0
	c := b.Cursor()
	for k, _ := c.Seek(encodeUint(cur + 1)); k != nil; k, _ = c.Next() {
		n++
	}
	return n, nil
}

// Dropped returns how many alerts were ever dropped because the outbox was full.
func (tx *Tx) Dropped() (uint64, error) {
	n, err := tx.getUint(bucketMeta, droppedKey)
	if err != nil {
		return 0, fmt.Errorf("dropped: %w", err)
	}
	return n, nil
}

// logAlert keeps a copy of every queued alert in the alert log, a ring of
// AlertLog entries that delivery never touches: the outbox forgets an alert
// once every transport has it, the timeline should not.
func (tx *Tx) logAlert(raw []byte) error {
	b, err := tx.wbucket(bucketAlertLog)
	if err != nil {
		return err
	}
	if _, err := appendSeq(b, raw); err != nil {
		return fmt.Errorf("log alert: %w", err)
	}
	if _, err := trimRing(b, tx.opts().AlertLog); err != nil {
		return fmt.Errorf("trim alert log: %w", err)
	}
	return nil
}

// Alerts returns up to n of the logged alerts, newest first; n <= 0 returns
// all of them.
func (tx *Tx) Alerts(n int) ([]alert.Alert, error) {
	b := tx.bucket(bucketAlertLog)
	if b == nil { // a file written before the log existed, opened read-only
		return nil, nil
	}
	var out []alert.Alert
	c := b.Cursor()
	for k, v := c.Last(); k != nil && (n <= 0 || len(out) < n); k, v = c.Prev() {
		var r alertRecord
		if err := json.Unmarshal(v, &r); err != nil {
			return nil, fmt.Errorf("decode logged alert %x: %w", k, err)
		}
		out = append(out, r.alert())
	}
	return out, nil
}
