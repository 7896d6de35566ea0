package main

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// CLI behaviour a person at a shell sees: help, flag placement, commands
// that need no config, and exit codes. The real binary runs every case.

// runIn runs the binary in dir ("" for this one) with env on top of this
// process's, without an LLM key, $VIGIL_CONFIG or a notify socket, and
// returns its stdout, stderr and exit code.
func runIn(t *testing.T, dir string, env []string, args ...string) (string, string, int) {
	t.Helper()
	return runWithin(t, dir, 5*time.Minute, env, args...)
}

func TestHelpExitsZero(t *testing.T) {
	dir := t.TempDir()
	for _, args := range [][]string{
		{"--help"}, {"-h"}, {"help"}, {"-c", "x.toml", "--help"},
	} {
		out, errOut, code := runIn(t, dir, nil, args...)
		if code != 0 || !strings.Contains(out, "usage: vigil [-c CONFIG] COMMAND") {
			t.Errorf("vigil %v: exit %d, stdout:\n%s\nstderr:\n%s", args, code, out, errOut)
		}
	}
	// The command table's descriptions start in one column (on the usage's
	// line, or on the next one when the usage is too long for its column),
	// and every line fits an 80-column terminal.
	out, _, _ := runIn(t, dir, nil, "help")
	lines := strings.Split(out, "\n")
	col := -1
	for i, line := range lines {
		if n := len([]rune(line)); n > 80 {
			t.Errorf("help line %d is %d columns wide, want at most 80: %q", i+1, n, line)
		}
		for _, d := range commandDocs {
			usage := "  " + strings.TrimSpace(d.name+" "+d.args)
			if line != usage && !strings.HasPrefix(line, usage+" ") {
				continue
			}
			first := strings.Fields(d.summary)[0]
			c := strings.Index(line[len(usage):], " "+first)
			if c >= 0 {
				c = len([]rune(line[:len(usage)+c+1]))
			} else if i+1 < len(lines) {
				c = len([]rune(lines[i+1])) - len([]rune(strings.TrimLeft(lines[i+1], " ")))
			}
			if col == -1 {
				col = c
			} else if c != col {
				t.Errorf("usage column of %q at %d, want %d:\n%s", d.name, c, col, out)
			}
		}
	}
	if col == -1 {
		t.Fatalf("no command rows in the usage:\n%s", out)
	}
}

func TestPerCommandHelp(t *testing.T) {
	dir := t.TempDir()
	for _, d := range commandDocs {
		words := strings.Fields(d.name)
		for _, args := range [][]string{
			append([]string{"help"}, words...),
			append(append([]string{}, words...), "--help"),
		} {
			out, errOut, code := runIn(t, dir, nil, args...)
			want := "usage: vigil " + strings.TrimSpace(d.name+" "+d.args)
			if code != 0 || !strings.HasPrefix(out, want) || !strings.Contains(out, "example:\n  "+d.example) {
				t.Errorf("vigil %v: exit %d, want %q and the example; stdout:\n%s\nstderr:\n%s", args, code, want, out, errOut)
			}
			// It fits an 80-column terminal, but for the usage line and
			// the example, which are the command as typed.
			for _, line := range strings.Split(out, "\n") {
				if n := len([]rune(line)); n > 80 && !strings.HasPrefix(line, "usage: ") && line != "  "+d.example {
					t.Errorf("vigil %v: a line %d columns wide, want at most 80: %q", args, n, line)
				}
			}
		}
	}
	// Flags are listed with their own help text.
	out, _, _ := runIn(t, dir, nil, "help", "check")
	for _, want := range []string{"--dry-run", "--json", "-c, --config PATH"} {
		if !strings.Contains(out, want) {
			t.Errorf("vigil help check does not list %s:\n%s", want, out)
		}
	}
	if _, errOut, code := runIn(t, dir, nil, "help", "frobnicate"); code != 2 || !strings.Contains(errOut, `unknown command "frobnicate"`) {
		t.Errorf("vigil help frobnicate: exit %d, stderr %q", code, errOut)
	}
}

// TestGlobalFlagsAnywhere puts -c before the command, after it, and after
// the command's own flags and arguments, for every command that reads the
// config.
func TestGlobalFlagsAnywhere(t *testing.T) {
	dir := t.TempDir()
	cfg := writeConfig(t, dir, "")
	other := t.TempDir() // run from elsewhere: only -c can find the config
	for _, args := range [][]string{
		{"-c", cfg, "sensors", "--json"},
		{"sensors", "--json", "-c", cfg},
		{"sensors", "-c", cfg, "--json"},
		{"--config", cfg, "status"},
		{"status", "--json", "--config", cfg},
		{"-c", cfg, "config", "check"},
		{"config", "check", "-c", cfg},
		{"config", "-c", cfg, "check"},
		{"pause", "5", "-c", cfg},
		{"pause", "-c", cfg, "5"},
		{"resume", "-c", cfg},
		{"check", "--dry-run", "-c", cfg},
		{"-v", "check", "--json", "--dry-run", "-c", cfg},
		{"scan", "--bus", "1", "-c", cfg}, // the sim board has a bus "1"? either way not a flag error
		{"version", "-c", cfg},
	} {
		out, errOut, code := runIn(t, other, nil, args...)
		if strings.Contains(errOut, "flag provided but not defined") || strings.Contains(errOut, "/etc/vigil/config.toml") || code == 2 || code == 78 {
			t.Errorf("vigil %v: exit %d\nstdout:\n%s\nstderr:\n%s", args, code, out, errOut)
		}
	}
}

func TestNegativePauseSaysWhy(t *testing.T) {
	dir := t.TempDir()
	cfg := writeConfig(t, dir, "")
	_, errOut, code := runIn(t, dir, nil, "-c", cfg, "pause", "-3")
	if code != 2 || !strings.Contains(errOut, `minutes must be 1..1440`) || !strings.Contains(errOut, `got -3`) {
		t.Errorf("pause -3: exit %d, stderr %q", code, errOut)
	}
}

// TestCommandsWithoutConfig runs, in a directory with no config and no
// /etc/vigil/config.toml in reach (VIGIL_CONFIG points nowhere only when
// set; here the default path is used), the commands that need none.
func TestCommandsWithoutConfig(t *testing.T) {
	if _, err := os.Stat(defaultConfig); err == nil {
		t.Skipf("%s exists on this machine", defaultConfig)
	}
	dir := t.TempDir()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"version"}, "vigil "},
		{[]string{"version", "--boards"}, "BOARD"},
		{[]string{"sensors", "--drivers"}, "bme280"},
		{[]string{"help", "scan"}, "usage: vigil scan"},
		{[]string{"help", "fleet"}, "usage: vigil fleet --broker URL"},
	} {
		out, errOut, code := runIn(t, dir, nil, tc.args...)
		if code != 0 || !strings.Contains(out, tc.want) {
			t.Errorf("vigil %v without a config: exit %d, stdout:\n%s\nstderr:\n%s", tc.args, code, out, errOut)
		}
	}
	// scan without a config uses the detected board: here no I²C bus at
	// all (a runtime failure, exit 1), never a config error.
	if _, errOut, code := runIn(t, dir, nil, "scan"); code == 78 || strings.Contains(errOut, "open config") {
		t.Errorf("vigil scan without a config: exit %d, stderr %q", code, errOut)
	}
	// A config named explicitly must exist.
	if _, errOut, code := runIn(t, dir, nil, "-c", filepath.Join(dir, "missing.toml"), "scan"); code != 78 {
		t.Errorf("vigil -c missing.toml scan: exit %d, want 78; stderr %q", code, errOut)
	}
	// The one-shot commands do not announce the generic board at INFO.
	if _, errOut, _ := runIn(t, dir, nil, "scan"); strings.Contains(errOut, "not a known single-board computer") {
		t.Errorf("vigil scan logs the board at INFO: %q", errOut)
	}
}

// TestFailedCheckExitsOne: an LLM that answers 500 makes the heartbeat
// fail; check exits 1 and prints the error once.
func TestFailedCheckExitsOne(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, `{"error":{"message":"model not found: no-such-model"}}`, http.StatusNotFound)
	}))
	defer srv.Close()
	dir := t.TempDir()
	cfg := writeConfig(t, dir, "\n[llm]\nbase_url = \""+srv.URL+"/v1\"\napi_key_env = \"TEST_LLM_KEY\"\nmodel = \"no-such-model\"\n")
	if err := os.WriteFile(filepath.Join(dir, "HEARTBEAT.md"), []byte("- is the greenhouse warm enough?\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"check", "--dry-run"}, {"check", "--dry-run", "--json"}} {
		out, errOut, code := runIn(t, dir, []string{"TEST_LLM_KEY=k"}, append([]string{"-c", cfg}, args...)...)
		if code != 1 {
			t.Errorf("vigil %v with a failing LLM: exit %d, want 1\nstdout:\n%s\nstderr:\n%s", args, code, out, errOut)
		}
		if n := strings.Count(out+errOut, "http 404"); n != 1 {
			t.Errorf("vigil %v: the error appears %d times, want once\nstdout:\n%s\nstderr:\n%s", args, n, out, errOut)
		}
	}
}

// TestManPageUpToDate: docs/vigil.1 is what `vigil help --man` writes, so
// the man page and the help never disagree. UPDATE_GOLDEN=1 rewrites it.
func TestManPageUpToDate(t *testing.T) {
	var out bytes.Buffer
	if err := run(context.Background(), []string{"help", "--man"}, &out, &out); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join("..", "..", "docs", "vigil.1")
	if os.Getenv("UPDATE_GOLDEN") != "" {
		if err := os.WriteFile(path, out.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	have, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (make man writes it)", err)
	}
	if !bytes.Equal(have, out.Bytes()) {
		t.Errorf("docs/vigil.1 is out of date with the help text: run `make man` (or UPDATE_GOLDEN=1 go test ./cmd/vigil -run TestManPageUpToDate)")
	}
	for _, d := range commandDocs {
		if !strings.Contains(out.String(), ".B vigil "+strings.ReplaceAll(d.name, "-", `\-`)) {
			t.Errorf("man page has no entry for %s", d.name)
		}
	}
	if !strings.Contains(out.String(), `\-\-dry\-run`) {
		t.Error("man page does not list check's --dry-run flag")
	}
}

// TestConfigCheckRefusesWhatRunRefuses: each config that `run` refuses,
// `config check` refuses too, with the same file:line message and exit 78.
func TestConfigCheckRefusesWhatRunRefuses(t *testing.T) {
	for _, tc := range []struct {
		name, extra, want string
	}{
		{"unknown board", "", `config.toml:4: device.board: unknown board "rpi9"`},
		{"unreadable CA file", "\n[mqtt]\nbroker = \"ssl://127.0.0.1:8883\"\nca_file = \"/nonexistent/ca.pem\"\n", `config.toml:15: mqtt.ca_file: open /nonexistent/ca.pem`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			cfg := writeConfig(t, dir, tc.extra)
			if tc.name == "unknown board" {
				b, _ := os.ReadFile(cfg)
				if err := os.WriteFile(cfg, bytes.Replace(b, []byte(`board = "sim"`), []byte(`board = "rpi9"`), 1), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			for _, args := range [][]string{{"config", "check"}, {"run"}} {
				_, errOut, code := runIn(t, dir, nil, append([]string{"-c", cfg}, args...)...)
				if code != 78 || !strings.Contains(errOut, tc.want) {
					t.Errorf("vigil %v: exit %d, want 78 and %q; stderr:\n%s", args, code, tc.want, errOut)
				}
			}
		})
	}
}

// VIGIL_<SECTION>_<KEY> sets a key over the file, is validated like the
// file (config check and run refuse it alike, naming the variable), and
// config check says where the value came from.
func TestEnvOverrideInConfigCheck(t *testing.T) {
	dir := t.TempDir()
	cfg := writeConfig(t, dir, "")
	out, errOut, code := runIn(t, dir, []string{"VIGIL_HEARTBEAT_INTERVAL=10m"}, "-c", cfg, "config", "check")
	if code != 0 {
		t.Fatalf("config check: exit %d\n%s", code, errOut)
	}
	for _, want := range []string{"# heartbeat.interval = 10m (env)\n", "interval = \"10m\"\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("config check output lacks %q:\n%s", want, out)
		}
	}
	out, _, _ = runIn(t, dir, nil, "-c", cfg, "config", "check")
	if strings.Contains(out, "(env)") || !strings.Contains(out, "interval = \"1m\"\n") {
		t.Errorf("without the variable config check should show the file's 1m and no env origin:\n%s", out)
	}
	want := `$VIGIL_HEARTBEAT_INTERVAL: heartbeat.interval: must be at least 1m (got "10s")`
	for _, args := range [][]string{{"config", "check"}, {"run"}} {
		_, errOut, code := runIn(t, dir, []string{"VIGIL_HEARTBEAT_INTERVAL=10s"}, append([]string{"-c", cfg}, args...)...)
		if code != 78 || !strings.Contains(errOut, want) {
			t.Errorf("vigil %v with VIGIL_HEARTBEAT_INTERVAL=10s: exit %d, want 78 and %q; stderr:\n%s", args, code, want, errOut)
		}
	}
}

// TestSilentConfigurationRefused: what vigil used to take without a word
// (issue 20) now stops `config check` and `run` alike with exit 78 and a
// message naming where the mistake is: a misspelt VIGIL_ variable, a path
// starting with ~ (which made a directory named ~ next to the config), a
// deadband that is not a table. A secret's variable named by token_env is
// no mistake.
func TestSilentConfigurationRefused(t *testing.T) {
	for _, tc := range []struct {
		name        string
		extra, edit string // appended to the config; the checklist line instead
		env         []string
		want        string
	}{
		{"misspelt variable", "", "", []string{"VIGIL_HEARTBEAT_INTERVALL=10m"},
			`$VIGIL_HEARTBEAT_INTERVALL: heartbeat.intervall: unknown key (did you mean VIGIL_HEARTBEAT_INTERVAL?)`},
		{"checklist under ~", "", `checklist = "~/HEARTBEAT.md"`, nil,
			`config.toml:11: heartbeat.checklist: must be an absolute path: ~ is not expanded (got "~/HEARTBEAT.md")`},
		{"state_dir under ~ from the environment", "", "", []string{"VIGIL_DEVICE_STATE_DIR=~/state"},
			`$VIGIL_DEVICE_STATE_DIR: device.state_dir: must be an absolute path: ~ is not expanded (got "~/state")`},
		{"deadband not a table", "\n[[sensor]]\nname = \"air\"\ndriver = \"bme280\"\ndeadband = \"x\"\n", "", nil,
			`config.toml:16: sensor.air.deadband: must be a table (got a string)`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			writeConfig(t, dir, tc.extra)
			if tc.edit != "" {
				editConfig(t, filepath.Join(dir, "config.toml"), `checklist = "HEARTBEAT.md"`, tc.edit)
			}
			for _, args := range [][]string{{"config", "check"}, {"run"}} {
				// The config named relative to the working directory, as
				// a person at a shell names it.
				_, errOut, code := runWithin(t, dir, 10*time.Second, tc.env, append([]string{"-c", "config.toml"}, args...)...)
				if code != 78 || !strings.Contains(errOut, tc.want) {
					t.Errorf("vigil %v: exit %d, want 78 and %q; stderr:\n%s", args, code, tc.want, errOut)
				}
			}
			if _, err := os.Stat(filepath.Join(dir, "~")); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("a directory named ~ was created in %s (stat: %v)", dir, err)
			}
		})
	}
	t.Run("a secret named by token_env", func(t *testing.T) {
		dir := t.TempDir()
		cfg := writeConfig(t, dir, "\n[telegram]\ntoken_env = \"VIGIL_TELEGRAM_TOKEN\"\nchat_id = 1\n")
		if _, errOut, code := runIn(t, dir, []string{"VIGIL_TELEGRAM_TOKEN=1:abc"}, "-c", cfg, "config", "check"); code != 0 {
			t.Errorf("config check with $VIGIL_TELEGRAM_TOKEN named by token_env: exit %d, want 0; stderr:\n%s", code, errOut)
		}
	})
}

// runWithin is runIn that kills the binary after timeout (exit -1), for a
// command that should stop at once but, broken, would run on.
func runWithin(t *testing.T, dir string, timeout time.Duration, env []string, args ...string) (string, string, int) {
	t.Helper()
	return runProgram(t, dir, timeout, env, vigilBin, args...)
}

// runProgram is runWithin of prog: the binary, or a program that runs it
// (strace).
func runProgram(t *testing.T, dir string, timeout time.Duration, env []string, prog string, args ...string) (string, string, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, prog, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "OPENAI_API_KEY=", "VIGIL_CONFIG=", "NOTIFY_SOCKET=")
	cmd.Env = append(cmd.Env, env...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return out.String(), errb.String(), code
}

// TestStatusWithoutDaemonReads: `vigil status` with no daemon says so in
// words, names the mode, and says heartbeats are off and why instead of
// dropping the next-run line; --json keeps the mode a mode.
func TestStatusWithoutDaemonReads(t *testing.T) {
	dir := t.TempDir()
	cfg := editConfig(t, writeConfig(t, dir, ""), `interval = "1m"`, `interval = "0"`)
	runOK(t, dir, []string{"-c", cfg, "status"},
		"device:   e2e (daemon not running; rules-only mode)\n", "next run: heartbeats disabled (heartbeat.interval = \"0\")\n")
	runOK(t, dir, []string{"-c", cfg, "status", "--json"},
		`"mode": "rules-only"`, `"daemon_running": false`, `"heartbeats_off": "heartbeat.interval = \"0\""`)
}

// TestConfigCheckShowsTheSchedule: with a schedule in force, config check
// prints it and no interval, which does not apply.
func TestConfigCheckShowsTheSchedule(t *testing.T) {
	dir := t.TempDir()
	cfg := editConfig(t, writeConfig(t, dir, ""), `interval = "1m"`, `schedule = ["07:30", "19:00"]`)
	if out := runOK(t, dir, []string{"-c", cfg, "config", "check"}, "\nschedule = [\"07:30\", \"19:00\"]\n"); strings.Contains(out, "\ninterval = ") {
		t.Errorf("config check with a schedule prints an interval:\n%s", out)
	}
}

// editConfig replaces old with new in the config file at path, once.
func editConfig(t *testing.T, path, old, new string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(b, []byte(old)) {
		t.Fatalf("%s has no %q", path, old)
	}
	if err := os.WriteFile(path, bytes.Replace(b, []byte(old), []byte(new), 1), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// runOK runs the binary in dir, wants exit 0 and each of wants in its
// stdout, and returns the stdout.
func runOK(t *testing.T, dir string, args []string, wants ...string) string {
	t.Helper()
	out, errOut, code := runIn(t, dir, nil, args...)
	if code != 0 {
		t.Fatalf("vigil %v: exit %d\n%s", args, code, errOut)
	}
	for _, want := range wants {
		if !strings.Contains(out, want) {
			t.Errorf("vigil %v: output lacks %q:\n%s", args, want, out)
		}
	}
	return out
}

// TestHelpPointsToDocs: `vigil help` says where the documentation is: the
// man page and the directory the .deb installs the docs to.
func TestHelpPointsToDocs(t *testing.T) {
	nfpm, err := os.ReadFile(filepath.Join("..", "..", "packaging", "nfpm.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	out, _, _ := runIn(t, t.TempDir(), nil, "help")
	for _, want := range []string{"man vigil", "/usr/share/doc/vigil/", "docs/"} {
		if !strings.Contains(out, want) {
			t.Errorf("vigil help does not point to %s:\n%s", want, out)
		}
	}
	if !strings.Contains(string(nfpm), "dst: /usr/share/doc/vigil/") {
		t.Errorf("packaging/nfpm.yaml installs no docs in /usr/share/doc/vigil/, which vigil help names")
	}
}
