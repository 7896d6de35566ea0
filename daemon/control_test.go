package daemon

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/vigil-iot/vigil/config"
	"github.com/vigil-iot/vigil/control"
	"github.com/vigil-iot/vigil/heartbeat"
	"github.com/vigil-iot/vigil/internal/logtest"
	"github.com/vigil-iot/vigil/manage"
	"github.com/vigil-iot/vigil/transport"
)

// serveControl serves a's control socket in a fresh directory until the
// test ends and returns its path.
func serveControl(t *testing.T, a *App) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "vigil-ctl-") // short: a unix socket path has 108 bytes
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	path := filepath.Join(dir, control.SockName)
	srv, err := listenControl(path, a.cfg.Device.StateDir, a.cmds, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { srv.Serve(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	return path
}

// TestControlRequestBounded: the socket takes a request as long as the
// longest checklist set can make it (16 KiB of characters JSON escapes six
// times over), and answers a longer one with an error instead of reading
// it to the end.
func TestControlRequestBounded(t *testing.T) {
	a := newOverlayApp(t, "")
	path := serveControl(t, a)
	ctx := context.Background()

	line := strings.Repeat("<&>", 20) + "\n" // each escaped as \u003c and so on (a control character, escaped as long, is refused)
	body := strings.Repeat(line, config.MaxChecklistSize/len(line))
	body += strings.Repeat("<", config.MaxChecklistSize-len(body))
	req := control.Request{Cmd: "checklist", Op: transport.ChecklistSet, Body: body, StateDir: control.AbsDir(a.cfg.Device.StateDir)}
	raw, _ := json.Marshal(req)
	t.Logf("a checklist of %d bytes is a request of %d bytes", len(body), len(raw))
	resp, err := (&control.Client{StateDir: a.cfg.Device.StateDir, Sockets: []string{path}}).Call(ctx, req, 10*time.Second)
	if err != nil || !strings.Contains(resp.Text, "checklist set") {
		t.Fatalf("checklist set of %d bytes over the socket = %+v, %v; want it set", len(body), resp, err)
	}

	c, err := net.Dial("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	go func() {
		// No newline, ever: the daemon must stop reading on its own.
		c.Write([]byte(`{"cmd":"status","key":"` + strings.Repeat("x", 4<<20)))
	}()
	_ = c.SetReadDeadline(time.Now().Add(4 * time.Second))
	answer, err := bufio.NewReader(c).ReadBytes('\n')
	if err != nil {
		t.Fatalf("a 4 MiB request got no answer (%v): the daemon reads it to the end", err)
	}
	var r control.Response
	if err := json.Unmarshal(answer, &r); err != nil || !strings.Contains(r.Error, "request longer than") {
		t.Errorf("answer to a 4 MiB request = %s, want an error saying it is too long", answer)
	}
}

// TestChecklistOverrideSymlinkRefused: a symbolic link planted where
// `vigil checklist set` writes is not followed: the heartbeat, config check
// and checklist show all refuse it with an error naming it, and never read
// the file it points at.
func TestChecklistOverrideSymlinkRefused(t *testing.T) {
	a := newOverlayApp(t, "")
	if err := os.WriteFile(a.cfg.Heartbeat.Checklist, []byte("- the file's item\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	target := filepath.Join(t.TempDir(), "elsewhere.md")
	if err := os.WriteFile(target, []byte("- SECRET-LINE from another file\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(a.cfg.Device.StateDir, 0o700); err != nil {
		t.Fatal(err)
	}
	over := manage.OverridePath(a.cfg)
	if err := os.Symlink(target, over); err != nil {
		t.Fatal(err)
	}
	txt, _, err := manage.ChecklistFunc(a.cfg)()
	if err == nil || strings.Contains(txt, "SECRET-LINE") || !strings.Contains(err.Error(), over) || !strings.Contains(err.Error(), "symbolic link") {
		t.Errorf("heartbeat checklist = %q, %v; want an error naming %s as a symbolic link", txt, err, over)
	}
	ctx := transport.WithSource(context.Background(), transport.Source{Channel: transport.ChannelSocket})
	out, err := a.cmds.Checklist(ctx, transport.ChecklistShow, "")
	if err == nil || strings.Contains(out, "SECRET-LINE") || !strings.Contains(err.Error(), "symbolic link") {
		t.Errorf("checklist show = %q, %v; want an error naming the symbolic link", out, err)
	}
	// A dangling link is refused the same way, not taken for no checklist.
	if err := os.Remove(target); err != nil {
		t.Fatal(err)
	}
	if _, _, err := manage.ChecklistFunc(a.cfg)(); err == nil || !strings.Contains(err.Error(), "symbolic link") {
		t.Errorf("heartbeat checklist with a dangling link: %v, want the symbolic-link error", err)
	}
	// reset removes the link itself.
	if _, err := a.cmds.Checklist(ctx, transport.ChecklistReset, ""); err != nil {
		t.Fatal(err)
	}
	if txt, _, err := manage.ChecklistFunc(a.cfg)(); err != nil || !strings.Contains(txt, "the file's item") {
		t.Errorf("after reset = %q, %v; want the config's checklist", txt, err)
	}
}

// TestSocketErrorsKeepTheirKind: an error crosses the control socket as
// its text and a code, and the client gives it back as the kind it was:
// a refused set is a *config.Error (the CLI exits 78 with it), a pause
// out of range wraps transport.ErrPauseRange (exit 2), an unset of a key
// not set wraps manage.ErrNotSet. Nobody has to read the text.
func TestSocketErrorsKeepTheirKind(t *testing.T) {
	a := newOverlayApp(t, "")
	c := &control.Client{StateDir: a.cfg.Device.StateDir, Sockets: []string{serveControl(t, a)}}
	ctx := context.Background()

	_, err := c.Call(ctx, control.Request{Cmd: "set", Key: "heartbeat.interval", Value: "30s"}, 10*time.Second)
	var ce *config.Error
	if !errors.As(err, &ce) || !strings.Contains(err.Error(), `heartbeat.interval: must be at least 1m (got "30s")`) {
		t.Errorf("refused set over the socket = %v (%T), want a *config.Error with the validator's message", err, err)
	}
	if st, _ := a.db.Settings(); len(st) != 0 {
		t.Errorf("a refused set stored %+v", st)
	}
	_, err = c.Call(ctx, control.Request{Cmd: "pause", Minutes: 0}, 10*time.Second)
	if !errors.Is(err, transport.ErrPauseRange) || !strings.Contains(err.Error(), "pause: minutes must be 1..1440") {
		t.Errorf("pause 0 over the socket = %v, want transport.ErrPauseRange", err)
	}
	_, err = c.Call(ctx, control.Request{Cmd: "unset", Key: "heartbeat.interval"}, 10*time.Second)
	if !errors.Is(err, manage.ErrNotSet) || errors.As(err, &ce) {
		t.Errorf("unset of a key not set over the socket = %v, want manage.ErrNotSet and no config error", err)
	}
	if _, err := c.Call(ctx, control.Request{Cmd: "set", Key: "heartbeat.interval", Value: "20m"}, 10*time.Second); err != nil {
		t.Errorf("set 20m over the socket: %v", err)
	}
}

// TestSocketTestAlertIsAccepted: `vigil test-alert` over the control
// socket is an accepted command like every other: logged with its source
// (README: every accepted command is logged at INFO with it) and listed
// in status, as the status page's button is.
func TestSocketTestAlertIsAccepted(t *testing.T) {
	a := newOverlayApp(t, "")
	var log logtest.Buffer
	a.log = log.Logger(slog.LevelInfo)
	path := serveControl(t, a)
	ctx := context.Background()
	req := control.Request{Cmd: "test-alert", Severity: "warning", StateDir: control.AbsDir(a.cfg.Device.StateDir)}
	resp, err := (&control.Client{StateDir: a.cfg.Device.StateDir, Sockets: []string{path}}).Call(ctx, req, 10*time.Second)
	if err != nil || !strings.Contains(resp.Text, "test alert") {
		t.Fatalf("test-alert over the socket = %+v, %v; want it queued", resp, err)
	}
	if got := log.String(); !strings.Contains(got, `msg="command accepted" command=test-alert source=socket`) {
		t.Errorf("log after a test-alert over the socket:\n%s\nwant a command accepted line with source=socket", got)
	}
	st, err := a.engine.Status(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(st.Commands, func(c heartbeat.Command) bool { return c.Command == "test-alert" && c.Source == "socket" }) {
		t.Errorf("status commands = %+v, want test-alert by socket", st.Commands)
	}
}
