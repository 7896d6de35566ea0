package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vigil-iot/vigil/alert"
	"github.com/vigil-iot/vigil/store"
)

// TestOutsideTextEscaped (issue 28, finding 11): what came from outside
// (the model's summary and notes, a provider's error, the checklist set
// from afar) reaches the terminal with its control characters escaped, in
// vigil status (and --json), notes and checklist show; the checklist keeps its tabs and
// newlines. Run in this process, with no daemon: the state file is read.
func TestOutsideTextEscaped(t *testing.T) {
	dir := t.TempDir()
	cfg := writeConfig(t, dir, "\n[telegram]\nquiet_hours = \"00:00-23:59\"\n")
	state := filepath.Join(dir, "state")
	if err := os.MkdirAll(state, 0o700); err != nil {
		t.Fatal(err)
	}
	db, err := store.Open(filepath.Join(state, "vigil.db"), store.Options{Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC()
	held := alert.Alert{ID: "e2e-1", Device: "e2e", Time: now, Severity: alert.Warning, Source: alert.SourceLLM, State: alert.StateFiring, Summary: "door \x1b[2J\u009b open"}
	if err := db.HoldTelegram(held, now.Add(time.Hour), "quiet hours end"); err != nil {
		t.Fatal(err)
	}
	if err := db.AddNote(store.Note{Time: now, Text: "remember \x1b]0;owned\x07 this"}); err != nil {
		t.Fatal(err)
	}
	if err := db.Update(func(tx *store.Tx) error {
		_, err := tx.AppendRun(store.Run{Start: now, Outcome: "failed", Error: "provider said \x1b[31mno\x00"})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	db.Close()
	checklist := "# from afar\n- look\x1b[2J\x07\x00 at the door\n\t- and the \u009b1m window\n"
	if err := os.WriteFile(filepath.Join(state, "HEARTBEAT.md"), []byte(checklist), 0o600); err != nil {
		t.Fatal(err)
	}

	for _, c := range []struct {
		args  []string
		wants []string
	}{
		{[]string{"status"}, []string{`door \x1b[2J\u009b open`, `provider said \x1b[31mno\x00`}},
		{[]string{"status", "--json"}, []string{`door \u001b[2J\u009b open`}},
		{[]string{"notes"}, []string{`remember \x1b]0;owned\x07 this`}},
		{[]string{"checklist", "show"}, []string{"- look\\x1b[2J\\x07\\x00 at the door\n\t- and the \\u009b1m window\n"}},
	} {
		var out, errOut bytes.Buffer
		if err := run(context.Background(), append([]string{"-c", cfg}, c.args...), &out, &errOut); err != nil {
			t.Fatalf("vigil %s: %v\n%s", strings.Join(c.args, " "), err, errOut.String())
		}
		for _, r := range out.String() {
			if r != '\n' && r != '\t' && (r < 0x20 || r == 0x7f || r >= 0x80 && r < 0xa0) {
				t.Errorf("vigil %s prints %U raw:\n%q", strings.Join(c.args, " "), r, out.String())
				break
			}
		}
		for _, want := range c.wants {
			if !strings.Contains(out.String(), want) {
				t.Errorf("vigil %s lacks %q:\n%s", strings.Join(c.args, " "), want, out.String())
			}
		}
	}
}

// TestErrorEscaped: an error is printed with its control characters
// escaped, whatever it carries: here a config path with an escape
// sequence, as a far side's error text (a broker's, a provider's, the Bot
// API's, which vigil init passes on) could carry one too.
func TestErrorEscaped(t *testing.T) {
	bad := filepath.Join(t.TempDir(), "x\x1b]0;owned\x07", "config.toml")
	_, errOut, code := runVigil(t, "-c", bad, "config", "check")
	if code == 0 {
		t.Fatalf("config check of a missing file: exit 0")
	}
	if strings.ContainsAny(errOut, "\x1b\x07") {
		t.Fatalf("a control character reached the terminal: %q", errOut)
	}
	if !strings.Contains(errOut, `x\x1b]0;owned\x07`) {
		t.Fatalf("stderr %q: want the path with its control characters escaped", errOut)
	}
}
