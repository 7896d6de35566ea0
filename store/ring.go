package store

import (
	"encoding/json"
	"fmt"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/vigil-iot/vigil/device"
)

// The run ring, the history ring and the outbox key their entries by the
// bucket's NextSequence as 8 bytes big-endian: a cursor walks them in
// insertion order, a sequence number is never reused (the bucket keeps its
// counter when it empties), and the live entries always form one contiguous
// range, because entries are only appended at the end and removed from the
// front.

// appendSeq stores v under the bucket's next sequence number.
func appendSeq(b *bolt.Bucket, v []byte) (uint64, error) {
	seq, err := b.NextSequence()
	if err != nil {
		return 0, fmt.Errorf("next sequence: %w", err)
	}
	if err := b.Put(encodeUint(seq), v); err != nil {
		return 0, fmt.Errorf("put %d: %w", seq, err)
	}
	return seq, nil
}

// dropThrough deletes the entries with a sequence number <= last, oldest
// first, and returns how many it deleted.
func dropThrough(b *bolt.Bucket, last uint64) (int, error) {
	var keys [][]byte
	c := b.Cursor()
	for k, _ := c.First(); k != nil; k, _ = c.Next() {
		seq, ok := decodeUint(k)
		if ok && seq > last {
			break
		}
		keys = append(keys, append([]byte(nil), k...))
	}
	for _, k := range keys {
		if err := b.Delete(k); err != nil {
			return 0, fmt.Errorf("delete: %w", err)
		}
	}
	return len(keys), nil
}

// trimRing drops the oldest entries so that at most n remain.
func trimRing(b *bolt.Bucket, n int) (int, error) {
	last := b.Sequence()
	if last <= uint64(n) {
		return 0, nil
	}
	return dropThrough(b, last-uint64(n))
}

// count returns the number of keys in b.
func count(b *bolt.Bucket) int {
	n := 0
	c := b.Cursor()
	for k, _ := c.First(); k != nil; k, _ = c.Next() {
		n++
	}
	return n
}

// AppendRun adds r to the run ring (assigning r.Seq), dropping the oldest run
// beyond RunCap, and returns the assigned sequence number.
func (tx *Tx) AppendRun(r Run) (uint64, error) {
	b, err := tx.wbucket(bucketRuns)
	if err != nil {
		return 0, err
	}
	r.Seq = b.Sequence() + 1 // what NextSequence will hand out
	raw, err := json.Marshal(r)
	if err != nil {
		return 0, fmt.Errorf("encode run: %w", err)
	}
	seq, err := appendSeq(b, raw)
	if err != nil {
		return 0, fmt.Errorf("append run: %w", err)
	}
	if seq != r.Seq {
		return 0, fmt.Errorf("append run: sequence %d, expected %d", seq, r.Seq)
	}
	if _, err := trimRing(b, tx.opts().RunCap); err != nil {
		return 0, fmt.Errorf("trim runs: %w", err)
	}
	return seq, nil
}

// Runs returns up to n runs, newest first. n <= 0 returns every stored run.
func (tx *Tx) Runs(n int) ([]Run, error) {
	var out []Run
	err := tx.WalkRuns(func(r Run) bool {
		out = append(out, r)
		return n <= 0 || len(out) < n
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// WalkRuns calls fn with the stored runs, newest first, until fn returns
// false: what a run decided on is often settled by the last few runs, so
// the ring is not decoded whole.
func (tx *Tx) WalkRuns(fn func(Run) bool) error {
	b := tx.bucket(bucketRuns)
	if b == nil {
		return nil
	}
	c := b.Cursor()
	for k, v := c.Last(); k != nil; k, v = c.Prev() {
		var r Run
		if err := json.Unmarshal(v, &r); err != nil {
			return fmt.Errorf("decode run %x: %w", k, err)
		}
		if !fn(r) {
			return nil
		}
	}
	return nil
}

// AppendHistory appends snapshots to the sensor history ring, dropping the
// oldest beyond HistoryCap.
func (tx *Tx) AppendHistory(snaps []device.Snapshot) error {
	if len(snaps) == 0 {
		return nil
	}
	b, err := tx.wbucket(bucketHistory)
	if err != nil {
		return err
	}
	// bbolt needs every value to stay untouched until the commit: encode
	// into one arena and hand out non-overlapping slices of it.
	var arena []byte
	for _, s := range snaps {
		start := len(arena)
		arena = appendSnapshot(arena, s)
		if _, err := appendSeq(b, arena[start:len(arena):len(arena)]); err != nil {
			return fmt.Errorf("append history: %w", err)
		}
	}
	if _, err := trimRing(b, tx.opts().HistoryCap); err != nil {
		return fmt.Errorf("trim history: %w", err)
	}
	return nil
}

// LastHistory returns the snapshot appended last to the history ring: what
// the sensors last read, as far as the state file knows. ok is false when
// the ring is empty.
func (tx *Tx) LastHistory() (s device.Snapshot, ok bool, err error) {
	b := tx.bucket(bucketHistory)
	if b == nil {
		return s, false, nil
	}
	k, v := b.Cursor().Last()
	if k == nil {
		return s, false, nil
	}
	if s, err = decodeSnapshot(v); err != nil {
		return s, false, fmt.Errorf("decode history %x: %w", k, err)
	}
	return s, true, nil
}

// History returns the stored snapshots taken at or after since, oldest first
// (in the order they were appended, which after a clock jump is not the order
// of their times).
func (tx *Tx) History(since time.Time) ([]device.Snapshot, error) {
	b := tx.bucket(bucketHistory)
	if b == nil {
		return nil, nil
	}
	var out []device.Snapshot
	c := b.Cursor()
	for k, v := c.First(); k != nil; k, v = c.Next() {
		t, err := snapshotTime(v)
		if err != nil {
			return nil, fmt.Errorf("decode history %x: %w", k, err)
		}
		if t.Before(since) {
			continue
		}
		s, err := decodeSnapshot(v)
		if err != nil {
			return nil, fmt.Errorf("decode history %x: %w", k, err)
		}
		out = append(out, s)
	}
	return out, nil
}
