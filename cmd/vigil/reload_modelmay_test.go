package main

import (
	"context"
	"io"
	"log/slog"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/vigil-iot/vigil/daemon"
	"github.com/vigil-iot/vigil/heartbeat"
)

// reloadableApp wires an app with the LLM from e's config as `vigil run`
// does, so that its Reload applies to it.
func reloadableApp(t *testing.T, e *env, log *slog.Logger) (*daemon.App, context.Context) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	base, cfg, err := e.load()
	if err != nil {
		t.Fatal(err)
	}
	a, err := e.newApp(ctx, cfg, base, log, parts{thinker: true}, daemon.Options{Store: daemon.StoreWrite})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	return a, ctx
}

// TestReloadModelMayRebuildsTools: heartbeat.model_may is what the model
// may do, so a SIGHUP that takes "notes" away takes the remember tool away
// from the next heartbeat, though no [llm] key changed.
func TestReloadModelMayRebuildsTools(t *testing.T) {
	t.Setenv("VIGIL_TEST_KEY", "sk-test")
	model := newModelScript(t)
	dir := t.TempDir()
	llm := model.llmSection(dir, "Is the air fine?")
	conf := func(may string) string {
		return writeConfig(t, dir, "model_may = "+may+"\n"+llm+overlayRules)
	}
	log := slog.New(slog.DiscardHandler)
	e := &env{globals: globals{config: conf(`["pause", "notes"]`)}, stdout: io.Discard, stderr: io.Discard}
	a, ctx := reloadableApp(t, e, log)
	offered := func() []string {
		t.Helper()
		if _, err := a.Commander().CheckWith(ctx, heartbeat.CheckOptions{}, nil); err != nil {
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
	a.Reload(ctx)
	if tools := offered(); slices.Contains(tools, "remember") {
		t.Errorf("tools after a reload to model_may = [pause]: %v, want no remember", tools)
	}
}

// TestReloadTeachesTheRedactorNewSecrets: a secret that a reload changes
// is redacted from then on, in what the model wrote and in the log, by
// the one Redactor the config resolution feeds (manage.Base.Parse); the old
// one stays redacted.
func TestReloadTeachesTheRedactorNewSecrets(t *testing.T) {
	const oldPW, newPW = "first-mqtt-pass", "second-mqtt-pass"
	model := newModelScript(t)
	model.steps = [][]string{
		{`read_sensor {"name":"` + oldPW + `"}`, `read_sensor {"name":"` + newPW + `"}`},
		{`heartbeat_respond {"outcome":"ok","severity":"info","summary":"fine"}`},
		{`read_sensor {"name":"` + oldPW + `"}`, `read_sensor {"name":"` + newPW + `"}`},
	}
	dir := t.TempDir()
	pw := filepath.Join(dir, "mqtt.pass")
	writeFile(t, filepath.Join(dir, "HEARTBEAT.md"), "- Is the air fine?\n")
	writeFile(t, pw, oldPW+"\n")
	cfgPath := writeConfig(t, dir, `
[llm]
base_url = "`+model.srv.URL+`/v1"
api_key_env = ""
timeout = "5s"

[mqtt]
broker = "tcp://127.0.0.1:1883"
username = "vigil"
password_file = "`+pw+`"
`+overlayRules)
	var logged strings.Builder
	e := &env{globals: globals{config: cfgPath}, stdout: io.Discard, stderr: &logged}
	log := e.logger()
	a, ctx := reloadableApp(t, e, log)
	toolCalls := func() string {
		t.Helper()
		res, err := a.Commander().CheckWith(ctx, heartbeat.CheckOptions{}, nil)
		if err != nil {
			t.Fatal(err)
		}
		return strings.Join(res.Run.ToolCalls, "\n")
	}
	if got := toolCalls(); strings.Contains(got, oldPW) || !strings.Contains(got, newPW) {
		t.Fatalf("tool calls before the reload:\n%s\nwant %s redacted and %s (not a secret yet) shown", got, oldPW, newPW)
	}
	writeFile(t, pw, newPW+"\n")
	a.Reload(ctx)
	if got := toolCalls(); strings.Contains(got, oldPW) || strings.Contains(got, newPW) {
		t.Errorf("tool calls after the reload:\n%s\nwant both passwords redacted", got)
	}
	log.Info("a log line", "value", "pw "+newPW)
	if strings.Contains(logged.String(), newPW) || !strings.Contains(logged.String(), "value=\"pw [redacted]\"") {
		t.Errorf("log:\n%s\nwant the new password redacted", logged.String())
	}
}
