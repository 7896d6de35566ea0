package mqtt

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/vigil-iot/vigil/alert"
	"github.com/vigil-iot/vigil/internal/mosquittotest"
	"github.com/vigil-iot/vigil/internal/transporttest"
)

// TestParseRuleCommand: cmd/rule takes "approve ID", "reject ID" or "drop
// NAME" as text or {"op": ..., "target": ...}; anything else is refused
// with what it wants.
func TestParseRuleCommand(t *testing.T) {
	for _, tt := range []struct {
		payload string
		want    command
		wantErr string
	}{
		{"approve p7", command{Name: cmdRule, Op: "approve", Target: "p7"}, ""},
		{" reject  door_warm\n", command{Name: cmdRule, Op: "reject", Target: "door_warm"}, ""},
		{`{"op": "drop", "target": "door_warm"}`, command{Name: cmdRule, Op: "drop", Target: "door_warm"}, ""},
		{"approve", command{}, `cmd/rule: want "approve ID", "reject ID" or "drop NAME"`},
		{"show door_warm", command{}, `cmd/rule: unknown op "show"`},
		{"approve p7 p8", command{}, `cmd/rule: target "p7 p8" is not one word`},
		{`{"op": "approve"}`, command{}, `cmd/rule: want "approve ID"`},
		{`{"op": "approve", "target": "p7", "x": 1}`, command{}, "unknown field"},
		{strings.Repeat("x", 300), command{}, "longer than 256"},
	} {
		got, err := parseCommand(cmdRule, []byte(tt.payload))
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("parseCommand(rule, %q) = %+v, %v; want error containing %q", tt.payload, got, err, tt.wantErr)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("parseCommand(rule, %q) = %+v, %v; want %+v", tt.payload, got, err, tt.want)
		}
	}
}

// TestRuleCommands: over a real broker, cmd/rule approves, rejects and
// drops through the daemon's RuleDecide, answered on cmd/result with the
// op and target; an unknown ID and a verb [manage] remote does not list
// are refused there, and nothing runs.
func TestRuleCommands(t *testing.T) {
	cmds := &transporttest.Recorder{}
	sub := startCommands(t, cmds)
	for _, tt := range []struct {
		payload  string
		wantOK   bool
		wantCall string
		wantText string
	}{
		{"approve p7", true, "rule approve p7", "approved p7"},
		{`{"op":"reject","target":"p8"}`, true, "rule reject p8", "rejected p8"},
		{"drop door_warm", true, "rule drop door_warm", "dropped door_warm"},
		{"approve unknown", false, "", "no such proposal"},
		{"approve", false, "", `want "approve ID"`},
	} {
		before := len(cmds.Calls())
		res := roundTrip(t, sub, "rule", tt.payload)
		if res.OK != tt.wantOK || res.Command != "rule" || !strings.Contains(res.Message+res.Error, tt.wantText) {
			t.Errorf("cmd/rule %q: result = %+v, want ok=%v text containing %q", tt.payload, res, tt.wantOK, tt.wantText)
		}
		if tt.wantOK && (res.Op == "" || res.Target == "") {
			t.Errorf("cmd/rule %q: result = %+v, want its op and target", tt.payload, res)
		}
		checkCalls(t, cmds, before, "rule", tt.wantCall)
	}

	refusing := &transporttest.Recorder{Err: transporttest.NotAllowed("status", "ack")}
	sub2 := startCommands(t, refusing)
	if res := roundTrip(t, sub2, "rule", "approve p7"); res.OK || res.Error != `not allowed: add "rule" to [manage] remote` {
		t.Errorf("cmd/rule without rule in [manage] remote: result = %+v", res)
	}
	if calls := refusing.Calls(); len(calls) != 0 {
		t.Errorf("refused cmd/rule ran: %v", calls)
	}
}

// TestProposalOnAlertTopic: the notice that brings a proposal is
// published on the alert topic with state notice and the proposal object,
// backtest and all, and never turns the problem sensor on.
func TestProposalOnAlertTopic(t *testing.T) {
	b := mosquittotest.Start(t, mosquittotest.Options{})
	sub := mosquittotest.Subscribe(t, b.URL(), "vigil/dev1/alert")
	c := newTestClient(t, b.URL(), Config{}, nil)
	runClient(t, c)
	waitConnected(t, c)
	at := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	a := alert.Alert{ID: "dev1-n1", Device: "dev1", Time: at, Severity: alert.Info, Source: alert.SourceLLM, Rule: "door_warm",
		State: alert.StateNotice, Summary: "the model proposes a rule: door_warm",
		Proposal: &alert.Proposal{ID: "p7", Name: "door_warm", When: "air.temperature > 34", For: "10s", Severity: "warning", Why: "w",
			At: at, State: alert.ProposalPending, Backtest: alert.Backtest{Samples: 2880, Fired: 9, PerDay: 4.5, Noisy: true, OnPrompt: true}}}
	ctx, cancel := context.WithTimeout(context.Background(), wait5)
	defer cancel()
	if err := c.Notify(ctx, a); err != nil {
		t.Fatal(err)
	}
	m := sub.Next("vigil/dev1/alert", wait5)
	var raw struct {
		State    string `json:"state"`
		Proposal struct {
			ID       string `json:"id"`
			When     string `json:"when"`
			Backtest struct {
				Fired int  `json:"fired"`
				Noisy bool `json:"noisy"`
			} `json:"backtest"`
		} `json:"proposal"`
	}
	if err := json.Unmarshal([]byte(m.Payload), &raw); err != nil {
		t.Fatal(err)
	}
	if raw.State != "notice" || raw.Proposal.ID != "p7" || raw.Proposal.When != "air.temperature > 34" || raw.Proposal.Backtest.Fired != 9 || !raw.Proposal.Backtest.Noisy {
		t.Errorf("alert topic carried %s, want state notice and the proposal with its backtest", m.Payload)
	}
}
