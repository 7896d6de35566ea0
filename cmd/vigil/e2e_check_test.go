package main

import (
	"encoding/json"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/vigil-iot/vigil/control"
)

// TestCheckEmptyChecklistAsksNoLLM: a forced check with a checklist of
// headings and comments only asks no LLM, on its own (no daemon) and
// through the daemon's control socket: it is skipped as empty_checklist
// and exits 0. MQTT's cmd/check, Telegram's /check and the page's button
// run the same commands.check → Engine.Check as the socket does.
func TestCheckEmptyChecklistAsksNoLLM(t *testing.T) {
	t.Parallel()
	model := newModelScript(t)
	dir := t.TempDir()
	empty := "# Heartbeat checklist\n\n<!-- write what the model should look at -->\n## Air\n"
	writeFile(t, filepath.Join(dir, "HEARTBEAT.md"), empty)
	cfg := writeConfig(t, dir, `
[llm]
base_url = "`+model.srv.URL+`/v1"
api_key_env = "VIGIL_TEST_KEY"
timeout = "5s"

[[sensor]]
name = "air"
driver = "bme280"
sim = { every = "0s" }
`)
	env := []string{"VIGIL_TEST_KEY=sk-test"}
	check := func(how string) {
		t.Helper()
		out, errOut, code := runIn(t, "", env, "-c", cfg, "check", "--json")
		var cj control.CheckJSON
		if err := json.Unmarshal([]byte(out), &cj); err != nil || code != 0 {
			t.Fatalf("%s: vigil check --json: exit %d, %v\n%s%s", how, code, err, out, errOut)
		}
		if cj.Outcome != "skipped" || cj.Reason != "empty_checklist" {
			t.Errorf("%s: vigil check --json = %s/%s, want skipped/empty_checklist", how, cj.Outcome, cj.Reason)
		}
		if n := len(model.requests()); n != 0 {
			t.Fatalf("%s: the LLM got %d requests for an empty checklist, want 0", how, n)
		}
	}
	check("no daemon")

	d := startDaemon(t, cfg, env...)
	d.waitLog(t, regexp.MustCompile(`msg="vigil starting"`), 10*time.Second)
	check("through the daemon")
	d.waitLog(t, regexp.MustCompile(`msg="command accepted" command=check`), 5*time.Second) // it was the daemon that ran it
}
