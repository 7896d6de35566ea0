package store

import (
	"fmt"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	bolt "go.etcd.io/bbolt"

	"github.com/vigil-iot/vigil/alert"
)

func testAlert(i int) alert.Alert {
	return alert.Alert{ID: fmt.Sprintf("alert-%d", i), Device: "greenhouse-pi", Time: t0.Add(time.Duration(i) * time.Second),
		Severity: alert.Critical, Source: alert.SourceLLM, State: alert.StateFiring, Summary: fmt.Sprintf("summary %d", i)}
}

func enqueue(t *testing.T, db *DB, ids ...int) []uint64 {
	t.Helper()
	var seqs []uint64
	update(t, db, func(tx *Tx) error {
		for _, i := range ids {
			seq, _, err := tx.Enqueue(testAlert(i))
			if err != nil {
				return err
			}
			seqs = append(seqs, seq)
		}
		return nil
	})
	return seqs
}

// pendingIDs returns the alert ids pending for name, checking Depth agrees.
func pendingIDs(t *testing.T, db *DB, name string, limit int) []string {
	t.Helper()
	var ids []string
	view(t, db, func(tx *Tx) error {
		es, err := tx.Pending(name, limit)
		if err != nil {
			t.Fatal(err)
		}
		var last uint64
		for _, e := range es {
			if e.Seq <= last {
				t.Errorf("Pending(%q) out of order: seq %d after %d", name, e.Seq, last)
			}
			last = e.Seq
			ids = append(ids, e.Alert.ID)
		}
		if limit <= 0 {
			d, err := tx.Depth(name)
			if err != nil || d != len(es) {
				t.Errorf("Depth(%q) = %d, %v, want %d", name, d, err, len(es))
			}
		}
		return nil
	})
	return ids
}

func ack(t *testing.T, db *DB, name string, seq uint64, active ...string) {
	t.Helper()
	update(t, db, func(tx *Tx) error { return tx.Ack(name, seq, active) })
}

func ids(is ...int) []string {
	var out []string
	for _, i := range is {
		out = append(out, fmt.Sprintf("alert-%d", i))
	}
	return out
}

func TestOutboxOrderAndContent(t *testing.T) {
	db := openTemp(t, Options{})
	odd := testAlert(9)
	odd.Severity = 0 // invalid severities must not poison the outbox
	odd.Summary = "ünïcode \"quoted\" <html> & 🔥"
	var seqs []uint64
	update(t, db, func(tx *Tx) error {
		for _, a := range []alert.Alert{testAlert(1), testAlert(2), odd, testAlert(3)} {
			seq, dropped, err := tx.Enqueue(a)
			if err != nil || dropped != 0 {
				t.Errorf("Enqueue(%s) = %d, %d, %v", a.ID, seq, dropped, err)
			}
			seqs = append(seqs, seq)
		}
		return nil
	})
	if diff := cmp.Diff([]uint64{1, 2, 3, 4}, seqs); diff != "" {
		t.Errorf("sequence numbers (-want +got):\n%s", diff)
	}
	db = reopen(t, db, Options{})
	view(t, db, func(tx *Tx) error {
		got, err := tx.Pending("mqtt", 0)
		if err != nil {
			t.Fatal(err)
		}
		want := []Entry{{1, testAlert(1)}, {2, testAlert(2)}, {3, odd}, {4, testAlert(3)}}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("Pending mismatch (-want +got):\n%s", diff)
		}
		return nil
	})
	tests := []struct {
		limit int
		want  []string
	}{
		{0, []string{"alert-1", "alert-2", "alert-9", "alert-3"}},
		{-1, []string{"alert-1", "alert-2", "alert-9", "alert-3"}},
		{1, []string{"alert-1"}},
		{3, []string{"alert-1", "alert-2", "alert-9"}},
		{10, []string{"alert-1", "alert-2", "alert-9", "alert-3"}},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, pendingIDs(t, db, "mqtt", tt.limit)); diff != "" {
			t.Errorf("Pending(mqtt, %d) (-want +got):\n%s", tt.limit, diff)
		}
	}
}

func TestOutboxAckBeforeDelete(t *testing.T) {
	db := openTemp(t, Options{})
	active := []string{"mqtt", "telegram"}
	enqueue(t, db, 1, 2, 3, 4)

	type want struct{ mqtt, telegram, stored []string }
	stored := func() []string {
		// every entry still in the file, whoever acked it
		var out []string
		view(t, db, func(tx *Tx) error {
			c := tx.bucket(bucketOutbox).Cursor()
			for k, _ := c.First(); k != nil; k, _ = c.Next() {
				seq, _ := decodeUint(k)
				out = append(out, fmt.Sprintf("alert-%d", seq))
			}
			return nil
		})
		return out
	}
	steps := []struct {
		name string
		do   func()
		want want
	}{
		{"nothing acked", func() {}, want{ids(1, 2, 3, 4), ids(1, 2, 3, 4), ids(1, 2, 3, 4)}},
		{"mqtt acks 2: kept for telegram", func() { ack(t, db, "mqtt", 2, active...) },
			want{ids(3, 4), ids(1, 2, 3, 4), ids(1, 2, 3, 4)}},
		{"telegram acks 1: 1 deleted", func() { ack(t, db, "telegram", 1, active...) },
			want{ids(3, 4), ids(2, 3, 4), ids(2, 3, 4)}},
		{"mqtt acks backwards: ignored", func() { ack(t, db, "mqtt", 1, active...) },
			want{ids(3, 4), ids(2, 3, 4), ids(2, 3, 4)}},
		{"telegram acks 3: 2 deleted", func() { ack(t, db, "telegram", 3, active...) },
			want{ids(3, 4), ids(4), ids(3, 4)}},
		{"mqtt acks 4", func() { ack(t, db, "mqtt", 4, active...) },
			want{nil, ids(4), ids(4)}},
		{"telegram acks 4: empty", func() { ack(t, db, "telegram", 4, active...) },
			want{nil, nil, nil}},
	}
	for _, s := range steps {
		s.do()
		db = reopen(t, db, Options{})
		got := want{pendingIDs(t, db, "mqtt", 0), pendingIDs(t, db, "telegram", 0), stored()}
		if diff := cmp.Diff(s.want, got, cmp.AllowUnexported(want{}), cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("%s (-want +got):\n%s", s.name, diff)
		}
	}
}

func TestOutboxAckActiveSet(t *testing.T) {
	tests := []struct {
		name   string
		acks   []string // each acks seq 3 with the active list below
		active []string
		stored int // entries left of 4
	}{
		{"a new transport without cursor holds everything", []string{"mqtt"}, []string{"mqtt", "telegram"}, 4},
		{"a transport that is no longer active does not hold entries", []string{"mqtt"}, []string{"mqtt"}, 1},
		{"the acking transport always counts", []string{"mqtt"}, nil, 1},
		{"the acking transport counts even when unlisted", []string{"mqtt"}, []string{"telegram"}, 4},
		{"both acked", []string{"mqtt", "telegram"}, []string{"mqtt", "telegram"}, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			db := openTemp(t, Options{})
			enqueue(t, db, 1, 2, 3, 4)
			for _, name := range tt.acks {
				ack(t, db, name, 3, tt.active...)
			}
			view(t, db, func(tx *Tx) error {
				if n := count(tx.bucket(bucketOutbox)); n != tt.stored {
					t.Errorf("outbox holds %d entries, want %d", n, tt.stored)
				}
				return nil
			})
		})
	}
}

func TestOutboxAckBeyondLastSeq(t *testing.T) {
	db := openTemp(t, Options{})
	enqueue(t, db, 1, 2)
	ack(t, db, "mqtt", 1000, "mqtt") // a confused caller must not swallow future alerts
	enqueue(t, db, 3)
	if diff := cmp.Diff(ids(3), pendingIDs(t, db, "mqtt", 0)); diff != "" {
		t.Errorf("Pending after an ack beyond the last seq (-want +got):\n%s", diff)
	}
	if err := db.Update(func(tx *Tx) error { return tx.Ack("", 1, nil) }); err == nil {
		t.Error("Ack with an empty transport name succeeded")
	}
}

func TestOutboxBound(t *testing.T) {
	opts := Options{OutboxCap: 3}
	db := openTemp(t, opts)
	steps := []struct {
		enqueue     []int
		wantDropped []int // per Enqueue
		wantTotal   uint64
		wantPending []string
		ackTelegram uint64
	}{
		{[]int{1, 2, 3}, []int{0, 0, 0}, 0, ids(1, 2, 3), 0},
		{[]int{4}, []int{1}, 1, ids(2, 3, 4), 0},
		{[]int{5, 6}, []int{1, 1}, 3, ids(4, 5, 6), 0},
		// telegram acknowledged 5: 4 and 5 are gone for it but kept for mqtt
		{nil, nil, 3, ids(4, 5, 6), 5},
		{[]int{7}, []int{1}, 4, ids(5, 6, 7), 0},
	}
	for i, s := range steps {
		update(t, db, func(tx *Tx) error {
			for j, id := range s.enqueue {
				_, dropped, err := tx.Enqueue(testAlert(id))
				if err != nil {
					return err
				}
				if dropped != s.wantDropped[j] {
					t.Errorf("step %d: Enqueue(%d) dropped %d, want %d", i, id, dropped, s.wantDropped[j])
				}
			}
			if s.ackTelegram > 0 {
				return tx.Ack("telegram", s.ackTelegram, []string{"mqtt", "telegram"})
			}
			return nil
		})
		db = reopen(t, db, opts)
		view(t, db, func(tx *Tx) error {
			n, err := tx.Dropped()
			if n != s.wantTotal || err != nil {
				t.Errorf("step %d: Dropped() = %d, %v, want %d", i, n, err, s.wantTotal)
			}
			return nil
		})
		if diff := cmp.Diff(s.wantPending, pendingIDs(t, db, "mqtt", 0)); diff != "" {
			t.Errorf("step %d: Pending(mqtt) (-want +got):\n%s", i, diff)
		}
	}
	if diff := cmp.Diff(ids(6, 7), pendingIDs(t, db, "telegram", 0)); diff != "" {
		t.Errorf("Pending(telegram) (-want +got):\n%s", diff)
	}
}

func TestOutboxSeqNeverReused(t *testing.T) {
	db := openTemp(t, Options{})
	active := []string{"mqtt"}
	first := enqueue(t, db, 1, 2, 3)
	ack(t, db, "mqtt", first[2], active...)
	if got := pendingIDs(t, db, "mqtt", 0); len(got) != 0 {
		t.Fatalf("outbox not drained: %v", got)
	}
	db = reopen(t, db, Options{})
	second := enqueue(t, db, 4)
	if second[0] <= first[2] {
		t.Errorf("seq after draining and reopening = %d, want > %d", second[0], first[2])
	}
	// The drained transport's cursor must not hide the new entry.
	if diff := cmp.Diff(ids(4), pendingIDs(t, db, "mqtt", 0)); diff != "" {
		t.Errorf("Pending(mqtt) after refill (-want +got):\n%s", diff)
	}
	// A rolled-back Enqueue gives its number back only because nothing saw it.
	db.Update(func(tx *Tx) error {
		tx.Enqueue(testAlert(5))
		return fmt.Errorf("roll back")
	})
	third := enqueue(t, db, 6)
	if third[0] <= second[0] {
		t.Errorf("seq after rollback = %d, want > %d", third[0], second[0])
	}
}

func TestDepthUnknownTransport(t *testing.T) {
	db := openTemp(t, Options{})
	enqueue(t, db, 1, 2)
	view(t, db, func(tx *Tx) error {
		if d, err := tx.Depth("webhook"); d != 2 || err != nil {
			t.Errorf("Depth(webhook) = %d, %v, want 2", d, err)
		}
		if n, err := tx.Dropped(); n != 0 || err != nil {
			t.Errorf("Dropped() = %d, %v, want 0", n, err)
		}
		return nil
	})
}

func TestAlertLogOutlivesDeliveryAndIsBounded(t *testing.T) {
	db, err := Open(filepath.Join(t.TempDir(), "s.db"), Options{AlertLog: 3})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	err = db.Update(func(tx *Tx) error {
		for i := range 5 {
			if _, _, err := tx.Enqueue(alert.Alert{ID: fmt.Sprint("a", i), Summary: "s"}); err != nil {
				return err
			}
		}
		return tx.Ack("log", 5, nil)
	})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	err = db.View(func(tx *Tx) error {
		if d, _ := tx.Depth("log"); d != 0 {
			t.Errorf("Depth = %d after ack, want 0", d)
		}
		as, err := tx.Alerts(0)
		for _, a := range as {
			got = append(got, a.ID)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"a4", "a3", "a2"}; !slices.Equal(got, want) {
		t.Errorf("Alerts(0) = %v, want %v", got, want)
	}
}

// TestOldNoticesReadAsNotices: a state file written by a vigil from before
// alert.StateNotice holds its notices (vigil set, checklist set, notes
// clear, test-alert) as firing system alerts. Read back, from the outbox and
// from the alert log, they are notices; a real problem stays firing.
func TestOldNoticesReadAsNotices(t *testing.T) {
	path := filepath.Join(t.TempDir(), "vigil.db")
	db, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
	// The records exactly as 77ff7c0 wrote them, put in place with bbolt.
	old := []string{
		`{"id":"d-1","device":"d","time":"2026-01-02T03:04:05Z","severity":1,"source":"system","rule":"setting","state":"firing","summary":"heartbeat.interval set to 10m by cli"}`,
		`{"id":"d-2","device":"d","time":"2026-01-02T03:04:06Z","severity":1,"source":"system","rule":"checklist","state":"firing","summary":"checklist set by cli (20 bytes)"}`,
		`{"id":"d-3","device":"d","time":"2026-01-02T03:04:07Z","severity":1,"source":"system","rule":"notes","state":"firing","summary":"2 notes cleared by cli"}`,
		`{"id":"d-4","device":"d","time":"2026-01-02T03:04:08Z","severity":3,"source":"system","rule":"test","state":"firing","summary":"Test alert","transport":"mqtt"}`,
		`{"id":"d-5","device":"d","time":"2026-01-02T03:04:09Z","severity":3,"source":"rule","rule":"too_hot","state":"firing","summary":"air at 38 °C"}`,
	}
	b, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Update(func(tx *bolt.Tx) error {
		for _, name := range [][]byte{bucketOutbox, bucketAlertLog} {
			bk := tx.Bucket(name)
			for _, raw := range old {
				seq, err := bk.NextSequence()
				if err != nil {
					return err
				}
				if err := bk.Put(encodeUint(seq), []byte(raw)); err != nil {
					return err
				}
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	b.Close()

	db, err = Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	want := map[string]string{"d-1": alert.StateNotice, "d-2": alert.StateNotice, "d-3": alert.StateNotice,
		"d-4": alert.StateNotice, "d-5": alert.StateFiring}
	view(t, db, func(tx *Tx) error {
		es, err := tx.Pending("mqtt", 0)
		if err != nil {
			return err
		}
		logged, err := tx.Alerts(0)
		if err != nil {
			return err
		}
		if len(es) != len(old) || len(logged) != len(old) {
			t.Fatalf("read %d queued and %d logged alerts, want %d of each", len(es), len(logged), len(old))
		}
		for _, e := range es {
			if got := e.Alert.State; got != want[e.Alert.ID] {
				t.Errorf("Pending: alert %s (%s/%s) state = %q, want %q", e.Alert.ID, e.Alert.Source, e.Alert.Rule, got, want[e.Alert.ID])
			}
		}
		if got := es[3].Alert.Transport; got != "mqtt" {
			t.Errorf("Pending: the test alert's transport = %q, want mqtt kept", got)
		}
		for _, a := range logged {
			if a.State != want[a.ID] {
				t.Errorf("Alerts: alert %s (%s/%s) state = %q, want %q", a.ID, a.Source, a.Rule, a.State, want[a.ID])
			}
		}
		return nil
	})
}
