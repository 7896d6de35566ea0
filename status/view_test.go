package status

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/vigil-iot/vigil/heartbeat"
	"github.com/vigil-iot/vigil/manage"
)

type fakeSource struct {
	st    heartbeat.Status
	since time.Time
}

func (f *fakeSource) Status(context.Context) (heartbeat.Status, error) { return f.st, nil }

func (f *fakeSource) History(_ context.Context, since time.Time) ([]heartbeat.Series, error) {
	f.since = since
	return []heartbeat.Series{{Key: "air.temperature"}}, nil
}

// TestGather: the view is the source's status with its history since the
// time asked for, and the run-time view when there is one. In JSON the
// run-time fields sit beside the status's, and a view without one says
// nothing of settings or notes rather than that there are none.
func TestGather(t *testing.T) {
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	src := &fakeSource{st: heartbeat.Status{Device: "d1", Now: now}}
	v, err := Gather(context.Background(), src, nil, now.Add(-Window))
	if err != nil {
		t.Fatal(err)
	}
	if v.Device != "d1" || len(v.Series) != 1 || !src.since.Equal(now.Add(-time.Hour)) || v.Runtime != nil {
		t.Errorf("Gather without a runtime = %+v (history since %v), want d1, one series since 11:00, no runtime", v, src.since)
	}
	b, _ := json.Marshal(v)
	if strings.Contains(string(b), `"settings"`) || strings.Contains(string(b), `"notes"`) {
		t.Errorf("a view without a runtime in JSON = %s, want no settings and no notes", b)
	}
	rt := manage.Runtime{Settings: []manage.Setting{{Key: "heartbeat.interval", Value: "10m", Origin: "env"}}}
	v, err = Gather(context.Background(), src, func(context.Context) (manage.Runtime, error) { return rt, nil }, now.Add(-Window))
	if err != nil {
		t.Fatal(err)
	}
	b, _ = json.Marshal(v)
	var back View
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"device":"d1"`) || !strings.Contains(string(b), `"settings":[{"key":"heartbeat.interval"`) ||
		back.Runtime == nil || len(back.Settings) != 1 || len(back.Series) != 1 {
		t.Errorf("a view with a runtime in JSON = %s, read back as %+v; want device and settings side by side", b, back)
	}
}

// TestGatherRulesOnlyHasNoNextRun: in rules-only mode no heartbeat asks
// anything, so the view shows no next run (text, page and JSON read it)
// and says why; in LLM mode the next run stays.
func TestGatherRulesOnlyHasNoNextRun(t *testing.T) {
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	for _, tt := range []struct {
		mode    string
		nextRun bool
	}{{"rules-only", false}, {"llm", true}} {
		src := &fakeSource{st: heartbeat.Status{Device: "d1", Mode: tt.mode, Now: now, NextRun: now.Add(time.Minute)}}
		v, err := Gather(context.Background(), src, nil, now.Add(-Window))
		if err != nil {
			t.Fatal(err)
		}
		var b strings.Builder
		WriteStatus(&b, v, true, true)
		js, _ := json.Marshal(v)
		if got := !v.NextRun.IsZero(); got != tt.nextRun {
			t.Errorf("%s: Gather next run %v, want one: %v", tt.mode, v.NextRun, tt.nextRun)
		}
		if tt.nextRun {
			continue
		}
		if !strings.Contains(b.String(), "next run: heartbeats disabled (rules-only: no LLM to ask)\n") ||
			strings.Contains(string(js), `"next_run"`) || !strings.Contains(string(js), `"heartbeats_off":"rules-only: no LLM to ask"`) {
			t.Errorf("%s: status text\n%s\nJSON %s\nwant no next run, and why", tt.mode, b.String(), js)
		}
	}
}
