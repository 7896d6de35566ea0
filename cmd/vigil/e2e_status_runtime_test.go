package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/vigil-iot/vigil/status"
	"github.com/vigil-iot/vigil/store"
)

// TestStatusShowsRunTimeSettingsAndNotes: with no daemon, `vigil status`
// reads the state file and shows what changed at run time: a `vigil set`
// value with who set it and when, a disabled rule, the checklist set from
// afar and the model's notes (count and the newest one's age), in text and
// in --json.
func TestStatusShowsRunTimeSettingsAndNotes(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cfg := writeConfig(t, dir, "[[rule]]\nname = \"too_hot\"\nwhen = \"board.soc_temperature > 95\"\n")
	statusText := func() string {
		t.Helper()
		out, errOut, code := runVigil(t, "-c", cfg, "status")
		if code != 0 {
			t.Fatalf("status: exit %d: %s", code, errOut)
		}
		return out
	}
	wantLines := func(out string, res ...string) {
		t.Helper()
		for _, re := range res {
			if !regexp.MustCompile(re).MatchString(out) {
				t.Errorf("status lacks a line matching %s:\n%s", re, out)
			}
		}
	}

	// Nothing changed yet: the file's checklist, no notes, no overrides.
	wantLines(statusText(),
		`(?m)^checklist: `+regexp.QuoteMeta(filepath.Join(dir, "HEARTBEAT.md"))+`$`,
		`(?m)^notes:    none$`,
		`(?m)^settings: all from the config file or defaults$`)

	for _, kv := range [][2]string{{"heartbeat.interval", "10m"}, {"rule.too_hot.enabled", "false"}} {
		if out, errOut, code := runVigil(t, "-c", cfg, "set", kv[0], kv[1]); code != 0 {
			t.Fatalf("set %s %s: exit %d: %s %s", kv[0], kv[1], code, out, errOut)
		}
	}
	now := time.Now()
	db, err := store.Open(filepath.Join(dir, "state", "vigil.db"), store.Options{Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []store.Note{
		{Time: now.Add(-5 * time.Hour), Text: "oldest"},
		{Time: now.Add(-3 * time.Hour), Text: "middle"},
		{Time: now.Add(-2*time.Hour - time.Minute), Text: "door <b>open</b>"},
	} {
		if err := db.AddNote(n); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	afar := filepath.Join(dir, "state", "HEARTBEAT.md")
	writeFile(t, afar, "# Checklist\n- Is the door open?\n")

	stamp := `\d{4}-\d\d-\d\d \d\d:\d\d:\d\d \+00:00`
	wantLines(statusText(),
		`(?m)^checklist: set from afar \(`+regexp.QuoteMeta(afar)+`\)$`,
		`(?m)^notes:    3 \(newest 2h ago\)$`,
		`(?m)^settings: \(not from the config file\)$`,
		`(?m)^  heartbeat\.interval    10m    set `+stamp+` by cli$`,
		`(?m)^  rule\.too_hot\.enabled  false  set `+stamp+` by cli$`,
		`(?m)^  too_hot\s+disabled`)

	out, errOut, code := runVigil(t, "-c", cfg, "status", "--json")
	if code != 0 {
		t.Fatalf("status --json: exit %d: %s", code, errOut)
	}
	var v status.View
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Fatalf("status --json: %v\n%s", err, out)
	}
	if len(v.Settings) != 2 || v.Settings[0].Key != "heartbeat.interval" || v.Settings[0].Value != "10m" || !strings.HasPrefix(v.Settings[0].Origin, "set ") {
		t.Errorf("status --json settings = %+v, want heartbeat.interval 10m set ... first", v.Settings)
	}
	if v.Checklist == nil || !v.Checklist.FromAfar || v.Checklist.Path != afar {
		t.Errorf("status --json checklist = %+v, want %s from afar", v.Checklist, afar)
	}
	if len(v.Notes) != 3 || v.Notes[0].Text != "door <b>open</b>" || v.Notes[2].Text != "oldest" {
		t.Errorf("status --json notes = %+v, want 3, newest first", v.Notes)
	}
	if _, err := os.Stat(filepath.Join(dir, "state", "vigil.sock")); err == nil {
		t.Error("an offline status left a socket behind")
	}
}
