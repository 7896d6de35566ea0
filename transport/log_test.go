package transport

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"

	"github.com/vigil-iot/vigil/alert"
)

func TestLogOmitsEmptyRule(t *testing.T) {
	tests := []struct {
		name string
		a    alert.Alert
		want string
		not  string
	}{
		{"llm alert", alert.Alert{ID: "a1", Severity: alert.Warning, Source: alert.SourceLLM, State: alert.StateFiring, Summary: "fan"}, "source=llm state=firing", "rule="},
		{"rule alert", alert.Alert{ID: "a2", Severity: alert.Critical, Source: alert.SourceRule, Rule: "too_hot", State: alert.StateFiring, Summary: "38"}, "source=rule rule=too_hot state=firing", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			l := &Log{Logger: slog.New(slog.NewTextHandler(&buf, nil))}
			if err := l.Notify(context.Background(), tt.a); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(buf.String(), tt.want) || (tt.not != "" && strings.Contains(buf.String(), tt.not)) {
				t.Errorf("Notify(%+v) logged %q, want %q without %q", tt.a, buf.String(), tt.want, tt.not)
			}
		})
	}
}

// TestLogNoticeIsInfo: a notice is logged at INFO whatever its severity (a
// test alert sent as critical, also one queued the old way); a firing
// problem of warning or above at WARN.
func TestLogNoticeIsInfo(t *testing.T) {
	for _, tc := range []struct {
		a    alert.Alert
		want string
	}{
		{alert.Alert{ID: "t1", Severity: alert.Critical, Source: alert.SourceSystem, Rule: alert.RuleTest, State: alert.StateNotice, Summary: "test"}, "level=INFO"},
		{alert.Alert{ID: "t2", Severity: alert.Critical, Source: alert.SourceSystem, Rule: alert.RuleTest, State: alert.StateFiring, Summary: "test"}, "level=INFO"},
		{alert.Alert{ID: "r1", Severity: alert.Warning, Source: alert.SourceRule, Rule: "too_hot", State: alert.StateFiring, Summary: "38"}, "level=WARN"},
	} {
		var buf bytes.Buffer
		l := &Log{Logger: slog.New(slog.NewTextHandler(&buf, nil))}
		if err := l.Notify(context.Background(), tc.a); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(buf.String(), tc.want) {
			t.Errorf("Notify(%s/%s %s %s) logged %q, want %s", tc.a.Source, tc.a.Rule, tc.a.State, tc.a.Severity, buf.String(), tc.want)
		}
	}
}
