package transport

import (
	"testing"
	"time"

	"github.com/vigil-iot/vigil/alert"
)

// TestProposalText: the rule and its backtest as every channel shows them;
// a noisy rule's backtest says so first.
func TestProposalText(t *testing.T) {
	p := alert.Proposal{When: "air.temperature > 34", For: "10s", Severity: "warning", Message: "too warm"}
	if got, want := ProposedRule(p), "air.temperature > 34 for 10s → warning: too warm"; got != want {
		t.Errorf("ProposedRule = %q, want %q", got, want)
	}
	from := time.Date(2026, 11, 26, 18, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		name string
		b    alert.Backtest
		want string
	}{
		{"no history", alert.Backtest{}, "not tested: no history yet"},
		{"quiet", alert.Backtest{From: from, To: from.Add(48 * time.Hour), Samples: 2880},
			"would not have fired over 48 h of history (2880 samples); does not fire on the readings that prompted it"},
		{"once, on the prompt", alert.Backtest{From: from, To: from.Add(48 * time.Hour), Samples: 2880, Fired: 1, FiringS: 600, PerDay: 0.5,
			First: from.Add(time.Hour), Last: from.Add(time.Hour), OnPrompt: true},
			"would have fired once over 48 h of history (2880 samples), 0.5 a day, 10m0s in all, first 2026-11-26 20:00:00 +01:00, last 2026-11-26 20:00:00 +01:00; fires on the readings that prompted it"},
		{"noisy", alert.Backtest{From: from, To: from.Add(24 * time.Hour), Samples: 1440, Fired: 9, FiringS: 90, PerDay: 9, First: from, Last: from.Add(23 * time.Hour), OnPrompt: true, Noisy: true},
			"noisy: would have fired 9 times over 24 h of history (1440 samples), 9.0 a day, 1m30s in all, first 2026-11-26 19:00:00 +01:00, last 2026-11-27 18:00:00 +01:00; fires on the readings that prompted it"},
	} {
		if got := BacktestText(c.b, time.FixedZone("CET", 3600)); got != c.want {
			t.Errorf("%s: BacktestText = %q, want %q", c.name, got, c.want)
		}
	}
}
