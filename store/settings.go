package store

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// Setting is one value of the run-time overlay (`vigil set`): a config key
// set from the CLI, a remote channel or the model, applied over config.toml
// and the environment. The overlay is bounded by the settable keys (a
// handful, plus one per rule), so it is not a ring.
type Setting struct {
	Key   string    `json:"key"`   // "heartbeat.interval", "rule.too_hot.enabled"
	Value string    `json:"value"` // as a person typed it: "10m", "false"
	By    string    `json:"by"`    // who set it: "cli", "telegram chat 1 user 2", "model"
	At    time.Time `json:"at"`    // when
}

// Settings returns the overlay sorted by key (empty when none was set).
func (db *DB) Settings() ([]Setting, error) {
	var out []Setting
	err := db.View(func(tx *Tx) error {
		var err error
		out, err = tx.Settings()
		return err
	})
	return out, err
}

// PutSetting stores s, replacing any value its key had.
func (db *DB) PutSetting(s Setting) error {
	return db.Update(func(tx *Tx) error { return tx.PutSetting(s) })
}

// DeleteSetting removes key from the overlay and reports whether it was set.
func (db *DB) DeleteSetting(key string) (bool, error) {
	var found bool
	err := db.Update(func(tx *Tx) error {
		var err error
		found, err = tx.DeleteSetting(key)
		return err
	})
	return found, err
}

// Settings returns the overlay sorted by key (bbolt keeps keys in order).
func (tx *Tx) Settings() ([]Setting, error) {
	var out []Setting
	b := tx.bucket(bucketSettings)
	if b == nil {
		return out, nil // a read-only file from a vigil before settings
	}
	err := b.ForEach(func(k, v []byte) error {
		var s Setting
		if err := json.Unmarshal(v, &s); err != nil {
			return fmt.Errorf("decode setting %q: %w: %w", k, ErrCorrupt, err)
		}
		s.Key = string(k)
		out = append(out, s)
		return nil
	})
	return out, err
}

// PutSetting stores s, replacing any value its key had.
func (tx *Tx) PutSetting(s Setting) error {
	if s.Key == "" {
		return errors.New("put setting: empty key")
	}
	return tx.putJSON(bucketSettings, []byte(s.Key), s)
}

// DeleteSetting removes key from the overlay and reports whether it was set.
func (tx *Tx) DeleteSetting(key string) (bool, error) {
	b, err := tx.wbucket(bucketSettings)
	if err != nil {
		return false, err
	}
	if b.Get([]byte(key)) == nil {
		return false, nil
	}
	if err := b.Delete([]byte(key)); err != nil {
		return false, fmt.Errorf("delete setting %q: %w", key, err)
	}
	return true, nil
}
