package web

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"

	"github.com/vigil-iot/vigil/internal/logtest"
)

// request sends one request to h with the Host, headers and remote address
// given, as a browser (or an attacker) would.
func request(t *testing.T, h http.Handler, method, target, host, remote string, hdr map[string]string, form url.Values) *http.Response {
	t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	r := httptest.NewRequest(method, target, body)
	r.Host = host
	if remote != "" {
		r.RemoteAddr = remote
	}
	if form != nil {
		r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	for k, v := range hdr {
		r.Header.Set(k, v)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w.Result()
}

// TestHostMustNameThisServer: a page rebound to the device (DNS rebinding)
// arrives with the attacker's name as Host and is refused, with the token
// never shown; IP addresses, localhost, the device's names and the names in
// [http] allowed_hosts are served.
func TestHostMustNameThisServer(t *testing.T) {
	f := newFake(t0, 1)
	s := newTestServer(t, f, Options{Live: Live{Allowed: []string{"status", "pause", "resume"}}, Hosts: []string{"greenhouse", "greenhouse.local", "Vigil.LAN"}})
	tests := []struct {
		host string
		code int
	}{
		{"127.0.0.1:8080", 200},
		{"127.0.0.1", 200},
		{"[::1]:8080", 200},
		{"[::1]", 200},
		{"192.168.1.20:8080", 200},
		{"localhost:9000", 200}, // an ssh tunnel to another local port
		{"LOCALHOST", 200},
		{"greenhouse:8080", 200},
		{"greenhouse.local", 200},
		{"vigil.lan", 200},
		{"VIGIL.LAN.:8080", 200},
		{"attacker.example", http.StatusMisdirectedRequest},
		{"attacker.example:8080", http.StatusMisdirectedRequest},
		{"vigil.lan.attacker.example", http.StatusMisdirectedRequest},
		{"localhost.attacker.example", http.StatusMisdirectedRequest},
		{"127.0.0.1.nip.io:8080", http.StatusMisdirectedRequest},
	}
	for _, tt := range tests {
		resp := request(t, s, "GET", "/", tt.host, "", nil, nil)
		body, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != tt.code {
			t.Errorf("GET / with Host %q = %d, want %d", tt.host, resp.StatusCode, tt.code)
		}
		if tt.code != 200 && strings.Contains(string(body), s.Token()) {
			t.Errorf("GET / with Host %q shows the form token", tt.host)
		}
		if tt.code != 200 && !strings.Contains(string(body), "[http] allowed_hosts") {
			t.Errorf("GET / with Host %q: %.200q does not say how to allow the name", tt.host, body)
		}
	}
	for _, p := range []string{"/api/status", "/api/history", "/metrics"} {
		if resp := request(t, s, "GET", p, "attacker.example", "", nil, nil); resp.StatusCode != http.StatusMisdirectedRequest {
			t.Errorf("GET %s with Host attacker.example = %d, want 421", p, resp.StatusCode)
		}
	}
	if resp := request(t, s, "GET", "/healthz", "attacker.example", "", nil, nil); resp.StatusCode != 200 {
		t.Errorf("GET /healthz with any Host = %d, want 200 (it says only ok)", resp.StatusCode)
	}
	f.calls = nil
	resp := request(t, s, "POST", "/do/pause", "attacker.example", "", nil, url.Values{"csrf": {s.Token()}, "minutes": {"1440"}})
	if resp.StatusCode != http.StatusMisdirectedRequest || len(f.calls) != 0 {
		t.Errorf("POST /do/pause with Host attacker.example = %d with calls %v, want 421 and none", resp.StatusCode, f.calls)
	}
}

// TestCrossSitePostRefused: a form another site posts to the page is
// refused by its Origin or Sec-Fetch-Site, even with the right token; the
// page's own buttons work.
func TestCrossSitePostRefused(t *testing.T) {
	f := newFake(t0, 1)
	s := newTestServer(t, f, Options{Live: Live{Allowed: []string{"status", "resume"}}, Hosts: []string{"vigil.lan"}})
	tests := []struct {
		name string
		host string
		hdr  map[string]string
		code int
	}{
		{"foreign origin", "127.0.0.1:8080", map[string]string{"Origin": "http://attacker.example"}, 403},
		{"foreign origin, same host, other port", "127.0.0.1:8080", map[string]string{"Origin": "http://127.0.0.1:9999"}, 403},
		{"null origin", "127.0.0.1:8080", map[string]string{"Origin": "null"}, 403},
		{"cross-site", "127.0.0.1:8080", map[string]string{"Sec-Fetch-Site": "cross-site", "Origin": "http://attacker.example"}, 403},
		{"same-site", "vigil.lan", map[string]string{"Sec-Fetch-Site": "same-site", "Origin": "http://router.lan"}, 403},
		{"own page", "127.0.0.1:8080", map[string]string{"Sec-Fetch-Site": "same-origin", "Origin": "http://127.0.0.1:8080"}, 303},
		{"own page, old browser", "vigil.lan:8080", map[string]string{"Origin": "http://vigil.lan:8080"}, 303},
		{"no browser", "127.0.0.1:8080", nil, 303},
	}
	for _, tt := range tests {
		f.calls = nil
		resp := request(t, s, "POST", "/do/resume", tt.host, "", tt.hdr, url.Values{"csrf": {s.Token()}})
		want := 0
		if tt.code == 303 {
			want = 1
		}
		if resp.StatusCode != tt.code || len(f.calls) != want {
			t.Errorf("%s: POST /do/resume = %d with calls %v, want %d and %d calls", tt.name, resp.StatusCode, f.calls, tt.code, want)
		}
	}
}

// authServer is a page with basic auth, its clock and its log.
func authServer(t *testing.T) (*Server, *clockwork.FakeClock, *logtest.Buffer) {
	t.Helper()
	clock := clockwork.NewFakeClockAt(t0)
	logs := &logtest.Buffer{}
	f := newFake(t0, 1)
	s := newTestServer(t, f, Options{Live: Live{Allowed: []string{"status"}}, Username: "vigil", Password: "s3cret", Clock: clock, Log: logs.Logger(0)})
	return s, clock, logs
}

// tryLogin sends one request with user and pass from remote, advancing the
// fake clock while the server holds the answer back, and returns the status
// and how long the answer took on the clock.
func tryLogin(t *testing.T, s *Server, clock *clockwork.FakeClock, remote, user, pass string) (int, time.Duration) {
	t.Helper()
	start := clock.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	done := make(chan *http.Response, 1)
	go func() {
		r := httptest.NewRequest("GET", "/", nil)
		r.Host, r.RemoteAddr = "127.0.0.1:8080", remote
		r.SetBasicAuth(user, pass)
		w := httptest.NewRecorder()
		s.ServeHTTP(w, r)
		done <- w.Result()
		cancel()
	}()
	// Step the clock only while the handler waits on it.
	for clock.BlockUntilContext(ctx, 1) == nil {
		clock.Advance(250 * time.Millisecond)
		if clock.Since(start) > time.Minute {
			t.Fatalf("login from %s held for more than a minute", remote)
		}
	}
	select {
	case resp := <-done:
		return resp.StatusCode, clock.Since(start)
	case <-time.After(5 * time.Second):
		t.Fatalf("login from %s: no answer", remote)
		return 0, 0
	}
}

// TestBasicAuthFailuresSlowDownAndLog: each wrong password in a row from
// one client is answered later than the one before (up to a bound), an
// attempt while the client's delay runs is refused unchecked, a right
// password resets it, another client is not slowed, and the failures are
// logged at most once a minute per client, with a count.
func TestBasicAuthFailuresSlowDownAndLog(t *testing.T) {
	s, clock, logs := authServer(t)
	const mallory = "192.0.2.66:40000"
	var delays []time.Duration
	for range 9 {
		code, d := tryLogin(t, s, clock, mallory, "vigil", "guess")
		if code != http.StatusUnauthorized {
			t.Fatalf("wrong password = %d, want 401", code)
		}
		delays = append(delays, d)
	}
	if delays[0] != 0 {
		t.Errorf("the first wrong password waited %v, want no delay (a typo)", delays[0])
	}
	for i := 1; i < len(delays); i++ {
		if delays[i] < delays[i-1] || (delays[i] == delays[i-1] && delays[i] < authMaxDelay) {
			t.Errorf("failure %d waited %v after %v: the delay must grow up to %v (delays %v)", i+1, delays[i], delays[i-1], authMaxDelay, delays)
		}
		if delays[i] > authMaxDelay+250*time.Millisecond {
			t.Errorf("failure %d waited %v, more than the bound %v", i+1, delays[i], authMaxDelay)
		}
	}
	if last := delays[len(delays)-1]; last < authMaxDelay {
		t.Errorf("after 9 failures the delay is %v, want the bound %v (delays %v)", last, authMaxDelay, delays)
	}

	// While its delay runs, the client's next attempts (sent in parallel)
	// are refused without checking the password, even a right one.
	r := httptest.NewRequest("GET", "/", nil)
	r.Host, r.RemoteAddr = "127.0.0.1:8080", mallory
	r.SetBasicAuth("vigil", "guess")
	first := make(chan struct{})
	go func() {
		w := httptest.NewRecorder()
		s.ServeHTTP(w, r)
		close(first)
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := clock.BlockUntilContext(ctx, 1); err != nil {
		t.Fatal("the tenth failure is not held back")
	}
	resp := request(t, s, "GET", "/", "127.0.0.1:8080", mallory, map[string]string{"Authorization": basic("vigil", "s3cret")}, nil)
	if resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("Retry-After") == "" {
		t.Errorf("an attempt during the delay = %d (Retry-After %q), want 429 with Retry-After", resp.StatusCode, resp.Header.Get("Retry-After"))
	}
	clock.Advance(authMaxDelay)
	<-first

	// Another client is not slowed by mallory's failures.
	if code, d := tryLogin(t, s, clock, "198.51.100.7:5000", "vigil", "typo"); code != 401 || d != 0 {
		t.Errorf("another client's first failure = %d after %v, want 401 at once", code, d)
	}
	// The right password resets the count.
	if code, _ := tryLogin(t, s, clock, mallory, "vigil", "s3cret"); code != 200 {
		t.Errorf("right password = %d, want 200", code)
	}
	clock.Advance(time.Minute)
	if code, d := tryLogin(t, s, clock, mallory, "vigil", "typo"); code != 401 || d != 0 {
		t.Errorf("a failure after a success = %d after %v, want 401 at once", code, d)
	}
	// A request without credentials is the browser asking: not a failure.
	for range 5 {
		if resp := request(t, s, "GET", "/", "127.0.0.1:8080", "203.0.113.5:1", nil, nil); resp.StatusCode != 401 {
			t.Fatalf("no credentials = %d, want 401", resp.StatusCode)
		}
	}

	out := logs.String()
	lines := regexp.MustCompile(`(?m)^.*msg="status page: wrong user or password" client=192\.0\.2\.66 .*$`).FindAllString(out, -1)
	// 11 failures and one refused attempt over about two minutes of
	// clock: the first failure logs at once, the next ten fold into the
	// line a minute on.
	if len(lines) != 2 {
		t.Fatalf("%d log lines for mallory, want 2 (at most one a minute):\n%s", len(lines), out)
	}
	if !strings.Contains(lines[0], "failures=1 ") || !strings.Contains(lines[1], "failures=10 refused=1 ") {
		t.Errorf("lines %q, want failures=1, then failures=10 refused=1", lines)
	}
	if !regexp.MustCompile(`msg="status page: login after failed attempts" client=192\.0\.2\.66 failures=10`).MatchString(out) {
		t.Errorf("the login after ten failures is not logged:\n%s", out)
	}
	if strings.Contains(out, "s3cret") || strings.Contains(out, "guess") || strings.Contains(out, "typo") {
		t.Errorf("a password reached the log:\n%s", out)
	}
	if n := strings.Count(out, "client=198.51.100.7"); n != 1 {
		t.Errorf("the other client logged %d times, want once:\n%s", n, out)
	}
	if strings.Contains(out, "203.0.113.5") {
		t.Errorf("a request without credentials was logged as a failure:\n%s", out)
	}
}

// TestAuthClientsBounded: failures from more clients than the table holds
// keep it at its bound; IPv6 clients count by their /64.
func TestAuthClientsBounded(t *testing.T) {
	s, clock, _ := authServer(t)
	for i := range authMaxClients + 300 {
		remote := fmt.Sprintf("10.%d.%d.%d:1000", i>>16&255, i>>8&255, i&255)
		if code, _ := tryLogin(t, s, clock, remote, "vigil", "x"); code != 401 {
			t.Fatalf("login = %d", code)
		}
	}
	if n := s.guard.size(); n > authMaxClients {
		t.Errorf("%d clients remembered, want at most %d", n, authMaxClients)
	}
	for _, remote := range []string{"[2001:db8:1:2::1]:1000", "[2001:db8:1:2:ffff::9]:1000"} {
		tryLogin(t, s, clock, remote, "vigil", "x")
	}
	if _, d := tryLogin(t, s, clock, "[2001:db8:1:2:aaaa::3]:1000", "vigil", "x"); d == 0 {
		t.Error("a third address in the same /64 was not slowed down: IPv6 clients must count by their /64")
	}
}

func basic(user, pass string) string {
	r := httptest.NewRequest("GET", "/", nil)
	r.SetBasicAuth(user, pass)
	return r.Header.Get("Authorization")
}
