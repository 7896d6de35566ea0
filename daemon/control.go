package daemon

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/vigil-iot/vigil/alert"
	"github.com/vigil-iot/vigil/config"
	"github.com/vigil-iot/vigil/control"
	"github.com/vigil-iot/vigil/heartbeat"
	"github.com/vigil-iot/vigil/manage"
	"github.com/vigil-iot/vigil/transport"
)

// The control socket's server: the protocol (one JSON request line and
// one JSON response line per connection) is package control's. Only the
// owner can connect (mode 0600).

type ctlServer struct {
	ln       net.Listener
	path     string
	stateDir string
	cmds     *Commander
	log      *slog.Logger
}

// SockPath is where `vigil run` listens: in runtimeDir ($RUNTIME_DIRECTORY)
// when systemd gives one, else beside the state file.
func SockPath(cfg *config.Config, runtimeDir string) string {
	if runtimeDir != "" {
		return filepath.Join(runtimeDir, control.SockName)
	}
	return filepath.Join(cfg.Device.StateDir, control.SockName)
}

// sameDir reports whether two paths name the same directory.
func sameDir(a, b string) bool {
	if filepath.Clean(a) == filepath.Clean(b) {
		return true
	}
	fa, err1 := os.Stat(a)
	fb, err2 := os.Stat(b)
	return err1 == nil && err2 == nil && os.SameFile(fa, fb)
}

// listenControl creates the socket, replacing a stale one left by a crash.
// It never removes a socket another vigil answers on.
func listenControl(path, stateDir string, cmds *Commander, log *slog.Logger) (*ctlServer, error) {
	if c, err := net.DialTimeout("unix", path, 500*time.Millisecond); err == nil {
		c.Close()
		return nil, fmt.Errorf("control socket %s: another vigil is answering on it", path)
	}
	_ = os.Remove(path)
	old := syscall.Umask(0o077)
	ln, err := net.Listen("unix", path)
	syscall.Umask(old)
	if err != nil {
		return nil, fmt.Errorf("control socket: %w", err)
	}
	if err := os.Chmod(path, 0o600); err != nil {
		ln.Close()
		return nil, fmt.Errorf("control socket: %w", err)
	}
	return &ctlServer{ln: ln, path: path, stateDir: control.AbsDir(stateDir), cmds: cmds, log: log}, nil
}

// Serve answers requests until ctx ends, then waits for the answers under
// way (their commands end with ctx) and removes the socket.
func (s *ctlServer) Serve(ctx context.Context) error {
	stop := context.AfterFunc(ctx, func() { s.ln.Close() })
	defer stop()
	defer os.Remove(s.path)
	var handlers sync.WaitGroup
	defer handlers.Wait()
	for {
		c, err := s.ln.Accept()
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("control socket: %w", err)
		}
		handlers.Go(func() { s.handle(ctx, c) })
	}
}

func (s *ctlServer) handle(ctx context.Context, c net.Conn) {
	defer c.Close()
	_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
	line, err := bufio.NewReader(io.LimitReader(c, control.MaxRequest+1)).ReadBytes('\n')
	var resp control.Response
	if len(line) > control.MaxRequest {
		resp.Error = fmt.Sprintf("request longer than %d KiB: refused", control.MaxRequest>>10)
	} else if err != nil {
		return
	} else {
		var req control.Request
		if err := json.Unmarshal(line, &req); err != nil {
			resp.Error = "bad request: " + err.Error()
		} else {
			resp = s.do(ctx, req)
		}
	}
	_ = c.SetWriteDeadline(time.Now().Add(5 * time.Second))
	b, _ := json.Marshal(resp)
	c.Write(append(b, '\n'))
}

func (s *ctlServer) do(ctx context.Context, req control.Request) control.Response {
	if req.StateDir != "" && !sameDir(req.StateDir, s.stateDir) {
		return control.Response{OtherState: true, Error: fmt.Sprintf("this vigil watches %s, not %s", s.stateDir, req.StateDir)}
	}
	eng := s.cmds.app.engine
	ctx = transport.WithSource(ctx, transport.Source{Channel: transport.ChannelSocket})
	switch req.Cmd {
	case "status":
		v, err := s.cmds.app.Status(ctx)
		if err != nil {
			return errResponse(err)
		}
		return control.Response{Status: &v}
	case "history":
		series, err := eng.History(ctx, s.cmds.app.wall().Add(-time.Duration(req.SinceS)*time.Second))
		if err != nil {
			return errResponse(err)
		}
		return control.Response{Series: series}
	case "check":
		// A dry run works on the daemon's last sample: a sample of its own
		// would write rule changes and queue their alerts.
		sample := (*heartbeat.Engine).SampleOnce
		if req.DryRun {
			sample = nil
		}
		res, err := s.cmds.CheckWith(ctx, heartbeat.CheckOptions{DryRun: req.DryRun}, sample)
		if err != nil {
			return errResponse(err)
		}
		cj := control.ToCheckJSON(res)
		return control.Response{Check: &cj}
	}
	return s.doManage(ctx, req)
}

// doManage answers the management verbs (settings.go), and the verbs
// answered with a text (Commander.Do).
func (s *ctlServer) doManage(ctx context.Context, req control.Request) control.Response {
	c := s.cmds
	switch req.Cmd {
	case "get":
		c.accept(ctx, strings.TrimSpace("get "+req.Key), false)
		views, err := manage.SettingViews(c.app.current(), req.Key)
		if err != nil {
			return errResponse(err)
		}
		return control.Response{Values: views}
	case "settings":
		st, err := c.app.db.Settings()
		if err != nil {
			return errResponse(err)
		}
		return control.Response{Settings: st}
	case "rules":
		v, err := c.Rules(ctx)
		if err != nil {
			return errResponse(err)
		}
		return control.Response{Rules: &v}
	}
	return textResponse(c.Do(ctx, req))
}

// Do runs a verb whose answer is a text (pause, resume, test-alert, set,
// unset, checklist, notes, ack) as req asks it: the control socket's
// answer, and the CLI's on the state file when no daemon runs. The
// channel is ctx's (transport.WithSource).
func (c *Commander) Do(ctx context.Context, req control.Request) (string, error) {
	switch req.Cmd {
	case "pause":
		return c.Pause(ctx, time.Duration(req.Minutes)*time.Minute)
	case "resume":
		return c.Resume(ctx)
	case "test-alert":
		sev, err := alert.ParseSeverity(req.Severity)
		if err != nil {
			return "", err
		}
		return c.testAlert(ctx, sev, req.Transport)
	case "set":
		return c.Set(ctx, req.Key, req.Value)
	case "unset":
		return c.Unset(ctx, req.Key)
	case "checklist":
		return c.Checklist(ctx, req.Op, req.Body)
	case "notes":
		return c.Notes(ctx, req.Clear)
	case "ack":
		return c.Ack(ctx, req.Target)
	case "baseline":
		if req.Op != "reset" {
			return "", fmt.Errorf("baseline: unknown operation %q (want reset)", req.Op)
		}
		return c.BaselineReset(ctx, req.Target)
	case "rule":
		if req.Op == "show" {
			return c.RuleTOML(ctx, req.Target)
		}
		return c.RuleDecide(ctx, req.Op, req.Target)
	}
	return "", fmt.Errorf("unknown command %q", req.Cmd)
}

// textResponse is a command's text answer, or its error.
func textResponse(t string, err error) control.Response {
	if err != nil {
		return errResponse(err)
	}
	return control.Response{Text: t}
}

// errResponse carries err with its code.
func errResponse(err error) control.Response {
	return control.Response{Error: err.Error(), Code: control.CodeOf(err)}
}
