package daemon

import (
	"context"
	"log/slog"
	"os"
	"strings"
	"testing"

	"github.com/vigil-iot/vigil/internal/configtest"
	"github.com/vigil-iot/vigil/manage"
	"github.com/vigil-iot/vigil/redact"
)

func writeFile(t *testing.T, path, text string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

// readBase reads the config at path as the CLI does (without the
// VIGIL_ overrides and the drivers' quantities).
func readBase(t *testing.T, path string) *manage.Base {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return &manage.Base{Name: path, Data: data, Red: redact.New(), Getenv: os.Getenv, ReadFile: os.ReadFile}
}

// newOverlayApp wires an App on a fresh state file as the CLI does without
// a daemon (the real store, engine and commands), from config.toml with
// extra appended.
func newOverlayApp(t *testing.T, extra string) *App {
	t.Helper()
	return newWiredApp(t, extra, Wiring{})
}

// newWiredApp is newOverlayApp with w as the App's wiring.
func newWiredApp(t *testing.T, extra string, w Wiring) *App {
	t.Helper()
	base := readBase(t, configtest.Write(t, t.TempDir(), configtest.OverlayRules+extra))
	cfg, err := base.Parse(nil)
	if err != nil {
		t.Fatal(err)
	}
	a, err := New(context.Background(), cfg, Options{Store: StoreWrite, Base: base, Log: slog.New(slog.DiscardHandler), Redactor: base.Red, Wiring: w})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	return a
}
