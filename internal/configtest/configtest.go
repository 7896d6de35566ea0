// Package configtest writes the config the end-to-end tests and the
// daemon's unit tests share: the simulated board, a state directory and a
// checklist beside the file. It is test support only: nothing outside
// _test.go files imports it.
package configtest

import (
	"os"
	"path/filepath"
	"testing"
)

// Sim is the config every test starts from, with extra appended (inside
// [heartbeat] unless extra opens another table).
const Sim = `
[device]
id = "e2e"
board = "sim"
state_dir = "state"
timezone = "UTC"

[heartbeat]
interval = "1m"
sample_interval = "1s"
checklist = "HEARTBEAT.md"
`

// OverlayRules is a sensor and a rule that never fires, for the tests of
// the run-time settings.
const OverlayRules = `
[[sensor]]
name = "air"
driver = "bme280"

[[rule]]
name = "too_hot"
when = "air.temperature > 100"
`

// Write writes Sim with extra appended as dir/config.toml and returns its
// path.
func Write(t *testing.T, dir, extra string) string {
	t.Helper()
	path := filepath.Join(dir, "config.toml")
	if err := os.WriteFile(path, []byte(Sim+extra), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}
