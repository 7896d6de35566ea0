// Package atomicfile writes a file so that a power cut leaves the old
// file or the new one, never half of either: a temporary file beside it,
// fsync, rename over it, fsync of the directory. The checklist set from
// afar, the config and credentials vigil init writes, and the fleet
// roster all go through it.
package atomicfile

import (
	"io/fs"
	"os"
	"path/filepath"
)

// Write writes data to path with mode, and with group gid unless gid is
// negative. A group that cannot be set (not root, not a member) leaves
// the writer's own: it is not an error. The error names what failed.
func Write(path string, data []byte, mode fs.FileMode, gid int) error {
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	defer os.Remove(tmp) // after the rename: nothing there
	if err := f.Chmod(mode); err != nil {
		f.Close()
		return err
	}
	if gid >= 0 {
		_ = f.Chown(-1, gid)
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		return err
	}
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
