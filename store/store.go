// Package store keeps vigil's durable state in one bbolt file: schema version,
// pause, counters, rule states, alert fingerprints, the LLM budget, a bounded
// run ring, a bounded sensor history, and the alert outbox with one cursor per
// transport. It is the only package that imports bbolt. Everything that grows
// is a bounded ring, so the file stops growing once the rings are full.
package store

import (
	"errors"
	"time"

	"github.com/vigil-iot/vigil/device"
	"github.com/vigil-iot/vigil/transport"
)

// SchemaVersion is the layout version written to a new file. Open refuses a
// file with a newer version.
const SchemaVersion = 1

// Sentinel errors.
var (
	ErrLocked = errors.New("state file is locked by another vigil process")
	ErrSchema = errors.New("state file was written by a newer vigil")
)

// Options tune the bounds. Zero values take the defaults in parentheses.
type Options struct {
	Timeout    time.Duration // flock wait (1s)
	OutboxCap  int           // alerts kept in the outbox before the oldest are dropped (1000)
	RunCap     int           // runs kept in the run ring (500)
	HistoryCap int           // snapshots kept in the sensor history (2880)
	FingerCap  int           // alert fingerprints kept (256)
	ReadOnly   bool          // open for reading (CLI without daemon)
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
}

// Entry is one queued alert.
type Entry struct {
	Seq   uint64
	Alert transport.Alert
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
	// implementation-defined
}

// Open opens or creates the state file at path, creating every bucket and
// writing the schema version in one transaction. It fails with ErrLocked
// (wrapped) when another process holds the file past opts.Timeout, and with
// ErrSchema (wrapped) for a newer layout.
func Open(path string, opts Options) (*DB, error) { panic("unimplemented") }

// Close closes the file.
func (db *DB) Close() error { panic("unimplemented") }

// Path returns the file's path.
func (db *DB) Path() string { panic("unimplemented") }

// Commits returns how many write transactions were committed since Open
// (benchmarks and the "no flash writes while nothing changes" tests use it).
func (db *DB) Commits() uint64 { panic("unimplemented") }

// Check runs bbolt's consistency check and returns the first problem.
func (db *DB) Check() error { panic("unimplemented") }

// Update runs fn in one write transaction (one commit, fsync'ed).
func (db *DB) Update(fn func(*Tx) error) error { panic("unimplemented") }

// View runs fn in a read transaction. Values returned by Tx methods are copies
// and stay valid after the transaction ends.
func (db *DB) View(fn func(*Tx) error) error { panic("unimplemented") }

// Tx is a transaction.
type Tx struct {
	// implementation-defined
}

// State returns the engine state (zero State if none was written).
func (tx *Tx) State() (State, error) { panic("unimplemented") }

// PutState replaces the engine state.
func (tx *Tx) PutState(s State) error { panic("unimplemented") }

// Pause returns the persisted pause, ok=false when none.
func (tx *Tx) Pause() (p Pause, ok bool, err error) { panic("unimplemented") }

// SetPause persists a pause.
func (tx *Tx) SetPause(p Pause) error { panic("unimplemented") }

// ClearPause removes the pause.
func (tx *Tx) ClearPause() error { panic("unimplemented") }

// AppendRun adds r to the run ring (assigning r.Seq), dropping the oldest run
// beyond RunCap, and returns the assigned sequence number.
func (tx *Tx) AppendRun(r Run) (uint64, error) { panic("unimplemented") }

// Runs returns up to n runs, newest first.
func (tx *Tx) Runs(n int) ([]Run, error) { panic("unimplemented") }

// RuleStates returns every persisted rule state by rule name.
func (tx *Tx) RuleStates() (map[string]RuleState, error) { panic("unimplemented") }

// PutRuleState persists one rule's state.
func (tx *Tx) PutRuleState(name string, s RuleState) error { panic("unimplemented") }

// DeleteRuleState removes a rule's state (rule resolved or removed from config).
func (tx *Tx) DeleteRuleState(name string) error { panic("unimplemented") }

// Fingerprint returns when an alert with this fingerprint was last sent.
func (tx *Tx) Fingerprint(fp string) (time.Time, bool, error) { panic("unimplemented") }

// PutFingerprint records that an alert with this fingerprint was sent at t,
// dropping the oldest fingerprints beyond FingerCap.
func (tx *Tx) PutFingerprint(fp string, t time.Time) error { panic("unimplemented") }

// Enqueue appends an alert to the outbox. When the outbox holds OutboxCap
// entries it drops the oldest ones first, adds their number to the persisted
// drop counter and returns it.
func (tx *Tx) Enqueue(a transport.Alert) (seq uint64, dropped int, err error) {
	panic("unimplemented")
}

// Pending returns up to limit outbox entries the named transport has not yet
// acknowledged, oldest first.
func (tx *Tx) Pending(transportName string, limit int) ([]Entry, error) { panic("unimplemented") }

// Ack moves the named transport's cursor to seq and deletes every entry that
// all active transports have acknowledged. A transport without a cursor has
// acknowledged nothing.
func (tx *Tx) Ack(transportName string, seq uint64, active []string) error { panic("unimplemented") }

// Depth returns how many entries the named transport has not acknowledged.
func (tx *Tx) Depth(transportName string) (int, error) { panic("unimplemented") }

// Dropped returns how many alerts were ever dropped because the outbox was full.
func (tx *Tx) Dropped() (uint64, error) { panic("unimplemented") }

// AppendHistory appends snapshots to the sensor history ring, dropping the
// oldest beyond HistoryCap.
func (tx *Tx) AppendHistory(snaps []device.Snapshot) error { panic("unimplemented") }

// History returns the stored snapshots taken at or after since, oldest first.
func (tx *Tx) History(since time.Time) ([]device.Snapshot, error) { panic("unimplemented") }

// TelegramOffset returns the persisted getUpdates offset (0 if none).
func (tx *Tx) TelegramOffset() (int64, error) { panic("unimplemented") }

// SetTelegramOffset persists the getUpdates offset.
func (tx *Tx) SetTelegramOffset(off int64) error { panic("unimplemented") }

// TelegramChat returns a chat id that replaced the configured one after a
// group migration (0 if none).
func (tx *Tx) TelegramChat(configured int64) (int64, error) { panic("unimplemented") }

// SetTelegramChat records that the configured chat migrated to newID.
func (tx *Tx) SetTelegramChat(configured, newID int64) error { panic("unimplemented") }
