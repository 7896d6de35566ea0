package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"html"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/vigil-iot/vigil/control"
	"github.com/vigil-iot/vigil/internal/mosquittotest"
	"github.com/vigil-iot/vigil/redact"
)

// TestModelEchoingSecretsLeavesNoTrace: a model that echoes every
// configured secret (an LLM key with no known prefix, the Telegram token,
// an MQTT password with a quote and a backslash, the status page's
// password) in its tool calls' names and arguments, in a note and in its
// alert leaves none of them, in any encoding, in `vigil check --json`,
// `vigil check`, the log, `vigil status --json`, `vigil notes`, the
// status page, Telegram or the state file.
func TestModelEchoingSecretsLeavesNoTrace(t *testing.T) {
	t.Parallel()
	const (
		llmKey = "q7Zt9wLmN3xK2pR8vB4c"
		mqttPW = `Mq"tt\pw-7x9!`
		httpPW = "h77p-Pa55word"
		chat   = int64(4711)
	)
	secrets := []string{llmKey, botToken, mqttPW, httpPW}
	all := strings.Join(secrets, " ")
	args := func(v any) string {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	var steps [][]string
	for i := range 8 { // every heartbeat: three tool calls, then the alert
		summary := "leaked " + all
		if i > 0 {
			// Padded so that the key straddles the cut of a summary
			// (500 characters): none of it may survive the cut.
			summary = strings.Repeat("x", 500-len(llmKey)+i) + llmKey
		}
		steps = append(steps, []string{
			"remember " + args(map[string]string{"note": "remember " + all}),
			"read_sensor " + args(map[string]string{"name": llmKey}),
			llmKey + " " + args(map[string]string{"token": botToken, "pw": mqttPW}),
		}, []string{
			"heartbeat_respond " + args(map[string]string{"outcome": "alert", "severity": "warning", "summary": summary}),
		})
	}
	model := newModelScript(t, steps...)
	api := newBotAPI(t)
	dir := t.TempDir()
	pwFile := filepath.Join(dir, "http.pw")
	writeFile(t, pwFile, httpPW+"\n")
	port := mosquittotest.FreePort(t)
	cfg := writeConfig(t, dir, `model_may = ["pause", "notes"]
`+model.llmSection(dir, "Is the air fine?")+fmt.Sprintf(`
[mqtt]
broker = "tcp://127.0.0.1:%d"
username = "vigil"
password_env = "VIGIL_TEST_MQTT"
homeassistant = false

[http]
listen = "127.0.0.1:%d"
username = "admin"
password_file = %q

[manage]
remote = ["status", "check", "notes"]

[[sensor]]
name = "air"
driver = "bme280"
sim = { every = "0s" }
`, mosquittotest.FreePort(t), port, pwFile)+telegramConfig(chat, api.srv.URL))
	env := []string{"VIGIL_TEST_KEY=" + llmKey, "VIGIL_E2E_TG_TOKEN=" + botToken, "VIGIL_TEST_MQTT=" + mqttPW}

	seen := map[string][]byte{} // what a person or a file gets, by where
	run := func(name string, args ...string) string {
		t.Helper()
		out, errOut, code := runIn(t, "", env, args...)
		if code != 0 {
			t.Fatalf("%s: exit %d\n%s%s", name, code, out, errOut)
		}
		seen[name] = []byte(out)
		seen[name+" (log)"] = []byte(errOut)
		return out
	}

	// Without a daemon: check prints the run; the alert waits in the state file.
	out := run("vigil check --json", "-v", "-c", cfg, "check", "--json")
	var cj control.CheckJSON
	if err := json.Unmarshal([]byte(out), &cj); err != nil || cj.Outcome != "alert" || len(cj.ToolCalls) != 4 {
		t.Fatalf("vigil check --json = %+v, %v; want an alert after 4 tool calls\n%s", cj, err, out)
	}
	if !strings.Contains(cj.ToolCalls[1], `read_sensor {"name":"[redacted]"}`) || !strings.Contains(cj.Summary, "leaked [redacted]") {
		t.Errorf("tool calls %q, summary %q: want them shown with [redacted] in place of the secrets", cj.ToolCalls, cj.Summary)
	}
	run("vigil check", "-v", "-c", cfg, "check")
	run("vigil status --json (no daemon)", "-c", cfg, "status", "--json")
	if out := run("vigil notes (no daemon)", "-c", cfg, "notes"); !strings.Contains(out, "remember [redacted]") {
		t.Errorf("vigil notes = %q, want the note with [redacted]", out)
	}

	// The daemon delivers the queued alerts, answers a check over the
	// socket and Telegram, and shows the page.
	d := startChild(t, env, "-v", "-c", cfg, "run")
	d.waitLog(t, regexp.MustCompile(`msg="status page"`), 10*time.Second)
	api.waitSent(chat, "leaked", 15*time.Second)
	run("vigil check (daemon)", "-c", cfg, "check")
	api.addUpdate(botUpdate{ID: 1, Chat: chat, Text: "/check"})
	api.waitSent(chat, "outcome", 15*time.Second)
	for _, path := range []string{"/", "/api/status"} {
		req, _ := http.NewRequest(http.MethodGet, fmt.Sprintf("http://127.0.0.1:%d%s", port, path), nil)
		req.SetBasicAuth("admin", httpPW)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("GET %s: %s\n%s", path, resp.Status, body)
		}
		seen["status page "+path] = body
	}
	run("vigil status --json", "-c", cfg, "status", "--json")
	d.kill()
	seen["daemon log"] = []byte(d.logText())
	var tg bytes.Buffer
	for _, m := range api.sentTo(chat, "") {
		tg.WriteString(m.Text + "\n")
	}
	seen["telegram"] = tg.Bytes()
	db, err := os.ReadFile(filepath.Join(dir, "state", "vigil.db"))
	if err != nil {
		t.Fatal(err)
	}
	seen["vigil.db"] = db

	if !bytes.Contains(seen["telegram"], []byte("leaked [redacted]")) {
		t.Errorf("the alert never reached Telegram with its secrets redacted:\n%s", seen["telegram"])
	}
	if !bytes.Contains(seen["vigil check"], []byte("xxxxxxxxxx")) {
		t.Errorf("vigil check did not show the padded summary:\n%s", seen["vigil check"])
	}
	for _, sec := range secrets {
		for _, form := range secretForms(sec) {
			// A secret's start (redact.MinPrefix characters) is as bad as
			// the whole: a cut must not leave one behind.
			start := string([]rune(form)[:redact.MinPrefix])
			for where, b := range seen {
				if i := bytes.Index(b, []byte(start)); i >= 0 {
					t.Errorf("%s holds the secret %q or its start (as %q): ...%s...", where, sec, start, b[max(0, i-80):min(len(b), i+len(form)+40)])
				}
			}
		}
	}
}

// secretForms is a secret as text may carry it: as is, escaped once and
// twice as a JSON string (a tool call's arguments inside a JSON record),
// and escaped for HTML (the page, Telegram).
func secretForms(s string) []string {
	esc := func(s string) string {
		b, _ := json.Marshal(s)
		return string(b[1 : len(b)-1])
	}
	forms := []string{s}
	for _, f := range []string{esc(s), esc(esc(s)), html.EscapeString(s)} {
		if f != s {
			forms = append(forms, f)
		}
	}
	return forms
}
