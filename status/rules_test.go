package status

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/vigil-iot/vigil/alert"
	"github.com/vigil-iot/vigil/manage"
)

func ruleBook() manage.RulesView {
	at := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	return manage.RulesView{
		Rules: []manage.RuleView{
			{Name: "too_hot", When: "air.temperature > 35", Severity: "critical", Enabled: true, Origin: "config.toml:40"},
			{Name: "door_warm", When: "air.temperature > 34", For: "10s", Severity: "warning", Enabled: false, RunTime: true,
				Origin: "proposed by the model at 2026-11-28 11:00:00 +00:00, approved by cli at 2026-11-28 11:05:00 +00:00"},
		},
		Pending: []alert.Proposal{{ID: "p8", Name: "chatty", When: "air.humidity > 1", Severity: "info", Why: "It is humid.", At: at, State: alert.ProposalPending,
			Backtest: alert.Backtest{From: at.Add(-48 * time.Hour), To: at, Samples: 2880, Fired: 40, FiringS: 6000, PerDay: 20, First: at.Add(-47 * time.Hour), Last: at, Noisy: true}}},
		Decided: []alert.Proposal{{ID: "p5", Name: "hot_door", State: alert.ProposalRejected, DecidedBy: "telegram chat 1 user 2 (@ann)", DecidedAt: at}},
	}
}

// TestWriteRules: `vigil rules` lists the rules in force with their
// origin (a disabled one says so), the proposals waiting with their why
// and backtest (noisy when it is) and the command that approves them,
// and the ones decided lately; RulesNamed keeps one rule or proposal.
func TestWriteRules(t *testing.T) {
	var b bytes.Buffer
	WriteRules(&b, ruleBook(), time.UTC)
	want := `rules in force:
  too_hot      air.temperature > 35 → critical
               origin: config.toml:40
  door_warm    air.temperature > 34 for 10s → warning (disabled)
               origin: proposed by the model at 2026-11-28 11:00:00 +00:00, approved by cli at 2026-11-28 11:05:00 +00:00
proposals waiting (vigil rule approve ID, or reject):
  p8 chatty    air.humidity > 1 → info
               why: It is humid.
               backtest: noisy: would have fired 40 times over 48 h of history (2880 samples), 20.0 a day, 1h40m0s in all, first 2026-11-26 13:00:00 +00:00, last 2026-11-28 12:00:00 +00:00; does not fire on the readings that prompted it
               proposed 2026-11-28 12:00:00 +00:00
decided in the last 30 days:
  p5 hot_door  rejected by telegram chat 1 user 2 (@ann) at 2026-11-28 12:00:00 +00:00
`
	if b.String() != want {
		t.Errorf("WriteRules:\n%s\nwant:\n%s", b.String(), want)
	}
	for _, name := range []string{"door_warm", "p8", "chatty"} {
		v, ok := RulesNamed(ruleBook(), name)
		if n := len(v.Rules) + len(v.Pending) + len(v.Decided); !ok || n != 1 {
			t.Errorf("RulesNamed(%q) = %+v, %v; want that one", name, v, ok)
		}
	}
	if _, ok := RulesNamed(ruleBook(), "nope"); ok {
		t.Error("RulesNamed(nope) found something")
	}
	b.Reset()
	WriteRules(&b, manage.RulesView{}, time.UTC)
	if !strings.Contains(b.String(), "none proposed") {
		t.Errorf("WriteRules with nothing = %q, want it to say no proposal waits", b.String())
	}
}
