package control

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"path/filepath"
	"slices"
	"time"

	"github.com/vigil-iot/vigil/config"
)

// systemdRuntimeDir is the unit's RuntimeDirectory=vigil. The CLI runs
// without $RUNTIME_DIRECTORY, so it looks there by name.
const systemdRuntimeDir = "/run/vigil"

// ErrNoDaemon means no daemon for this state directory answers on any of
// the sockets: work on the state file.
var ErrNoDaemon = errors.New("no daemon")

// Client asks the daemon that watches a state directory over its control
// socket.
type Client struct {
	StateDir string   // the config's device.state_dir
	Sockets  []string // where to look, in order
}

// NewClient returns the client for cfg's daemon. runtimeDir is
// $RUNTIME_DIRECTORY, if set.
func NewClient(cfg *config.Config, runtimeDir string) *Client {
	return &Client{StateDir: cfg.Device.StateDir, Sockets: Sockets(cfg, runtimeDir)}
}

// Sockets are the places the CLI looks for the daemon, in order:
// runtimeDir ($RUNTIME_DIRECTORY, set when the CLI runs under systemd
// too), the unit's /run/vigil, then the state directory (a daemon started
// by hand). A daemon on another state directory refuses the request
// (OtherState), so the order never picks the wrong one.
func Sockets(cfg *config.Config, runtimeDir string) []string {
	var out []string
	for _, dir := range []string{runtimeDir, systemdRuntimeDir, cfg.Device.StateDir} {
		if p := filepath.Join(dir, SockName); dir != "" && !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	return out
}

// Call sends one request to the daemon that watches c's state directory,
// trying each of its sockets in turn; ErrNoDaemon when none answers.
func (c *Client) Call(ctx context.Context, req Request, timeout time.Duration) (Response, error) {
	req.StateDir = AbsDir(c.StateDir)
	for _, path := range c.Sockets {
		resp, err := callPath(ctx, path, req, timeout)
		if errors.Is(err, ErrNoDaemon) || resp.OtherState {
			continue
		}
		return resp, err
	}
	return Response{}, ErrNoDaemon
}

// callPath sends one request over one socket. A socket that is absent,
// refuses or cannot be reached (no permission, a path too long for a unix
// socket) is ErrNoDaemon: if a daemon holds the state file all the same,
// opening the state file says so.
func callPath(ctx context.Context, path string, req Request, timeout time.Duration) (Response, error) {
	d := net.Dialer{Timeout: 2 * time.Second}
	c, err := d.DialContext(ctx, "unix", path)
	if err != nil {
		if ctx.Err() != nil {
			return Response{}, ctx.Err()
		}
		return Response{}, ErrNoDaemon
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(timeout))
	b, _ := json.Marshal(req)
	if _, err := c.Write(append(b, '\n')); err != nil {
		return Response{}, fmt.Errorf("control socket %s: %w", path, err)
	}
	line, err := bufio.NewReader(c).ReadBytes('\n')
	if err != nil {
		return Response{}, fmt.Errorf("control socket %s: no answer: %w", path, err)
	}
	var resp Response
	if err := json.Unmarshal(line, &resp); err != nil {
		return Response{}, fmt.Errorf("control socket %s: bad answer: %w", path, err)
	}
	if resp.Error != "" && !resp.OtherState {
		return resp, &RemoteError{Code: resp.Code, Msg: resp.Error}
	}
	return resp, nil
}
