package httpc

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"
)

// rawServer is a TCP server on loopback that hands every accepted
// connection to handle.
type rawServer struct {
	ln       net.Listener
	accepted atomic.Int32
	wg       sync.WaitGroup
}

func newRawServer(t *testing.T, handle func(n int, c net.Conn)) *rawServer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &rawServer{ln: ln}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			n := int(s.accepted.Add(1))
			s.wg.Add(1)
			go func() {
				defer s.wg.Done()
				defer c.Close()
				handle(n, c)
			}()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		s.wg.Wait()
	})
	return s
}

func (s *rawServer) url() string { return "http://" + s.ln.Addr().String() + "/x" }

// readRequest reads one request from br, body included.
func readRequest(br *bufio.Reader) (*http.Request, []byte, error) {
	r, err := http.ReadRequest(br)
	if err != nil {
		return nil, nil, err
	}
	b, err := io.ReadAll(r.Body)
	return r, b, err
}

// replyOnce reads one request and writes resp verbatim.
func replyOnce(resp string) func(int, net.Conn) {
	return func(_ int, c net.Conn) {
		if _, _, err := readRequest(bufio.NewReader(c)); err != nil {
			return
		}
		io.WriteString(c, resp)
	}
}

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func TestPostResponses(t *testing.T) {
	tests := []struct {
		name     string
		resp     string
		maxBody  int64
		status   int
		body     string
		header   [2]string // a field to check
		err      string    // substring; "" for success
		tooLarge bool
	}{
		{name: "content-length", resp: "HTTP/1.1 200 OK\r\nContent-Length: 5\r\nX-A: b \r\n\r\nhello",
			status: 200, body: "hello", header: [2]string{"x-a", "b"}},
		{name: "no reason phrase", resp: "HTTP/1.1 404\r\nContent-Length: 2\r\n\r\nno", status: 404, body: "no"},
		{name: "bare LF", resp: "HTTP/1.1 200 OK\nContent-Length: 2\n\nok", status: 200, body: "ok"},
		{name: "chunked with extensions and trailers",
			resp:   "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5;name=v\r\nhello\r\n6 ; x\r\n world\r\n0\r\nX-Trailer: 1\r\n\r\n",
			status: 200, body: "hello world"},
		{name: "chunked upper-case hex", resp: "HTTP/1.1 200 OK\r\nTransfer-Encoding: Chunked\r\n\r\nA\r\n0123456789\r\n0\r\n\r\n",
			status: 200, body: "0123456789"},
		{name: "close-delimited", resp: "HTTP/1.1 200 OK\r\nConnection: close\r\n\r\nuntil the end", status: 200, body: "until the end"},
		{name: "http/1.0 close-delimited", resp: "HTTP/1.0 200 OK\r\n\r\nold", status: 200, body: "old"},
		{name: "interim responses skipped",
			resp:   "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\nHTTP/1.1 201 Created\r\nContent-Length: 1\r\n\r\n!",
			status: 201, body: "!"},
		{name: "204 has no body", resp: "HTTP/1.1 204 No Content\r\n\r\n", status: 204, body: ""},
		{name: "redirect returned", resp: "HTTP/1.1 307 Temporary Redirect\r\nLocation: http://elsewhere/\r\nContent-Length: 0\r\n\r\n",
			status: 307, header: [2]string{"location", "http://elsewhere/"}},
		{name: "oversized content-length", resp: "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n0123456789", maxBody: 4,
			status: 200, body: "0123", err: "limit 4 bytes", tooLarge: true},
		{name: "oversized chunked", resp: "HTTP/1.1 500 Oops\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n3\r\ndef\r\n0\r\n\r\n", maxBody: 4,
			status: 500, body: "abcd", err: "limit 4 bytes", tooLarge: true},
		{name: "oversized close-delimited", resp: "HTTP/1.1 200 OK\r\n\r\n0123456789", maxBody: 4,
			status: 200, body: "0123", err: "limit 4 bytes", tooLarge: true},
		{name: "body at the limit", resp: "HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\n0123", maxBody: 4, status: 200, body: "0123"},
		{name: "malformed status line", resp: "HTTP/1.1 2000 OK\r\n\r\n", err: `malformed status line "HTTP/1.1 2000 OK"`},
		{name: "not http", resp: "SSH-2.0-OpenSSH\r\n\r\n", err: "malformed status line"},
		{name: "header without colon", resp: "HTTP/1.1 200 OK\r\nBogus\r\n\r\n", err: `malformed header line "Bogus"`},
		{name: "space before colon", resp: "HTTP/1.1 200 OK\r\nName : v\r\n\r\n", err: "malformed header line"},
		{name: "folded header", resp: "HTTP/1.1 200 OK\r\nX-A: b\r\n  c\r\n\r\n", err: "folded header line"},
		{name: "malformed chunk size", resp: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", status: 200, err: `malformed chunk size "zz"`},
		{name: "signed chunk size", resp: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n+5\r\nhello\r\n0\r\n\r\n", status: 200, err: "malformed chunk size"},
		{name: "chunk without CRLF", resp: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nabX\r\n0\r\n\r\n", status: 200, body: "ab", err: "no CRLF"},
		{name: "invalid content-length", resp: "HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n", status: 200, err: "invalid content-length"},
		{name: "conflicting content-length", resp: "HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nab", status: 200, err: "conflicting content-length"},
		{name: "unsupported transfer-encoding", resp: "HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\n", status: 200, err: "unsupported transfer-encoding"},
		{name: "closed mid-body", resp: "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc", status: 200, body: "abc", err: "3 of 10 bytes: unexpected EOF"},
		{name: "closed mid-chunk", resp: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nab", status: 200, body: "ab", err: "unexpected EOF"},
		{name: "closed in header", resp: "HTTP/1.1 200 OK\r\nX-A: b\r\n", err: "unexpected EOF"},
		{name: "101 rejected", resp: "HTTP/1.1 101 Switching Protocols\r\n\r\n", err: "101"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newRawServer(t, replyOnce(tt.resp))
			var c Client
			resp, err := c.Post(testCtx(t), srv.url(), nil, []byte("{}"), tt.maxBody)
			if tt.err == "" && err != nil {
				t.Fatalf("Post() error = %v", err)
			}
			if tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err)) {
				t.Fatalf("Post() error = %v, want %q", err, tt.err)
			}
			if got := errors.Is(err, ErrBodyTooLarge); got != tt.tooLarge {
				t.Errorf("errors.Is(%v, ErrBodyTooLarge) = %v, want %v", err, got, tt.tooLarge)
			}
			if tt.status == 0 {
				if resp != nil {
					t.Errorf("Post() response = %+v, want nil", resp)
				}
				return
			}
			if resp == nil {
				t.Fatal("Post() response = nil")
			}
			if resp.Status != tt.status || string(resp.Body) != tt.body {
				t.Errorf("Post() = %d %q, want %d %q", resp.Status, resp.Body, tt.status, tt.body)
			}
			if tt.header[0] != "" && resp.Header.Get(tt.header[0]) != tt.header[1] {
				t.Errorf("Header.Get(%q) = %q, want %q", tt.header[0], resp.Header.Get(tt.header[0]), tt.header[1])
			}
		})
	}
}

func TestPostRequest(t *testing.T) {
	type seen struct {
		method, uri, host, ua, ct, auth string
		length                          int64
		body                            string
	}
	got := make(chan seen, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got <- seen{r.Method, r.RequestURI, r.Host, r.UserAgent(), r.Header.Get("Content-Type"), r.Header.Get("Authorization"), r.ContentLength, string(b)}
		fmt.Fprint(w, "ok")
	}))
	defer srv.Close()
	var c Client
	h := Header{{"Content-Type", "application/json"}, {"User-Agent", "vigil/test"}}
	h.Add("Authorization", "Bearer k")
	resp, err := c.Post(testCtx(t), srv.URL+"/v1/chat?x=1", h, []byte(`{"a":1}`), 0)
	if err != nil || resp.Status != 200 || string(resp.Body) != "ok" {
		t.Fatalf("Post() = %+v, %v", resp, err)
	}
	want := seen{"POST", "/v1/chat?x=1", strings.TrimPrefix(srv.URL, "http://"), "vigil/test", "application/json", "Bearer k", 7, `{"a":1}`}
	if s := <-got; s != want {
		t.Errorf("server saw %+v, want %+v", s, want)
	}
}

func TestPostRejectsBadRequests(t *testing.T) {
	tests := []struct {
		name, url string
		header    Header
		err       string
	}{
		{"scheme", "ftp://example.com/", nil, `url scheme "ftp"`},
		{"no host", "http:///path", nil, "no host"},
		{"header injection", "http://127.0.0.1:1/", Header{{"X-A", "a\r\nX-B: b"}}, `invalid request: header field "X-A"`},
		{"bad name", "http://127.0.0.1:1/", Header{{"X A", "a"}}, "invalid request: header field"},
		{"reserved", "http://127.0.0.1:1/", Header{{"Content-Length", "3"}}, "is set by httpc"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var c Client
			if _, err := c.Post(testCtx(t), tt.url, tt.header, nil, 0); !errors.Is(err, ErrInvalidRequest) || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("Post(%q) error = %v, want %q", tt.url, err, tt.err)
			}
		})
	}
}

func TestErrorsOmitPath(t *testing.T) {
	const secret = "bot123456:SECRET"
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := ln.Addr().String()
	ln.Close()
	tests := []struct{ name, url, want string }{
		{"dial", "http://" + dead + "/" + secret + "/sendMessage", "post " + dead + ": dial: "},
		{"bad escape", "http://example.com/" + secret + "/%zz", "post: invalid request: url"},
		{"bad host", "http://exa mple.com/" + secret, "post: invalid request: url"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var c Client
			_, err := c.Post(testCtx(t), tt.url, nil, nil, 0)
			if err == nil || strings.Contains(err.Error(), "SECRET") || !strings.HasPrefix(err.Error(), tt.want) {
				t.Errorf("Post() error = %v, want prefix %q and no path", err, tt.want)
			}
		})
	}
}

func TestContextEndsHungExchange(t *testing.T) {
	tests := []struct {
		name string
		resp string // written before hanging
	}{
		{"no response", ""},
		{"mid header", "HTTP/1.1 200 OK\r\n"},
		{"mid body", "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nab"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			release := make(chan struct{})
			srv := newRawServer(t, func(_ int, c net.Conn) {
				readRequest(bufio.NewReader(c))
				io.WriteString(c, tt.resp)
				<-release
			})
			defer close(release)
			ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
			defer cancel()
			var c Client
			_, err := c.Post(ctx, srv.url(), nil, nil, 0)
			if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "read response") {
				t.Errorf("Post() error = %v, want a deadline error while reading", err)
			}
		})
	}
	t.Run("canceled before", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		var c Client
		if _, err := c.Post(ctx, "http://127.0.0.1:1/", nil, nil, 0); !errors.Is(err, context.Canceled) {
			t.Errorf("Post() error = %v, want context.Canceled", err)
		}
	})
}

// keepAliveServer answers every request on a connection with "n:i"
// (connection number, request number), adding the header fields extra
// or, if extra is "chunked", in chunked coding; the closeAfter-th request of a
// connection is answered and then the connection is closed (0: never).
func keepAliveServer(t *testing.T, extra string, closeAfter int) *rawServer {
	return newRawServer(t, func(n int, c net.Conn) {
		br := bufio.NewReader(c)
		for i := 1; ; i++ {
			if _, _, err := readRequest(br); err != nil {
				return
			}
			body := fmt.Sprintf("%d:%d", n, i)
			if extra == "chunked" {
				fmt.Fprintf(c, "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n%x\r\n%s\r\n0\r\n\r\n", len(body), body)
			} else {
				fmt.Fprintf(c, "HTTP/1.1 200 OK\r\n%sContent-Length: %d\r\n\r\n%s", extra, len(body), body)
			}
			if i == closeAfter {
				return
			}
		}
	})
}

func TestKeepAlive(t *testing.T) {
	tests := []struct {
		name       string
		extra      string
		closeAfter int
		want       []string
		accepted   int32
	}{
		{"reused", "", 0, []string{"1:1", "1:2", "1:3"}, 1},
		{"connection close honoured", "Connection: close\r\n", 0, []string{"1:1", "2:1", "3:1"}, 3},
		{"idle connection closed by server", "", 1, []string{"1:1", "2:1", "3:1"}, 3},
		{"chunked reused", "chunked", 0, []string{"1:1", "1:2"}, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := keepAliveServer(t, tt.extra, tt.closeAfter)
			var c Client
			defer c.CloseIdle()
			for i, want := range tt.want {
				if i > 0 && tt.closeAfter > 0 {
					waitClosed(t, srv, i)
				}
				resp, err := c.Post(testCtx(t), srv.url(), nil, nil, 0)
				if err != nil || string(resp.Body) != want {
					t.Fatalf("Post() #%d = %v, %v, want %q", i+1, resp, err, want)
				}
			}
			if n := srv.accepted.Load(); n != tt.accepted {
				t.Errorf("server accepted %d connections, want %d", n, tt.accepted)
			}
		})
	}
}

func TestIdleConnectionTooOldIsNotReused(t *testing.T) {
	srv := keepAliveServer(t, "", 0)
	clock := clockwork.NewFakeClock()
	c := Client{Clock: clock, MaxIdle: time.Minute}
	defer c.CloseIdle()
	for i, tc := range []struct {
		idle time.Duration
		want string
	}{
		{0, "1:1"},
		{time.Minute, "1:2"},               // exactly MaxIdle: still reused
		{time.Minute + time.Second, "2:1"}, // older: a fresh connection
		{30 * time.Second, "2:2"},
	} {
		clock.Advance(tc.idle)
		resp, err := c.Post(testCtx(t), srv.url(), nil, nil, 0)
		if err != nil || string(resp.Body) != tc.want {
			t.Fatalf("Post() #%d after %v idle = %v, %v, want %q", i+1, tc.idle, resp, err, tc.want)
		}
	}
}

// waitClosed gives the server's close of connection n time to reach the
// client side, so the test exercises the idle check and not a race.
func waitClosed(t *testing.T, srv *rawServer, n int) {
	t.Helper()
	for srv.accepted.Load() < int32(n) {
		time.Sleep(time.Millisecond)
	}
	time.Sleep(20 * time.Millisecond)
}

func TestRetryOnReusedConnection(t *testing.T) {
	// Connection 1 answers the first request, then reads the second and
	// closes without answering (an idle timeout racing the request).
	// Connection 2 answers.
	srv := newRawServer(t, func(n int, c net.Conn) {
		br := bufio.NewReader(c)
		for i := 1; ; i++ {
			if _, _, err := readRequest(br); err != nil {
				return
			}
			if n == 1 && i == 2 {
				return
			}
			fmt.Fprintf(c, "HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\n%d:%d", n, i)
		}
	})
	var c Client
	defer c.CloseIdle()
	for _, want := range []string{"1:1", "2:1"} {
		resp, err := c.Post(testCtx(t), srv.url(), nil, nil, 0)
		if err != nil || string(resp.Body) != want {
			t.Fatalf("Post() = %v, %v, want %q", resp, err, want)
		}
	}

	// A fresh connection is not retried.
	fresh := newRawServer(t, func(_ int, c net.Conn) { readRequest(bufio.NewReader(c)) })
	var c2 Client
	if _, err := c2.Post(testCtx(t), fresh.url(), nil, nil, 0); !errors.Is(err, io.EOF) {
		t.Errorf("Post() error = %v, want EOF", err)
	}
	if n := fresh.accepted.Load(); n != 1 {
		t.Errorf("server accepted %d connections, want 1 (no retry on a fresh connection)", n)
	}
}

func TestIncompleteBodyNotReused(t *testing.T) {
	// The first response is cut at the limit; its rest must not be read
	// as the next response.
	srv := keepAliveServer(t, "", 0)
	var c Client
	defer c.CloseIdle()
	if _, err := c.Post(testCtx(t), srv.url(), nil, nil, 1); !errors.Is(err, ErrBodyTooLarge) {
		t.Fatalf("Post() error = %v, want ErrBodyTooLarge", err)
	}
	resp, err := c.Post(testCtx(t), srv.url(), nil, nil, 0)
	if err != nil || string(resp.Body) != "2:1" {
		t.Fatalf("Post() = %v, %v, want 2:1", resp, err)
	}
}

func TestConcurrentPosts(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(w, r.Body)
	}))
	defer srv.Close()
	var c Client
	defer c.CloseIdle()
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			for j := range 5 {
				want := fmt.Sprintf("%d/%d", i, j)
				resp, err := c.Post(testCtx(t), srv.URL, nil, []byte(want), 0)
				if err != nil || string(resp.Body) != want {
					t.Errorf("Post(%q) = %v, %v", want, resp, err)
				}
			}
		})
	}
	wg.Wait()
}

func tlsClient(certs ...*x509.Certificate) *Client {
	pool := x509.NewCertPool()
	for _, c := range certs {
		pool.AddCert(c)
	}
	return &Client{TLS: &tls.Config{RootCAs: pool}}
}

func TestTLS(t *testing.T) {
	var conns atomic.Int32
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "tls %v", r.TLS != nil)
	}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	srv.StartTLS()
	defer srv.Close()

	c := tlsClient(srv.Certificate())
	defer c.CloseIdle()
	for range 3 {
		resp, err := c.Post(testCtx(t), srv.URL+"/x", nil, nil, 0)
		if err != nil || string(resp.Body) != "tls true" {
			t.Fatalf("Post() = %v, %v", resp, err)
		}
	}
	if n := conns.Load(); n != 1 {
		t.Errorf("server saw %d connections, want 1 (keep-alive)", n)
	}

	// All httptest servers share one certificate, so the wrong CAs are
	// an empty pool and the system roots.
	for name, wrong := range map[string]*Client{"empty pool": tlsClient(), "system roots": {}} {
		_, err := wrong.Post(testCtx(t), srv.URL+"/x", nil, nil, 0)
		var uerr x509.UnknownAuthorityError
		if !errors.As(err, &uerr) || !strings.Contains(err.Error(), "tls handshake") {
			t.Errorf("Post() with %s: error = %v, want an unknown authority error", name, err)
		}
	}
}

func TestServerClosesIdleTLS(t *testing.T) {
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "ok")
	}))
	srv.Config.IdleTimeout = time.Millisecond
	srv.StartTLS()
	defer srv.Close()
	c := tlsClient(srv.Certificate())
	defer c.CloseIdle()
	for range 3 {
		resp, err := c.Post(testCtx(t), srv.URL, nil, nil, 0)
		if err != nil || string(resp.Body) != "ok" {
			t.Fatalf("Post() = %v, %v", resp, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestParseTime(t *testing.T) {
	want := time.Date(1994, 11, 6, 8, 49, 37, 0, time.UTC)
	tests := []struct {
		in string
		ok bool
	}{
		{"Sun, 06 Nov 1994 08:49:37 GMT", true},
		{"Sunday, 06-Nov-94 08:49:37 GMT", true},
		{"Sun Nov  6 08:49:37 1994", true},
		{"2025-01-01T00:00:00Z", false},
		{"", false},
		{"Sun, 06 Nov 1994 08:49:37 PST", false},
	}
	for _, tt := range tests {
		got, err := ParseTime(tt.in)
		if tt.ok && (err != nil || !got.Equal(want)) {
			t.Errorf("ParseTime(%q) = %v, %v, want %v", tt.in, got, err, want)
		}
		if !tt.ok && err == nil {
			t.Errorf("ParseTime(%q) = %v, want an error", tt.in, got)
		}
	}
}
