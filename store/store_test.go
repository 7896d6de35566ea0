package store

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	bolt "go.etcd.io/bbolt"
)

var t0 = time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)

// openTemp opens a fresh state file in t.TempDir and closes it at cleanup.
func openTemp(t testing.TB, opts Options) *DB {
	t.Helper()
	db, err := Open(filepath.Join(t.TempDir(), "vigil.db"), opts)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// reopen closes db and opens the same file again.
func reopen(t testing.TB, db *DB, opts Options) *DB {
	t.Helper()
	if err := db.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	db2, err := Open(db.Path(), opts)
	if err != nil {
		t.Fatalf("reopen: %v", err)
	}
	t.Cleanup(func() { db2.Close() })
	return db2
}

func update(t testing.TB, db *DB, fn func(*Tx) error) {
	t.Helper()
	if err := db.Update(fn); err != nil {
		t.Fatalf("Update: %v", err)
	}
}

func view(t testing.TB, db *DB, fn func(*Tx) error) {
	t.Helper()
	if err := db.View(fn); err != nil {
		t.Fatalf("View: %v", err)
	}
}

func TestOpenCreatesLayout(t *testing.T) {
	db := openTemp(t, Options{})
	fi, err := os.Stat(db.Path())
	if err != nil {
		t.Fatal(err)
	}
	if got := fi.Mode().Perm(); got != 0o600 {
		t.Errorf("file mode = %v, want 0600", got)
	}
	if err := db.bolt.View(func(tx *bolt.Tx) error {
		for _, name := range allBuckets {
			if tx.Bucket(name) == nil {
				t.Errorf("bucket %s missing", name)
			}
		}
		v, ok := decodeUint(tx.Bucket(bucketMeta).Get(schemaKey))
		if !ok || v != SchemaVersion {
			t.Errorf("schema version = %d, %v, want %d", v, ok, SchemaVersion)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if db.Commits() != 0 {
		t.Errorf("Commits() after Open = %d, want 0", db.Commits())
	}
}

func TestOpenDoesNotWriteCompleteFile(t *testing.T) {
	db := openTemp(t, Options{})
	var txid int
	db.bolt.View(func(tx *bolt.Tx) error { txid = tx.ID(); return nil })
	db = reopen(t, db, Options{})
	var txid2 int
	db.bolt.View(func(tx *bolt.Tx) error { txid2 = tx.ID(); return nil })
	if txid2 != txid {
		t.Errorf("reopening a complete file committed: txid %d -> %d", txid, txid2)
	}
}

func TestOpenLocked(t *testing.T) {
	db := openTemp(t, Options{})
	for _, ro := range []bool{false, true} {
		start := time.Now()
		_, err := Open(db.Path(), Options{Timeout: 50 * time.Millisecond, ReadOnly: ro})
		if !errors.Is(err, ErrLocked) {
			t.Fatalf("second Open(ReadOnly=%v) = %v, want ErrLocked", ro, err)
		}
		if !strings.Contains(err.Error(), db.Path()) {
			t.Errorf("error %q does not name the path", err)
		}
		if d := time.Since(start); d > 5*time.Second {
			t.Errorf("second Open took %v, want about the timeout", d)
		}
	}
	// Once the holder closes, the file opens again.
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db2, err := Open(db.Path(), Options{Timeout: 50 * time.Millisecond})
	if err != nil {
		t.Fatalf("Open after Close: %v", err)
	}
	db2.Close()
}

func writeSchema(t *testing.T, path string, raw []byte) {
	t.Helper()
	b, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if err := b.Update(func(tx *bolt.Tx) error {
		m, err := tx.CreateBucketIfNotExists(bucketMeta)
		if err != nil {
			return err
		}
		return m.Put(schemaKey, raw)
	}); err != nil {
		t.Fatal(err)
	}
}

func TestOpenSchema(t *testing.T) {
	tests := []struct {
		name    string
		raw     []byte // schema value written before Open; nil: none
		wantErr error  // nil: success
		anyErr  bool
	}{
		{"missing version is upgraded", nil, nil, false},
		{"current", encodeUint(SchemaVersion), nil, false},
		{"older", encodeUint(SchemaVersion - 1), nil, false},
		{"newer", encodeUint(SchemaVersion + 1), ErrSchema, true},
		{"malformed", []byte("1"), nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "vigil.db")
			if tt.raw != nil {
				writeSchema(t, path, tt.raw)
			} else {
				b, err := bolt.Open(path, 0o600, nil)
				if err != nil {
					t.Fatal(err)
				}
				b.Close()
			}
			for _, ro := range []bool{true, false} {
				db, err := Open(path, Options{ReadOnly: ro})
				if tt.anyErr {
					if err == nil || (tt.wantErr != nil && !errors.Is(err, tt.wantErr)) {
						t.Fatalf("Open(ReadOnly=%v) = %v, want %v", ro, err, tt.wantErr)
					}
					if !strings.Contains(err.Error(), path) {
						t.Errorf("error %q does not name the path", err)
					}
					continue
				}
				if err != nil {
					t.Fatalf("Open(ReadOnly=%v): %v", ro, err)
				}
				db.Close()
			}
			if tt.anyErr {
				return
			}
			db, err := Open(path, Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			db.bolt.View(func(tx *bolt.Tx) error {
				if v, _ := decodeUint(tx.Bucket(bucketMeta).Get(schemaKey)); v != SchemaVersion {
					t.Errorf("schema version after Open = %d, want %d", v, SchemaVersion)
				}
				return nil
			})
		})
	}
}

func TestOpenErrors(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name string
		path string
		opts Options
	}{
		{"missing directory", filepath.Join(dir, "nope", "vigil.db"), Options{}},
		{"read-only missing file", filepath.Join(dir, "vigil.db"), Options{ReadOnly: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Open(tt.path, tt.opts)
			if err == nil {
				t.Fatalf("Open(%q) succeeded", tt.path)
			}
			if !strings.Contains(err.Error(), tt.path) {
				t.Errorf("Open(%q) = %q, does not name the path", tt.path, err)
			}
			if errors.Is(err, ErrLocked) || errors.Is(err, ErrSchema) {
				t.Errorf("Open(%q) = %v, wrongly a lock or schema error", tt.path, err)
			}
		})
	}
	if _, err := os.Stat(filepath.Join(dir, "vigil.db")); err == nil {
		t.Error("read-only Open created the file")
	}
}

func TestReadOnly(t *testing.T) {
	db := openTemp(t, Options{})
	update(t, db, func(tx *Tx) error { return tx.SetTelegramOffset(42) })
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	ro, err := Open(db.Path(), Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	view(t, ro, func(tx *Tx) error {
		off, err := tx.TelegramOffset()
		if off != 42 || err != nil {
			t.Errorf("TelegramOffset() = %d, %v, want 42", off, err)
		}
		return nil
	})
	err = ro.Update(func(tx *Tx) error { return tx.SetTelegramOffset(1) })
	if !errors.Is(err, ErrReadOnly) {
		t.Errorf("Update on read-only file = %v, want ErrReadOnly", err)
	}
	if ro.Commits() != 0 {
		t.Errorf("Commits() = %d, want 0", ro.Commits())
	}
	if err := ro.Check(); err != nil {
		t.Errorf("Check() on read-only file: %v", err)
	}
}

func TestCommits(t *testing.T) {
	db := openTemp(t, Options{})
	errBoom := errors.New("boom")
	steps := []struct {
		name string
		run  func() error
		want uint64
	}{
		{"view", func() error { return db.View(func(tx *Tx) error { _, err := tx.State(); return err }) }, 0},
		{"update", func() error { return db.Update(func(tx *Tx) error { return tx.PutState(State{}) }) }, 1},
		{"empty update", func() error { return db.Update(func(*Tx) error { return nil }) }, 2},
		{"view again", func() error { return db.View(func(*Tx) error { return nil }) }, 2},
		{"rolled back", func() error {
			err := db.Update(func(tx *Tx) error {
				tx.PutState(State{ConsecutiveFailures: 9})
				return errBoom
			})
			if !errors.Is(err, errBoom) {
				t.Errorf("Update returned %v, want the callback's error", err)
			}
			return nil
		}, 2},
		{"update after rollback", func() error { return db.Update(func(tx *Tx) error { return tx.ClearPause() }) }, 3},
	}
	for _, s := range steps {
		if err := s.run(); err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		if got := db.Commits(); got != s.want {
			t.Errorf("after %s: Commits() = %d, want %d", s.name, got, s.want)
		}
	}
	view(t, db, func(tx *Tx) error {
		s, _ := tx.State()
		if s.ConsecutiveFailures != 0 {
			t.Errorf("rolled-back state was kept: %+v", s)
		}
		return nil
	})
}

func TestCheck(t *testing.T) {
	db := openTemp(t, Options{RunCap: 10, HistoryCap: 20, OutboxCap: 5, FingerCap: 4})
	if err := db.Check(); err != nil {
		t.Fatalf("Check() on new file: %v", err)
	}
	for i := range 50 {
		update(t, db, func(tx *Tx) error { return churn(tx, i) })
	}
	if err := db.Check(); err != nil {
		t.Fatalf("Check() after churn: %v", err)
	}
	db = reopen(t, db, Options{})
	if err := db.Check(); err != nil {
		t.Fatalf("Check() after reopen: %v", err)
	}
}

func TestState(t *testing.T) {
	tests := []struct {
		name string
		s    State
	}{
		{"zero", State{}},
		{"full", State{
			ConsecutiveFailures: 3, FailureAlerted: true, LLMDown: true,
			LLMBackoffUntil: t0.Add(time.Minute), LastSuccess: t0, LastLLMCall: t0.Add(-time.Hour),
			LastAlert: "too hot", LastAlertAt: t0, BudgetDay: "2025-06-01", BudgetCalls: 7, BudgetTokens: 1234,
			Counters: map[string]uint64{"samples": 99, "alerts": 2},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			db := openTemp(t, Options{})
			view(t, db, func(tx *Tx) error {
				got, err := tx.State()
				if err != nil || !cmp.Equal(got, State{}) {
					t.Errorf("State() on new file = %+v, %v, want zero", got, err)
				}
				return nil
			})
			update(t, db, func(tx *Tx) error { return tx.PutState(tt.s) })
			for i := range 2 {
				if i == 1 {
					db = reopen(t, db, Options{})
				}
				view(t, db, func(tx *Tx) error {
					got, err := tx.State()
					if err != nil {
						t.Fatal(err)
					}
					if diff := cmp.Diff(tt.s, got); diff != "" {
						t.Errorf("State() mismatch (-want +got):\n%s", diff)
					}
					return nil
				})
			}
		})
	}
}

func TestPause(t *testing.T) {
	db := openTemp(t, Options{})
	p := Pause{Set: t0, Until: t0.Add(30 * time.Minute), Duration: 30 * time.Minute, By: "telegram"}
	steps := []struct {
		name   string
		write  func(*Tx) error
		want   Pause
		wantOK bool
	}{
		{"none", nil, Pause{}, false},
		{"set", func(tx *Tx) error { return tx.SetPause(p) }, p, true},
		{"replace", func(tx *Tx) error { p2 := p; p2.By = "cli"; return tx.SetPause(p2) }, Pause{p.Set, p.Until, p.Duration, "cli"}, true},
		{"clear", func(tx *Tx) error { return tx.ClearPause() }, Pause{}, false},
		{"clear twice", func(tx *Tx) error { return tx.ClearPause() }, Pause{}, false},
		{"set again", func(tx *Tx) error { return tx.SetPause(p) }, p, true},
	}
	for _, s := range steps {
		if s.write != nil {
			update(t, db, s.write)
		}
		check := func(d *DB) {
			view(t, d, func(tx *Tx) error {
				got, ok, err := tx.Pause()
				if err != nil || ok != s.wantOK || !cmp.Equal(got, s.want) {
					t.Errorf("%s: Pause() = %+v, %v, %v, want %+v, %v", s.name, got, ok, err, s.want, s.wantOK)
				}
				return nil
			})
		}
		check(db)
		db = reopen(t, db, Options{})
		check(db)
	}
}

func TestRuleStates(t *testing.T) {
	db := openTemp(t, Options{})
	hot := RuleState{Firing: true, Since: t0, LastNotified: t0.Add(time.Minute), AlertID: "a1"}
	wet := RuleState{Firing: true, Since: t0.Add(time.Hour), AlertID: "a2"}
	steps := []struct {
		name  string
		write func(*Tx) error
		want  map[string]RuleState
	}{
		{"none", nil, map[string]RuleState{}},
		{"put one", func(tx *Tx) error { return tx.PutRuleState("too_hot", hot) }, map[string]RuleState{"too_hot": hot}},
		{"put two", func(tx *Tx) error { return tx.PutRuleState("too_wet", wet) }, map[string]RuleState{"too_hot": hot, "too_wet": wet}},
		{"replace", func(tx *Tx) error { return tx.PutRuleState("too_hot", wet) }, map[string]RuleState{"too_hot": wet, "too_wet": wet}},
		{"delete", func(tx *Tx) error { return tx.DeleteRuleState("too_hot") }, map[string]RuleState{"too_wet": wet}},
		{"delete missing", func(tx *Tx) error { return tx.DeleteRuleState("nope") }, map[string]RuleState{"too_wet": wet}},
	}
	for _, s := range steps {
		if s.write != nil {
			update(t, db, s.write)
		}
		db = reopen(t, db, Options{})
		view(t, db, func(tx *Tx) error {
			got, err := tx.RuleStates()
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(s.want, got); diff != "" {
				t.Errorf("%s: RuleStates() mismatch (-want +got):\n%s", s.name, diff)
			}
			return nil
		})
	}
	if err := db.Update(func(tx *Tx) error { return tx.PutRuleState("", hot) }); err == nil {
		t.Error("PutRuleState(\"\") succeeded")
	}
}

func TestFingerprints(t *testing.T) {
	db := openTemp(t, Options{FingerCap: 3})
	berlin := time.FixedZone("CEST", 2*3600)
	steps := []struct {
		name  string
		fp    string
		at    time.Time
		gone  []string // fingerprints that must be absent afterwards
		there []string
	}{
		{"first", "a", t0.Add(3 * time.Minute), nil, []string{"a"}},
		{"second", "b", t0.Add(1 * time.Minute), nil, []string{"a", "b"}},
		{"third", "c", t0.In(berlin).Add(2 * time.Minute), nil, []string{"a", "b", "c"}},
		{"over cap drops oldest by time", "d", t0.Add(10 * time.Minute), []string{"b"}, []string{"a", "c", "d"}},
		{"refresh keeps one entry", "c", t0.Add(20 * time.Minute), []string{"b"}, []string{"a", "c", "d"}},
		{"drops next oldest", "e", t0.Add(30 * time.Minute), []string{"a", "b"}, []string{"c", "d", "e"}},
	}
	want := map[string]time.Time{}
	for _, s := range steps {
		update(t, db, func(tx *Tx) error { return tx.PutFingerprint(s.fp, s.at) })
		want[s.fp] = s.at
		db = reopen(t, db, Options{FingerCap: 3})
		view(t, db, func(tx *Tx) error {
			for _, fp := range s.gone {
				if got, ok, err := tx.Fingerprint(fp); ok || err != nil {
					t.Errorf("%s: Fingerprint(%q) = %v, %v, %v, want absent", s.name, fp, got, ok, err)
				}
			}
			for _, fp := range s.there {
				got, ok, err := tx.Fingerprint(fp)
				if !ok || err != nil || !got.Equal(want[fp]) {
					t.Errorf("%s: Fingerprint(%q) = %v, %v, %v, want %v", s.name, fp, got, ok, err, want[fp])
				}
			}
			return nil
		})
	}
	view(t, db, func(tx *Tx) error {
		got, _, _ := tx.Fingerprint("c")
		if _, off := got.Zone(); off != 0 {
			// "c" was refreshed with a UTC time
			t.Errorf("Fingerprint(c) zone offset = %d, want 0", off)
		}
		return nil
	})
	if err := db.Update(func(tx *Tx) error { return tx.PutFingerprint("", t0) }); err == nil {
		t.Error("PutFingerprint(\"\") succeeded")
	}
}

func TestTelegram(t *testing.T) {
	db := openTemp(t, Options{})
	view(t, db, func(tx *Tx) error {
		off, err := tx.TelegramOffset()
		if off != 0 || err != nil {
			t.Errorf("TelegramOffset() on new file = %d, %v, want 0", off, err)
		}
		chat, err := tx.TelegramChat(-100)
		if chat != 0 || err != nil {
			t.Errorf("TelegramChat(-100) on new file = %d, %v, want 0", chat, err)
		}
		return nil
	})
	update(t, db, func(tx *Tx) error {
		if err := tx.SetTelegramOffset(987654321012); err != nil {
			return err
		}
		if err := tx.SetTelegramChat(-100, -1001234567890); err != nil {
			return err
		}
		return tx.SetTelegramChat(42, 43)
	})
	db = reopen(t, db, Options{})
	tests := []struct {
		configured, want int64
	}{
		{-100, -1001234567890},
		{42, 43},
		{-1001234567890, 0},
		{100, 0},
	}
	view(t, db, func(tx *Tx) error {
		off, err := tx.TelegramOffset()
		if off != 987654321012 || err != nil {
			t.Errorf("TelegramOffset() = %d, %v, want 987654321012", off, err)
		}
		for _, tt := range tests {
			got, err := tx.TelegramChat(tt.configured)
			if got != tt.want || err != nil {
				t.Errorf("TelegramChat(%d) = %d, %v, want %d", tt.configured, got, err, tt.want)
			}
		}
		return nil
	})
}
