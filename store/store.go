package store

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	bolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"

	"github.com/vigil-iot/vigil/alert"
)

// SchemaVersion is the layout version written to a new file. Open refuses a
// file with a newer version.
const SchemaVersion = 1

// Sentinel errors.
var (
	ErrLocked = errors.New("state file is locked by another vigil process")
	ErrSchema = errors.New("state file was written by a newer vigil")
	// ErrReadOnly is returned by Update on a file opened with Options.ReadOnly.
	ErrReadOnly = errors.New("state file is open read-only")
)

// Defaults for the zero values in Options.
const (
	DefaultTimeout    = time.Second
	DefaultOutboxCap  = 1000
	DefaultRunCap     = 500
	DefaultHistoryCap = 2880
	DefaultFingerCap  = 256
	DefaultAlertLog   = 200
	DefaultHeldCap    = 256
)

// Bucket names. Every bucket is created by Open.
var (
	bucketMeta     = []byte("meta")         // schemaKey, stateKey, pauseKey, droppedKey
	bucketRuns     = []byte("runs")         // seq -> Run (JSON)
	bucketHistory  = []byte("history")      // seq -> snapshot (binary, see codec.go)
	bucketRules    = []byte("rules")        // rule name -> RuleState (JSON)
	bucketFingers  = []byte("fingerprints") // fingerprint -> time (time.MarshalBinary)
	bucketOutbox   = []byte("outbox")       // seq -> alert (JSON)
	bucketCursors  = []byte("cursors")      // transport name -> last acknowledged seq
	bucketTelegram = []byte("telegram")     // offsetKey, chatKeyPrefix+configured id -> new id
	bucketAlertLog = []byte("alertlog")     // seq -> alert (JSON), every alert queued, for the timeline
	bucketSettings = []byte("settings")     // setting key -> Setting (JSON), the run-time overlay
	bucketNotes    = []byte("notes")        // seq -> Note (JSON), the model's notes, a ring of MaxNotes
	// Telegram's digest (quiet hours, max_per_hour): the alerts it holds,
	// and when its alert messages went out.
	bucketTelegramHeld = []byte("telegram_held") // seq -> alert (JSON), a ring of HeldCap
	bucketTelegramSent = []byte("telegram_sent") // seq -> time (time.MarshalBinary), the newest max_per_hour
	// Acknowledged problems, and Telegram's alert messages (acks.go).
	bucketAcks         = []byte("acks")          // problem key -> ProblemAck (JSON)
	bucketTelegramMsgs = []byte("telegram_msgs") // seq -> alert, chat and message id (JSON), a ring of MaxTelegramMessages
	bucketProposals    = []byte("proposals")     // seq -> alert.Proposal (JSON), the rules the model proposed (proposals.go)

	allBuckets = [][]byte{bucketMeta, bucketRuns, bucketHistory, bucketRules,
		bucketFingers, bucketOutbox, bucketCursors, bucketTelegram, bucketAlertLog,
		bucketSettings, bucketNotes, bucketTelegramHeld, bucketTelegramSent, bucketAcks, bucketTelegramMsgs, bucketProposals}
)

// Keys in the meta and telegram buckets.
var (
	schemaKey     = []byte("schema_version") // uint64
	stateKey      = []byte("state")          // State (JSON)
	pauseKey      = []byte("pause")          // Pause (JSON)
	droppedKey    = []byte("outbox_dropped") // uint64
	offsetKey     = []byte("offset")         // int64
	chatKeyPrefix = "chat:"                  // + decimal configured chat id -> int64
	dueKey        = []byte("digest_due")     // time: when the digest goes out
	whyKey        = []byte("digest_why")     // string: why then
	heldDropKey   = []byte("held_dropped")   // uint64: held alerts dropped from the full ring
	textKeyPrefix = "text_model:"            // + model name -> "1": the model refused tools
)

// fileMode is the state file's permission: it may hold chat ids and alerts.
const fileMode = 0o600

// Options tune the bounds. Zero values take the defaults in parentheses.
type Options struct {
	Timeout    time.Duration // flock wait (1s)
	OutboxCap  int           // alerts kept in the outbox before the oldest are dropped (1000)
	RunCap     int           // runs kept in the run ring (500)
	HistoryCap int           // snapshots kept in the sensor history (2880)
	FingerCap  int           // alert fingerprints kept (256)
	AlertLog   int           // alerts kept in the timeline (200)
	HeldCap    int           // alerts Telegram holds for its digest (256)
	ReadOnly   bool          // open for reading (CLI without daemon)
	// Reset moves a corrupt file aside and starts a fresh one, at Open and
	// whenever a later transaction finds damage (the daemon). Without it a
	// corrupt file is an error wrapping ErrCorrupt and is left untouched.
	Reset bool
	// Now stamps the name of a moved-aside file; required with Reset.
	Now func() time.Time
}

// Run is one heartbeat run as recorded in the run ring.
type Run struct {
	Seq        uint64        `json:"seq"`
	Start      time.Time     `json:"start"`
	Outcome    string        `json:"outcome"` // ok | alert | skipped | failed | paused
	Reason     string        `json:"reason,omitempty"`
	DurationMS int64         `json:"duration_ms"`
	Tokens     int           `json:"tokens"`
	LLMCalls   int           `json:"llm_calls"`
	ToolCalls  []string      `json:"tool_calls,omitempty"`
	Alerts     []string      `json:"alerts,omitempty"` // alert ids queued by this run
	Error      string        `json:"error,omitempty"`
	Pause      time.Duration `json:"pause,omitempty"` // set when the run paused heartbeats
	// Unusual lists, under heartbeat.gate = "unusual", the readings that
	// were unusual for their hour at this run: "air.temperature=28 °C
	// usual 15.1 z=+8.7".
	Unusual []string `json:"unusual,omitempty"`
}

// Entry is one queued alert.
type Entry struct {
	Seq   uint64
	Alert alert.Alert
}

// RuleState is the persisted lifecycle of one rule.
type RuleState struct {
	Firing       bool      `json:"firing"`
	Since        time.Time `json:"since"`         // when it started firing
	LastNotified time.Time `json:"last_notified"` // last firing/renotify alert
	AlertID      string    `json:"alert_id"`      // id of the alert that opened this firing
}

// Pause is the persisted pause of heartbeats.
type Pause struct {
	Set      time.Time     `json:"set"`      // wall clock when paused
	Until    time.Time     `json:"until"`    // wall clock when it ends
	Duration time.Duration `json:"duration"` // never remaining more than this (clock jumps)
	By       string        `json:"by"`       // "cli", "llm", "telegram", "mqtt", "socket"
}

// State is the heartbeat engine's own small state, written as one record.
type State struct {
	ConsecutiveFailures int               `json:"consecutive_failures"`
	FailureAlerted      bool              `json:"failure_alerted"`
	LLMDown             bool              `json:"llm_down"` // llm_unreachable was sent
	LLMBackoffUntil     time.Time         `json:"llm_backoff_until"`
	LastSuccess         time.Time         `json:"last_success"`
	LastLLMCall         time.Time         `json:"last_llm_call"`
	LastAlert           string            `json:"last_alert"` // summary of the last alert
	LastAlertAt         time.Time         `json:"last_alert_at"`
	BudgetDay           string            `json:"budget_day"` // YYYY-MM-DD in the device timezone
	BudgetCalls         int               `json:"budget_calls"`
	BudgetTokens        int               `json:"budget_tokens"`
	Counters            map[string]uint64 `json:"counters"`
}

// DB is an open state file.
type DB struct {
	path    string
	opts    Options
	commits atomic.Uint64
	maxSeq  atomic.Uint64 // highest outbox sequence seen (carried over a reset)

	mu     sync.RWMutex // held for reading by every transaction, for writing by reset
	bolt   *bolt.DB     // nil after a reset that could not start a fresh file
	gen    uint64       // bumped by every reset
	lost   *Lost        // the last reset, until TakeLost
	broken error        // why bolt is nil
}

// Open opens or creates the state file at path, creating every bucket and
// writing the schema version in one transaction. It fails with ErrLocked
// (wrapped) when another process holds the file past opts.Timeout, and with
// ErrSchema (wrapped) for a newer layout. The directory must exist. With
// opts.ReadOnly the file must exist and is only read; a reader waits for a
// writer's lock like a second writer would.
func Open(path string, opts Options) (*DB, error) {
	opts = opts.withDefaults()
	if opts.Reset && opts.Now == nil {
		return nil, errors.New("open state file: Options.Reset needs Options.Now")
	}
	db := &DB{path: path, opts: opts}
	b, err := openBolt(path, opts)
	if err == nil {
		db.bolt = b
		return db, nil
	}
	if !opts.Reset || !errors.Is(err, ErrCorrupt) {
		return nil, err
	}
	lost := Lost{Path: path, Cause: err.Error(), At: opts.Now().UTC(), AtOpen: true}
	if lost.MovedTo, err = moveAside(path, lost.At); err != nil {
		return nil, fmt.Errorf("open state file %s: %w", path, err)
	}
	if db.bolt, err = openBolt(path, opts); err != nil {
		return nil, err
	}
	db.lost = &lost
	return db, nil
}

// openBolt opens the file, lays it out and verifies it, all under guard. An
// existing file is verified read-only first: a writable bbolt open reads the
// free list and panics on a damaged one while holding the file's lock, and a
// handle lost to a panic can never be closed. The file is opened once:
// bbolt gets duplicates of that descriptor (Options.OpenFile) for the check
// and for the open proper.
func openBolt(path string, opts Options) (*bolt.DB, error) {
	_, statErr := os.Stat(path)
	flag := os.O_RDONLY
	if !opts.ReadOnly {
		flag = os.O_RDWR | os.O_CREATE
	}
	f, err := os.OpenFile(path, flag, fileMode)
	if err != nil {
		return nil, fmt.Errorf("open state file: %w", err) // already names the path
	}
	defer f.Close()
	if statErr == nil {
		// Before bbolt maps the file: see pagecheck.go.
		fi, err := f.Stat()
		if err != nil {
			return nil, fmt.Errorf("open state file: %w", err)
		}
		if fi.Size() > 0 {
			if err := checkPages(f, fi.Size()); err != nil {
				return nil, fmt.Errorf("open state file %s: %w", path, err)
			}
		}
	}
	dup := func(string, int, os.FileMode) (*os.File, error) { return dupFile(f) }
	verified := false
	if !opts.ReadOnly && statErr == nil {
		ro := opts
		ro.ReadOnly = true
		b, err := openOn(path, ro, dup, false)
		if err != nil {
			return nil, err
		}
		closeQuietly(b)
		verified = true
	}
	return openOn(path, opts, dup, verified)
}

// openOn opens the state file through open, lays it out and, unless it
// was verified already, verifies it.
func openOn(path string, opts Options, open func(string, int, os.FileMode) (*os.File, error), verified bool) (*bolt.DB, error) {
	var bdb *bolt.DB
	err := guard("open", func() error {
		var err error
		bdb, err = bolt.Open(path, fileMode, &bolt.Options{
			Timeout:  opts.Timeout,
			ReadOnly: opts.ReadOnly,
			OpenFile: open,
		})
		return err
	})
	if errors.Is(err, berrors.ErrTimeout) {
		return nil, fmt.Errorf("open state file %s: %w (waited %s)", path, ErrLocked, opts.Timeout)
	}
	if err != nil {
		var pe *os.PathError
		var errno syscall.Errno
		switch {
		case errors.As(err, &pe) && !errors.Is(err, ErrCorrupt):
			return nil, fmt.Errorf("open state file: %w", err) // already names the path
		case !errors.Is(err, ErrCorrupt) && !errors.As(err, &errno):
			// What is left is bbolt reading the file's content ("file
			// size too small", a bad page size): a damaged file.
			err = fmt.Errorf("%w: %w", ErrCorrupt, err)
		}
		return nil, fmt.Errorf("open state file %s: %w", path, err)
	}
	err = guard("verify", func() error {
		if err := prepare(bdb, opts); err != nil {
			return err
		}
		if verified {
			return nil
		}
		return bdb.View(func(tx *bolt.Tx) error { return verify(tx, path) })
	})
	if err != nil {
		closeQuietly(bdb)
		return nil, fmt.Errorf("open state file %s: %w", path, err)
	}
	return bdb, nil
}

// closeQuietly closes a handle that met a damaged file. A panic there means
// the handle is beyond saving; the process goes on with a fresh one.
func closeQuietly(b *bolt.DB) {
	_ = guard("close", b.Close)
}

func (o Options) withDefaults() Options {
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	if o.OutboxCap <= 0 {
		o.OutboxCap = DefaultOutboxCap
	}
	if o.RunCap <= 0 {
		o.RunCap = DefaultRunCap
	}
	if o.HistoryCap <= 0 {
		o.HistoryCap = DefaultHistoryCap
	}
	if o.FingerCap <= 0 {
		o.FingerCap = DefaultFingerCap
	}
	if o.AlertLog <= 0 {
		o.AlertLog = DefaultAlertLog
	}
	if o.HeldCap <= 0 {
		o.HeldCap = DefaultHeldCap
	}
	return o
}

// prepare checks the schema version and, when the file is new or lacks a
// bucket, creates the buckets and writes the version in one transaction. A
// file that is already complete is not written to.
func prepare(bdb *bolt.DB, opts Options) error {
	complete := true
	check := func(tx *bolt.Tx) error {
		complete = true
		for _, name := range allBuckets {
			if tx.Bucket(name) == nil {
				complete = false
			}
		}
		var v uint64
		if meta := tx.Bucket(bucketMeta); meta != nil {
			raw := meta.Get(schemaKey)
			if raw != nil {
				var ok bool
				if v, ok = decodeUint(raw); !ok {
					return fmt.Errorf("schema version: %w: malformed value %x", ErrCorrupt, raw)
				}
			}
		}
		if v > SchemaVersion {
			return fmt.Errorf("schema version %d, this vigil reads up to %d: %w", v, SchemaVersion, ErrSchema)
		}
		if v != SchemaVersion {
			complete = false
		}
		return nil
	}
	if err := bdb.View(check); err != nil {
		return err
	}
	if complete || opts.ReadOnly {
		return nil
	}
	return bdb.Update(func(tx *bolt.Tx) error {
		if err := check(tx); err != nil {
			return err
		}
		for _, name := range allBuckets {
			if _, err := tx.CreateBucketIfNotExists(name); err != nil {
				return fmt.Errorf("create bucket %s: %w", name, err)
			}
		}
		return tx.Bucket(bucketMeta).Put(schemaKey, encodeUint(SchemaVersion))
	})
}

// Close closes the file.
func (db *DB) Close() error {
	db.mu.Lock()
	defer db.mu.Unlock()
	if db.bolt == nil {
		return nil
	}
	err := guard("close", db.bolt.Close)
	db.bolt = nil
	db.broken = errors.New("closed")
	if err != nil {
		return fmt.Errorf("close state file %s: %w", db.path, err)
	}
	return nil
}

// Path returns the file's path.
func (db *DB) Path() string { return db.path }

// Commits returns how many write transactions were committed since Open
// (benchmarks and the "no flash writes while nothing changes" tests use it).
// The transaction Open may run to create the layout is not counted.
func (db *DB) Commits() uint64 { return db.commits.Load() }

// Check checks the file's page structure (pagecheck.go), then runs bbolt's
// consistency check, and returns the first problem.
func (db *DB) Check() error {
	return db.tx("check state file", func(b *bolt.DB) error {
		return b.View(func(tx *bolt.Tx) error {
			// Within the View: the pages of the newest meta page are not
			// reused while this older or equal transaction is open.
			if err := checkFile(db.path); err != nil {
				return err
			}
			return verify(tx, db.path)
		})
	})
}

// tx runs fn on the current handle under guard. An error wrapping
// ErrCorrupt resets the file when the DB was opened with Reset; the error is
// returned all the same, and the next transaction runs on the fresh file.
func (db *DB) tx(op string, fn func(*bolt.DB) error) error {
	db.mu.RLock()
	b, gen, broken := db.bolt, db.gen, db.broken
	var err error
	if b == nil {
		err = fmt.Errorf("%s %s: state file unavailable: %w", op, db.path, broken)
	} else {
		err = guard(op, func() error { return fn(b) })
	}
	db.mu.RUnlock()
	if err != nil && db.opts.Reset && errors.Is(err, ErrCorrupt) {
		db.reset(gen, err)
	}
	return err
}

// Update runs fn in one write transaction (one commit, fsync'ed). An error
// from fn rolls everything back and is returned as is.
func (db *DB) Update(fn func(*Tx) error) error {
	if db.opts.ReadOnly {
		return fmt.Errorf("update %s: %w", db.path, ErrReadOnly)
	}
	var fnErr error
	err := db.tx("update", func(b *bolt.DB) error {
		return b.Update(func(btx *bolt.Tx) error {
			fnErr = fn(&Tx{tx: btx, db: db})
			return fnErr
		})
	})
	if err != nil {
		if fnErr != nil {
			if errors.Is(err, ErrCorrupt) && !errors.Is(fnErr, ErrCorrupt) {
				return err
			}
			return fnErr
		}
		return fmt.Errorf("commit: %w", err)
	}
	db.commits.Add(1)
	return nil
}

// View runs fn in a read transaction. Values returned by Tx methods are copies
// and stay valid after the transaction ends.
func (db *DB) View(fn func(*Tx) error) error {
	return db.tx("view", func(b *bolt.DB) error {
		return b.View(func(btx *bolt.Tx) error {
			return fn(&Tx{tx: btx, db: db})
		})
	})
}

// Tx is a transaction. It is valid only inside the Update or View callback.
type Tx struct {
	tx *bolt.Tx
	db *DB
}

func (tx *Tx) opts() *Options { return &tx.db.opts }

// bucket returns the named bucket. It is nil only in a read-only file that
// never went through a writable Open; readers treat that as empty.
func (tx *Tx) bucket(name []byte) *bolt.Bucket { return tx.tx.Bucket(name) }

// wbucket returns the named bucket for writing.
func (tx *Tx) wbucket(name []byte) (*bolt.Bucket, error) {
	b := tx.tx.Bucket(name)
	if b == nil {
		return nil, fmt.Errorf("bucket %s missing", name)
	}
	return b, nil
}

func (tx *Tx) getJSON(bucket, key []byte, v any) (bool, error) {
	b := tx.bucket(bucket)
	if b == nil {
		return false, nil
	}
	raw := b.Get(key)
	if raw == nil {
		return false, nil
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return false, fmt.Errorf("decode %s/%s: %w: %w", bucket, key, ErrCorrupt, err)
	}
	return true, nil
}

func (tx *Tx) putJSON(bucket, key []byte, v any) error {
	raw, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("encode %s/%s: %w", bucket, key, err)
	}
	b, err := tx.wbucket(bucket)
	if err != nil {
		return err
	}
	if err := b.Put(key, raw); err != nil {
		return fmt.Errorf("put %s/%s: %w", bucket, key, err)
	}
	return nil
}

// State returns the engine state (zero State if none was written).
func (tx *Tx) State() (State, error) {
	var s State
	_, err := tx.getJSON(bucketMeta, stateKey, &s)
	return s, err
}

// PutState replaces the engine state.
func (tx *Tx) PutState(s State) error { return tx.putJSON(bucketMeta, stateKey, s) }

// Pause returns the persisted pause, ok=false when none.
func (tx *Tx) Pause() (p Pause, ok bool, err error) {
	ok, err = tx.getJSON(bucketMeta, pauseKey, &p)
	return p, ok, err
}

// SetPause persists a pause.
func (tx *Tx) SetPause(p Pause) error { return tx.putJSON(bucketMeta, pauseKey, p) }

// ClearPause removes the pause.
func (tx *Tx) ClearPause() error {
	b, err := tx.wbucket(bucketMeta)
	if err != nil {
		return err
	}
	if err := b.Delete(pauseKey); err != nil {
		return fmt.Errorf("clear pause: %w", err)
	}
	return nil
}

// RuleStates returns every persisted rule state by rule name.
func (tx *Tx) RuleStates() (map[string]RuleState, error) {
	out := map[string]RuleState{}
	b := tx.bucket(bucketRules)
	if b == nil {
		return out, nil
	}
	err := b.ForEach(func(k, v []byte) error {
		var s RuleState
		if err := json.Unmarshal(v, &s); err != nil {
			return fmt.Errorf("decode rule state %q: %w", k, err)
		}
		out[string(k)] = s
		return nil
	})
	return out, err
}

// PutRuleState persists one rule's state.
func (tx *Tx) PutRuleState(name string, s RuleState) error {
	if name == "" {
		return errors.New("put rule state: empty rule name")
	}
	return tx.putJSON(bucketRules, []byte(name), s)
}

// DeleteRuleState removes a rule's state (rule resolved or removed from config).
func (tx *Tx) DeleteRuleState(name string) error {
	b, err := tx.wbucket(bucketRules)
	if err != nil {
		return err
	}
	if err := b.Delete([]byte(name)); err != nil {
		return fmt.Errorf("delete rule state %q: %w", name, err)
	}
	return nil
}

// Fingerprint returns when an alert with this fingerprint was last sent.
func (tx *Tx) Fingerprint(fp string) (time.Time, bool, error) {
	b := tx.bucket(bucketFingers)
	if b == nil {
		return time.Time{}, false, nil
	}
	raw := b.Get([]byte(fp))
	if raw == nil {
		return time.Time{}, false, nil
	}
	var t time.Time
	if err := t.UnmarshalBinary(raw); err != nil {
		return time.Time{}, false, fmt.Errorf("decode fingerprint %q: %w", fp, err)
	}
	return t, true, nil
}

// PutFingerprint records that an alert with this fingerprint was sent at t,
// dropping the oldest fingerprints beyond FingerCap.
func (tx *Tx) PutFingerprint(fp string, t time.Time) error {
	if fp == "" {
		return errors.New("put fingerprint: empty fingerprint")
	}
	b, err := tx.wbucket(bucketFingers)
	if err != nil {
		return err
	}
	if err := b.Put([]byte(fp), marshalTime(t)); err != nil {
		return fmt.Errorf("put fingerprint: %w", err)
	}
	if count(b) <= tx.opts().FingerCap {
		return nil
	}
	type entry struct {
		key string
		t   time.Time
	}
	var all []entry
	err = b.ForEach(func(k, v []byte) error {
		var et time.Time
		if err := et.UnmarshalBinary(v); err != nil {
			et = time.Time{} // unreadable: oldest, dropped first
		}
		all = append(all, entry{string(k), et})
		return nil
	})
	if err != nil {
		return err
	}
	slices.SortFunc(all, func(a, b entry) int { return a.t.Compare(b.t) })
	for _, e := range all[:max(0, len(all)-tx.opts().FingerCap)] {
		if err := b.Delete([]byte(e.key)); err != nil {
			return fmt.Errorf("drop fingerprint: %w", err)
		}
	}
	return nil
}

// marshalTime encodes t with its zone offset; offsets that time cannot encode
// (sub-minute, pre-1900 local mean time) fall back to UTC.
func marshalTime(t time.Time) []byte {
	raw, err := t.MarshalBinary()
	if err != nil {
		raw, _ = t.UTC().MarshalBinary()
	}
	return raw
}

// TextOnlyModel reports whether model was found not to support tools, so
// the agent speaks the text contract to it.
func (tx *Tx) TextOnlyModel(model string) (bool, error) {
	b := tx.bucket(bucketMeta)
	if b == nil {
		return false, nil
	}
	return b.Get([]byte(textKeyPrefix+model)) != nil, nil
}

// SetTextOnlyModel records that model does not support tools. One key per
// model the config ever named: a handful.
func (tx *Tx) SetTextOnlyModel(model string) error {
	b, err := tx.wbucket(bucketMeta)
	if err != nil {
		return err
	}
	if err := b.Put([]byte(textKeyPrefix+model), []byte{1}); err != nil {
		return fmt.Errorf("put text-only model %q: %w", model, err)
	}
	return nil
}

// TelegramOffset returns the persisted getUpdates offset (0 if none).
func (tx *Tx) TelegramOffset() (int64, error) {
	return tx.getInt(bucketTelegram, offsetKey)
}

// SetTelegramOffset persists the getUpdates offset.
func (tx *Tx) SetTelegramOffset(off int64) error {
	return tx.putUint(bucketTelegram, offsetKey, uint64(off))
}

// TelegramChat returns a chat id that replaced the configured one after a
// group migration (0 if none).
func (tx *Tx) TelegramChat(configured int64) (int64, error) {
	return tx.getInt(bucketTelegram, chatKey(configured))
}

// SetTelegramChat records that the configured chat migrated to newID.
func (tx *Tx) SetTelegramChat(configured, newID int64) error {
	return tx.putUint(bucketTelegram, chatKey(configured), uint64(newID))
}

func chatKey(configured int64) []byte {
	return strconv.AppendInt([]byte(chatKeyPrefix), configured, 10)
}

func (tx *Tx) getUint(bucket, key []byte) (uint64, error) {
	b := tx.bucket(bucket)
	if b == nil {
		return 0, nil
	}
	raw := b.Get(key)
	if raw == nil {
		return 0, nil
	}
	v, ok := decodeUint(raw)
	if !ok {
		return 0, fmt.Errorf("decode %s/%s: %w: malformed value %x", bucket, key, ErrCorrupt, raw)
	}
	return v, nil
}

func (tx *Tx) getInt(bucket, key []byte) (int64, error) {
	v, err := tx.getUint(bucket, key)
	return int64(v), err
}

func (tx *Tx) putUint(bucket, key []byte, v uint64) error {
	b, err := tx.wbucket(bucket)
	if err != nil {
		return err
	}
	if err := b.Put(key, encodeUint(v)); err != nil {
		return fmt.Errorf("put %s/%s: %w", bucket, key, err)
	}
	return nil
}

// encodeUint encodes v as 8 bytes big-endian, so that keys sort in numeric
// order and a cursor walks a ring oldest first.
func encodeUint(v uint64) []byte { return binary.BigEndian.AppendUint64(nil, v) }

func decodeUint(b []byte) (uint64, bool) {
	if len(b) != 8 {
		return 0, false
	}
	return binary.BigEndian.Uint64(b), true
}
