// Package httpc is a minimal HTTP/1.1 client: it POSTs a small body and
// reads a bounded response.
//
// It is hand-written instead of using net/http because net/http and its
// dependencies add about 1 MB to a binary whose RSS tracks its size, and
// vigil only POSTs small JSON bodies (to an LLM provider and to the Telegram
// Bot API). It speaks HTTP/1.1 over TCP or TLS, keeps one idle connection per
// Client for reuse, honours HTTP_PROXY, HTTPS_PROXY and NO_PROXY the way
// net/http's ProxyFromEnvironment does, and never follows redirects.
package httpc

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/jonboulle/clockwork"
)

// DefaultMaxBody is the body limit Post uses when maxBody <= 0.
const DefaultMaxBody = 1 << 20

// ErrInvalidRequest is returned, wrapped, when the URL or a header field
// cannot be sent; retrying does not help.
var ErrInvalidRequest = errors.New("invalid request")

// ErrBodyTooLarge is returned, wrapped, when a response body exceeds the
// caller's limit. Post then also returns the response with the first maxBody
// bytes of the body.
var ErrBodyTooLarge = errors.New("response body too large")

// Header is an ordered list of header fields: {name, value}.
type Header [][2]string

// Get returns the value of the first field named name (case-insensitive),
// or "".
func (h Header) Get(name string) string {
	for _, f := range h {
		if strings.EqualFold(f[0], name) {
			return f[1]
		}
	}
	return ""
}

// Add appends a field.
func (h *Header) Add(name, value string) { *h = append(*h, [2]string{name, value}) }

// values returns the values of every field named name.
func (h Header) values(name string) []string {
	var vs []string
	for _, f := range h {
		if strings.EqualFold(f[0], name) {
			vs = append(vs, f[1])
		}
	}
	return vs
}

// Response is a complete HTTP response.
type Response struct {
	Status int // 200, 404, ...
	Header Header
	Body   []byte
}

// Client sends requests. The zero value is ready to use; a Client is safe for
// concurrent use and must not be copied after first use.
type Client struct {
	// TLS configures https connections. nil: system roots, TLS 1.2 or
	// later. ServerName defaults to the URL's host; ALPN is always
	// "http/1.1".
	TLS *tls.Config
	// Dial opens TCP connections (to the server or the proxy). nil: a
	// net.Dialer.
	Dial func(ctx context.Context, network, addr string) (net.Conn, error)
	// Getenv looks up the proxy variables. nil: os.Getenv, as net/http did
	// implicitly; users configure proxies through the environment.
	Getenv func(key string) string
	// MaxIdle is how long an idle connection may wait for its next
	// request; an older one is closed instead of reused. A NAT router
	// may forget a quiet connection without telling either end, and a
	// request sent into it would only fail at its deadline. 0:
	// DefaultMaxIdle.
	MaxIdle time.Duration
	// Clock times MaxIdle. nil: the real clock.
	Clock clockwork.Clock

	mu   sync.Mutex
	idle *conn // at most one idle connection
}

// DefaultMaxIdle is the default Client.MaxIdle: below the idle timeouts of
// common servers and NAT routers. A Telegram long poll reuses its
// connection at once; a heartbeat every 30 minutes dials afresh.
const DefaultMaxIdle = 60 * time.Second

// aLongTimeAgo is a deadline in the past: setting it on a connection makes
// blocked reads and writes return at once.
var aLongTimeAgo = time.Unix(1, 0)

// maxRequestHeader bounds the request head a caller can build.
const maxRequestHeader = 64 << 10

// Post sends body to rawURL with the given header fields plus Host and
// Content-Length, and reads the response. ctx bounds the whole exchange:
// dial, proxy tunnel, TLS handshake, write and read. A body larger than
// maxBody (DefaultMaxBody when <= 0) is an error matching ErrBodyTooLarge;
// the response, with the body cut at maxBody, is returned too. When the
// status line and header arrived but the body failed, the response is
// returned with the error. Redirects are returned like any other response.
//
// Errors name the operation and the host, never the URL's path or query.
func (c *Client) Post(ctx context.Context, rawURL string, header Header, body []byte, maxBody int64) (*Response, error) {
	if maxBody <= 0 {
		maxBody = DefaultMaxBody
	}
	t, err := parseTarget(rawURL)
	if err != nil {
		return nil, fmt.Errorf("post: %w", err)
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("post %s: %w", t.host, err)
	}
	px, err := proxyFor(c.getenv, t)
	if err != nil {
		return nil, fmt.Errorf("post %s: %w", t.host, err)
	}
	req, err := t.request(header, body, px)
	if err != nil {
		return nil, fmt.Errorf("post %s: %w", t.host, err)
	}
	key := t.key(px)
	for retried := false; ; retried = true {
		cn := c.take(key)
		reused := cn != nil
		if cn == nil {
			var step string
			cn, step, err = c.dial(ctx, t, px)
			if err != nil {
				return nil, failure(ctx, t, step, err)
			}
			cn.key = key
		}
		resp, reusable, step, err := exchange(ctx, cn, req, maxBody)
		if err != nil {
			cn.close()
			// A reused connection the server closed while idle: nothing
			// of a response arrived, so send the request once more on
			// a fresh connection.
			if reused && !retried && cn.n == 0 && ctx.Err() == nil && closedByPeer(err) {
				continue
			}
			return resp, failure(ctx, t, step, err)
		}
		if reusable {
			c.put(cn)
		} else {
			cn.close()
		}
		return resp, nil
	}
}

// CloseIdle closes the idle connection, if any.
func (c *Client) CloseIdle() { c.swapIdle(nil) }

// failure wraps err with the operation and host. When ctx ended, the cause
// is ctx's error: the connection error is then only the deadline httpc set.
func failure(ctx context.Context, t *target, step string, err error) error {
	if cerr := ctx.Err(); cerr != nil && !errors.Is(err, ErrBodyTooLarge) {
		err = cerr
	}
	return fmt.Errorf("post %s: %s: %w", t.host, step, err)
}

// closedByPeer reports whether err looks like the server closed or reset
// the connection.
func closedByPeer(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) ||
		errors.Is(err, syscall.ECONNABORTED)
}

func (c *Client) getenv(key string) string {
	if c.Getenv != nil {
		return c.Getenv(key)
	}
	return os.Getenv(key)
}

// conn is one connection to a server or through a proxy.
type conn struct {
	raw    net.Conn // TCP; deadlines are set here
	rw     net.Conn // raw or the *tls.Conn over it
	br     *bufio.Reader
	key    string    // what the connection can be reused for
	n      int64     // bytes read since the current exchange started
	idleAt time.Time // when it became idle
}

func (cn *conn) Read(p []byte) (int, error) {
	n, err := cn.rw.Read(p)
	cn.n += int64(n)
	return n, err
}

func (cn *conn) close() { cn.rw.Close() }

// alive reports whether an idle connection is still open and silent. A
// server that closed it (EOF) or sent something unasked (a TLS
// close_notify alert, a 408) makes it unusable.
func (cn *conn) alive() bool {
	return cn.br.Buffered() == 0 && !peekClosed(cn.raw)
}

// take returns the idle connection if it fits key and is still alive.
func (c *Client) take(key string) *conn {
	c.mu.Lock()
	cn := c.idle
	if cn == nil || cn.key != key {
		c.mu.Unlock()
		return nil
	}
	c.idle = nil
	c.mu.Unlock()
	if c.clock().Since(cn.idleAt) > c.maxIdle() || !cn.alive() {
		cn.close()
		return nil
	}
	return cn
}

func (c *Client) clock() clockwork.Clock {
	if c.Clock != nil {
		return c.Clock
	}
	return realClock
}

var realClock = clockwork.NewRealClock()

func (c *Client) maxIdle() time.Duration {
	if c.MaxIdle > 0 {
		return c.MaxIdle
	}
	return DefaultMaxIdle
}

// put keeps cn as the idle connection, closing the one it replaces.
func (c *Client) put(cn *conn) {
	cn.idleAt = c.clock().Now()
	c.swapIdle(cn)
}

// swapIdle makes cn (or none) the idle connection and closes the old one.
func (c *Client) swapIdle(cn *conn) {
	c.mu.Lock()
	old := c.idle
	c.idle = cn
	c.mu.Unlock()
	if old != nil {
		old.close()
	}
}

// dial opens a connection for t, through px if not nil. The returned step
// names what failed.
func (c *Client) dial(ctx context.Context, t *target, px *url.URL) (*conn, string, error) {
	dial := c.Dial
	if dial == nil {
		var d net.Dialer
		dial = d.DialContext
	}
	addr, step := t.addr, "dial"
	if px != nil {
		addr, step = proxyAddr(px), "dial proxy"
	}
	raw, err := dial(ctx, "tcp", addr)
	if err != nil {
		return nil, step, err
	}
	stop := context.AfterFunc(ctx, func() { raw.SetDeadline(aLongTimeAgo) })
	defer stop()
	cn := &conn{raw: raw, rw: raw}
	cn.br = bufio.NewReaderSize(cn, 4<<10)
	if px != nil && t.https {
		if err := connect(cn, t, px); err != nil {
			raw.Close()
			return nil, "proxy connect", err
		}
	}
	if t.https {
		tc := tls.Client(raw, c.tlsConfig(t))
		if err := tc.HandshakeContext(ctx); err != nil {
			raw.Close()
			return nil, "tls handshake", err
		}
		cn.rw = tc
		cn.br.Reset(cn)
	}
	return cn, "", nil
}

func (c *Client) tlsConfig(t *target) *tls.Config {
	var cfg *tls.Config
	if c.TLS != nil {
		cfg = c.TLS.Clone()
	} else {
		cfg = &tls.Config{MinVersion: tls.VersionTLS12}
	}
	if cfg.ServerName == "" {
		cfg.ServerName = t.hostname
	}
	cfg.NextProtos = []string{"http/1.1"}
	return cfg
}

// exchange writes req and reads the response. reusable is true only when
// the response was read completely, the server allows keep-alive and ctx
// did not end meanwhile.
func exchange(ctx context.Context, cn *conn, req []byte, maxBody int64) (resp *Response, reusable bool, step string, err error) {
	cn.n = 0
	stop := context.AfterFunc(ctx, func() { cn.raw.SetDeadline(aLongTimeAgo) })
	defer func() {
		if !stop() {
			reusable = false // the connection's deadline is in the past
		}
	}()
	if _, err := cn.rw.Write(req); err != nil {
		return nil, false, "write request", err
	}
	resp, reusable, err = readResponse(cn.br, maxBody)
	if err != nil {
		return resp, false, "read response", err
	}
	return resp, reusable, "", nil
}

// target is a parsed request URL.
type target struct {
	https    bool
	host     string // as in the URL, for the Host header and errors
	hostname string // without port
	addr     string // host:port to dial
	uri      string // path and query
}

func parseTarget(rawURL string) (*target, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		// *url.Error quotes the whole URL, which may hold a secret.
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return nil, fmt.Errorf("%w: url: %v", ErrInvalidRequest, err)
	}
	t := &target{host: u.Host, hostname: u.Hostname(), uri: u.RequestURI()}
	port := u.Port()
	switch u.Scheme {
	case "https":
		t.https = true
		if port == "" {
			port = "443"
		}
	case "http":
		if port == "" {
			port = "80"
		}
	default:
		return nil, fmt.Errorf("%w: url scheme %q: want http or https", ErrInvalidRequest, u.Scheme)
	}
	if t.hostname == "" {
		return nil, fmt.Errorf("%w: url has no host", ErrInvalidRequest)
	}
	t.addr = net.JoinHostPort(t.hostname, port)
	return t, nil
}

func (t *target) scheme() string {
	if t.https {
		return "https"
	}
	return "http"
}

// key identifies the connections a request to t through px can reuse.
func (t *target) key(px *url.URL) string {
	k := t.scheme() + "://" + t.addr
	if px != nil {
		k += " via " + px.String()
	}
	return k
}

// request builds the request head and body. A plain http request through
// a proxy uses the absolute form of the request target.
func (t *target) request(header Header, body []byte, px *url.URL) ([]byte, error) {
	uri := t.uri
	if px != nil && !t.https {
		uri = "http://" + t.host + t.uri
	}
	b := make([]byte, 0, 256+len(body))
	b = append(b, "POST "...)
	b = append(b, uri...)
	b = append(b, " HTTP/1.1\r\nHost: "...)
	b = append(b, t.host...)
	b = append(b, "\r\n"...)
	for _, f := range header {
		switch strings.ToLower(f[0]) {
		case "host", "content-length", "transfer-encoding", "connection", "proxy-authorization":
			return nil, fmt.Errorf("%w: header %q is set by httpc", ErrInvalidRequest, f[0])
		}
		if !validName(f[0]) || !validValue(f[1]) {
			return nil, fmt.Errorf("%w: header field %q", ErrInvalidRequest, f[0])
		}
		b = append(b, f[0]...)
		b = append(b, ": "...)
		b = append(b, f[1]...)
		b = append(b, "\r\n"...)
	}
	if px != nil && !t.https {
		if auth := proxyAuth(px); auth != "" {
			b = append(b, "Proxy-Authorization: "...)
			b = append(b, auth...)
			b = append(b, "\r\n"...)
		}
	}
	b = append(b, "Content-Length: "...)
	b = strconv.AppendInt(b, int64(len(body)), 10)
	b = append(b, "\r\n\r\n"...)
	if len(b) > maxRequestHeader {
		return nil, fmt.Errorf("%w: header too large", ErrInvalidRequest)
	}
	return append(b, body...), nil
}

// validName reports whether s is a header field name (an RFC 9110 token).
func validName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !isTokenChar(s[i]) {
			return false
		}
	}
	return true
}

func isTokenChar(c byte) bool {
	switch {
	case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		return true
	}
	return strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0
}

// validValue reports whether s is a field value without control
// characters (tab allowed).
func validValue(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < ' ' && c != '\t') || c == 0x7f {
			return false
		}
	}
	return true
}
