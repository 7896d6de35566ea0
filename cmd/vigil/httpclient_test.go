package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/net/http/httpproxy"
)

// proxyFromEnv is http.ProxyFromEnvironment over an environment the test
// gives: net/http's own function reads the process environment once and
// caches it, and it is built on this same httpproxy package.
func proxyFromEnv(env map[string]string) proxyFunc {
	f := (&httpproxy.Config{HTTPProxy: env["HTTP_PROXY"], HTTPSProxy: env["HTTPS_PROXY"], NoProxy: env["NO_PROXY"]}).ProxyFunc()
	return func(r *http.Request) (*url.URL, error) { return f(r.URL) }
}

// trust makes c's Transport trust the certificate of httptest's TLS servers.
func trust(t *testing.T, c *http.Client, srv *httptest.Server) {
	t.Helper()
	pool := x509.NewCertPool()
	pool.AddCert(srv.Certificate())
	c.Transport.(*http.Transport).TLSClientConfig = &tls.Config{RootCAs: pool}
}

// connectProxy is an https:// proxy that tunnels CONNECT requests, sending
// every tunnel to target whatever host was asked for.
type connectProxy struct {
	srv    *httptest.Server
	target string
	mu     sync.Mutex
	asked  []string // CONNECT hosts
}

func newConnectProxy(t *testing.T, target string) *connectProxy {
	p := &connectProxy{target: target}
	p.srv = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodConnect {
			http.Error(w, "CONNECT only", http.StatusMethodNotAllowed)
			return
		}
		p.mu.Lock()
		p.asked = append(p.asked, r.Host)
		p.mu.Unlock()
		up, err := net.Dial("tcp", p.target)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		defer up.Close()
		c, rw, err := w.(http.Hijacker).Hijack()
		if err != nil {
			t.Errorf("hijack: %v", err)
			return
		}
		defer c.Close()
		io.WriteString(c, "HTTP/1.1 200 Connection established\r\n\r\n")
		done := make(chan struct{})
		go func() { io.Copy(up, rw); up.(*net.TCPConn).CloseWrite(); close(done) }()
		io.Copy(c, up)
		<-done
	}))
	t.Cleanup(p.srv.Close)
	return p
}

func TestHTTPClientThroughHTTPSProxy(t *testing.T) {
	var got atomic.Value
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got.Store(r.Method + " " + r.Host + " " + string(b))
		io.WriteString(w, `{"ok":true}`)
	}))
	defer srv.Close()
	proxy := newConnectProxy(t, srv.Listener.Addr().String())
	// Loopback addresses never go through a proxy; httptest's certificate
	// is also valid for example.com, which the proxy sends to srv.
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	target := "https://example.com:" + port + "/v1/chat/completions"

	c := newHTTPClient(proxyFromEnv(map[string]string{"HTTPS_PROXY": proxy.srv.URL, "NO_PROXY": "internal.example"}), 5*time.Second)
	trust(t, c, srv)
	resp, err := c.Post(target, "application/json", strings.NewReader(`{"q":1}`))
	if err != nil {
		t.Fatalf("POST through %s: %v", proxy.srv.URL, err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || string(body) != `{"ok":true}` {
		t.Errorf("answer = %d %s, want 200 {\"ok\":true}", resp.StatusCode, body)
	}
	if g := got.Load(); g != "POST example.com:"+port+` {"q":1}` {
		t.Errorf("server got %v", g)
	}
	proxy.mu.Lock()
	defer proxy.mu.Unlock()
	if len(proxy.asked) != 1 || proxy.asked[0] != "example.com:"+port {
		t.Errorf("proxy was asked for %v, want one CONNECT example.com:%s", proxy.asked, port)
	}
}

func TestProxyURLSchemes(t *testing.T) {
	tests := []struct {
		env  map[string]string
		url  string
		want string // "" for a direct connection
	}{
		{map[string]string{"HTTPS_PROXY": "https://proxy.lan:3129"}, "https://api.openai.com/v1", "https://proxy.lan:3129"},
		{map[string]string{"HTTPS_PROXY": "http://proxy.lan:3128"}, "https://api.telegram.org/bot", "http://proxy.lan:3128"},
		{map[string]string{"HTTPS_PROXY": "socks5://127.0.0.1:1080"}, "https://api.telegram.org/bot", "socks5://127.0.0.1:1080"},
		{map[string]string{"HTTPS_PROXY": "socks5h://tor.lan:9050"}, "https://api.anthropic.com/v1", "socks5h://tor.lan:9050"},
		{map[string]string{"HTTPS_PROXY": "proxy.lan:3128"}, "https://api.openai.com/v1", "http://proxy.lan:3128"},
		{map[string]string{"HTTPS_PROXY": "https://proxy.lan", "NO_PROXY": ".openai.com"}, "https://api.openai.com/v1", ""},
		{map[string]string{"HTTP_PROXY": "http://proxy.lan:3128"}, "https://api.openai.com/v1", ""},
		{map[string]string{"HTTPS_PROXY": "https://proxy.lan"}, "https://127.0.0.1:11434/v1", ""},
	}
	for _, tt := range tests {
		req, _ := http.NewRequest(http.MethodPost, tt.url, nil)
		u, err := proxyFromEnv(tt.env)(req)
		got := ""
		if u != nil {
			got = u.String()
		}
		if err != nil || got != tt.want {
			t.Errorf("proxy for %s with %v = %q, %v; want %q", tt.url, tt.env, got, err, tt.want)
		}
	}
}

// TestHTTPClientThroughSOCKS5 sends a request through a minimal SOCKS5
// proxy (RFC 1928, no authentication, CONNECT only).
func TestHTTPClientThroughSOCKS5(t *testing.T) {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "pong")
	}))
	defer srv.Close()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	var asked atomic.Value
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				br := bufio.NewReader(c)
				hello := make([]byte, 2)
				if _, err := io.ReadFull(br, hello); err != nil || hello[0] != 5 {
					return
				}
				io.CopyN(io.Discard, br, int64(hello[1]))
				c.Write([]byte{5, 0}) // no authentication
				hdr := make([]byte, 4)
				if _, err := io.ReadFull(br, hdr); err != nil || hdr[1] != 1 {
					return
				}
				var host string
				switch hdr[3] {
				case 1:
					ip := make([]byte, 4)
					io.ReadFull(br, ip)
					host = net.IP(ip).String()
				case 3:
					n, _ := br.ReadByte()
					name := make([]byte, n)
					io.ReadFull(br, name)
					host = string(name)
				default:
					return
				}
				pb := make([]byte, 2)
				io.ReadFull(br, pb)
				asked.Store(host)
				up, err := net.Dial("tcp", srv.Listener.Addr().String())
				if err != nil {
					c.Write([]byte{5, 5, 0, 1, 0, 0, 0, 0, 0, 0})
					return
				}
				defer up.Close()
				c.Write([]byte{5, 0, 0, 1, 127, 0, 0, 1, 0, 0})
				go io.Copy(up, br)
				io.Copy(c, up)
			}()
		}
	}()
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	c := newHTTPClient(proxyFromEnv(map[string]string{"HTTPS_PROXY": "socks5h://" + ln.Addr().String()}), 5*time.Second)
	trust(t, c, srv)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "https://example.com:"+port+"/", nil)
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("GET through socks5h://%s: %v", ln.Addr(), err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(body) != "pong" || asked.Load() != "example.com" {
		t.Errorf("answer %q via SOCKS5 CONNECT to %v, want pong via example.com", body, asked.Load())
	}
}

// TestHTTPClientPostsOnce: a server that reads a POST and hangs up gets it
// once, also on a kept-alive connection and with a body net/http could
// replay (GetBody is set for a bytes.Reader).
func TestHTTPClientPostsOnce(t *testing.T) {
	var posts atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.ReadAll(r.Body)
		if r.Method == http.MethodGet {
			io.WriteString(w, "warm")
			return
		}
		posts.Add(1)
		c, _, _ := w.(http.Hijacker).Hijack()
		c.Close()
	}))
	defer srv.Close()
	c := newHTTPClient(nil, 5*time.Second)
	resp, err := c.Get(srv.URL) // leaves the connection idle for reuse
	if err != nil {
		t.Fatal(err)
	}
	io.ReadAll(resp.Body)
	resp.Body.Close()
	req, _ := http.NewRequest(http.MethodPost, srv.URL, bytes.NewReader([]byte(`{"alert":1}`)))
	if req.GetBody == nil {
		t.Fatal("GetBody is nil: the request would not be replayable in the first place")
	}
	if _, err := c.Do(req); err == nil {
		t.Fatal("POST to a server that hung up = nil error")
	}
	if n := posts.Load(); n != 1 {
		t.Errorf("server read the POST %d times, want exactly 1", n)
	}
}
