package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"slices"
	"time"

	"github.com/vigil-iot/vigil/config"
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

// webRules tells the page which readings each rule watches and which
// thresholds to draw.
func webRules(cfg *config.Config) []web.RuleInfo {
	var out []web.RuleInfo
	for _, r := range cfg.Rules {
		spec, err := r.Spec()
		if err != nil {
			continue // Parse has compiled every rule
		}
		ri := web.RuleInfo{Name: spec.Name, Keys: spec.When.Keys(), Thresholds: spec.When.Thresholds()}
		if spec.Clear != nil {
			ri.Keys = append(ri.Keys, spec.Clear.Keys()...)
		}
		slices.Sort(ri.Keys)
		ri.Keys = slices.Compact(ri.Keys)
		out = append(out, ri)
	}
	return out
}

// listenWeb opens [http] listen, or returns nil when it is not set.
func listenWeb(cfg *config.Config, a *app, log *slog.Logger) (*webServer, error) {
	if cfg.HTTP.Listen == "" {
		return nil, nil
	}
	page, err := web.New(a.engine, &commands{app: a}, web.Options{
		Allowed:  cfg.Manage.Remote,
		Username: cfg.HTTP.Username,
		Password: cfg.HTTP.Password.Value(),
		Location: cfg.Device.Location,
		Rules:    webRules(cfg),
		Now:      time.Now,
		Log:      log,
		Runtime: func(context.Context) (web.Runtime, error) {
			cfg := a.current()
			rt, err := runtimeView(cfg, a.db)
			return forRemote(rt, cfg.Manage), err
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
	done := make(chan struct{})
	go func() {
		select {
		case <-ctx.Done():
		case <-done:
			return
		}
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), shutdownGrace)
		defer cancel()
		_ = w.srv.Shutdown(sctx)
	}()
	err := w.srv.Serve(w.ln)
	close(done)
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return fmt.Errorf("status page: %w", err)
}
