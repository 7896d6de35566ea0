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
//   - Basic-auth credentials are always checked, in constant time, and
//     the right ones pass at once: the slow-down never holds them. A
//     client key (an IP, an IPv6 /64) may be shared by the owner and a
//     guesser (a reverse proxy, loopback), so nothing a guesser does on
//     the key may lock the owner out, and a right password does not reset
//     the key's count either (that would give the guesser a fresh start).
//   - Only the answer to a wrong password is held, and a guesser learns
//     nothing before it: each wrong one in a row from a client is answered
//     later than the one before (after the answer to the one before, up to
//     authMaxDelay more), so guesses sent in parallel come back one at a
//     time. Across all clients there is a budget of authBudget wrong
//     passwords a minute; once it is spent, their answers go out one per
//     authBudgetEvery, whatever the number of clients (a guesser that rotates addresses or IPv6 prefixes beyond the
//     bounded table still meets it). A wrong password whose turn lies more
//     than authMaxHold away takes no turn and gets 429 after authMaxHold,
//     under the server's write timeout. So a guesser holding N connections
//     open learns at most about N answers per authMaxHold beyond the turns.
//   - Wrong passwords are logged at most one line a minute for all
//     clients, with the counts and the client with the most.

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
	authMaxDelay   = 10 * time.Second       // one client's failures in a row
	authMaxHold    = 20 * time.Second       // any answer; under the server's 30 s write timeout
	authForget     = 15 * time.Minute       // a client quiet this long starts afresh
	authLogEvery   = time.Minute            // at most one failure line, for all clients
	authMaxClients = 1024                   // clients remembered at once

	authBudget      = 30                       // failures a minute across all clients ...
	authBudgetEvery = time.Minute / authBudget // ... answered one per this once spent
	authBurst       = (authBudget - 1) * authBudgetEvery
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

// authGuard counts wrong passwords per client and across all clients.
type authGuard struct {
	clock clockwork.Clock
	log   *slog.Logger

	mu      sync.Mutex
	clients map[string]*authClient
	// tat is the budget's theoretical arrival time (GCRA): a failure
	// answered now moves it authBudgetEvery on; a failure arriving while
	// it lies more than authBurst ahead waits for the excess.
	tat time.Time
	// The log line a minute, for all clients at once.
	logged   time.Time // last line
	window   uint64    // counts the lines, to tell a client's first failure since the last one
	unlogged int       // wrong passwords answered since that line
	refused  int       // of which answered 429 after the longest hold
	nclients int       // clients with a failure since that line
	top      string    // the client with the most of them
	topN     int
}

type authClient struct {
	fails      int       // wrong passwords in a row (none more than authForget apart)
	free       time.Time // when the answer to its last failure goes out
	last       time.Time // last wrong password
	window     uint64    // the guard's window of inWindow
	inWindow   int       // failures since the guard's last log line
	sinceLogin int       // failures since the last logged login
	loginLog   time.Time // the last "login after failed attempts" line
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

// failed records a wrong password from key and returns how long to hold
// its answer, and whether the answer is 429 (its turn lies beyond
// authMaxHold: it takes no turn, and is answered after the longest hold)
// with the wait to suggest in Retry-After.
func (g *authGuard) failed(key string) (hold time.Duration, refuse bool, retry time.Duration) {
	g.mu.Lock()
	defer g.mu.Unlock()
	now := g.clock.Now()
	c := g.clients[key]
	if c != nil && now.Sub(c.last) > authForget {
		c.fails = 0 // long quiet: start afresh
	}
	if c == nil {
		g.makeRoom(now)
		c = &authClient{}
		g.clients[key] = c
	}
	// The client's turn: after the answer to its last failure, by the
	// delay for this one in the row.
	fails := c.fails + 1
	own := later(c.free, now).Add(authDelay(fails)).Sub(now)
	// The budget's turn, across all clients.
	tat := later(g.tat, now)
	budget := max(tat.Sub(now)-authBurst, 0)
	hold = max(own, budget)
	c.last = now
	if hold > authMaxHold {
		hold, refuse, retry = authMaxHold, true, hold
	} else {
		c.fails, c.free = fails, now.Add(hold)
		g.tat = tat.Add(authBudgetEvery)
	}
	c.sinceLogin++
	if c.window != g.window || c.inWindow == 0 {
		c.window, c.inWindow = g.window, 0
		g.nclients++
	}
	c.inWindow++
	g.unlogged++
	if refuse {
		g.refused++
	}
	if c.inWindow > g.topN {
		g.top, g.topN = key, c.inWindow
	}
	if g.logged.IsZero() || now.Sub(g.logged) >= authLogEvery {
		g.log.Warn("status page: wrong user or password", "client", g.top, "client_failures", g.topN,
			"clients", g.nclients, "failures", g.unlogged, "refused", g.refused, "delay", hold)
		g.logged, g.window = now, g.window+1
		g.unlogged, g.refused, g.nclients, g.top, g.topN = 0, 0, 0, "", 0
	}
	return hold, refuse, retry
}

// later returns the later of a and b.
func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// succeeded notes a right password: the first after failures from key is
// logged (at most once a minute per client). It neither waits nor resets
// the count: a client key may be shared (a reverse proxy, loopback), and a
// reset would hand a guesser behind it a fresh start at each of the
// owner's requests.
func (g *authGuard) succeeded(key string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	c := g.clients[key]
	if c == nil || c.sinceLogin == 0 {
		return
	}
	now := g.clock.Now()
	if !c.loginLog.IsZero() && now.Sub(c.loginLog) < authLogEvery {
		return
	}
	g.log.Warn("status page: login after failed attempts", "client", key, "failures", c.sinceLogin)
	c.sinceLogin, c.loginLog = 0, now
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
// and reports whether it did. The credentials are checked first, always:
// the right ones pass at once, whatever the failures from the same client
// key. Only the answer to a wrong one is held.
func (s *Server) checkAuth(w http.ResponseWriter, r *http.Request) bool {
	u, p, ok := r.BasicAuth()
	if !ok { // the browser asking for a password: not a failure
		challenge(w)
		return true
	}
	key := clientKey(r.RemoteAddr)
	uok := sameSecret(u, s.opts.Username)
	pok := sameSecret(p, s.opts.Password)
	if uok && pok {
		s.guard.succeeded(key)
		return false
	}
	hold, refuse, retry := s.guard.failed(key)
	if hold > 0 {
		t := s.opts.Clock.NewTimer(hold)
		select {
		case <-t.Chan():
		case <-r.Context().Done():
			t.Stop()
		}
	}
	if refuse {
		w.Header().Set("Retry-After", strconv.Itoa(int((retry-hold+time.Second-1)/time.Second)))
		http.Error(w, "too many wrong passwords: try again later", http.StatusTooManyRequests)
		return true
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
