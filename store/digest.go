package store

import (
	"encoding/json"
	"fmt"
	"slices"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/vigil-iot/vigil/alert"
)

// Telegram's digest. During quiet hours, and past [telegram] max_per_hour,
// the Telegram transport holds alerts here instead of sending them, and
// sends them later as one digest. An alert is held (committed) before the
// transport acknowledges it from the outbox, so a power cut loses none;
// holding the same alert again (redelivered after a crash) keeps one copy.
// The send times of its alert messages are kept too, so a restart does
// not reset the cap.

// heldDropByKey, in the telegram bucket, counts by kind (alert.Dropped,
// JSON) the held alerts dropped from the full ring; heldDropKey keeps the
// total, which is all an older vigil kept.
var heldDropByKey = []byte("held_dropped_by")

// TelegramHeld is what Telegram holds for its digest, for `vigil status`.
type TelegramHeld struct {
	Alerts []alert.Alert // oldest first
	// Dropped counts held alerts dropped, by kind, because more than
	// Options.HeldCap were held; it is reset once nothing is held.
	Dropped alert.Dropped
	Due     time.Time // when the digest goes out; zero when nothing is held
	Why     string    // why then: "quiet hours end", ...
}

// TelegramHeld returns what Telegram holds for its digest. A file without
// the digest's buckets (older, opened read-only) holds nothing.
func (tx *Tx) TelegramHeld() (TelegramHeld, error) {
	var h TelegramHeld
	var err error
	if h.Alerts, err = tx.heldAlerts(); err != nil {
		return h, err
	}
	if h.Dropped, err = tx.heldDropped(); err != nil {
		return h, err
	}
	if b := tx.bucket(bucketTelegram); b != nil {
		if raw := b.Get(dueKey); raw != nil {
			if err := h.Due.UnmarshalBinary(raw); err != nil {
				return h, fmt.Errorf("decode digest due time: %w: %w", ErrCorrupt, err)
			}
		}
		h.Why = string(b.Get(whyKey))
	}
	return h, nil
}

func (tx *Tx) heldAlerts() ([]alert.Alert, error) {
	b := tx.bucket(bucketTelegramHeld)
	if b == nil {
		return nil, nil
	}
	var out []alert.Alert
	err := b.ForEach(func(k, v []byte) error {
		var r alertRecord
		if err := json.Unmarshal(v, &r); err != nil {
			return fmt.Errorf("decode held alert %x: %w: %w", k, ErrCorrupt, err)
		}
		out = append(out, r.alert())
		return nil
	})
	return out, err
}

// telegramSends returns the recorded send times, oldest first.
func (tx *Tx) telegramSends() ([]time.Time, error) {
	b := tx.bucket(bucketTelegramSent)
	if b == nil {
		return nil, nil
	}
	var out []time.Time
	err := b.ForEach(func(k, v []byte) error {
		var t time.Time
		if err := t.UnmarshalBinary(v); err != nil {
			return fmt.Errorf("decode telegram send time %x: %w: %w", k, ErrCorrupt, err)
		}
		out = append(out, t)
		return nil
	})
	return out, err
}

// HoldTelegram holds a for Telegram's digest, due at due (why says why
// then), in one write transaction. An alert with a.ID already held is not
// held twice; due and why are updated all the same. Beyond
// Options.HeldCap held alerts some are dropped and counted by kind (see
// trimHeld): notices first, so a flood of notices never pushes out an
// alert.
func (db *DB) HoldTelegram(a alert.Alert, due time.Time, why string) error {
	raw, err := json.Marshal(toRecord(a))
	if err != nil {
		return fmt.Errorf("hold alert %q: encode: %w", a.ID, err)
	}
	return db.Update(func(tx *Tx) error {
		held, err := tx.heldAlerts()
		if err != nil {
			return err
		}
		if !slices.ContainsFunc(held, func(h alert.Alert) bool { return h.ID == a.ID }) {
			b, err := tx.wbucket(bucketTelegramHeld)
			if err != nil {
				return err
			}
			if _, err := appendSeq(b, raw); err != nil {
				return fmt.Errorf("hold alert %q: %w", a.ID, err)
			}
			dropped, err := trimHeld(b, tx.opts().HeldCap)
			if err != nil {
				return fmt.Errorf("hold alert %q: drop from the full digest: %w", a.ID, err)
			}
			if dropped.Total() > 0 {
				if err := tx.addHeldDropped(dropped); err != nil {
					return fmt.Errorf("hold alert %q: %w", a.ID, err)
				}
			}
		}
		return tx.setDue(due, why)
	})
}

// heldDropped returns the count of held alerts dropped from the full ring,
// by kind. The total is kept too (an older vigil kept only that): what it
// counts beyond the kinds is Other.
func (tx *Tx) heldDropped() (alert.Dropped, error) {
	var d alert.Dropped
	if _, err := tx.getJSON(bucketTelegram, heldDropByKey, &d); err != nil {
		return d, err
	}
	n, err := tx.getUint(bucketTelegram, heldDropKey)
	if err != nil {
		return d, err
	}
	if extra := int(n) - d.Total(); extra > 0 {
		d.Other += extra
	}
	return d, nil
}

// addHeldDropped adds d to the count of held alerts dropped.
func (tx *Tx) addHeldDropped(d alert.Dropped) error {
	old, err := tx.heldDropped()
	if err != nil {
		return err
	}
	sum := old.Plus(d)
	if err := tx.putJSON(bucketTelegram, heldDropByKey, sum); err != nil {
		return err
	}
	return tx.putUint(bucketTelegram, heldDropKey, uint64(sum.Total()))
}

// trimHeld drops held alerts from b until at most n remain, and returns
// what it dropped. This is the digest's drop policy: notices go first,
// oldest first; alerts go only when nothing but alerts is held, the lowest
// severity first and, within one severity, the oldest first. An entry that
// does not decode goes before all of them.
func trimHeld(b *bolt.Bucket, n int) (alert.Dropped, error) {
	var d alert.Dropped
	extra := count(b) - n
	if extra <= 0 {
		return d, nil
	}
	type entry struct {
		key  []byte
		a    alert.Alert
		rank int // the order of dropping: lower goes first
	}
	var all []entry
	err := b.ForEach(func(k, v []byte) error {
		e := entry{key: append([]byte(nil), k...)}
		var r alertRecord
		switch {
		case json.Unmarshal(v, &r) != nil:
			e.rank = -1
		case r.alert().IsNotice():
			e.a, e.rank = r.alert(), 0
		default:
			e.a, e.rank = r.alert(), 1+int(r.alert().Severity)
		}
		all = append(all, e)
		return nil
	})
	if err != nil {
		return d, err
	}
	slices.SortStableFunc(all, func(x, y entry) int { return x.rank - y.rank })
	for _, e := range all[:extra] {
		if err := b.Delete(e.key); err != nil {
			return d, fmt.Errorf("delete: %w", err)
		}
		if e.rank < 0 {
			d.Other++
		} else {
			d.Add(e.a)
		}
	}
	return d, nil
}

// SetTelegramDue records when the digest goes out, and why then.
func (db *DB) SetTelegramDue(due time.Time, why string) error {
	return db.Update(func(tx *Tx) error { return tx.setDue(due, why) })
}

func (tx *Tx) setDue(due time.Time, why string) error {
	b, err := tx.wbucket(bucketTelegram)
	if err != nil {
		return err
	}
	if err := b.Put(dueKey, marshalTime(due)); err != nil {
		return fmt.Errorf("put digest due time: %w", err)
	}
	if err := b.Put(whyKey, []byte(why)); err != nil {
		return fmt.Errorf("put digest reason: %w", err)
	}
	return nil
}

// AckTelegramHeld marks the held alerts among ids as acknowledged by by at
// at, so that the digest's line for each says so: an acknowledged alert
// that waits for the digest has no message of its own to edit.
func (db *DB) AckTelegramHeld(ids []string, by string, at time.Time) error {
	return db.Update(func(tx *Tx) error {
		b, err := tx.wbucket(bucketTelegramHeld)
		if err != nil {
			return err
		}
		keys, recs, err := heldAmong(b, ids)
		if err != nil {
			return err
		}
		for i, r := range recs {
			r.AckedBy, r.AckedAt = by, at
			raw, err := json.Marshal(r)
			if err != nil {
				return fmt.Errorf("ack held alert %q: encode: %w", r.ID, err)
			}
			if err := b.Put(keys[i], raw); err != nil {
				return fmt.Errorf("ack held alert: %w", err)
			}
		}
		return nil
	})
}

// heldAmong returns the keys (copied out) and records of the held alerts
// in b whose id is among ids, oldest first. An entry that does not decode
// is none of them.
func heldAmong(b *bolt.Bucket, ids []string) (keys [][]byte, recs []alertRecord, err error) {
	err = b.ForEach(func(k, v []byte) error {
		var r alertRecord
		if err := json.Unmarshal(v, &r); err == nil && slices.Contains(ids, r.ID) {
			keys, recs = append(keys, append([]byte(nil), k...)), append(recs, r)
		}
		return nil
	})
	return keys, recs, err
}

// TelegramPending returns, in one read transaction, the held alerts
// (oldest first), how many were dropped from the full ring, and the
// recorded send times (oldest first).
func (db *DB) TelegramPending() (held []alert.Alert, dropped alert.Dropped, sends []time.Time, err error) {
	err = db.View(func(tx *Tx) error {
		h, err := tx.TelegramHeld()
		if err != nil {
			return err
		}
		held, dropped = h.Alerts, h.Dropped
		sends, err = tx.telegramSends()
		return err
	})
	return held, dropped, sends, err
}

// TelegramSent records, in one write transaction, that a Telegram message
// went out at at (keeping the newest keep send times; keep <= 0 records
// none) and that it carried the held alerts release, which are no longer
// held. Once nothing is held, the due time and the drop count go too.
func (db *DB) TelegramSent(at time.Time, keep int, release []string) error {
	return db.Update(func(tx *Tx) error {
		if keep > 0 {
			b, err := tx.wbucket(bucketTelegramSent)
			if err != nil {
				return err
			}
			if _, err := appendSeq(b, marshalTime(at)); err != nil {
				return fmt.Errorf("record telegram send: %w", err)
			}
			if _, err := trimOldest(b, keep); err != nil {
				return fmt.Errorf("record telegram send: %w", err)
			}
		}
		if len(release) == 0 {
			return nil
		}
		b, err := tx.wbucket(bucketTelegramHeld)
		if err != nil {
			return err
		}
		del, _, err := heldAmong(b, release)
		if err != nil {
			return err
		}
		for _, k := range del {
			if err := b.Delete(k); err != nil {
				return fmt.Errorf("release held alert: %w", err)
			}
		}
		if k, _ := b.Cursor().First(); k != nil {
			return nil
		}
		t := tx.bucket(bucketTelegram)
		for _, key := range [][]byte{dueKey, whyKey, heldDropKey, heldDropByKey} {
			if err := t.Delete(key); err != nil {
				return fmt.Errorf("clear digest: %w", err)
			}
		}
		return nil
	})
}

// trimOldest deletes the first entries of b until at most n remain and
// returns how many it deleted. Unlike trimRing it counts the keys, so it
// holds for a bucket that also loses entries from the middle.
func trimOldest(b *bolt.Bucket, n int) (int, error) {
	extra := count(b) - n
	if extra <= 0 {
		return 0, nil
	}
	var keys [][]byte
	c := b.Cursor()
	for k, _ := c.First(); k != nil && len(keys) < extra; k, _ = c.Next() {
		keys = append(keys, append([]byte(nil), k...))
	}
	for _, k := range keys {
		if err := b.Delete(k); err != nil {
			return 0, fmt.Errorf("delete: %w", err)
		}
	}
	return len(keys), nil
}
