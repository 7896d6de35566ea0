package store

import "fmt"

// baselineKey holds, in the meta bucket, what is usual for each quantity at
// each hour (package baseline's encoding, opaque here: about 1.3 KB a
// quantity, bounded by the configured quantities). The engine writes it
// with the heartbeat's commit, never once per sample.
var baselineKey = []byte("baselines")

// Baselines returns the stored baselines, a copy (nil when none was stored).
func (tx *Tx) Baselines() []byte {
	b := tx.bucket(bucketMeta)
	if b == nil {
		return nil
	}
	if v := b.Get(baselineKey); v != nil {
		return append([]byte(nil), v...)
	}
	return nil
}

// PutBaselines stores the baselines, replacing the ones stored; nil or empty
// deletes them.
func (tx *Tx) PutBaselines(data []byte) error {
	b, err := tx.wbucket(bucketMeta)
	if err != nil {
		return err
	}
	if len(data) == 0 {
		err = b.Delete(baselineKey)
	} else {
		err = b.Put(baselineKey, data)
	}
	if err != nil {
		return fmt.Errorf("put baselines: %w", err)
	}
	return nil
}

// Baselines returns the stored baselines (nil when none was stored).
func (db *DB) Baselines() ([]byte, error) {
	var out []byte
	err := db.View(func(tx *Tx) error {
		out = tx.Baselines()
		return nil
	})
	return out, err
}
