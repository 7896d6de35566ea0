package manage

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/vigil-iot/vigil/alert"
	"github.com/vigil-iot/vigil/config"
	"github.com/vigil-iot/vigil/store"
)

var (
	proposedAt = time.Date(2026, 3, 14, 11, 0, 0, 0, time.UTC)
	approvedAt = time.Date(2026, 3, 14, 12, 0, 0, 0, time.UTC)
)

func warm(name, when string) alert.Proposal {
	return alert.Proposal{ID: "p1", Name: name, When: when, For: "10s", Severity: "warning", Message: "warm: {air.temperature}", At: proposedAt}
}

// TestRunRuleInOverlay: an approved proposal kept in the overlay is a rule
// of the config, with its origin on `vigil get`'s rule.<name>.enabled and
// in the run-time view, and not written back to config.toml.
func TestRunRuleInOverlay(t *testing.T) {
	b := testBase(t, testConfig)
	s := RunRuleSetting(warm("warm", "air.temperature > 34"), "cli", approvedAt)
	cfg, err := b.With(nil, s)
	if err != nil {
		t.Fatal(err)
	}
	var r *config.Rule
	for i := range cfg.Rules {
		if cfg.Rules[i].Name == "warm" {
			r = &cfg.Rules[i]
		}
	}
	if r == nil || r.When != "air.temperature > 34" || r.For.Duration != 10*time.Second || !r.Enabled {
		t.Fatalf("rules = %+v; want warm in force", cfg.Rules)
	}
	const origin = "proposed by the model at 2026-03-14 11:00:00 +00:00, approved by cli at 2026-03-14 12:00:00 +00:00"
	if r.Origin != origin {
		t.Errorf("origin %q; want %q", r.Origin, origin)
	}
	if got := OriginText(cfg, "rule.warm.enabled"); got != origin {
		t.Errorf("get's origin %q; want %q", got, origin)
	}
	if _, err := cfg.RuleSpec(*r); err != nil {
		t.Errorf("RuleSpec: %v", err)
	}
	var toml strings.Builder
	if err := cfg.WriteTOML(&toml); err != nil || strings.Contains(toml.String(), `name = "warm"`) ||
		!strings.Contains(toml.String(), "# run-time rule warm, "+origin+`: when = "air.temperature > 34"`) {
		t.Errorf("WriteTOML wrote the run-time rule (%v):\n%s", err, toml.String())
	}
	if got := config.RuleTOML(*r); !strings.Contains(got, `when = "air.temperature > 34"`) || !strings.Contains(got, "# "+origin) {
		t.Errorf("RuleTOML:\n%s", got)
	}
}

// TestRunRuleRefused: a run-time rule is validated as a [[rule]] is, and
// its error names it as a run-time rule.
func TestRunRuleRefused(t *testing.T) {
	b := testBase(t, testConfig)
	_, err := b.With(nil, RunRuleSetting(warm("warm", "aier.temperature > 34"), "cli", approvedAt))
	var ce *config.Error
	if !errors.As(err, &ce) || ce.File != config.RunRuleFile || ce.Key != "rule.warm.when" || !strings.Contains(err.Error(), `unknown sensor "aier" (configured: board, air); did you mean air?`) {
		t.Fatalf("err = %v; want the run-time rule's unknown sensor", err)
	}
}

// TestFileRuleWins: a [[rule]] of the same name added to config.toml later
// wins; the run-time copy is left out and named in Shadowed.
func TestFileRuleWins(t *testing.T) {
	overlay := []store.Setting{RunRuleSetting(warm("too_hot", "air.temperature > 34"), "cli", approvedAt)}
	cfg, _, err := testBase(t, testConfig).Resolve(overlay, nil)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, r := range cfg.Rules {
		if r.Name == "too_hot" {
			n++
			if r.When != "air.temperature > 100" || r.Origin != "" {
				t.Errorf("too_hot = %+v; want the file's", r)
			}
		}
	}
	if n != 1 || len(cfg.Shadowed) != 1 || cfg.Shadowed[0] != "too_hot" {
		t.Errorf("%d too_hot rules, shadowed %v; want the file's only, too_hot shadowed", n, cfg.Shadowed)
	}
}
