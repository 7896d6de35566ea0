package web

import (
	"context"
	"github.com/jonboulle/clockwork"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/vigil-iot/vigil/alert"
)

// noticeEngine is the fake engine with notices in its alert log.
type noticeEngine struct {
	*fakeEngine
	notices []alert.Alert
}

func (n noticeEngine) Alerts(ctx context.Context, k int) ([]alert.Alert, error) {
	as, err := n.fakeEngine.Alerts(ctx, k)
	return append(n.notices, as...), err
}

// TestNoticeRowsAreNotFiring: in the page's alert list a notice (a
// setting changed, a critical test alert, also one logged the old way) is
// marked as a notice, never styled as firing.
func TestNoticeRowsAreNotFiring(t *testing.T) {
	f := newFake(t0, 1)
	n := noticeEngine{f, []alert.Alert{
		{ID: "n1", Time: t0.Add(-time.Minute), Severity: alert.Critical, Source: alert.SourceSystem, Rule: alert.RuleTest, State: alert.StateFiring, Summary: "Test alert from vigil"},
		{ID: "n2", Time: t0.Add(-2 * time.Minute), Severity: alert.Info, Source: alert.SourceSystem, Rule: alert.RuleSetting, State: alert.StateNotice, Summary: "heartbeat.interval set to 10m by cli"},
	}}
	opts := Options{Now: func() time.Time { return f.now }, Clock: clockwork.NewFakeClockAt(f.now), Live: Live{Allowed: []string{"status"}}}
	s, err := New(n, f, opts)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(do(t, s, "GET", "/", nil, "", "").Body)
	for _, want := range []string{
		`<td class="notice">critical</td><td class="hide-s">system</td><td>notice: Test alert from vigil</td>`,
		`<td class="notice">info</td><td class="hide-s">system</td><td>notice: heartbeat.interval set to 10m by cli</td>`,
		`<td class="firing">critical</td><td class="hide-s">rule</td><td>hot &lt;b&gt;</td>`,
	} {
		if !strings.Contains(string(body), want) {
			t.Errorf("page lacks %q", want)
		}
	}
}
