package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vigil-iot/vigil/alert"
	"github.com/vigil-iot/vigil/internal/configtest"
	"github.com/vigil-iot/vigil/internal/mosquittotest"
	"github.com/vigil-iot/vigil/store"
)

// TestRulesCLI: with no daemon, on the state file: vigil rules lists the
// config's rule with its origin and a proposal with its backtest (noisy),
// --json carries the same; vigil rule show --toml prints the [[rule]]
// table; an approval of an unknown ID is refused and changes nothing;
// the approval makes the proposal a rule in force whose origin says who
// proposed and approved it; a bad verb is a usage error.
func TestRulesCLI(t *testing.T) {
	dir := t.TempDir()
	cfg := writeConfig(t, dir, configtest.OverlayRules)
	// No state file yet: nothing to approve, and none is created.
	if _, errOut, code := runVigil(t, "-c", cfg, "rule", "approve", "p1"); code != 1 || !strings.Contains(errOut, "no such proposal") {
		t.Errorf("vigil rule approve p1 with no state file: exit %d, %s; want 1 and no such proposal", code, errOut)
	}
	if _, err := os.Stat(filepath.Join(dir, "state", "vigil.db")); err == nil {
		t.Error("a refused approval created the state file")
	}
	seedProposal(t, dir)

	runOK(t, "", []string{"-c", cfg, "rules"}, "rules in force:", "too_hot", "origin: "+cfg+":", "proposals waiting",
		"p1 door_warm", "air.temperature > 34 for 10s → warning: warm after the door", "why: It climbs after each door opening.",
		"backtest: noisy: would have fired 9 times over 24 h of history (1440 samples)")
	out := runOK(t, "", []string{"-c", cfg, "rules", "--json"})
	var v struct {
		Rules   []struct{ Name, Origin string }
		Pending []alert.Proposal
	}
	if err := json.Unmarshal([]byte(out), &v); err != nil || len(v.Rules) != 1 || len(v.Pending) != 1 || v.Pending[0].ID != "p1" || !v.Pending[0].Backtest.Noisy {
		t.Fatalf("vigil rules --json = %s (%v), want too_hot and p1, noisy", out, err)
	}
	runOK(t, "", []string{"-c", cfg, "rule", "show", "door_warm", "--toml"}, "[[rule]]", `name = "door_warm"`, `when = "air.temperature > 34"`)

	if out, errOut, code := runVigil(t, "-c", cfg, "rule", "approve", "p9"); code != 1 || !strings.Contains(errOut, "no such proposal") {
		t.Errorf("vigil rule approve p9: exit %d, %s%s; want 1 and no such proposal", code, out, errOut)
	}
	if _, errOut, code := runVigil(t, "-c", cfg, "rule", "frobnicate", "p1"); code != 2 || !strings.Contains(errOut, "want approve, reject, drop or show") {
		t.Errorf("vigil rule frobnicate: exit %d, %s; want a usage error", code, errOut)
	}
	runOK(t, "", []string{"-c", cfg, "rule", "approve", "p1"}, "door_warm")
	runOK(t, "", []string{"-c", cfg, "rule", "show", "door_warm"}, "door_warm     air.temperature > 34 for 10s → warning", "p1 door_warm  approved by cli at ")
	runOK(t, "", []string{"-c", cfg, "rules"}, "door_warm", "origin: proposed by the model at ", "approved by cli at ", "proposals waiting: none")
}

// seedProposal keeps a noisy proposal, door_warm (p1), in dir's state
// file, as the model's propose_rule would.
func seedProposal(t *testing.T, dir string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Join(dir, "state"), 0o700); err != nil {
		t.Fatal(err)
	}
	db, err := store.Open(filepath.Join(dir, "state", "vigil.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	at := time.Now().UTC().Add(-time.Hour).Round(time.Second)
	_, _, err = db.AddProposal(alert.Proposal{Name: "door_warm", When: "air.temperature > 34", For: "10s", Severity: "warning", Message: "warm after the door",
		Why: "It climbs after each door opening.", At: at, Backtest: alert.Backtest{From: at.Add(-24 * time.Hour), To: at, Samples: 1440, Fired: 9, FiringS: 540,
			PerDay: 9, First: at.Add(-20 * time.Hour), Last: at.Add(-time.Hour), OnPrompt: true, Noisy: true}}, at)
	if cerr := db.Close(); err != nil || cerr != nil {
		t.Fatal(err, cerr)
	}
}

// TestRulesThroughDaemon: with a daemon running, vigil rules, vigil rule
// show --toml and vigil rule approve go through its control socket: the
// approval is the socket's, the rule is in force at once with its origin,
// and the notice of the change reaches the broker.
func TestRulesThroughDaemon(t *testing.T) {
	t.Parallel()
	b := startMosquitto(t)
	live := mosquittotest.Subscribe(t, b.URL(), topicStatus, topicAlert)
	dir := t.TempDir()
	cfg := writeConfig(t, dir, configtest.OverlayRules+mqttConfig(b.URL()))
	seedProposal(t, dir)
	d := startDaemon(t, cfg)
	defer func() { d.logIfFailed(t) }()
	live.Wait(topicStatus, 15*time.Second, payloadIs("online"))

	runOK(t, "", []string{"-c", cfg, "rules"}, "p1 door_warm", "backtest: noisy: ")
	runOK(t, "", []string{"-c", cfg, "rule", "show", "p1", "--toml"}, "[[rule]]", `name = "door_warm"`)
	runOK(t, "", []string{"-c", cfg, "rule", "approve", "door_warm"}, "door_warm")
	out := runOK(t, "", []string{"-c", cfg, "rules", "--json"})
	var v struct {
		Rules []struct {
			Name, Origin string
			RunTime      bool `json:"run_time"`
		}
		Pending []alert.Proposal
	}
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Fatal(err)
	}
	found := false
	for _, r := range v.Rules {
		found = found || r.Name == "door_warm" && r.RunTime && strings.Contains(r.Origin, "approved by socket at ")
	}
	if !found || len(v.Pending) != 0 {
		t.Errorf("vigil rules --json after the approval = %s, want door_warm in force, approved by socket, and nothing pending", out)
	}
	live.Wait(topicAlert, 10*time.Second, func(m mosquittotest.Message) bool {
		return strings.Contains(m.Payload, `"state":"notice"`) && strings.Contains(m.Payload, "door_warm")
	})
}
