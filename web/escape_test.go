package web

import (
	"io"
	"strings"
	"testing"
	"time"

	"github.com/vigil-iot/vigil/alert"
)

// rawControl returns the first character of s a terminal or a page acts
// on (C0 but tab, newline and carriage return; DEL; C1; bidi overrides),
// or -1.
func rawControl(s string) rune {
	for _, r := range s {
		switch {
		case r == '\t' || r == '\n' || r == '\r':
		case r < 0x20 || r == 0x7f || r >= 0x80 && r < 0xa0, r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069:
			return r
		}
	}
	return -1
}

// TestPageAndAPIEscapeControlCharacters (issue 28, finding 11): a model's
// summary with ESC, NUL, a C1 CSI and a bidi override reaches neither the
// page nor /api/status raw (curl prints either to a terminal); the page
// shows it escaped, and the JSON still decodes to the summary as sent.
func TestPageAndAPIEscapeControlCharacters(t *testing.T) {
	f := newFake(t0, 3)
	const summary = "door \x1b[2J\x00\u009b1m \u202eopen\x7f"
	f.problems = []alert.Alert{{ID: "p1", Time: t0.Add(-time.Minute), Severity: alert.Warning, Source: alert.SourceLLM, State: alert.StateFiring, Summary: summary}}
	s := newTestServer(t, f, Options{Live: Live{Allowed: []string{"status"}}})
	for _, path := range []string{"/", "/api/status"} {
		resp := do(t, s, "GET", path, nil, "", "")
		body, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != 200 {
			t.Fatalf("GET %s = %s", path, resp.Status)
		}
		if r := rawControl(string(body)); r >= 0 {
			t.Errorf("GET %s has %U raw", path, r)
		}
		if path == "/" && !strings.Contains(string(body), `door \x1b[2J\x00\u009b1m \u202eopen\x7f`) {
			t.Errorf("the page does not show the summary escaped")
		}
		if path == "/api/status" && !strings.Contains(string(body), `door \u001b[2J\u0000\u009b1m \u202eopen\u007f`) {
			t.Errorf("/api/status does not carry the summary escaped")
		}
	}
}
