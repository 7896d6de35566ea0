package daemon

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/vigil-iot/vigil/config"
	"github.com/vigil-iot/vigil/manage"
	"github.com/vigil-iot/vigil/status"
	"github.com/vigil-iot/vigil/web"
)

// Timeouts of the status page's server: a slow or idle client holds a
// connection for seconds, not forever.
const (
	httpReadHeaderTimeout = 5 * time.Second
	httpReadTimeout       = 10 * time.Second
	httpWriteTimeout      = 30 * time.Second // a check runs the LLM within the request
	httpIdleTimeout       = 60 * time.Second
)

// webServer is the optional status page: a listener and an http.Server,
// nothing else running until a request comes in.
type webServer struct {
	ln  net.Listener
	srv *http.Server
	log *slog.Logger
}

// pageLive is what the page takes from the config in force on each
// request: the verbs [manage] remote allows, the rules' lines and the
// device's time zone.
func pageLive(cfg *config.Config) web.Live {
	return web.Live{Allowed: cfg.Manage.Remote, Location: cfg.Device.Location, Rules: status.Rules(cfg)}
}

// pageHosts are the names the status page answers to besides its IP
// addresses and localhost: the machine's host name, its first label and
// that label under .local (as Avahi announces it), then [http]
// allowed_hosts. A name only the device's own network resolves is no
// name an attacker's page can be rebound from.
func pageHosts(host string, allowed []string) []string {
	var out []string
	if host = strings.ToLower(strings.TrimSuffix(host, ".")); host != "" {
		short, _, _ := strings.Cut(host, ".")
		out = append(out, host, short, short+".local")
	}
	out = append(out, allowed...)
	slices.Sort(out)
	return slices.Compact(out)
}

func hostname() string {
	h, _ := os.Hostname()
	return h
}

// listenWeb opens [http] listen, or returns nil when it is not set.
func listenWeb(cfg *config.Config, a *App, log *slog.Logger) (*webServer, error) {
	if cfg.HTTP.Listen == "" {
		return nil, nil
	}
	page, err := web.New(a.engine, a.cmds, web.Options{
		// A reload changes what the page offers and shows; [http] needs a
		// restart (apply keeps it).
		Current:  func() web.Live { return pageLive(a.current()) },
		Username: cfg.HTTP.Username,
		Password: cfg.HTTP.Password.Value(),
		Now:      a.wall,
		Clock:    a.clock,
		Hosts:    pageHosts(hostname(), cfg.HTTP.AllowedHosts),
		Log:      log,
		Runtime: func(context.Context) (manage.Runtime, error) {
			cfg := a.current()
			rt, err := manage.RuntimeView(cfg, a.db)
			return manage.ForRemote(rt, cfg.Manage), err
		},
		RuleBook: func(context.Context) (manage.RulesView, error) {
			rb, err := a.rulesView()
			rb.Decided = nil // the page shows the rules in force and what waits, as the status does
			return rb, err
		},
	})
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", cfg.HTTP.Listen)
	if err != nil {
		return nil, fmt.Errorf("status page: %w", err)
	}
	srv := &http.Server{
		Handler:           page,
		ReadHeaderTimeout: httpReadHeaderTimeout,
		ReadTimeout:       httpReadTimeout,
		WriteTimeout:      httpWriteTimeout,
		IdleTimeout:       httpIdleTimeout,
		MaxHeaderBytes:    web.MaxHeaderBytes,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelDebug),
	}
	auth := "none (loopback)"
	if cfg.HTTP.Password.Value() != "" {
		auth = "basic"
	}
	log.Info("status page", "url", "http://"+ln.Addr().String()+"/", "auth", auth)
	return &webServer{ln: ln, srv: srv, log: log}, nil
}

// Serve serves until ctx ends, then closes the listener and the open
// connections within shutdownGrace.
func (w *webServer) Serve(ctx context.Context) error {
	shut := make(chan struct{})
	stop := context.AfterFunc(ctx, func() {
		defer close(shut)
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), shutdownGrace)
		defer cancel()
		_ = w.srv.Shutdown(sctx)
	})
	err := w.srv.Serve(w.ln)
	if !stop() {
		<-shut // the shutdown began: wait for the connections it closes
	}
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return fmt.Errorf("status page: %w", err)
}
