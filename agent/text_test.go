package agent

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/vigil-iot/vigil/alert"
)

func TestParseText(t *testing.T) {
	long := strings.Repeat("x", 301)
	tests := []struct {
		in       string
		outcome  string
		severity alert.Severity
		summary  string
	}{
		{"HEARTBEAT_OK", OutcomeOK, 0, ""},
		{"  HEARTBEAT_OK \n", OutcomeOK, 0, ""},
		{"**HEARTBEAT_OK**", OutcomeOK, 0, ""},
		{"*HEARTBEAT_OK*", OutcomeOK, 0, ""},
		{"__HEARTBEAT_OK__", OutcomeOK, 0, ""},
		{"`HEARTBEAT_OK`", OutcomeOK, 0, ""},
		{"```\nHEARTBEAT_OK\n```", OutcomeOK, 0, ""},
		{"```text\nHEARTBEAT_OK\n```\n", OutcomeOK, 0, ""},
		{"HEARTBEAT_OK.", OutcomeOK, 0, ""},
		{"HEARTBEAT_OK!", OutcomeOK, 0, ""},
		{"heartbeat_ok", OutcomeOK, 0, ""},
		{"HEARTBEAT_OK — all five items checked", OutcomeOK, 0, "all five items checked"},
		{"Everything is within range.\nHEARTBEAT_OK", OutcomeOK, 0, "Everything is within range."},
		{"All good: **HEARTBEAT_OK**.", OutcomeOK, 0, "All good"},
		{"HEARTBEAT_OK " + strings.Repeat("y", 300), OutcomeOK, 0, strings.Repeat("y", 300)},
		{"HEARTBEAT_OK " + long, OutcomeAlert, alert.Warning, "HEARTBEAT_OK " + long},
		{strings.Repeat("z ", 400), OutcomeAlert, alert.Warning, strings.Repeat("z ", summaryMax/2-1) + "z…"},
		{long + " HEARTBEAT_OK", OutcomeAlert, alert.Warning, strings.Repeat("x", 301) + " HEARTBEAT_OK"},
		{"HEARTBEAT_OKAY", OutcomeAlert, alert.Warning, "HEARTBEAT_OKAY"},
		{"Not HEARTBEAT_OK: the tank is empty", OutcomeAlert, alert.Warning, "Not HEARTBEAT_OK: the tank is empty"},
		{"ALERT: freezer at -9 °C", OutcomeAlert, alert.Warning, "freezer at -9 °C"},
		{"**ALERT:** freezer at -9 °C", OutcomeAlert, alert.Warning, "freezer at -9 °C"},
		{"Alert: tank empty", OutcomeAlert, alert.Warning, "tank empty"},
		{"ALERT: critical: freezer at 2 °C", OutcomeAlert, alert.Critical, "freezer at 2 °C"},
		{"ALERT: [info] door opened twice", OutcomeAlert, alert.Info, "door opened twice"},
		{"ALERT: tank low. Otherwise HEARTBEAT_OK", OutcomeAlert, alert.Warning, "tank low. Otherwise HEARTBEAT_OK"},
		{"ALERT:", OutcomeAlert, alert.Warning, "the model raised an alert without a summary"},
		{"The soil\n  is dry.", OutcomeAlert, alert.Warning, "The soil is dry."},
		{"", OutcomeAlert, alert.Warning, "the model answered with an empty text"},
		{"```\n```", OutcomeAlert, alert.Warning, "the model answered with an empty text"},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%.40q", tt.in), func(t *testing.T) {
			d := ParseText(tt.in)
			if d.Outcome != tt.outcome || d.Severity != tt.severity || d.Summary != tt.summary {
				t.Errorf("ParseText(%q) = %s %v %q, want %s %v %q", tt.in, d.Outcome, d.Severity, d.Summary, tt.outcome, tt.severity, tt.summary)
			}
		})
	}
}

func FuzzParseText(f *testing.F) {
	for _, s := range []string{"HEARTBEAT_OK", "**HEARTBEAT_OK**", "ALERT: x", "ALERT: critical: y", "```\nHEARTBEAT_OK\n```", "", "\xff\xfeHEARTBEAT_OK", "text HEARTBEAT_OK"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d := ParseText(s)
		switch d.Outcome {
		case OutcomeOK:
			if !strings.Contains(strings.ToUpper(s), okToken) {
				t.Errorf("ParseText(%q) = ok without %s", s, okToken)
			}
			if d.Severity != 0 {
				t.Errorf("ParseText(%q): ok with severity %v", s, d.Severity)
			}
		case OutcomeAlert:
			if d.Summary == "" {
				t.Errorf("ParseText(%q): alert without summary", s)
			}
			if d.Severity < alert.Info || d.Severity > alert.Critical {
				t.Errorf("ParseText(%q): severity %v", s, d.Severity)
			}
		default:
			t.Errorf("ParseText(%q): outcome %q", s, d.Outcome)
		}
		if n := utf8.RuneCountInString(d.Summary); n > summaryMax || !utf8.ValidString(d.Summary) {
			t.Errorf("ParseText(%q): summary of %d characters, valid UTF-8 %t", s, n, utf8.ValidString(d.Summary))
		}
	})
}

func ExampleParseText() {
	for _, s := range []string{
		"**HEARTBEAT_OK**",
		"ALERT: critical: freezer at 2 °C",
		"The soil looks dry.",
	} {
		d := ParseText(s)
		fmt.Printf("%s %v %q\n", d.Outcome, d.Severity, d.Summary)
	}
	// Output:
	// ok severity(0) ""
	// alert critical "freezer at 2 °C"
	// alert warning "The soil looks dry."
}
