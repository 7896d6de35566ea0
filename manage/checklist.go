package manage

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/vigil-iot/vigil/config"
	"github.com/vigil-iot/vigil/internal/atomicfile"
)

// OverridePath is the checklist set from afar (vigil checklist set): in
// the state directory, it is used instead of heartbeat.checklist while it
// exists.
func OverridePath(cfg *config.Config) string {
	return filepath.Join(cfg.Device.StateDir, "HEARTBEAT.md")
}

// InForce is the checklist the next heartbeat reads.
func InForce(cfg *config.Config) (path string, override bool) {
	if _, err := os.Lstat(OverridePath(cfg)); err == nil { // a link there is refused, not skipped
		return OverridePath(cfg), true
	}
	return cfg.Heartbeat.Checklist, false
}

// readChecklist reads the checklist at path, through openOverride when it
// is the one set from afar.
func readChecklist(path string, override bool) ([]byte, error) {
	if !override {
		return os.ReadFile(path)
	}
	f, err := openOverride(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, config.MaxChecklistSize+1))
}

// FileExists reports whether p exists.
func FileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// writeAtomic writes data to path so that a power cut leaves the old file
// or the new one (atomicfile), with the path in the error.
func writeAtomic(path string, data []byte, mode os.FileMode) error {
	if err := atomicfile.Write(path, data, mode, -1); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// syncDir fsyncs a directory, so a rename or a removal in it is durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("sync %s: %w", dir, err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("sync %s: %w", dir, err)
	}
	return nil
}

// ChecklistFunc reads the checklist in force on every run, so edits apply
// without a restart: the one set from afar (vigil checklist set) while it
// exists in the state directory, else heartbeat.checklist. It is a
// heartbeat.ChecklistFunc.
func ChecklistFunc(cfg *config.Config) func() (string, bool, error) {
	over, path := OverridePath(cfg), cfg.Heartbeat.Checklist
	return func() (string, bool, error) {
		p := over
		f, err := openOverride(over)
		if errors.Is(err, fs.ErrNotExist) {
			p = path
			f, err = os.Open(path)
		}
		if err != nil {
			return "", true, fmt.Errorf("open checklist: %w", err)
		}
		defer f.Close()
		text, empty, err := config.ParseChecklist(f)
		if err != nil {
			return "", true, fmt.Errorf("%s: %w", p, err)
		}
		return text, empty, nil
	}
}

// openOverride opens the checklist set from afar. `vigil checklist set`
// writes a regular file there; a symbolic link (or a FIFO, a device)
// planted in the state directory is refused, never followed, so the daemon
// never reads, and `checklist show` never prints, a file it was not given.
func openOverride(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if errors.Is(err, syscall.ELOOP) {
		return nil, fmt.Errorf("checklist %s is a symbolic link, which vigil does not follow: remove it ('vigil checklist reset') and use 'vigil checklist set'", path)
	}
	if err != nil {
		return nil, err
	}
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		f.Close()
		return nil, fmt.Errorf("checklist %s is not a regular file: remove it ('vigil checklist reset') and use 'vigil checklist set'", path)
	}
	return f, nil
}

// EnsureChecklist writes the template when the checklist file is missing.
func EnsureChecklist(path string, log *slog.Logger) error {
	if _, err := os.Stat(path); err == nil {
		return nil
	} else if !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("checklist: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("create checklist dir: %w", err)
	}
	if err := os.WriteFile(path, []byte(config.ChecklistTemplate), 0o644); err != nil {
		return fmt.Errorf("write checklist template: %w", err)
	}
	log.Info("wrote checklist template; edit it to give the LLM something to check", "path", path)
	return nil
}

// ShowChecklist says which checklist is in force and gives its text.
func ShowChecklist(cfg *config.Config) (string, error) {
	path, isOver := InForce(cfg)
	which := "the config's heartbeat.checklist"
	if isOver {
		which = "set from afar; 'vigil checklist reset' goes back to " + cfg.Heartbeat.Checklist
	}
	b, err := readChecklist(path, isOver)
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Sprintf("checklist in force: %s (%s): does not exist yet; 'vigil run' writes a template there\n", path, which), nil
	}
	if err != nil {
		return "", fmt.Errorf("read checklist: %w", err)
	}
	return fmt.Sprintf("checklist in force: %s (%s)\n\n%s", path, which, b), nil
}

// SetChecklist checks text as a checklist and writes it, atomically, as
// the one set from afar; it returns the answer for whoever set it.
func SetChecklist(cfg *config.Config, text string) (string, error) {
	_, empty, err := config.ParseChecklist(strings.NewReader(text))
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(cfg.Device.StateDir, 0o700); err != nil {
		return "", fmt.Errorf("create state dir: %w", err)
	}
	over := OverridePath(cfg)
	if err := writeAtomic(over, []byte(text), 0o644); err != nil {
		return "", err
	}
	note := ""
	if empty {
		note = "; it is empty (headings and comments only): heartbeats will not call the LLM"
	}
	return fmt.Sprintf("checklist set: %s is in force from the next heartbeat%s", over, note), nil
}

// ResetChecklist removes the checklist set from afar, so heartbeat.checklist
// is in force again; removed says whether there was one.
func ResetChecklist(cfg *config.Config) (answer string, removed bool, err error) {
	over := OverridePath(cfg)
	err = os.Remove(over)
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Sprintf("no checklist set from afar: %s stays in force", cfg.Heartbeat.Checklist), false, nil
	}
	if err != nil {
		return "", false, fmt.Errorf("reset checklist: %w", err)
	}
	if err := syncDir(filepath.Dir(over)); err != nil {
		return "", false, err
	}
	return fmt.Sprintf("checklist reset: %s is in force again", cfg.Heartbeat.Checklist), true, nil
}
