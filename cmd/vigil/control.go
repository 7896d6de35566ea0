package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/vigil-iot/vigil/alert"
	"github.com/vigil-iot/vigil/config"
	"github.com/vigil-iot/vigil/heartbeat"
	"github.com/vigil-iot/vigil/store"
	"github.com/vigil-iot/vigil/transport"
	"github.com/vigil-iot/vigil/web"
)

// The control socket speaks one JSON request line and one JSON response line
// per connection. Only the owner can connect (mode 0600).

// ctlMaxRequest bounds a request line. The longest a CLI sends is
// `checklist set` with a checklist at config.MaxChecklistSize, every byte
// of which JSON may escape as \u003c (six bytes); the other fields are
// short. A longer request is answered with an error, not read to its end.
const ctlMaxRequest = 8 * config.MaxChecklistSize

type ctlRequest struct {
	Cmd       string `json:"cmd"` // status | check | pause | resume | test-alert | history | get | set | unset | settings | checklist | notes
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
	// StateDir is the state directory the CLI's config names. A daemon
	// watching another one answers OtherState and does nothing, so a
	// shared socket location (/run/vigil) never reaches the wrong daemon.
	StateDir string `json:"state_dir,omitempty"`
}

type ctlResponse struct {
	Error      string            `json:"error,omitempty"`
	OtherState bool              `json:"other_state,omitempty"`
	Status     *heartbeat.Status `json:"status,omitempty"`
	Check      *checkJSON        `json:"check,omitempty"`
	Text       string            `json:"text,omitempty"`
	// Series is the history: of the last hour with status, of the
	// window asked for with history.
	Series []heartbeat.Series `json:"series,omitempty"`
	// Runtime goes with status: the settings not from the file, the
	// checklist in force, the model's notes.
	Runtime *web.Runtime `json:"runtime,omitempty"`
	// Values answers get; Settings answers settings (the stored overlay).
	Values   []settingView   `json:"values,omitempty"`
	Settings []store.Setting `json:"settings,omitempty"`
	// ConfigError marks an error the config validator gave (a refused
	// set): the CLI exits 78 with it.
	ConfigError bool `json:"config_error,omitempty"`
}

type ctlServer struct {
	ln       net.Listener
	path     string
	stateDir string
	cmds     *commands
	log      *slog.Logger
}

// sockName is the control socket's file name.
const sockName = "vigil.sock"

// systemdRuntimeDir is the unit's RuntimeDirectory=vigil. The CLI runs
// without $RUNTIME_DIRECTORY, so it looks there by name.
const systemdRuntimeDir = "/run/vigil"

// runtimeDir is the first directory of $RUNTIME_DIRECTORY (systemd sets it
// from RuntimeDirectory=), or "".
func runtimeDir() string {
	d, _, _ := strings.Cut(os.Getenv("RUNTIME_DIRECTORY"), ":")
	return d
}

// daemonSockPath is where `vigil run` listens: in $RUNTIME_DIRECTORY when
// systemd gives one, else beside the state file.
func daemonSockPath(cfg *config.Config) string {
	if d := runtimeDir(); d != "" {
		return filepath.Join(d, sockName)
	}
	return filepath.Join(cfg.Device.StateDir, sockName)
}

// sockCandidates are the places the CLI looks for the daemon, in order:
// $RUNTIME_DIRECTORY (set when the CLI runs under systemd too), the unit's
// /run/vigil, then the state directory (a daemon started by hand). A
// daemon on another state directory refuses the request (OtherState), so
// the order never picks the wrong one.
func sockCandidates(cfg *config.Config) []string {
	var out []string
	for _, dir := range []string{runtimeDir(), systemdRuntimeDir, cfg.Device.StateDir} {
		if p := filepath.Join(dir, sockName); dir != "" && !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	return out
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
func listenControl(path, stateDir string, cmds *commands, log *slog.Logger) (*ctlServer, error) {
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

func (s *ctlServer) Serve(ctx context.Context) error {
	go func() {
		<-ctx.Done()
		s.ln.Close()
	}()
	defer os.Remove(s.path)
	for {
		c, err := s.ln.Accept()
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("control socket: %w", err)
		}
		go s.handle(ctx, c)
	}
}

func (s *ctlServer) handle(ctx context.Context, c net.Conn) {
	defer c.Close()
	_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
	line, err := bufio.NewReader(io.LimitReader(c, ctlMaxRequest+1)).ReadBytes('\n')
	var resp ctlResponse
	if len(line) > ctlMaxRequest {
		resp.Error = fmt.Sprintf("request longer than %d KiB: refused", ctlMaxRequest>>10)
	} else if err != nil {
		return
	} else {
		var req ctlRequest
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

func (s *ctlServer) do(ctx context.Context, req ctlRequest) ctlResponse {
	if req.StateDir != "" && !sameDir(req.StateDir, s.stateDir) {
		return ctlResponse{OtherState: true, Error: fmt.Sprintf("this vigil watches %s, not %s", s.stateDir, req.StateDir)}
	}
	eng := s.cmds.app.engine
	ctx = transport.WithSource(ctx, transport.Source{Channel: transport.ChannelSocket})
	switch req.Cmd {
	case "status":
		st, err := eng.Status(ctx)
		if err != nil {
			return ctlResponse{Error: err.Error()}
		}
		series, err := eng.History(ctx, time.Now().Add(-statusWindow))
		if err != nil {
			return ctlResponse{Error: err.Error()}
		}
		rt, err := runtimeView(s.cmds.app.current(), s.cmds.app.db)
		if err != nil {
			return ctlResponse{Error: err.Error()}
		}
		return ctlResponse{Status: &st, Series: series, Runtime: &rt}
	case "history":
		series, err := eng.History(ctx, time.Now().Add(-time.Duration(req.SinceS)*time.Second))
		if err != nil {
			return ctlResponse{Error: err.Error()}
		}
		return ctlResponse{Series: series}
	case "check":
		// A dry run works on the daemon's last sample: a sample of its own
		// would write rule changes and queue their alerts.
		sample := (*heartbeat.Engine).SampleOnce
		if req.DryRun {
			sample = nil
		}
		res, err := s.cmds.check(ctx, heartbeat.CheckOptions{DryRun: req.DryRun}, sample)
		if err != nil {
			return ctlResponse{Error: err.Error()}
		}
		cj := toCheckJSON(res)
		return ctlResponse{Check: &cj}
	case "pause":
		txt, err := s.cmds.Pause(ctx, time.Duration(req.Minutes)*time.Minute)
		if err != nil {
			return ctlResponse{Error: err.Error()}
		}
		return ctlResponse{Text: txt}
	case "resume":
		txt, err := s.cmds.Resume(ctx)
		if err != nil {
			return ctlResponse{Error: err.Error()}
		}
		return ctlResponse{Text: txt}
	case "test-alert":
		sev, err := alert.ParseSeverity(req.Severity)
		if err != nil {
			return ctlResponse{Error: err.Error()}
		}
		if err := checkTransport(s.cmds.app.current(), req.Transport); err != nil {
			return ctlResponse{Error: err.Error()}
		}
		a, err := eng.TestAlert(ctx, sev, req.Transport)
		if err != nil {
			return ctlResponse{Error: err.Error()}
		}
		return ctlResponse{Text: testAlertText(a, "the daemon is delivering it")}
	}
	return s.doManage(ctx, req)
}

// doManage answers the management verbs (overlay.go).
func (s *ctlServer) doManage(ctx context.Context, req ctlRequest) ctlResponse {
	text := func(t string, err error) ctlResponse {
		if err != nil {
			return errResponse(err)
		}
		return ctlResponse{Text: t}
	}
	c := s.cmds
	switch req.Cmd {
	case "get":
		c.accept(ctx, strings.TrimSpace("get "+req.Key), false)
		views, err := settingViews(c.app.current(), req.Key)
		if err != nil {
			return errResponse(configErr(err))
		}
		return ctlResponse{Values: views}
	case "settings":
		st, err := c.app.db.Settings()
		if err != nil {
			return errResponse(err)
		}
		return ctlResponse{Settings: st}
	case "set":
		return text(c.Set(ctx, req.Key, req.Value))
	case "unset":
		return text(c.Unset(ctx, req.Key))
	case "checklist":
		return text(c.Checklist(ctx, req.Op, req.Body))
	case "notes":
		return text(c.Notes(ctx, req.Clear))
	}
	return ctlResponse{Error: fmt.Sprintf("unknown command %q", req.Cmd)}
}

// errResponse carries err, marking a config error so the CLI exits 78.
func errResponse(err error) ctlResponse {
	var ee *exitError
	return ctlResponse{Error: err.Error(), ConfigError: errors.As(err, &ee) && ee.code == exitConfig}
}

// errNoDaemon means no daemon for this state directory answers on any of
// the sockets: work on the state file.
var errNoDaemon = errors.New("no daemon")

// ctlCall sends one request to the daemon that watches cfg's state
// directory, trying each of sockCandidates in turn.
func ctlCall(ctx context.Context, cfg *config.Config, req ctlRequest, timeout time.Duration) (ctlResponse, error) {
	req.StateDir = absDir(cfg.Device.StateDir)
	for _, path := range sockCandidates(cfg) {
		resp, err := ctlCallPath(ctx, path, req, timeout)
		if errors.Is(err, errNoDaemon) || resp.OtherState {
			continue
		}
		return resp, err
	}
	return ctlResponse{}, errNoDaemon
}

// ctlCallPath sends one request over one socket. A socket that is absent,
// refuses or cannot be reached (no permission, a path too long for a unix
// socket) is errNoDaemon: if a daemon holds the state file all the same,
// opening the state file says so.
func ctlCallPath(ctx context.Context, path string, req ctlRequest, timeout time.Duration) (ctlResponse, error) {
	d := net.Dialer{Timeout: 2 * time.Second}
	c, err := d.DialContext(ctx, "unix", path)
	if err != nil {
		if ctx.Err() != nil {
			return ctlResponse{}, ctx.Err()
		}
		return ctlResponse{}, errNoDaemon
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(timeout))
	b, _ := json.Marshal(req)
	if _, err := c.Write(append(b, '\n')); err != nil {
		return ctlResponse{}, fmt.Errorf("control socket %s: %w", path, err)
	}
	line, err := bufio.NewReader(c).ReadBytes('\n')
	if err != nil {
		return ctlResponse{}, fmt.Errorf("control socket %s: no answer: %w", path, err)
	}
	var resp ctlResponse
	if err := json.Unmarshal(line, &resp); err != nil {
		return ctlResponse{}, fmt.Errorf("control socket %s: bad answer: %w", path, err)
	}
	if resp.Error != "" && !resp.OtherState {
		if resp.ConfigError {
			return resp, configErr(errors.New(resp.Error))
		}
		return resp, errors.New(resp.Error)
	}
	return resp, nil
}

// lockHolder returns the pid of the process holding the flock on path,
// from /proc/locks, or 0 when it cannot tell.
func lockHolder(path string) int {
	fi, err := os.Stat(path)
	if err != nil {
		return 0
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0
	}
	b, err := os.ReadFile("/proc/locks")
	if err != nil {
		return 0
	}
	dev := uint64(st.Dev)
	major := (dev>>8)&0xfff | (dev>>32)&^0xfff
	minor := dev&0xff | (dev>>12)&^0xff
	want := fmt.Sprintf("%02x:%02x:%d", major, minor, st.Ino)
	for line := range strings.Lines(string(b)) {
		f := strings.Fields(line)
		// 1: FLOCK  ADVISORY  WRITE 1234 08:01:5678 0 EOF; waiters have "->".
		if len(f) < 6 || f[1] != "FLOCK" || f[5] != want {
			continue
		}
		if pid, err := strconv.Atoi(f[4]); err == nil {
			return pid
		}
	}
	return 0
}
