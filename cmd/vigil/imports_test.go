package main

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// TestImportDirection keeps the layout of STYLE.md: imports point one way,
// cmd → heartbeat → {agent, device, rule, store, transport}, and the leaf
// packages import nothing else of ours except value types. Naming an alert
// takes package alert, never the transport that delivers one.
func TestImportDirection(t *testing.T) {
	const mod = "github.com/vigil-iot/vigil/"
	allowed := map[string][]string{
		"alert":              {},
		"board":              {},
		"device":             {},
		"rule":               {},
		"transport":          {"alert"},
		"schedule":           {},
		"redact":             {},
		"config":             {"rule", "schedule"},
		"store":              {"alert", "device"},
		"transport/mqtt":     {"alert", "device", "transport"},
		"transport/telegram": {"alert", "schedule", "transport"},
		"agent":              {"alert", "device", "redact"},
		"heartbeat":          {"agent", "alert", "device", "redact", "rule", "schedule", "store", "transport"},
		"fleet":              {"alert", "device", "transport", "transport/mqtt"},
		"web":                {"agent", "alert", "device", "heartbeat", "redact", "rule", "schedule", "store", "transport"}, // heartbeat through Source
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
