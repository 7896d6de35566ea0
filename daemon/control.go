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
	"github.com/vigil-iot/vigil/heartbeat"
	"github.com/vigil-iot/vigil/manage"
	"github.com/vigil-iot/vigil/store"
	"github.com/vigil-iot/vigil/transport"
)

// The control socket speaks one JSON request line and one JSON response line
// per connection. Only the owner can connect (mode 0600).

// ctlMaxRequest bounds a request line. The longest a CLI sends is
// `checklist set` with a checklist at config.MaxChecklistSize, every byte
// of which JSON may escape as \u003c (six bytes); the other fields are
// short. A longer request is answered with an error, not read to its end.
const ctlMaxRequest = 8 * config.MaxChecklistSize

// Request is one command to the daemon.
type Request struct {
	Cmd       string `json:"cmd"` // status | check | pause | resume | test-alert | history | get | set | unset | settings | checklist | notes | ack
	Minutes   int    `json:"minutes,omitempty"`
	SinceS    int64  `json:"since_s,omitempty"` // history: the window in seconds
	DryRun    bool   `json:"dry_run,omitempty"`
	Severity  string `json:"severity,omitempty"`  // test-alert
	Transport string `json:"transport,omitempty"` // test-alert: only this one
	Key       string `json:"key,omitempty"`       // get, set, unset
	Value     string `json:"value,omitempty"`     // set
	Op        string `json:"op,omitempty"`        // checklist: show, set, reset
	Body      string `json:"body,omitempty"`      // checklist set: the text
	Clear     bool   `json:"clear,omitempty"`     // notes clear
	Target    string `json:"target,omitempty"`    // ack: a rule, llm, an alert id, or "" (the only one firing)
	// StateDir is the state directory the CLI's config names. A daemon
	// watching another one answers OtherState and does nothing, so a
	// shared socket location (/run/vigil) never reaches the wrong daemon.
	StateDir string `json:"state_dir,omitempty"`
}

// Response is the daemon's answer.
type Response struct {
	Error      string            `json:"error,omitempty"`
	OtherState bool              `json:"other_state,omitempty"`
	Status     *heartbeat.Status `json:"status,omitempty"`
	Check      *CheckJSON        `json:"check,omitempty"`
	Text       string            `json:"text,omitempty"`
	// Series is the history: of the last hour with status, of the
	// window asked for with history.
	Series []heartbeat.Series `json:"series,omitempty"`
	// Runtime goes with status: the settings not from the file, the
	// checklist in force, the model's notes.
	Runtime *manage.Runtime `json:"runtime,omitempty"`
	// Values answers get; Settings answers settings (the stored overlay).
	Values   []manage.SettingView `json:"values,omitempty"`
	Settings []store.Setting      `json:"settings,omitempty"`
	// Code says what kind of error Error is (a refused set is a config
	// error: the CLI exits 78 with it); the client maps it back.
	Code Code `json:"code,omitempty"`
}

type ctlServer struct {
	ln       net.Listener
	path     string
	stateDir string
	cmds     *Commander
	log      *slog.Logger
}

// SockName is the control socket's file name.
const SockName = "vigil.sock"

// SockPath is where `vigil run` listens: in runtimeDir ($RUNTIME_DIRECTORY)
// when systemd gives one, else beside the state file.
func SockPath(cfg *config.Config, runtimeDir string) string {
	if runtimeDir != "" {
		return filepath.Join(runtimeDir, SockName)
	}
	return filepath.Join(cfg.Device.StateDir, SockName)
}

// absDir makes a state directory absolute for comparison across processes.
func absDir(dir string) string {
	if a, err := filepath.Abs(dir); err == nil {
		return a
	}
	return dir
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
	return &ctlServer{ln: ln, path: path, stateDir: absDir(stateDir), cmds: cmds, log: log}, nil
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
	line, err := bufio.NewReader(io.LimitReader(c, ctlMaxRequest+1)).ReadBytes('\n')
	var resp Response
	if len(line) > ctlMaxRequest {
		resp.Error = fmt.Sprintf("request longer than %d KiB: refused", ctlMaxRequest>>10)
	} else if err != nil {
		return
	} else {
		var req Request
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

func (s *ctlServer) do(ctx context.Context, req Request) Response {
	if req.StateDir != "" && !sameDir(req.StateDir, s.stateDir) {
		return Response{OtherState: true, Error: fmt.Sprintf("this vigil watches %s, not %s", s.stateDir, req.StateDir)}
	}
	eng := s.cmds.app.engine
	ctx = transport.WithSource(ctx, transport.Source{Channel: transport.ChannelSocket})
	switch req.Cmd {
	case "status":
		st, series, rt, err := s.cmds.app.Status(ctx)
		if err != nil {
			return errResponse(err)
		}
		return Response{Status: &st, Series: series, Runtime: &rt}
	case "history":
		series, err := eng.History(ctx, s.cmds.app.wall().Add(-time.Duration(req.SinceS)*time.Second))
		if err != nil {
			return errResponse(err)
		}
		return Response{Series: series}
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
		cj := ToCheckJSON(res)
		return Response{Check: &cj}
	case "pause":
		return textResponse(s.cmds.Pause(ctx, time.Duration(req.Minutes)*time.Minute))
	case "resume":
		return textResponse(s.cmds.Resume(ctx))
	case "test-alert":
		sev, err := alert.ParseSeverity(req.Severity)
		if err != nil {
			return errResponse(err)
		}
		return textResponse(s.cmds.testAlert(ctx, sev, req.Transport))
	}
	return s.doManage(ctx, req)
}

// doManage answers the management verbs (settings.go).
func (s *ctlServer) doManage(ctx context.Context, req Request) Response {
	c := s.cmds
	switch req.Cmd {
	case "get":
		c.accept(ctx, strings.TrimSpace("get "+req.Key), false)
		views, err := manage.SettingViews(c.app.current(), req.Key)
		if err != nil {
			return errResponse(err)
		}
		return Response{Values: views}
	case "settings":
		st, err := c.app.db.Settings()
		if err != nil {
			return errResponse(err)
		}
		return Response{Settings: st}
	case "set":
		return textResponse(c.Set(ctx, req.Key, req.Value))
	case "unset":
		return textResponse(c.Unset(ctx, req.Key))
	case "checklist":
		return textResponse(c.Checklist(ctx, req.Op, req.Body))
	case "notes":
		return textResponse(c.Notes(ctx, req.Clear))
	case "ack":
		return textResponse(c.Ack(ctx, req.Target))
	}
	return Response{Error: fmt.Sprintf("unknown command %q", req.Cmd)}
}

// textResponse is a command's text answer, or its error.
func textResponse(t string, err error) Response {
	if err != nil {
		return errResponse(err)
	}
	return Response{Text: t}
}

// errResponse carries err with its code.
func errResponse(err error) Response {
	return Response{Error: err.Error(), Code: codeOf(err)}
}
