package setup

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"time"

	"github.com/vigil-iot/vigil/internal/atomicfile"
)

// credFile is the credstore file of credential name.
func credFile(dir, name string) string { return filepath.Join(dir, "vigil."+name) }

// writeSecrets writes each secret to the credstore, mode 0600 (owned by
// whoever runs init: root on a board), atomically. It returns the files
// written.
func writeSecrets(dir string, secrets map[string]string) ([]string, error) {
	if len(secrets) == 0 {
		return nil, nil
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("credstore %s: %w", dir, err)
	}
	var names []string
	for n := range secrets {
		names = append(names, n)
	}
	sort.Strings(names)
	var files []string
	for _, n := range names {
		f := credFile(dir, n)
		if err := atomicfile.Write(f, []byte(secrets[n]+"\n"), 0o600, -1); err != nil {
			return files, fmt.Errorf("write credential %s: %w", n, err)
		}
		files = append(files, f)
	}
	return files, nil
}

// writeConfig writes data to path atomically, mode 0640 and group vigil
// when that group exists. An existing file is kept as
// PATH.bak-YYYYmmddTHHMMSS (returned).
func writeConfig(path string, data []byte, now time.Time) (backup string, err error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return "", fmt.Errorf("config directory: %w", err)
	}
	if old, err := os.ReadFile(path); err == nil {
		backup = path + ".bak-" + now.UTC().Format("20060102T150405")
		if err := atomicfile.Write(backup, old, 0o640, vigilGroup()); err != nil {
			return "", fmt.Errorf("back up %s: %w", path, err)
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("read %s: %w", path, err)
	}
	if err := atomicfile.Write(path, data, 0o640, vigilGroup()); err != nil {
		return backup, fmt.Errorf("write %s: %w", path, err)
	}
	return backup, nil
}

// vigilGroup is the gid of group vigil, or -1.
func vigilGroup() int {
	g, err := user.LookupGroup("vigil")
	if err != nil {
		return -1
	}
	gid, err := strconv.Atoi(g.Gid)
	if err != nil {
		return -1
	}
	return gid
}
