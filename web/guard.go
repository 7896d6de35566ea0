package web

// This file holds the page's policy on who may talk to it, checked before
// any handler runs:
//
//   - The Host must name this server: an IP address, localhost, the
//     device's own names or [http] allowed_hosts. A page on another site
//     whose name an attacker re-points at the device (DNS rebinding)
//     arrives with that site's name as Host and gets 421; an IP address
//     can never be such a name, so every one is served.
//   - A POST must come from the page itself: a browser's Sec-Fetch-Site or
//     Origin naming another site gets 403 (net/http's
//     CrossOriginProtection), on top of the form token.
//   - Wrong basic-auth passwords are logged, at most one line a minute per
//     client with a count, and slowed down per client: each failure in a
//     row is answered later than the one before, up to authMaxDelay, and
//     while that delay runs the client's other attempts get 429 without
//     their password being checked, so parallel guessing gains nothing.
//     A right password resets it. The table of clients is bounded.

import (
	"crypto/sha256"
	"crypto/subtle"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jonboulle/clockwork"
)

// Limits of the basic-auth guard.
const (
	authFirstDelay = 500 * time.Millisecond // the second failure in a row
	authMaxDelay   = 10 * time.Second       // well under the server's 30 s write timeout
	authForget     = 15 * time.Minute       // a client quiet this long starts afresh
	authLogEvery   = time.Minute            // at most one failure line per client
	authMaxClients = 1024                   // clients remembered at once
)

// hostAllowed reports whether host (a request's Host, with or without a
// port) names this server: an IP address, localhost, or one of names
// (lower case, without a final dot). An empty Host (HTTP/1.0) is not a
// browser's and passes.
func hostAllowed(host string, names []string) bool {
	if host == "" {
		return true
	}
	h := host
	if hh, _, err := net.SplitHostPort(host); err == nil {
		h = hh
	}
	h = strings.TrimSuffix(strings.ToLower(strings.TrimSuffix(strings.TrimPrefix(h, "["), "]")), ".")
	if _, err := netip.ParseAddr(h); err == nil {
		return true
	}
	return h == "localhost" || slices.Contains(names, h)
}

// hostNames normalises the names the page answers to.
func hostNames(names []string) []string {
	out := make([]string, 0, len(names))
	for _, n := range names {
		if n = strings.TrimSuffix(strings.ToLower(strings.TrimSpace(n)), "."); n != "" {
			out = append(out, n)
		}
	}
	return out
}

// checkOrigin refuses a request the page did not send itself: wrong Host
// (421) or a cross-site POST (403). It reports whether it answered.
func (s *Server) checkOrigin(w http.ResponseWriter, r *http.Request) bool {
	if !hostAllowed(r.Host, s.hosts) {
		s.opts.Log.Debug("status page: request for another host refused", "host", r.Host, "client", r.RemoteAddr)
		http.Error(w, fmt.Sprintf("vigil does not answer to host %q: add the name to [http] allowed_hosts", r.Host), http.StatusMisdirectedRequest)
		return true
	}
	if err := s.cop.Check(r); err != nil {
		s.opts.Log.Debug("status page: cross-site request refused", "client", r.RemoteAddr, "origin", r.Header.Get("Origin"), "err", err)
		http.Error(w, "cross-site request refused: use the page's own buttons", http.StatusForbidden)
		return true
	}
	return false
}

// authGuard counts wrong passwords per client.
type authGuard struct {
	clock clockwork.Clock
	log   *slog.Logger

	mu      sync.Mutex
	clients map[string]*authClient
}

type authClient struct {
	fails    int       // wrong passwords in a row
	next     time.Time // attempts before this get 429, unchecked
	last     time.Time // last failure
	logged   time.Time // last log line
	unlogged int       // failures since that line
	refused  int       // attempts refused since that line
}

func newAuthGuard(clock clockwork.Clock, log *slog.Logger) *authGuard {
	return &authGuard{clock: clock, log: log, clients: map[string]*authClient{}}
}

// clientKey names a client by its address: the IP, or an IPv6 address's
// /64, which one machine holds whole.
func clientKey(remote string) string {
	host, _, err := net.SplitHostPort(remote)
	if err != nil {
		host = remote
	}
	a, err := netip.ParseAddr(host)
	if err != nil {
		return host
	}
	a = a.Unmap()
	if a.Is6() {
		p, _ := a.Prefix(64)
		return p.String()
	}
	return a.String()
}

// authDelay is how long the answer to the n-th wrong password in a row
// waits: none for the first (a typo), then doubling up to authMaxDelay.
func authDelay(n int) time.Duration {
	if n <= 1 {
		return 0
	}
	d := authFirstDelay
	for i := 2; i < n && d < authMaxDelay; i++ {
		d *= 2
	}
	return min(d, authMaxDelay)
}

// wait returns how long the client must still wait before its password is
// checked again (counting the attempt as refused), or 0.
func (g *authGuard) wait(key string) time.Duration {
	g.mu.Lock()
	defer g.mu.Unlock()
	c := g.clients[key]
	if c == nil {
		return 0
	}
	d := c.next.Sub(g.clock.Now())
	if d <= 0 {
		return 0
	}
	c.refused++
	return d
}

// failed records a wrong password and returns how long to hold the answer.
func (g *authGuard) failed(key string) time.Duration {
	g.mu.Lock()
	defer g.mu.Unlock()
	now := g.clock.Now()
	c := g.clients[key]
	if c != nil && now.Sub(c.last) > authForget {
		c.fails = 0 // long quiet: start afresh, keeping the log's count
	}
	if c == nil {
		g.makeRoom(now)
		c = &authClient{}
		g.clients[key] = c
	}
	c.fails++
	c.unlogged++
	c.last = now
	d := authDelay(c.fails)
	c.next = now.Add(d)
	if c.logged.IsZero() || now.Sub(c.logged) >= authLogEvery {
		g.log.Warn("status page: wrong user or password", "client", key, "failures", c.unlogged, "refused", c.refused,
			"in_a_row", c.fails, "delay", d)
		c.logged, c.unlogged, c.refused = now, 0, 0
	}
	return d
}

// succeeded resets the client's count; a login after failures is logged.
func (g *authGuard) succeeded(key string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	c := g.clients[key]
	if c == nil {
		return
	}
	if c.fails > 0 {
		g.log.Warn("status page: login after failed attempts", "client", key, "failures", c.fails)
	}
	c.fails, c.next = 0, time.Time{}
	if c.unlogged == 0 && c.refused == 0 {
		delete(g.clients, key)
	}
}

// makeRoom drops clients quiet for authForget and, if the table is still
// full, the one whose last failure is oldest. Called with mu held.
func (g *authGuard) makeRoom(now time.Time) {
	if len(g.clients) < authMaxClients {
		return
	}
	var oldest string
	for k, c := range g.clients {
		if now.Sub(c.last) > authForget {
			delete(g.clients, k)
			continue
		}
		if oldest == "" || c.last.Before(g.clients[oldest].last) {
			oldest = k
		}
	}
	if len(g.clients) >= authMaxClients {
		delete(g.clients, oldest)
	}
}

func (g *authGuard) size() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return len(g.clients)
}

// checkAuth answers a request without the right basic-auth credentials
// and reports whether it did.
func (s *Server) checkAuth(w http.ResponseWriter, r *http.Request) bool {
	u, p, ok := r.BasicAuth()
	if !ok { // the browser asking for a password: not a failure
		challenge(w)
		return true
	}
	key := clientKey(r.RemoteAddr)
	if d := s.guard.wait(key); d > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(int((d+time.Second-1)/time.Second)))
		http.Error(w, "too many wrong passwords: try again in a few seconds", http.StatusTooManyRequests)
		return true
	}
	uok := sameSecret(u, s.opts.Username)
	pok := sameSecret(p, s.opts.Password)
	if uok && pok {
		s.guard.succeeded(key)
		return false
	}
	if d := s.guard.failed(key); d > 0 {
		t := s.opts.Clock.NewTimer(d)
		select {
		case <-t.Chan():
		case <-r.Context().Done():
			t.Stop()
		}
	}
	challenge(w)
	return true
}

// sameSecret compares in constant time, whatever the lengths.
func sameSecret(a, b string) bool {
	ha, hb := sha256.Sum256([]byte(a)), sha256.Sum256([]byte(b))
	return subtle.ConstantTimeCompare(ha[:], hb[:]) == 1
}

func challenge(w http.ResponseWriter) {
	w.Header().Set("WWW-Authenticate", `Basic realm="vigil", charset="UTF-8"`)
	http.Error(w, "unauthorized", http.StatusUnauthorized)
}
