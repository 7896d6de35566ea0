package web

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/vigil-iot/vigil/alert"
	"github.com/vigil-iot/vigil/manage"
	"github.com/vigil-iot/vigil/transport"
)

// pending is the proposals fakeEngine.Rules lists as waiting.
var pending = []alert.Proposal{
	{ID: "p7", Name: "door_warm", When: "air.temperature > 34", For: "10s", Severity: "warning", Message: "warm",
		Why: "It climbs <fast> after the door opens.", At: t0.Add(-10 * time.Minute), State: alert.ProposalPending,
		Backtest: alert.Backtest{From: t0.Add(-48 * time.Hour), To: t0, Samples: 2880, Fired: 2, FiringS: 600, PerDay: 1,
			First: t0.Add(-30 * time.Hour), Last: t0.Add(-time.Hour), OnPrompt: true}},
	{ID: "p8", Name: "chatty", When: "air.humidity > 1", Severity: "info", At: t0.Add(-5 * time.Minute), State: alert.ProposalPending,
		Backtest: alert.Backtest{From: t0.Add(-48 * time.Hour), To: t0, Samples: 2880, Fired: 40, FiringS: 6000, PerDay: 20,
			First: t0.Add(-47 * time.Hour), Last: t0.Add(-time.Minute), OnPrompt: true, Noisy: true}},
}

func (f *fakeEngine) Rules(ctx context.Context) (manage.RulesView, error) {
	return manage.RulesView{Pending: slices.Clone(pending)}, nil
}

// RuleDecide approves or rejects p7 or p8; any other ID is no proposal.
func (f *fakeEngine) RuleDecide(ctx context.Context, op, target string) (string, error) {
	if transport.SourceOf(ctx).Channel != transport.ChannelWeb {
		return "", errors.New("the page's commands must carry the web source")
	}
	if slices.Contains(f.refused, "rule") {
		return "", fmt.Errorf("%w: \"rule\" is not in [manage] remote (web)", alert.ErrNotAllowed)
	}
	if target != "p7" && target != "p8" {
		return "", fmt.Errorf("rule %s %s: %w", op, target, alert.ErrNoProposal)
	}
	f.calls = append(f.calls, "rule "+op+" "+target)
	return op + "d", nil
}

// TestProposalButtons: the page lists the proposals waiting, each with its
// rule, the model's why (escaped), its backtest (noisy when it is) and,
// when [manage] remote allows "rule", Approve and Reject buttons: POSTs
// with the form token naming its ID. A decided or unknown ID is answered
// 409, a bad op 400, no token 403; without "rule" there are no buttons and
// a POST is 403.
func TestProposalButtons(t *testing.T) {
	f := newFake(t0, 1)
	s := newTestServer(t, f, Options{Live: Live{Allowed: []string{"status", "rule"}}, RuleBook: f.Rules})
	body, _ := io.ReadAll(do(t, s, "GET", "/", nil, "", "").Body)
	form := func(op, id string) string {
		return `<form method="post" action="/do/rule"><input type="hidden" name="csrf" value="` + s.Token() +
			`"><input type="hidden" name="op" value="` + op + `"><input type="hidden" name="target" value="` + id + `">`
	}
	for _, want := range []string{`<table id="proposals">`, "<code>door_warm</code>: air.temperature &gt; 34 for 10s → warning: warm",
		"It climbs &lt;fast&gt; after the door opens.", "would have fired 2 times over 48 h of history",
		`<td class="err">noisy: would have fired 40 times`, form("approve", "p7"), form("reject", "p7"), form("approve", "p8")} {
		if !strings.Contains(string(body), want) {
			t.Errorf("page lacks %q", want)
		}
	}
	if n := strings.Count(string(body), `action="/do/rule"`); n != 4 {
		t.Errorf("%d rule buttons, want Approve and Reject for each of 2 proposals", n)
	}

	tok := func(op, id string) url.Values { return url.Values{"csrf": {s.Token()}, "op": {op}, "target": {id}} }
	resp := do(t, s, "POST", "/do/rule", tok("approve", "p7"), "", "")
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/?done=approve" || !slices.Equal(f.calls, []string{"rule approve p7"}) {
		t.Errorf("POST /do/rule approve p7 = %d to %q, calls %v; want 303 to /?done=approve and the approval", resp.StatusCode, resp.Header.Get("Location"), f.calls)
	}
	if b, _ := io.ReadAll(do(t, s, "GET", "/?done=approve", nil, "", "").Body); !strings.Contains(string(b), "Approved:") {
		t.Errorf("page after an approval does not say so")
	}
	for _, tt := range []struct {
		name string
		form url.Values
		code int
	}{
		{"decided meanwhile", tok("reject", "p9"), http.StatusConflict},
		{"drop is no button", tok("drop", "p7"), http.StatusBadRequest},
		{"no target", tok("approve", ""), http.StatusBadRequest},
		{"two words", tok("approve", "p7 p8"), http.StatusBadRequest},
		{"no token", url.Values{"op": {"approve"}, "target": {"p7"}}, http.StatusForbidden},
	} {
		if resp := do(t, s, "POST", "/do/rule", tt.form, "", ""); resp.StatusCode != tt.code {
			t.Errorf("%s: POST /do/rule = %d, want %d", tt.name, resp.StatusCode, tt.code)
		}
	}
	if len(f.calls) != 1 {
		t.Errorf("calls = %v, want only the first approval", f.calls)
	}
	var api struct {
		RuleBook *manage.RulesView `json:"rule_book"`
	}
	if err := json.NewDecoder(do(t, s, "GET", "/api/status", nil, "", "").Body).Decode(&api); err != nil || api.RuleBook == nil || len(api.RuleBook.Pending) != 2 {
		t.Errorf("/api/status rule_book = %+v (%v), want the 2 proposals", api.RuleBook, err)
	}

	s2 := newTestServer(t, f, Options{Live: Live{Allowed: []string{"status"}}, RuleBook: f.Rules})
	body, _ = io.ReadAll(do(t, s2, "GET", "/", nil, "", "").Body)
	if strings.Contains(string(body), `action="/do/rule"`) || !strings.Contains(string(body), "vigil rule approve p7") {
		t.Error("without rule in [manage] remote the page shows rule buttons, or not the command that approves")
	}
	if resp := do(t, s2, "POST", "/do/rule", url.Values{"csrf": {s2.Token()}, "op": {"approve"}, "target": {"p7"}}, "", ""); resp.StatusCode != http.StatusForbidden {
		t.Errorf("POST /do/rule without rule in [manage] remote = %d, want 403", resp.StatusCode)
	}
}
