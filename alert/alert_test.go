package alert

import (
	"encoding/json"
	"testing"
	"time"
)

func TestSeverityText(t *testing.T) {
	for _, s := range []Severity{Info, Warning, Critical} {
		b, err := s.MarshalText()
		if err != nil {
			t.Fatal(err)
		}
		var got Severity
		if err := got.UnmarshalText(b); err != nil || got != s {
			t.Errorf("UnmarshalText(%q) = %v, %v; want %v", b, got, err, s)
		}
	}
	var s Severity
	if err := s.UnmarshalText([]byte("urgent")); err == nil {
		t.Error(`UnmarshalText("urgent") = nil error, want one naming the valid severities`)
	}
	if got := Severity(0).String(); got != "severity(0)" {
		t.Errorf("Severity(0).String() = %q", got)
	}
}

func TestAlertJSONAndText(t *testing.T) {
	a := Alert{ID: "a1", Device: "pi", Time: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), Severity: Critical,
		Source: SourceRule, Rule: "too_hot", State: StateFiring, Summary: "38 °C"}
	b, err := json.Marshal(a)
	if err != nil {
		t.Fatal(err)
	}
	const want = `{"id":"a1","device":"pi","time":"2026-01-02T03:04:05Z","severity":"critical","source":"rule","rule":"too_hot","state":"firing","summary":"38 °C"}`
	if string(b) != want {
		t.Errorf("json = %s\nwant   %s", b, want)
	}
	if got, want := a.Text(), "[pi] critical too_hot: 38 °C"; got != want {
		t.Errorf("Text() = %q, want %q", got, want)
	}
	a.State, a.Rule = StateResolved, ""
	if got, want := a.Text(), "[pi] rule resolved: 38 °C — critical"; got != want {
		t.Errorf("Text() = %q, want %q", got, want)
	}
}

// TestNotice: a notice (a setting changed, the checklist replaced, a test
// alert) is an event, never a problem, whether it carries State "notice" or
// is one written before that state existed (a firing system alert with a
// notice rule). Text says "notice", not its severity.
func TestNotice(t *testing.T) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for _, tc := range []struct {
		a                 Alert
		notice, problem   bool
		text, normalState string
	}{
		{Alert{Device: "pi", Severity: Info, Source: SourceSystem, Rule: RuleSetting, State: StateNotice, Summary: "heartbeat.interval set to 10m by cli"},
			true, false, "[pi] notice setting: heartbeat.interval set to 10m by cli", StateNotice},
		{Alert{Device: "pi", Severity: Info, Source: SourceSystem, Rule: RuleSetting, State: StateFiring, Summary: "heartbeat.interval set to 10m by cli"},
			true, false, "[pi] notice setting: heartbeat.interval set to 10m by cli", StateNotice},
		{Alert{Device: "pi", Severity: Info, Source: SourceSystem, Rule: RuleChecklist, State: StateFiring, Summary: "checklist set by cli (12 bytes)"},
			true, false, "[pi] notice checklist: checklist set by cli (12 bytes)", StateNotice},
		{Alert{Device: "pi", Severity: Info, Source: SourceSystem, Rule: RuleNotes, State: StateFiring, Summary: "2 notes cleared by cli"},
			true, false, "[pi] notice notes: 2 notes cleared by cli", StateNotice},
		{Alert{Device: "pi", Severity: Critical, Source: SourceSystem, Rule: RuleTest, State: StateFiring, Summary: "Test alert"},
			true, false, "[pi] notice test: Test alert", StateNotice},
		{Alert{Device: "pi", Severity: Warning, Source: SourceSystem, Rule: RuleFloodGuard, State: StateFiring, Summary: "holding alerts"},
			true, false, "[pi] notice flood_guard: holding alerts", StateNotice},
		// A rule named like a notice kind is still a rule.
		{Alert{Device: "pi", Severity: Warning, Source: SourceRule, Rule: "setting", State: StateFiring, Summary: "dial at 7"},
			false, true, "[pi] warning setting: dial at 7", StateFiring},
		{Alert{Device: "pi", Severity: Warning, Source: SourceSystem, Rule: "llm_unreachable", State: StateFiring, Summary: "LLM unreachable"},
			false, true, "[pi] warning llm_unreachable: LLM unreachable", StateFiring},
		{Alert{Device: "pi", Severity: Info, Source: SourceSystem, Rule: "llm_unreachable", State: StateResolved, Summary: "LLM reachable again"},
			false, false, "[pi] llm_unreachable resolved: LLM reachable again — info", StateResolved},
		{Alert{Device: "pi", Severity: Critical, Source: SourceLLM, State: StateFiring, Summary: "smoke"},
			false, true, "[pi] critical llm: smoke", StateFiring},
	} {
		tc.a.Time = at
		if got := tc.a.IsNotice(); got != tc.notice {
			t.Errorf("%+v.IsNotice() = %v, want %v", tc.a, got, tc.notice)
		}
		if got := tc.a.IsProblem(); got != tc.problem {
			t.Errorf("%+v.IsProblem() = %v, want %v", tc.a, got, tc.problem)
		}
		if got := tc.a.Text(); got != tc.text {
			t.Errorf("%+v.Text() = %q, want %q", tc.a, got, tc.text)
		}
		if got := tc.a.Normalized().State; got != tc.normalState {
			t.Errorf("%+v.Normalized().State = %q, want %q", tc.a, got, tc.normalState)
		}
	}
}
