package main

import (
	"bytes"
	"fmt"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestImportDirection keeps the layout of STYLE.md: imports point one way,
// cmd → daemon → heartbeat → {agent, device, rule, store, transport}, and
// the leaf packages import nothing else of ours except value types. Naming
// an alert takes package alert, never the transport that delivers one.
// daemon imports no cmd, manage neither transport nor daemon, and web not
// daemon (the rows below allow none of them).
func TestImportDirection(t *testing.T) {
	const mod = "github.com/vigil-iot/vigil/"
	allowed := map[string][]string{
		"alert":              {},
		"board":              {},
		"device":             {"board"}, // the board profile (a value type) names the buses and overlays sensors are opened on
		"rule":               {},
		"baseline":           {}, // what is usual per hour: a leaf the engine and the surfaces name
		"transport":          {"alert"},
		"schedule":           {},
		"redact":             {},
		"config":             {"board", "device", "rule", "schedule"}, // device's driver registry: names, buses, keys
		"store":              {"alert", "board", "device"},
		"transport/mqtt":     {"alert", "board", "device", "transport"},
		"transport/telegram": {"alert", "schedule", "transport"},
		"agent":              {"alert", "board", "device", "redact"},
		"heartbeat":          {"agent", "alert", "baseline", "board", "device", "redact", "rule", "schedule", "store", "transport"},
		// The fleet command checks --broker and --prefix as the daemon's
		// config does, and a checklist against its limit.
		"fleet": {"alert", "board", "config", "device", "rule", "schedule", "transport", "transport/mqtt"},
		// The one status view: gathered, rendered as text, and the
		// history's exports; no daemon, no page.
		"status": {"agent", "alert", "baseline", "board", "config", "device", "heartbeat", "manage", "redact", "rule", "schedule", "store", "transport"},
		// The control socket's protocol: neither the daemon that serves
		// it nor the page.
		"control": {"agent", "alert", "baseline", "board", "config", "device", "heartbeat", "manage", "redact", "rule", "schedule", "status", "store", "transport"},
		"web":     {"agent", "alert", "baseline", "board", "config", "device", "heartbeat", "manage", "redact", "rule", "schedule", "status", "store", "transport"}, // heartbeat through Source, manage for the run-time view
		// The run-time settings are pure over a config and the stored
		// settings: no transport, no daemon.
		"manage": {"alert", "board", "config", "device", "redact", "rule", "schedule", "store"},
		// The daemon is everything but the command line.
		"daemon": {"agent", "alert", "baseline", "board", "config", "control", "device", "heartbeat", "manage", "redact", "rule", "schedule", "status", "store", "transport", "transport/mqtt", "transport/telegram", "web"},
	}
	for pkg, want := range allowed {
		out, err := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}}", mod+pkg).Output()
		if err != nil {
			t.Fatalf("go list -deps %s: %v", pkg, err)
		}
		for _, dep := range strings.Fields(string(out)) {
			name, ours := strings.CutPrefix(dep, mod)
			if !ours || name == pkg || strings.HasPrefix(name, "internal/") {
				continue
			}
			if !slices.Contains(want, name) {
				t.Errorf("%s imports %s; allowed: %v", pkg, name, want)
			}
		}
	}
}

// TestCommandLineImportsNoWeb: the command line prints status and history
// through package status; the page is the daemon's (daemon/web.go), so
// cmd/vigil names web nowhere outside its tests.
func TestCommandLineImportsNoWeb(t *testing.T) {
	const web = "github.com/vigil-iot/vigil/web"
	out, err := exec.Command("go", "list", "-f", `{{join .Imports "\n"}}`, ".").Output()
	if err != nil {
		t.Fatalf("go list cmd/vigil: %v", err)
	}
	if slices.Contains(strings.Fields(string(out)), web) {
		t.Errorf("cmd/vigil imports %s; print status and history through package status", web)
	}
}

// TestClientVerbsReachDaemonThroughControl: the client verbs (status, get,
// set, ack, pause, check, ...) ask a running daemon only through package
// control. The files that name package daemon are the wiring: run.go and
// wire.go for `vigil run`, and local.go, the App a verb runs on the state
// file when no daemon answers.
func TestClientVerbsReachDaemonThroughControl(t *testing.T) {
	const daemonPkg = "github.com/vigil-iot/vigil/daemon"
	wiring := []string{"local.go", "run.go", "wire.go"}
	entries, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range f.Imports {
			if path, _ := strconv.Unquote(imp.Path.Value); path == daemonPkg && !slices.Contains(wiring, name) {
				t.Errorf("%s imports %s; a client verb asks the daemon through package control (only %v wire the daemon)", name, daemonPkg, wiring)
			}
		}
	}
}

// TestCommandLineStaysThin holds the line drawn when the daemon got its
// own package and the sensor drivers a registry in device: the command
// line is flags, help, verbs and wiring, at most 2,800 lines of non-test
// Go. Behaviour that pushes it over belongs in daemon, manage or device,
// where it can be tested without building a binary.
func TestCommandLineStaysThin(t *testing.T) {
	const limit = 2800
	entries, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	total := 0
	var sizes []string
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			continue
		}
		b, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		n := bytes.Count(b, []byte("\n"))
		total += n
		sizes = append(sizes, fmt.Sprintf("%s %d", name, n))
	}
	if total == 0 {
		t.Fatal("found no Go files in cmd/vigil")
	}
	if total > limit {
		t.Errorf("cmd/vigil holds %d non-test lines, over %d; move behaviour into daemon, manage or device (%s)", total, limit, strings.Join(sizes, ", "))
	}
	t.Logf("cmd/vigil: %d non-test lines (limit %d)", total, limit)
}
