// Package goldentest compares a test's output with a golden file in the
// test package's testdata directory; UPDATE_GOLDEN=1 rewrites the file. It
// is test support only: nothing outside _test.go files imports it.
package goldentest

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// Check reports an error unless got is byte for byte testdata/name. With
// UPDATE_GOLDEN set it first writes got there.
func Check(t testing.TB, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if os.Getenv("UPDATE_GOLDEN") != "" {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with UPDATE_GOLDEN=1 to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file:\n got: %s\nwant: %s", name, got, want)
	}
}
