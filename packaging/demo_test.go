package packaging

import (
	"strings"
	"testing"
	"time"

	"github.com/vigil-iot/vigil/config"
	"github.com/vigil-iot/vigil/daemon"
	"github.com/vigil-iot/vigil/device"
	"github.com/vigil-iot/vigil/internal/replaytest"
)

// demoRun runs cfg's too_hot rule on the simulated board (the sensor air
// as cfg configures it, sampled every 2 s as `make run` does) for minutes
// of fake time, and returns when it first fired and first resolved after
// that, as offsets from the start (0: never).
func demoRun(t *testing.T, cfg *config.Config, minutes int) (fired, resolved time.Duration) {
	t.Helper()
	ec, err := daemon.EngineConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ec.BuildTime = time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	ec.SampleInterval = 2 * time.Second
	replaytest.OnlyRule(t, &ec, "too_hot")
	var specs []device.Spec
	for _, s := range cfg.Specs() {
		if s.Name == "air" {
			specs = append(specs, s)
		}
	}
	start := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	r := replaytest.Start(t, ec, specs, start)
	for at := start; at.Before(start.Add(time.Duration(minutes) * time.Minute)); at = at.Add(ec.SampleInterval) {
		firing := r.Firing(t, at, "too_hot")
		switch {
		case firing && fired == 0:
			fired = at.Sub(start)
		case !firing && fired != 0 && resolved == 0:
			resolved = at.Sub(start)
		}
		if resolved != 0 {
			break
		}
	}
	return fired, resolved
}

// TestDemoRuleFires: what the README says `make run` shows, it shows. The
// repository's config.toml, on the simulated board, fires too_hot within
// about a minute of the start and resolves it within about a minute more;
// and every other too_hot the docs offer (the shipped config's example,
// the README's first config, every TOML block in README.md and docs/)
// fires on the simulated excursion too, which stays above 35 °C for
// under a minute (a `for = "1m"` never fired).
func TestDemoRuleFires(t *testing.T) {
	t.Run("config.toml", func(t *testing.T) {
		cfg := parse(t, "config.toml", readFile(t, "../config.toml"))
		fired, resolved := demoRun(t, cfg, 4)
		if fired == 0 || fired > 70*time.Second || resolved == 0 || resolved-fired > 90*time.Second {
			t.Fatalf("config.toml on the sim board: too_hot fired at %v, resolved at %v; the README says within about a minute, resolved about a minute later", fired, resolved)
		}
		t.Logf("config.toml: too_hot fired at %v, resolved at %v", fired, resolved)
	})
	t.Run("packaging/config.toml example", func(t *testing.T) {
		cfg := parse(t, "config.toml (examples uncommented)", uncommentExamples(t, readFile(t, "config.toml")))
		fired, resolved := demoRun(t, cfg, 6)
		if fired == 0 || resolved == 0 {
			t.Fatalf("packaging/config.toml's too_hot on the sim board: fired at %v, resolved at %v; want both within one excursion (3 min)", fired, resolved)
		}
	})
	for _, b := range docBlocks(t) {
		if !strings.Contains(b.text, `"too_hot"`) || !strings.Contains(b.text, "[[sensor]]") {
			continue
		}
		t.Run(b.where, func(t *testing.T) {
			cfg, err := config.ParseWith(strings.NewReader(b.text), b.where, config.HardwareOptions())
			if err != nil {
				t.Fatal(err)
			}
			fired, resolved := demoRun(t, cfg, 6)
			if fired == 0 || resolved == 0 {
				t.Fatalf("%s: too_hot on the sim board fired at %v, resolved at %v; want both within one excursion (3 min)", b.where, fired, resolved)
			}
		})
	}
}

// uncommentExamples is packaging/config.toml with the example blocks
// after the Sensors banner uncommented, as TestConfigExamples reads it.
func uncommentExamples(t *testing.T, src []byte) []byte {
	t.Helper()
	banner := "# ── Sensors"
	head, tail, ok := strings.Cut(string(src), banner)
	if !ok {
		t.Fatal("no Sensors banner in config.toml")
	}
	var b strings.Builder
	b.WriteString(head)
	b.WriteString(banner)
	for _, l := range strings.SplitAfter(tail, "\n") {
		if exampleLine.MatchString(l) {
			l = strings.TrimPrefix(strings.TrimPrefix(l, "#"), " ")
		}
		b.WriteString(l)
	}
	return []byte(b.String())
}
