package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"syscall"
	"time"

	"github.com/vigil-iot/vigil/heartbeat"
)

// The control socket speaks one JSON request line and one JSON response line
// per connection. Only the owner can connect (mode 0600).

type ctlRequest struct {
	Cmd     string `json:"cmd"` // status | check | pause | resume | history
	Minutes int    `json:"minutes,omitempty"`
	SinceS  int64  `json:"since_s,omitempty"` // history: the window in seconds
	DryRun  bool   `json:"dry_run,omitempty"`
}

type ctlResponse struct {
	Error  string            `json:"error,omitempty"`
	Status *heartbeat.Status `json:"status,omitempty"`
	Check  *checkJSON        `json:"check,omitempty"`
	Text   string            `json:"text,omitempty"`
	// Series is the history: of the last hour with status, of the
	// window asked for with history.
	Series []heartbeat.Series `json:"series,omitempty"`
}

type ctlServer struct {
	ln   net.Listener
	path string
	cmds *commands
	log  *slog.Logger
}

// listenControl creates the socket, replacing a stale one left by a crash.
func listenControl(path string, cmds *commands, log *slog.Logger) (*ctlServer, error) {
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
	return &ctlServer{ln: ln, path: path, cmds: cmds, log: log}, nil
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
	line, err := bufio.NewReader(c).ReadBytes('\n')
	if err != nil {
		return
	}
	var req ctlRequest
	var resp ctlResponse
	if err := json.Unmarshal(line, &req); err != nil {
		resp.Error = "bad request: " + err.Error()
	} else {
		resp = s.do(ctx, req)
	}
	_ = c.SetWriteDeadline(time.Now().Add(5 * time.Second))
	b, _ := json.Marshal(resp)
	c.Write(append(b, '\n'))
}

func (s *ctlServer) do(ctx context.Context, req ctlRequest) ctlResponse {
	eng := s.cmds.app.engine
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
		return ctlResponse{Status: &st, Series: series}
	case "history":
		series, err := eng.History(ctx, time.Now().Add(-time.Duration(req.SinceS)*time.Second))
		if err != nil {
			return ctlResponse{Error: err.Error()}
		}
		return ctlResponse{Series: series}
	case "check":
		// A dry run works on the daemon's last sample: a sample of its own
		// would write rule changes and queue their alerts.
		if !req.DryRun {
			if err := eng.SampleOnce(ctx); err != nil {
				return ctlResponse{Error: err.Error()}
			}
		}
		res, err := eng.Check(ctx, heartbeat.CheckOptions{DryRun: req.DryRun})
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
	}
	return ctlResponse{Error: fmt.Sprintf("unknown command %q", req.Cmd)}
}

// errNoDaemon means nobody listens on the socket: work on the state file.
var errNoDaemon = errors.New("no daemon")

// ctlCall sends one request to a running daemon.
func ctlCall(ctx context.Context, path string, req ctlRequest, timeout time.Duration) (ctlResponse, error) {
	d := net.Dialer{Timeout: 2 * time.Second}
	c, err := d.DialContext(ctx, "unix", path)
	if err != nil {
		if errors.Is(err, syscall.ENOENT) || errors.Is(err, syscall.ECONNREFUSED) {
			return ctlResponse{}, errNoDaemon
		}
		return ctlResponse{}, fmt.Errorf("control socket %s: %w", path, err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(timeout))
	b, _ := json.Marshal(req)
	if _, err := c.Write(append(b, '\n')); err != nil {
		return ctlResponse{}, fmt.Errorf("control socket: %w", err)
	}
	line, err := bufio.NewReader(c).ReadBytes('\n')
	if err != nil {
		return ctlResponse{}, fmt.Errorf("control socket: no answer: %w", err)
	}
	var resp ctlResponse
	if err := json.Unmarshal(line, &resp); err != nil {
		return ctlResponse{}, fmt.Errorf("control socket: bad answer: %w", err)
	}
	if resp.Error != "" {
		return resp, errors.New(resp.Error)
	}
	return resp, nil
}
