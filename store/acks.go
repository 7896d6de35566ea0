package store

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/vigil-iot/vigil/alert"
)

// Acknowledgements (vigil ack, Telegram's button and /ack, MQTT cmd/ack,
// the page). An ack is kept per problem (alert.Alert.Key: "rule/too_hot",
// "llm/") while the problem fires, and the engine deletes it in the same
// transaction that records the problem's resolution, so a problem that
// fires again is a new one, unacknowledged. There is one per problem
// firing at most; MaxAcks bounds the bucket all the same, should an ack
// outlive its problem (a rule removed from the config while firing).

// MaxAcks is how many acks the state file keeps; beyond it the oldest go.
const MaxAcks = 64

// ProblemAck is one acknowledged problem: which alert opened the firing that was
// acknowledged, who acknowledged it and when.
type ProblemAck struct {
	AlertID string    `json:"alert_id"`
	By      string    `json:"by"` // "cli", "socket", "telegram chat 1 user 2 (@ann)", "mqtt vigil/dev/cmd/ack", "web"
	At      time.Time `json:"at"`
}

// ProblemAcks returns every ack by problem key.
func (tx *Tx) ProblemAcks() (map[string]ProblemAck, error) {
	out := map[string]ProblemAck{}
	b := tx.bucket(bucketAcks)
	if b == nil {
		return out, nil // a read-only file from a vigil before acks
	}
	err := b.ForEach(func(k, v []byte) error {
		var a ProblemAck
		if err := json.Unmarshal(v, &a); err != nil {
			return fmt.Errorf("decode ack %q: %w: %w", k, ErrCorrupt, err)
		}
		out[string(k)] = a
		return nil
	})
	return out, err
}

// ProblemAck returns the ack of the problem key, ok=false when none.
func (tx *Tx) ProblemAck(key string) (a ProblemAck, ok bool, err error) {
	ok, err = tx.getJSON(bucketAcks, []byte(key), &a)
	return a, ok, err
}

// PutProblemAck records the ack of the problem key, replacing one it had, and
// drops the oldest acks beyond MaxAcks.
func (tx *Tx) PutProblemAck(key string, a ProblemAck) error {
	if key == "" {
		return errors.New("put ack: empty problem key")
	}
	if err := tx.putJSON(bucketAcks, []byte(key), a); err != nil {
		return err
	}
	b, err := tx.wbucket(bucketAcks)
	if err != nil || count(b) <= MaxAcks {
		return err
	}
	all, err := tx.ProblemAcks()
	if err != nil {
		return err
	}
	keys := make([]string, 0, len(all))
	for k := range all {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(x, y string) int { return all[x].At.Compare(all[y].At) })
	for _, k := range keys[:len(keys)-MaxAcks] {
		if err := b.Delete([]byte(k)); err != nil {
			return fmt.Errorf("drop ack %q: %w", k, err)
		}
	}
	return nil
}

// DeleteProblemAck removes the ack of the problem key, if any.
func (tx *Tx) DeleteProblemAck(key string) error {
	b, err := tx.wbucket(bucketAcks)
	if err != nil {
		return err
	}
	if err := b.Delete([]byte(key)); err != nil {
		return fmt.Errorf("delete ack %q: %w", key, err)
	}
	return nil
}

// Telegram's alert messages. The bot remembers which message carried
// which alert, so that an ack (from any channel) can edit the messages
// of the problem to say who acknowledged it, and a press of a message's
// Acknowledge button names its alert. A ring of MaxTelegramMessages.

// MaxTelegramMessages is how many sent alert messages the state file
// remembers.
const MaxTelegramMessages = 256

// telegramMessage is an entry of the message ring.
type telegramMessage struct {
	Alert   alertRecord `json:"alert"`
	Chat    int64       `json:"chat"`
	Message int64       `json:"message"`
}

// PutTelegramMessage remembers that message msg in chat carries a.
func (db *DB) PutTelegramMessage(a alert.Alert, chat, msg int64) error {
	raw, err := json.Marshal(telegramMessage{toRecord(a), chat, msg})
	if err != nil {
		return fmt.Errorf("remember telegram message of %q: %w", a.ID, err)
	}
	return db.Update(func(tx *Tx) error {
		b, err := tx.wbucket(bucketTelegramMsgs)
		if err != nil {
			return err
		}
		if _, err := appendSeq(b, raw); err != nil {
			return fmt.Errorf("remember telegram message of %q: %w", a.ID, err)
		}
		if _, err := trimRing(b, MaxTelegramMessages); err != nil {
			return fmt.Errorf("remember telegram message: %w", err)
		}
		return nil
	})
}

// TelegramMessages returns the remembered messages whose alert is one of
// ids (chat, message and alert of each), oldest first.
func (db *DB) TelegramMessages(ids []string) (alerts []alert.Alert, chats, msgs []int64, err error) {
	err = db.View(func(tx *Tx) error {
		return tx.eachTelegramMessage(func(m telegramMessage) bool {
			if slices.Contains(ids, m.Alert.ID) {
				alerts, chats, msgs = append(alerts, m.Alert.alert()), append(chats, m.Chat), append(msgs, m.Message)
			}
			return true
		})
	})
	return alerts, chats, msgs, err
}

// TelegramMessageAlert returns the alert message msg in chat carries,
// ok=false when the ring does not remember it.
func (db *DB) TelegramMessageAlert(chat, msg int64) (a alert.Alert, ok bool, err error) {
	err = db.View(func(tx *Tx) error {
		return tx.eachTelegramMessage(func(m telegramMessage) bool {
			if m.Chat == chat && m.Message == msg {
				a, ok = m.Alert.alert(), true
				return false
			}
			return true
		})
	})
	return a, ok, err
}

func (tx *Tx) eachTelegramMessage(fn func(telegramMessage) bool) error {
	b := tx.bucket(bucketTelegramMsgs)
	if b == nil {
		return nil
	}
	c := b.Cursor()
	for k, v := c.First(); k != nil; k, v = c.Next() {
		var m telegramMessage
		if err := json.Unmarshal(v, &m); err != nil {
			return fmt.Errorf("decode telegram message %x: %w: %w", k, ErrCorrupt, err)
		}
		if !fn(m) {
			return nil
		}
	}
	return nil
}
