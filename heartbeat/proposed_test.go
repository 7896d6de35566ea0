package heartbeat

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/vigil-iot/vigil/agent"
	"github.com/vigil-iot/vigil/alert"
)

// TestInputProposed: the prompt's input names the rules the model proposed
// that are pending, or approved or rejected in the last 30 days; older
// decisions and dropped proposals are left out.
func TestInputProposed(t *testing.T) {
	h := newHarness(t, nil)
	now := h.wall.Now().UTC()
	for _, p := range []alert.Proposal{
		{Name: "waits"},
		{Name: "old_no", State: alert.ProposalRejected, DecidedAt: now.Add(-31 * 24 * time.Hour)},
		{Name: "no", State: alert.ProposalRejected, DecidedAt: now.Add(-29 * 24 * time.Hour)},
		{Name: "yes", State: alert.ProposalApproved, DecidedAt: now.Add(-time.Hour)},
		{Name: "gone", State: alert.ProposalDropped, DecidedAt: now.Add(-time.Hour)},
	} {
		added, _, err := h.db.AddProposal(p, now.Add(-40*24*time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		if p.State != "" {
			added.State, added.DecidedAt = p.State, p.DecidedAt
			if err := h.db.PutProposal(added); err != nil {
				t.Fatal(err)
			}
		}
	}
	h.sample()
	if _, err := h.e.tick(context.Background(), false, CheckOptions{due: h.wall.Now()}); err != nil {
		t.Fatal(err)
	}
	want := []agent.Proposed{{Name: "waits", State: alert.ProposalPending}, {Name: "no", State: alert.ProposalRejected}, {Name: "yes", State: alert.ProposalApproved}}
	if d := cmp.Diff(want, h.thinker.last.Proposed); d != "" {
		t.Errorf("Proposed (-want +got):\n%s", d)
	}
}
