package daemon

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/vigil-iot/vigil/config"
	"github.com/vigil-iot/vigil/store"
)

// DBPath is the state file of cfg.
func DBPath(cfg *config.Config) string { return filepath.Join(cfg.Device.StateDir, "vigil.db") }

// StoreMode is how an App opens the state file.
type StoreMode int

const (
	StoreWrite    StoreMode = iota // pause, resume, check: a corrupt file is an error
	StoreDaemon                    // run: a corrupt file is moved aside and replaced (state_lost)
	StoreReadOnly                  // status, check --dry-run: nothing is created or written
)

// OpenStore opens the state file. The writing modes create the state
// directory (0700). The read-only mode never creates anything: without a
// state file it works on an empty one in a temporary directory, removed by
// the returned closer. now stamps a damaged file moved aside.
func OpenStore(cfg *config.Config, mode StoreMode, now func() time.Time) (*store.DB, func() error, error) {
	path := DBPath(cfg)
	opts := store.Options{Timeout: time.Second}
	switch mode {
	case StoreReadOnly:
		if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
			return openEmpty()
		}
		opts.ReadOnly = true
	case StoreDaemon:
		opts.Reset, opts.Now = true, now
	}
	if mode != StoreReadOnly {
		if err := os.MkdirAll(cfg.Device.StateDir, 0o700); err != nil {
			return nil, nil, fmt.Errorf("create state dir: %w", err)
		}
	}
	db, err := store.Open(path, opts)
	if errors.Is(err, store.ErrCorrupt) {
		return nil, nil, fmt.Errorf("%w\nthe state file %s is damaged; 'vigil run' moves it aside as %s.corrupt-<time> and starts a fresh one (queued alerts, pause, counters and history are lost)",
			err, path, filepath.Base(path))
	}
	if err != nil {
		return nil, nil, err
	}
	return db, db.Close, nil
}

// openEmpty opens an empty state file in a temporary directory, for a
// read-only command on a machine where vigil never ran.
func openEmpty() (*store.DB, func() error, error) {
	dir, err := os.MkdirTemp("", "vigil-empty-state-")
	if err != nil {
		return nil, nil, fmt.Errorf("empty state: %w", err)
	}
	db, err := store.Open(filepath.Join(dir, "vigil.db"), store.Options{Timeout: time.Second})
	if err != nil {
		os.RemoveAll(dir)
		return nil, nil, err
	}
	return db, func() error {
		err := db.Close()
		return errors.Join(err, os.RemoveAll(dir))
	}, nil
}

// ReadOverlayFile reads the overlay from the state file read-only, creating
// nothing. No file, a file another process holds, or a damaged one gives an
// empty overlay: whoever opens it next (the daemon, the CLI) says what is
// wrong with it.
func ReadOverlayFile(cfg *config.Config) []store.Setting {
	path := DBPath(cfg)
	if _, err := os.Stat(path); err != nil {
		return nil
	}
	db, err := store.Open(path, store.Options{Timeout: 200 * time.Millisecond, ReadOnly: true})
	if err != nil {
		return nil
	}
	defer db.Close()
	s, err := db.Settings()
	if err != nil {
		return nil
	}
	return s
}
