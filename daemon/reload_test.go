package daemon

import (
	"context"
	"log/slog"
	"slices"
	"strings"
	"testing"

	"github.com/vigil-iot/vigil/manage"
)

// TestReloadAppliesARuleChange: a reload reads the config again through
// Wiring.Load and puts a changed rule and a new one into the running
// engine, logging what changed; a config that does not validate changes
// nothing and says so.
func TestReloadAppliesARuleChange(t *testing.T) {
	dir := t.TempDir()
	path := writeConfig(t, dir, overlayRules)
	base := readBase(t, path)
	cfg, err := base.Configured()
	if err != nil {
		t.Fatal(err)
	}
	var logged strings.Builder
	log := slog.New(slog.NewTextHandler(&logged, nil))
	ctx := context.Background()
	a, err := New(ctx, cfg, Options{Store: StoreWrite, Base: base, Log: log, Redactor: base.Red,
		Wiring: Wiring{Load: func() (*manage.Base, error) { return readBase(t, path), nil }}})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	rules := func() []string {
		t.Helper()
		st, err := a.engine.Status(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, r := range st.Rules {
			out = append(out, r.Name)
		}
		slices.Sort(out)
		return out
	}
	if got := rules(); !slices.Equal(got, []string{"too_hot"}) {
		t.Fatalf("rules before the reload = %v", got)
	}

	writeConfig(t, dir, strings.Replace(overlayRules, "> 100", "> 30", 1)+"\n[[rule]]\nname = \"too_cold\"\nwhen = \"air.temperature < 5\"\n")
	a.Reload(ctx)
	if got := rules(); !slices.Equal(got, []string{"too_cold", "too_hot"}) {
		t.Errorf("rules after the reload = %v, want too_cold and too_hot", got)
	}
	if when := a.current().Rules[0].When; when != "air.temperature > 30" {
		t.Errorf("too_hot in force after the reload: when = %q, want the new threshold", when)
	}
	if !strings.Contains(logged.String(), `msg="config reloaded" changed="rule.too_hot, rule.too_cold (added)"`) {
		t.Errorf("log lacks the reload and what changed:\n%s", logged.String())
	}

	writeConfig(t, dir, overlayRules+"bogus = 1\n")
	a.Reload(ctx)
	if got := rules(); !slices.Equal(got, []string{"too_cold", "too_hot"}) {
		t.Errorf("rules after a rejected reload = %v, want them unchanged", got)
	}
	if !strings.Contains(logged.String(), `msg="config reload rejected: still running on the previous config"`) || !strings.Contains(logged.String(), "bogus: unknown key") {
		t.Errorf("log lacks the rejected reload naming the bad key:\n%s", logged.String())
	}
}
