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
