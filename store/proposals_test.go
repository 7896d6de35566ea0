package store

import (
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/vigil-iot/vigil/alert"
)

// TestProposalsRoundTrip: a proposal survives a reopen with its backtest,
// gets a short ID, and a decision put back replaces it.
func TestProposalsRoundTrip(t *testing.T) {
	db := openTemp(t, Options{})
	in := alert.Proposal{Name: "warm", When: "air.temperature > 34", For: "10s", Severity: "warning",
		Message: "warm", Why: "it climbed", At: t0,
		Backtest: alert.Backtest{Samples: 5, Fired: 2, FiringS: 60, First: t0, Last: t0.Add(time.Hour), OnPrompt: true, PerDay: 2}}
	got, dropped, err := db.AddProposal(in, t0)
	if err != nil || dropped != nil {
		t.Fatalf("AddProposal = %v, %v", dropped, err)
	}
	if got.ID != "p1" || got.State != alert.ProposalPending {
		t.Errorf("AddProposal gave id %q state %q; want p1 pending", got.ID, got.State)
	}
	db = reopen(t, db, Options{})
	all, err := db.Proposals()
	if err != nil || len(all) != 1 {
		t.Fatalf("Proposals after reopen = %v, %v", all, err)
	}
	if d := cmp.Diff(got, all[0]); d != "" {
		t.Errorf("after reopen (-want +got):\n%s", d)
	}
	got.State, got.DecidedBy, got.DecidedAt = alert.ProposalApproved, "cli", t0.Add(time.Minute)
	if err := db.PutProposal(got); err != nil {
		t.Fatal(err)
	}
	if all, _ := db.Proposals(); len(all) != 1 || all[0].State != alert.ProposalApproved {
		t.Errorf("after the decision: %+v; want one approved", all)
	}
	if err := db.PutProposal(alert.Proposal{ID: "x"}); err == nil {
		t.Error("PutProposal with a bad ID: no error")
	}
}

// TestProposalsBounded: the 17th pending proposal drops the oldest (which
// AddProposal returns, for the notice), and decided ones older than 30
// days are forgotten.
func TestProposalsBounded(t *testing.T) {
	db := openTemp(t, Options{})
	for i := range MaxPending {
		if _, d, err := db.AddProposal(alert.Proposal{Name: fmt.Sprintf("r%d", i)}, t0); err != nil || d != nil {
			t.Fatalf("proposal %d: dropped %v, %v", i, d, err)
		}
	}
	_, d, err := db.AddProposal(alert.Proposal{Name: "r16"}, t0)
	if err != nil || d == nil || d.Name != "r0" || d.State != alert.ProposalDropped {
		t.Fatalf("the 17th: dropped %+v, %v; want r0 dropped", d, err)
	}
	all, _ := db.Proposals()
	pending := 0
	for _, p := range all {
		if p.State == alert.ProposalPending {
			pending++
		}
	}
	if pending != MaxPending {
		t.Errorf("%d pending; want %d", pending, MaxPending)
	}
	// 31 days later the dropped one is forgotten (and another drops).
	if _, _, err := db.AddProposal(alert.Proposal{Name: "late"}, t0.Add(31*24*time.Hour)); err != nil {
		t.Fatal(err)
	}
	all, _ = db.Proposals()
	for _, p := range all {
		if p.Name == "r0" {
			t.Errorf("r0, dropped 31 days ago, is still kept: %+v", p)
		}
	}
	if len(all) != MaxPending+1 { // 16 pending + r1 dropped just now
		t.Errorf("%d kept; want %d", len(all), MaxPending+1)
	}
}
