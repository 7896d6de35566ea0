package daemon

import (
	"context"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/vigil-iot/vigil/alert"
	"github.com/vigil-iot/vigil/control"
	"github.com/vigil-iot/vigil/internal/configtest"
	"github.com/vigil-iot/vigil/store"
	"github.com/vigil-iot/vigil/transport"
)

func notices(t *testing.T, a *App, rule string) []string {
	t.Helper()
	var out []string
	err := a.db.View(func(tx *store.Tx) error {
		ents, err := tx.Pending("log", 0)
		for _, en := range ents {
			if en.Alert.Rule == rule {
				out = append(out, en.Alert.Summary)
			}
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestReloadMovedSensorResetsBaseline: a reload that changes a sensor's
// address forgets what is usual for it, with a notice; one that changes
// only a rule keeps every baseline.
func TestReloadMovedSensorResetsBaseline(t *testing.T) {
	dir := t.TempDir()
	path := configtest.Write(t, dir, configtest.OverlayRules)
	var logged strings.Builder
	ctx := context.Background()
	a := newReloadable(t, path, Options{Log: slog.New(slog.NewTextHandler(&logged, nil))})
	at := time.Date(2026, 6, 1, 3, 0, 0, 0, time.UTC)
	for _, k := range []string{"air.temperature", "air.humidity", "board.load1"} {
		a.engine.Baseline().Observe(k, 1, at)
	}

	configtest.Write(t, dir, strings.Replace(configtest.OverlayRules, "> 100", "> 90", 1))
	a.Reload(ctx)
	if got := a.engine.Baseline().Keys(); len(got) != 3 {
		t.Fatalf("baselines after a reload that changed a rule = %v, want all three", got)
	}

	configtest.Write(t, dir, strings.Replace(configtest.OverlayRules, `driver = "bme280"`, "driver = \"bme280\"\naddress = 0x77", 1))
	a.Reload(ctx)
	if got := a.engine.Baseline().Keys(); !slices.Equal(got, []string{"board.load1"}) {
		t.Errorf("baselines after air moved to 0x77 = %v, want only board.load1", got)
	}
	n := notices(t, a, alert.RuleBaseline)
	if len(n) != 1 || !strings.Contains(n[0], "baseline reset for sensor air as its driver, bus, address, path or serial changed in the reloaded config: forgot what is usual for air.humidity, air.temperature") {
		t.Errorf("notices = %q, want one saying air's baseline was reset because it moved", n)
	}
	if !strings.Contains(logged.String(), "baseline reset for sensor air") {
		t.Errorf("log does not say air's baseline was reset:\n%s", logged.String())
	}
}

// TestBaselineResetCommand: vigil baseline reset goes through the
// Commander: a configured sensor's baselines go, with a notice; an
// unknown sensor is refused naming the configured ones.
func TestBaselineResetCommand(t *testing.T) {
	a := newOverlayApp(t, "")
	ctx := transport.WithSource(context.Background(), transport.Source{Channel: transport.ChannelCLI})
	at := time.Date(2026, 6, 1, 3, 0, 0, 0, time.UTC)
	for _, k := range []string{"air.temperature", "board.load1"} {
		a.engine.Baseline().Observe(k, 1, at)
	}
	if _, err := a.Commander().Do(ctx, control.Request{Cmd: "baseline", Op: "reset", Target: "aier"}); err == nil ||
		err.Error() != `baseline reset: no sensor "aier" (configured: board, air)` {
		t.Errorf("reset of an unknown sensor = %v, want it refused naming board and air", err)
	}
	out, err := a.Commander().Do(ctx, control.Request{Cmd: "baseline", Op: "reset", Target: "air"})
	if err != nil || !strings.HasPrefix(out, "baseline reset for sensor air by cli: forgot what is usual for air.temperature") {
		t.Fatalf("reset air = %q, %v", out, err)
	}
	if got := a.engine.Baseline().Keys(); !slices.Equal(got, []string{"board.load1"}) {
		t.Errorf("baselines after reset air = %v, want board.load1", got)
	}
	if n := notices(t, a, alert.RuleBaseline); len(n) != 1 {
		t.Errorf("notices = %q, want the reset's", n)
	}
	if out, err := a.Commander().Do(ctx, control.Request{Cmd: "baseline", Op: "reset"}); err != nil || !strings.Contains(out, "every reading") {
		t.Errorf("reset all = %q, %v", out, err)
	}
	if got := a.engine.Baseline().Keys(); len(got) != 0 {
		t.Errorf("baselines after reset all = %v, want none", got)
	}
}
