package web

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/jonboulle/clockwork"

	"github.com/vigil-iot/vigil/alert"
	"github.com/vigil-iot/vigil/manage"
	"github.com/vigil-iot/vigil/status"
	"github.com/vigil-iot/vigil/transport"
)

// Source is what the page shows: the engine, or a fake in tests. The
// status and history come through the one status view (package status).
type Source interface {
	status.Source
	Alerts(ctx context.Context, n int) ([]alert.Alert, error)
}

// Controller runs the page's buttons (roles declared in package
// transport): pause and resume, check, test-alert, and Acknowledge, whose
// target is a problem's alert id (or its name) and which refuses with
// transport.ErrNotFiring when the problem resolved meanwhile; Approve and
// Reject of a rule the model proposed (RuleDecide, which refuses a decided
// or unknown ID with alert.ErrNoProposal).
type Controller interface {
	transport.Pauser
	transport.Checker
	transport.AlertTester
	transport.Acker
	transport.RuleDecider
}

// Live is what the page takes from the config in force: a reload changes
// it while the page is open.
type Live struct {
	Allowed  []string       // [manage] remote: the verbs the page may run
	Location *time.Location // device time zone for every time shown; nil is UTC
	Rules    []status.RuleInfo
}

// allows reports whether [manage] remote lets the page run verb.
func (l Live) allows(verb string) bool { return slices.Contains(l.Allowed, verb) }

// Options configure a Server.
type Options struct {
	// Live is fixed for the Server's life unless Current is set.
	Live
	// Current, when set, gives Live on every request: the config in force,
	// which a reload changes. What it cannot change (the listener, the
	// login, Hosts) is fixed at start.
	Current  func() Live
	Username string // basic auth, when Password is set
	Password string
	Now      func() time.Time // wall clock
	Clock    clockwork.Clock  // waits (the basic-auth slow-down)
	// Hosts are the names the page answers to besides IP addresses and
	// localhost: the device's host names and [http] allowed_hosts.
	Hosts []string
	Log   *slog.Logger
	// Runtime gives the run-time settings, the checklist in force and the
	// model's notes; nil shows none.
	Runtime func(ctx context.Context) (manage.Runtime, error)
	// RuleBook gives the rules in force and the proposals waiting for a
	// person (status.View.RuleBook); nil shows none.
	RuleBook func(ctx context.Context) (manage.RulesView, error)
}

// Limits on requests; the daemon's http.Server (daemon/web.go) adds the
// timeouts.
const (
	MaxHeaderBytes = 8 << 10
	maxFormBytes   = 4 << 10
	pauseDefault   = 60 * time.Minute
	chartWindow    = 24 * time.Hour
	timelineLen    = 20
	maxTarget      = 128 // an ack's target: an alert id is at most 81 bytes
)

// Server serves the status page. It holds no goroutine and no timer.
type Server struct {
	src  Source
	ctl  Controller
	opts Options
	csrf string // per start: a POST must carry it
	mux  *http.ServeMux

	hosts []string                    // Options.Hosts, lower case
	cop   *http.CrossOriginProtection // refuses cross-site POSTs
	guard *authGuard
}

// New returns a Server with a fresh CSRF token.
func New(src Source, ctl Controller, opts Options) (*Server, error) {
	if opts.Log == nil {
		opts.Log = slog.New(slog.DiscardHandler)
	}
	if opts.Now == nil {
		return nil, errors.New("web: Options.Now is required")
	}
	if opts.Clock == nil {
		return nil, errors.New("web: Options.Clock is required")
	}
	var tok [18]byte
	if _, err := rand.Read(tok[:]); err != nil {
		return nil, fmt.Errorf("web: csrf token: %w", err)
	}
	s := &Server{src: src, ctl: ctl, opts: opts, csrf: base64.RawURLEncoding.EncodeToString(tok[:]),
		hosts: hostNames(opts.Hosts), cop: http.NewCrossOriginProtection(), guard: newAuthGuard(opts.Clock, opts.Log)}
	m := http.NewServeMux()
	m.HandleFunc("GET /{$}", s.page)
	m.HandleFunc("GET /api/status", s.apiStatus)
	m.HandleFunc("GET /api/history", s.apiHistory)
	m.HandleFunc("GET /metrics", s.metrics)
	m.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		fmt.Fprintln(w, "ok")
	})
	m.HandleFunc("POST /do/{verb}", s.do)
	s.mux = m
	return s, nil
}

// csp allows the page's one inline style sheet (by its hash), no script, no
// frames, and forms that post back to this server.
var csp = "default-src 'none'; style-src 'sha256-" + styleHash() + "'; img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"

func styleHash() string {
	sum := sha256.Sum256([]byte(pageCSS))
	return base64.StdEncoding.EncodeToString(sum[:])
}

// ServeHTTP sets the security headers, refuses requests for another host
// and cross-site POSTs, and checks basic auth (guard.go). /healthz, which
// says nothing but "ok", is open to every probe.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Security-Policy", csp)
	h.Set("X-Frame-Options", "DENY")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cache-Control", "no-store")
	if r.URL.Path != "/healthz" {
		if s.checkOrigin(w, r) {
			return
		}
		if s.opts.Password != "" && s.checkAuth(w, r) {
			return
		}
	}
	s.mux.ServeHTTP(w, r)
}

// live is Live as the config in force has it now; a request takes it once.
func (s *Server) live() Live {
	l := s.opts.Live
	if s.opts.Current != nil {
		l = s.opts.Current()
	}
	if l.Location == nil {
		l.Location = time.UTC
	}
	return l
}

// refuse answers 403 when [manage] remote does not list verb.
func refuse(w http.ResponseWriter, l Live, verb string) bool {
	if l.allows(verb) {
		return false
	}
	http.Error(w, fmt.Sprintf("%q is not in [manage] remote", verb), http.StatusForbidden)
	return true
}

func (s *Server) fail(w http.ResponseWriter, r *http.Request, err error) {
	s.opts.Log.Warn("status page", "path", r.URL.Path, "err", err)
	http.Error(w, err.Error(), http.StatusInternalServerError)
}

func (s *Server) apiStatus(w http.ResponseWriter, r *http.Request) {
	if refuse(w, s.live(), "status") {
		return
	}
	v, err := s.gather(r.Context(), s.opts.Now().Add(-status.Window))
	if err != nil {
		s.fail(w, r, err)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_ = writeJSONDoc(w, v)
}

// gather is the one status view, with the rule book when it can be read
// (the page shows the rest all the same).
func (s *Server) gather(ctx context.Context, since time.Time) (status.View, error) {
	v, err := status.Gather(ctx, s.src, s.opts.Runtime, since)
	if err != nil || s.opts.RuleBook == nil {
		return v, err
	}
	if rb, err := s.opts.RuleBook(ctx); err == nil {
		v.RuleBook = &rb
	} else {
		s.opts.Log.Warn("status page: read the rules and proposals", "err", err)
	}
	return v, nil
}

func (s *Server) apiHistory(w http.ResponseWriter, r *http.Request) {
	live := s.live()
	if refuse(w, live, "status") {
		return
	}
	q := r.URL.Query()
	window := 24 * time.Hour
	if v := q.Get("since"); v != "" {
		d, err := status.ParseSince(v)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		window = d
	}
	since := s.opts.Now().Add(-window)
	series, err := s.src.History(r.Context(), since)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	series = status.Filter(series, q.Get("reading"))
	if q.Get("format") == "csv" {
		w.Header().Set("Content-Type", "text/csv; charset=utf-8")
		_ = status.WriteCSV(w, series, live.Location)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_ = status.WriteJSON(w, series, since, live.Location)
}

// do runs a button: a POST with the per-start CSRF token, then back to the
// page (303), so the page needs no script.
func (s *Server) do(w http.ResponseWriter, r *http.Request) {
	verb := r.PathValue("verb")
	if !slices.Contains([]string{"pause", "resume", "check", "test-alert", "ack", "rule"}, verb) {
		http.NotFound(w, r)
		return
	}
	if refuse(w, s.live(), verb) {
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, maxFormBytes)
	if err := r.ParseForm(); err != nil {
		http.Error(w, "bad form: "+err.Error(), http.StatusBadRequest)
		return
	}
	if subtle.ConstantTimeCompare([]byte(r.PostForm.Get("csrf")), []byte(s.csrf)) != 1 {
		http.Error(w, "stale or missing form token: reload the page", http.StatusForbidden)
		return
	}
	ctx := transport.WithSource(r.Context(), transport.Source{Channel: transport.ChannelWeb})
	var msg string
	var err error
	switch verb {
	case "pause":
		// The range is the commands' own, the same on every channel.
		d := pauseDefault
		if m := r.PostForm.Get("minutes"); m != "" {
			n, perr := strconv.Atoi(m)
			if perr != nil {
				http.Error(w, fmt.Sprintf("minutes must be a whole number (got %q)", m), http.StatusBadRequest)
				return
			}
			d = time.Duration(n) * time.Minute
		}
		msg, err = s.ctl.Pause(ctx, d)
	case "resume":
		msg, err = s.ctl.Resume(ctx)
	case "check":
		msg, err = s.ctl.Check(ctx)
	case "test-alert":
		msg, err = s.ctl.TestAlert(ctx)
	case "ack":
		target := r.PostForm.Get("target")
		if target == "" || len(target) > maxTarget || strings.ContainsFunc(target, unicode.IsSpace) {
			http.Error(w, fmt.Sprintf("target must be one problem's alert id or name (got %q)", target), http.StatusBadRequest)
			return
		}
		msg, err = s.ctl.Ack(ctx, target)
	case "rule": // Approve or Reject: a proposal's ID
		op, target := r.PostForm.Get("op"), r.PostForm.Get("target")
		if (op != transport.RuleApprove && op != transport.RuleReject) || target == "" || len(target) > maxTarget || strings.ContainsFunc(target, unicode.IsSpace) {
			http.Error(w, fmt.Sprintf("want op approve or reject and one proposal's ID (got %q %q)", op, target), http.StatusBadRequest)
			return
		}
		msg, err = s.ctl.RuleDecide(ctx, op, target)
		verb = op
	}
	switch {
	case errors.Is(err, transport.ErrPauseRange), errors.Is(err, transport.ErrNotice), errors.Is(err, transport.ErrAmbiguous):
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	case errors.Is(err, transport.ErrNotFiring), errors.Is(err, alert.ErrNoProposal): // it resolved, or was decided, while the page was open
		http.Error(w, err.Error(), http.StatusConflict)
		return
	case errors.Is(err, alert.ErrNotAllowed): // a reload took verb out of [manage] remote meanwhile
		http.Error(w, err.Error(), http.StatusForbidden)
		return
	case errors.Is(err, transport.ErrRateLimited): // too many changes from the page in the last minute
		http.Error(w, err.Error(), http.StatusTooManyRequests)
		return
	}
	if err != nil {
		s.fail(w, r, fmt.Errorf("%s: %w", verb, err))
		return
	}
	s.opts.Log.Info("status page command", "cmd", verb, "result", firstLine(msg))
	http.Redirect(w, r, "/?done="+verb, http.StatusSeeOther)
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	return s
}

// Token returns the per-start CSRF token (for tests).
func (s *Server) Token() string { return s.csrf }
