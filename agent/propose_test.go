package agent

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/vigil-iot/vigil/alert"
)

// fakeProposer is a Self that takes proposals, refusing those named in
// refuse with their message (as the daemon's validator would).
type fakeProposer struct {
	fakeSelf
	mu       sync.Mutex
	refuse   map[string]string
	proposed []alert.Proposal
}

func (s *fakeProposer) ProposeRule(_ context.Context, p alert.Proposal) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if msg, ok := s.refuse[p.Name]; ok {
		return "", errors.New(msg)
	}
	s.proposed = append(s.proposed, p)
	return "proposal p1 kept for a person", nil
}

// TestProposeRule: with propose_rule in model_may the tool is offered (and
// not without it, nor without a Proposer); a refusal goes back to the
// model as the tool's error, and its corrected proposal is kept.
func TestProposeRule(t *testing.T) {
	forProviders(t, func(t *testing.T, p string) {
		f := newFake(t, p,
			turn{calls: []call{{"r1", ToolProposeRule, `{"name":"warm","when":"aier.temperature > 34","severity":"warning","message":"warm","why":"it climbed"}`}}},
			turn{calls: []call{{"r2", ToolProposeRule, `{"name":"warm2","when":"air.temperature > 34","for":"10s","severity":"warning","message":"warm","why":"it climbed\nfast"}`}}},
			turn{calls: []call{respond("alert", "warning", "warm")}})
		self := &fakeProposer{refuse: map[string]string{"warm": `run-time rule: rule.warm.when: unknown sensor "aier"; did you mean air?`}}
		cfg := testConfig(f)
		cfg.ModelMay, cfg.Self = []string{MayPause, MayRules}, self
		d, err := think(t, newTestAgent(t, cfg, nil, nil))
		if err != nil || d.Outcome != OutcomeAlert {
			t.Fatalf("Think = %+v, %v", d, err)
		}
		if names := toolNames(f.requests()[0]); !slices.Contains(names, ToolProposeRule) {
			t.Errorf("tools sent = %v, want propose_rule", names)
		}
		if got := toolResults(f.requests()[1])["r1"]; !strings.Contains(got, `error: rule refused, nothing kept: run-time rule: rule.warm.when: unknown sensor "aier"; did you mean air?`) {
			t.Errorf("refusal answered %q", got)
		}
		if got := toolResults(f.requests()[2])["r2"]; got != "proposal p1 kept for a person" {
			t.Errorf("proposal answered %q", got)
		}
		want := alert.Proposal{Name: "warm2", When: "air.temperature > 34", For: "10s", Severity: "warning", Message: "warm", Why: "it climbed fast"}
		if len(self.proposed) != 1 || self.proposed[0] != want {
			t.Errorf("proposed %+v; want %+v", self.proposed, want)
		}
	})
	for _, tc := range []struct {
		name string
		may  []string
		self Self
	}{{"not in model_may", []string{MayPause}, &fakeProposer{}}, {"no proposer", []string{MayRules}, &fakeSelf{}}} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFake(t, "openai", turn{calls: []call{respond("ok", "", "")}})
			cfg := testConfig(f)
			cfg.ModelMay, cfg.Self = tc.may, tc.self
			if _, err := think(t, newTestAgent(t, cfg, nil, nil)); err != nil {
				t.Fatal(err)
			}
			if names := toolNames(f.requests()[0]); slices.Contains(names, ToolProposeRule) {
				t.Errorf("tools sent = %v, want no propose_rule", names)
			}
		})
	}
}

// TestPromptListsProposed: the prompt names the rules proposed, by state,
// and no more than maxProposed of them.
func TestPromptListsProposed(t *testing.T) {
	in := Input{Proposed: []Proposed{{"warm", alert.ProposalPending}, {"cold", alert.ProposalRejected}, {"wet", alert.ProposalApproved}}}
	var b strings.Builder
	writeProposed(&b, in.Proposed)
	if want := "\nRules you proposed (do not propose them again): pending: warm; approved: wet; rejected: cold;\n"; b.String() != want {
		t.Errorf("got %q; want %q", b.String(), want)
	}
	many := make([]Proposed, 100)
	for i := range many {
		many[i] = Proposed{strings.Repeat("x", 64), alert.ProposalRejected}
	}
	b.Reset()
	writeProposed(&b, many)
	if n := strings.Count(b.String(), "x"); n != maxProposed*64 {
		t.Errorf("%d bytes of names; want %d", n, maxProposed*64)
	}
}
