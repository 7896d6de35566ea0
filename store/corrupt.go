package store

// This file holds the store's policy for a damaged state file: SD cards lose
// pages, and bbolt answers a damaged page with a panic (or, for a page past
// the end of a truncated file, a memory fault). Every bbolt call runs under
// guard, which turns both into an error wrapping ErrCorrupt; and since
// neither guard nor a deadline can stop a walk that follows a cycle, or a
// fault on bbolt's own checker goroutine, checkPages (pagecheck.go) reads
// the tree of pages from the file before bbolt maps it. A file opened
// with Options.Reset is then moved aside as vigil.db.corrupt-<UTC time> (the
// newest three are kept) and replaced by a fresh one, once at Open and again
// whenever a later transaction meets the damage; TakeLost tells the engine,
// which raises the state_lost alert. Without Reset (the read-only commands)
// the error is returned and the file is left as it is.

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strings"
	"time"

	bolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"
)

// ErrCorrupt is wrapped by every error that comes from a damaged state file:
// a bbolt panic or memory fault, an invalid meta page, a page the
// consistency check rejects, a file shorter than its own high-water mark, or
// a value that does not decode.
var ErrCorrupt = errors.New("state file is corrupt")

// KeepCorrupt is how many moved-aside files are kept; older ones are deleted.
const KeepCorrupt = 3

// corruptSuffix names a moved-aside file: vigil.db.corrupt-20261126T114300Z.
const (
	corruptSuffix = ".corrupt-"
	corruptStamp  = "20060102T150405Z"
)

// Lost describes a state file that was moved aside and replaced by an empty
// one.
type Lost struct {
	Path    string    // the state file
	MovedTo string    // where the damaged file now is ("" if it could not be moved and was deleted)
	Cause   string    // what was wrong with it
	At      time.Time // when
	AtOpen  bool      // found when the file was opened (nothing of it is in memory)
}

// guard runs fn with memory faults turned into panics and every panic turned
// into an error wrapping ErrCorrupt. bbolt errors that mean a damaged file
// are wrapped too.
func guard(op string, fn func() error) (err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%s: %w: %v", op, ErrCorrupt, r)
		}
	}()
	err = fn()
	if err != nil && !errors.Is(err, ErrCorrupt) && isBoltCorrupt(err) {
		err = fmt.Errorf("%s: %w: %w", op, ErrCorrupt, err)
	}
	return err
}

func isBoltCorrupt(err error) bool {
	for _, e := range []error{berrors.ErrInvalid, berrors.ErrChecksum, berrors.ErrVersionMismatch,
		berrors.ErrInvalidMapping, berrors.ErrFreePagesNotLoaded} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}

// verify reads the whole file once, after checkPages found its page
// structure sound (no cycle, no page referenced twice, every page within the
// file: see pagecheck.go), so nothing here can follow a cycle or read past
// the file: the file must be as long as its meta page says, every key and
// value of every bucket must be reachable (this touches every branch, leaf
// and overflow page under guard, so a damaged page panics here rather than
// in a later transaction, or in Check's goroutine, where a fault is fatal),
// and bbolt's consistency check (free list, key order, unreachable pages)
// must pass. For vigil's bounded file (a few MB at most) this takes
// milliseconds.
func verify(tx *bolt.Tx, path string) error {
	fi, err := os.Stat(path)
	if err != nil {
		return fmt.Errorf("stat: %w", err)
	}
	if fi.Size() < tx.Size() {
		return fmt.Errorf("%w: file is %d bytes, its meta page says %d (truncated)", ErrCorrupt, fi.Size(), tx.Size())
	}
	var sum byte
	err = tx.ForEach(func(name []byte, b *bolt.Bucket) error {
		return b.ForEach(func(k, v []byte) error {
			for _, c := range k {
				sum ^= c
			}
			for _, c := range v {
				sum ^= c
			}
			return nil
		})
	})
	if err != nil {
		return fmt.Errorf("%w: walk: %w", ErrCorrupt, err)
	}
	_ = sum
	var first error
	for err := range tx.Check() { // drain so the checker goroutine ends
		if first == nil {
			first = err
		}
	}
	if first != nil {
		return fmt.Errorf("%w: %w", ErrCorrupt, first)
	}
	return nil
}

// moveAside renames the damaged file to <path>.corrupt-<UTC time>, deletes
// all but the newest KeepCorrupt such files, and syncs the directory. When
// the rename fails the file is deleted: a file vigil cannot read is worth
// less than a daemon that runs.
func moveAside(path string, now time.Time) (string, error) {
	base := path + corruptSuffix + now.UTC().Format(corruptStamp)
	to := base
	for i := 2; ; i++ {
		if _, err := os.Lstat(to); errors.Is(err, os.ErrNotExist) {
			break
		}
		to = fmt.Sprintf("%s-%d", base, i)
	}
	if err := os.Rename(path, to); err != nil {
		if rmErr := os.Remove(path); rmErr != nil && !errors.Is(rmErr, os.ErrNotExist) {
			return "", fmt.Errorf("move corrupt state file aside: %w; delete it: %w", err, rmErr)
		}
		to = ""
	}
	pruneCorrupt(path)
	if d, err := os.Open(filepath.Dir(path)); err == nil {
		_ = d.Sync()
		d.Close()
	}
	return to, nil
}

// pruneCorrupt deletes all but the newest KeepCorrupt moved-aside files.
// Their names sort by time.
func pruneCorrupt(path string) {
	matches, err := filepath.Glob(escapeGlob(path) + corruptSuffix + "*")
	if err != nil || len(matches) <= KeepCorrupt {
		return
	}
	slices.SortFunc(matches, func(a, b string) int { return strings.Compare(stampOf(a, path), stampOf(b, path)) })
	for _, m := range matches[:len(matches)-KeepCorrupt] {
		_ = os.Remove(m)
	}
}

// stampOf returns the sortable part of a moved-aside name: the time, then a
// zero-padded counter for files moved within the same second.
func stampOf(name, path string) string {
	s := strings.TrimPrefix(name, path+corruptSuffix)
	stamp, n, _ := strings.Cut(s, "-")
	return fmt.Sprintf("%s-%06s", stamp, n)
}

func escapeGlob(p string) string {
	r := strings.NewReplacer(`*`, `\*`, `?`, `\?`, `[`, `\[`, `\`, `\\`)
	return r.Replace(p)
}

// CorruptFiles lists the moved-aside copies of the state file at path, oldest
// first.
func CorruptFiles(path string) []string {
	matches, _ := filepath.Glob(escapeGlob(path) + corruptSuffix + "*")
	slices.SortFunc(matches, func(a, b string) int { return strings.Compare(stampOf(a, path), stampOf(b, path)) })
	return matches
}

// TakeLost returns the last reset of the file since the previous call, if
// any, and forgets it.
func (db *DB) TakeLost() (Lost, bool) {
	db.mu.Lock()
	defer db.mu.Unlock()
	if db.lost == nil {
		return Lost{}, false
	}
	l := *db.lost
	db.lost = nil
	return l, true
}

// reset replaces a file found corrupt by a transaction of generation gen.
// Transactions of other goroutines hold db.mu for reading, so when reset
// holds it they are done. A second goroutine that met the same damage finds
// the generation moved on and leaves the new file alone.
func (db *DB) reset(gen uint64, cause error) {
	db.mu.Lock()
	defer db.mu.Unlock()
	if db.gen != gen {
		return
	}
	old := db.bolt
	db.bolt = nil
	db.gen++
	if old != nil {
		// bbolt rolls a panicking transaction back and so releases its
		// locks; should a damaged file still leave one held, Close would
		// wait forever, so it runs on its own and nobody waits for it.
		go old.Close()
	}
	lost := Lost{Path: db.path, Cause: cause.Error(), At: db.opts.Now().UTC()}
	to, err := moveAside(db.path, lost.At)
	if err != nil {
		db.broken = err
		return
	}
	lost.MovedTo = to
	fresh, err := openBolt(db.path, db.opts)
	if err == nil {
		err = db.prepareFresh(fresh)
	}
	if err != nil {
		db.broken = fmt.Errorf("start a fresh state file after %v: %w", cause, err)
		return
	}
	db.bolt = fresh
	db.broken = nil
	db.lost = &lost
}

// prepareFresh lays out a new file after a reset and carries the outbox's
// sequence over, so a transport's acknowledgement of an entry of the old
// file can never acknowledge an entry of the new one.
func (db *DB) prepareFresh(b *bolt.DB) error {
	if err := guard("prepare state file", func() error { return prepare(b, db.opts) }); err != nil {
		b.Close()
		return err
	}
	seq := db.maxSeq.Load()
	if seq == 0 {
		return nil
	}
	return guard("prepare state file", func() error {
		return b.Update(func(tx *bolt.Tx) error {
			return tx.Bucket(bucketOutbox).SetSequence(seq)
		})
	})
}

// seenSeq remembers the highest outbox sequence handed out or read.
func (db *DB) seenSeq(seq uint64) {
	for {
		cur := db.maxSeq.Load()
		if seq <= cur || db.maxSeq.CompareAndSwap(cur, seq) {
			return
		}
	}
}
