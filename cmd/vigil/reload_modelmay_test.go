package main

import (
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/vigil-iot/vigil/heartbeat"
)

// TestReloadModelMayRebuildsTools: heartbeat.model_may is what the model
// may do, so a SIGHUP that takes "notes" away takes the remember tool away
// from the next heartbeat, though no [llm] key changed.
func TestReloadModelMayRebuildsTools(t *testing.T) {
	t.Setenv("VIGIL_TEST_KEY", "sk-test")
	model := newModelScript(t)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "HEARTBEAT.md"), []byte("- Is the air fine?\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	conf := func(may string) string {
		return writeConfig(t, dir, "model_may = "+may+`

[llm]
base_url = "`+model.srv.URL+`/v1"
api_key_env = "VIGIL_TEST_KEY"
timeout = "5s"
`+overlayRules)
	}
	log := slog.New(slog.DiscardHandler)
	e := &env{globals: globals{config: conf(`["pause", "notes"]`)}, stdout: io.Discard, stderr: io.Discard}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cfg, base, err := e.loadOverlaid(ctx, log)
	if err != nil {
		t.Fatal(err)
	}
	a, err := e.build(ctx, cfg, log, buildOptions{thinker: true})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	a.base, a.runCtx = base, ctx
	offered := func() []string {
		t.Helper()
		if _, err := a.cmds.check(ctx, heartbeat.CheckOptions{}, nil); err != nil {
			t.Fatal(err)
		}
		reqs := model.requests()
		if len(reqs) == 0 {
			t.Fatal("the heartbeat sent the model nothing")
		}
		return reqs[len(reqs)-1].Tools
	}
	if tools := offered(); !slices.Contains(tools, "remember") {
		t.Fatalf("tools with model_may = [pause, notes]: %v, want remember", tools)
	}
	conf(`["pause"]`)
	e.reload(ctx, a, log)
	if tools := offered(); slices.Contains(tools, "remember") {
		t.Errorf("tools after a reload to model_may = [pause]: %v, want no remember", tools)
	}
}
