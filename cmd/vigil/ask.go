package main

// Every command that a running daemon answers asks it first, over the
// control socket; with none running it works on the state file itself
// (read-only for what only reads). daemonOr is that choice, once.

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/vigil-iot/vigil/config"
	"github.com/vigil-iot/vigil/daemon"
	"github.com/vigil-iot/vigil/internal/termtext"
	"github.com/vigil-iot/vigil/manage"
	"github.com/vigil-iot/vigil/transport"
)

// client asks the daemon that watches cfg's state directory.
func (e *env) client(cfg *config.Config) *daemon.Client {
	return daemon.NewClient(cfg, runtimeDir())
}

// runtimeDir is the first directory of $RUNTIME_DIRECTORY (systemd sets it
// from RuntimeDirectory=), or "".
func runtimeDir() string {
	d, _, _ := strings.Cut(os.Getenv("RUNTIME_DIRECTORY"), ":")
	return d
}

// cliCtx marks a command run by the CLI on the state file.
func cliCtx(ctx context.Context) context.Context {
	return transport.WithSource(ctx, transport.Source{Channel: transport.ChannelCLI})
}

// daemonOr asks the daemon that watches cfg's state directory (req, within
// timeout) and returns its answer; with none running it runs offline
// instead and returns nil.
func (e *env) daemonOr(ctx context.Context, cfg *config.Config, req daemon.Request, timeout time.Duration, offline func() error) (*daemon.Response, error) {
	resp, err := e.client(cfg).Call(ctx, req, timeout)
	switch {
	case err == nil:
		return &resp, nil
	case errors.Is(err, daemon.ErrNoDaemon):
		return nil, offline()
	}
	return nil, err
}

// answer is the daemon's answer to req, or with none running the one
// offline gives.
func (e *env) answer(ctx context.Context, cfg *config.Config, req daemon.Request, timeout time.Duration, offline func() (string, error)) (string, error) {
	var txt string
	resp, err := e.daemonOr(ctx, cfg, req, timeout, func() error {
		var err error
		txt, err = offline()
		return err
	})
	if err != nil {
		return "", err
	}
	if resp != nil {
		txt = resp.Text
	}
	return txt, nil
}

// change is a command that changes something: the daemon makes it, or,
// with none running, an App on the state file (with base: the run-time
// settings too) does, and note is added to its answer. precheck, when not
// nil, refuses a change before a state file that does not exist yet is
// created for it.
type change struct {
	req      daemon.Request
	do       func(context.Context, *daemon.Commander) (string, error)
	base     *manage.Base
	note     string
	precheck func(*manage.Base) error
}

// change makes c and prints the answer.
func (e *env) change(ctx context.Context, cfg *config.Config, c change) error {
	txt, err := e.answer(ctx, cfg, c.req, 30*time.Second, func() (string, error) {
		if _, err := os.Stat(daemon.DBPath(cfg)); err != nil && c.precheck != nil {
			if err := c.precheck(c.base); err != nil {
				return "", err
			}
		}
		a, err := e.newApp(ctx, cfg, c.base, inZone(e.logger(), cfg.Device.Location), parts{}, daemon.Options{Store: daemon.StoreWrite})
		if err != nil {
			return "", err
		}
		defer a.Close()
		out, err := c.do(cliCtx(ctx), a.Commander())
		return strings.TrimRight(out, "\n") + c.note, err
	})
	if err != nil {
		return err
	}
	fmt.Fprintln(e.stdout, termtext.Text(strings.TrimRight(txt, "\n")))
	return nil
}
