package atomicfile

import (
	"os"
	"path/filepath"
	"testing"
)

// TestWrite: the new content replaces the old with the mode asked, and no
// temporary file is left beside it; a directory that does not exist is an
// error, and nothing is written.
func TestWrite(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "config.toml")
	if err := os.WriteFile(p, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := Write(p, []byte("new"), 0o600, -1); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(p); string(b) != "new" {
		t.Fatalf("content %q, want new", b)
	}
	if fi, _ := os.Stat(p); fi.Mode().Perm() != 0o600 {
		t.Fatalf("mode %v, want 0600", fi.Mode().Perm())
	}
	if es, _ := os.ReadDir(dir); len(es) != 1 {
		t.Fatalf("directory holds %d entries, want the file alone", len(es))
	}
	if err := Write(filepath.Join(dir, "missing", "x"), []byte("x"), 0o600, -1); err == nil {
		t.Fatal("a write into a missing directory succeeded")
	}
}
