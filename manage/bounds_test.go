package manage

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vigil-iot/vigil/alert"
	"github.com/vigil-iot/vigil/config"
	"github.com/vigil-iot/vigil/store"
)

func parsed(t *testing.T, extra string) *config.Config {
	t.Helper()
	cfg, err := testBase(t, testConfig+extra).Parse(nil)
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// TestCheckModelSet: the model may set only heartbeat.interval, only when
// model_may lists "interval", and only within interval_min..max.
func TestCheckModelSet(t *testing.T) {
	off := parsed(t, "")
	if err := CheckModelSet(off, "heartbeat.interval", "20m"); !errors.Is(err, alert.ErrNotAllowed) {
		t.Errorf("with model_may = [pause]: %v, want alert.ErrNotAllowed", err)
	}
	on := parsed(t, "")
	on.Heartbeat.ModelMay = []string{"pause", "interval"}
	for _, tt := range []struct {
		key, value string
		ok         bool
	}{
		{"heartbeat.interval", "20m", true},
		{"heartbeat.interval", "5m", false},
		{"heartbeat.interval", "7h", false},
		{"llm.model", "gpt-4o", false},
	} {
		err := CheckModelSet(on, tt.key, tt.value)
		if (err == nil) != tt.ok || (err != nil && !errors.Is(err, alert.ErrNotAllowed)) {
			t.Errorf("CheckModelSet(%s, %s) = %v, want ok %v", tt.key, tt.value, err, tt.ok)
		}
	}
}

// TestCheckRemoteSet: a remote channel may lower the daily LLM budget and
// set at most the larger of the configured value and the value in force;
// a value that is no integer is the validator's to refuse.
func TestCheckRemoteSet(t *testing.T) {
	cfg := parsed(t, "") // max_llm_calls_per_day defaults to 96
	const key = "heartbeat.max_llm_calls_per_day"
	for _, tt := range []struct {
		value, was, wantErr string
	}{
		{"10", "96", ""},
		{"96", "10", ""},
		{"97", "96", "at most 96, the configured value (got 97)"},
		{"0x7fffffff", "96", "at most 96, the configured value (got 2147483647)"},
		{"400", "500", ""},
		{"501", "500", "at most 500, the value in force (got 501)"},
		{"many", "96", ""},
	} {
		err := CheckRemoteSet(cfg, key, tt.value, tt.was)
		if tt.wantErr == "" {
			if err != nil {
				t.Errorf("CheckRemoteSet(%s, was %s) = %v, want ok", tt.value, tt.was, err)
			}
			continue
		}
		if !errors.Is(err, ErrRemoteRaise) || errors.Is(err, alert.ErrNotAllowed) || !strings.Contains(err.Error(), tt.wantErr) {
			t.Errorf("CheckRemoteSet(%s, was %s) = %v, want ErrRemoteRaise with %q", tt.value, tt.was, err, tt.wantErr)
		}
	}
	if err := CheckRemoteSet(cfg, "heartbeat.interval", "1000h", "30m"); err != nil {
		t.Errorf("another key: %v", err)
	}
}

// TestGate: [manage] remote lists what a remote channel may do.
func TestGate(t *testing.T) {
	m := config.Manage{Remote: []string{"status", "set"}}
	if err := Gate(m, "set", "mqtt"); err != nil {
		t.Errorf("Gate(set) = %v", err)
	}
	err := Gate(m, "unset", "telegram")
	if !errors.Is(err, alert.ErrNotAllowed) || err.Error() != `not allowed: unset from telegram: [manage] remote does not list "unset"` {
		t.Errorf("Gate(unset) = %v", err)
	}
}

// TestChecklistFromAfar: a checklist set from afar is written in the
// state directory (mode 0644), is in force while it exists, is shown with
// where it came from, and reset goes back to the config's; a symbolic
// link planted there is refused, never followed.
func TestChecklistFromAfar(t *testing.T) {
	cfg := parsed(t, "")
	if err := os.WriteFile(cfg.Heartbeat.Checklist, []byte("- the file's item\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	read := ChecklistFunc(cfg)
	out, err := SetChecklist(cfg, "# afar\n- the remote item\n")
	if err != nil || !strings.Contains(out, "is in force from the next heartbeat") {
		t.Fatalf("SetChecklist = %q, %v", out, err)
	}
	if fi, err := os.Stat(OverridePath(cfg)); err != nil || fi.Mode().Perm() != 0o644 {
		t.Fatalf("stat %s = %v, %v; want mode 0644", OverridePath(cfg), fi, err)
	}
	if txt, _, err := read(); err != nil || !strings.Contains(txt, "the remote item") {
		t.Errorf("checklist in force = %q, %v; want the one set from afar", txt, err)
	}
	if out, err := ShowChecklist(cfg); err != nil || !strings.Contains(out, "set from afar") || !strings.Contains(out, "the remote item") {
		t.Errorf("ShowChecklist = %q, %v", out, err)
	}
	if out, err := SetChecklist(cfg, "# only a heading\n"); err != nil || !strings.Contains(out, "will not call the LLM") {
		t.Errorf("SetChecklist of a heading only = %q, %v", out, err)
	}
	if out, removed, err := ResetChecklist(cfg); err != nil || !removed || !strings.Contains(out, cfg.Heartbeat.Checklist) {
		t.Errorf("ResetChecklist = %q, %v, %v", out, removed, err)
	}
	if _, removed, err := ResetChecklist(cfg); err != nil || removed {
		t.Errorf("a second ResetChecklist: removed %v, %v", removed, err)
	}
	secret := filepath.Join(t.TempDir(), "secret.md")
	if err := os.WriteFile(secret, []byte("- SECRET-LINE\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(secret, OverridePath(cfg)); err != nil {
		t.Fatal(err)
	}
	if txt, _, err := read(); err == nil || strings.Contains(txt, "SECRET-LINE") || !strings.Contains(err.Error(), "symbolic link") {
		t.Errorf("checklist through a link = %q, %v; want the link refused", txt, err)
	}
	if out, err := ShowChecklist(cfg); err == nil || strings.Contains(out, "SECRET-LINE") {
		t.Errorf("ShowChecklist through a link = %q, %v; want the link refused", out, err)
	}
}

// TestRuntimeView: status and the page see the settings not from the
// file, the checklist in force and the notes, newest first; a remote
// viewer without get or notes sees neither, and is told so.
func TestRuntimeView(t *testing.T) {
	b := testBase(t, testConfig)
	cfg, err := b.Parse([]store.Setting{setting("heartbeat.interval", "20m", "socket")})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(cfg.Device.StateDir, 0o700); err != nil {
		t.Fatal(err)
	}
	db, err := store.Open(filepath.Join(cfg.Device.StateDir, "vigil.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	t0 := time.Date(2026, 3, 14, 12, 0, 0, 0, time.UTC)
	for i, text := range []string{"older", "newer"} {
		if err := db.AddNote(store.Note{Time: t0.Add(time.Duration(i) * time.Hour), Text: text}); err != nil {
			t.Fatal(err)
		}
	}
	rt, err := RuntimeView(cfg, db)
	if err != nil {
		t.Fatal(err)
	}
	if len(rt.Settings) != 1 || rt.Settings[0].Key != "heartbeat.interval" || rt.Settings[0].Value != "20m" || !strings.Contains(rt.Settings[0].Origin, "by socket") {
		t.Errorf("settings = %+v", rt.Settings)
	}
	if rt.Checklist == nil || rt.Checklist.FromAfar || rt.Checklist.Path != cfg.Heartbeat.Checklist {
		t.Errorf("checklist = %+v", rt.Checklist)
	}
	if len(rt.Notes) != 2 || rt.Notes[0].Text != "newer" {
		t.Errorf("notes = %+v, want newest first", rt.Notes)
	}
	remote := ForRemote(rt, config.Manage{Remote: []string{"status"}})
	if remote.Settings != nil || remote.Notes != nil || !remote.Hides("get") || !remote.Hides("notes") {
		t.Errorf("ForRemote without get and notes = %+v", remote)
	}
	if all := ForRemote(rt, config.Manage{Remote: []string{"status", "get", "notes"}}); len(all.Settings) != 1 || len(all.Notes) != 2 || len(all.Withheld) != 0 {
		t.Errorf("ForRemote with get and notes = %+v", all)
	}
}
