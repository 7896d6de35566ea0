package httpc

import (
	"bufio"
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// testProxy is a forward proxy on loopback: CONNECT tunnels to the address
// upstream maps the requested authority to; absolute-form requests are
// answered by the proxy itself with "proxied <target>".
type testProxy struct {
	*rawServer
	mu   sync.Mutex
	seen []string // "METHOD target auth"
}

func newTestProxy(t *testing.T, upstream map[string]string, connectStatus int) *testProxy {
	p := &testProxy{}
	p.rawServer = newRawServer(t, func(_ int, c net.Conn) {
		br := bufio.NewReader(c)
		r, err := http.ReadRequest(br)
		if err != nil {
			return
		}
		p.mu.Lock()
		p.seen = append(p.seen, r.Method+" "+r.RequestURI+" "+r.Header.Get("Proxy-Authorization"))
		p.mu.Unlock()
		if r.Method != http.MethodConnect {
			io.ReadAll(r.Body)
			body := "proxied " + r.RequestURI
			fmt.Fprintf(c, "HTTP/1.1 200 OK\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s", len(body), body)
			return
		}
		if connectStatus != 200 {
			fmt.Fprintf(c, "HTTP/1.1 %d No\r\nContent-Length: 0\r\n\r\n", connectStatus)
			return
		}
		up, err := net.Dial("tcp", upstream[r.RequestURI])
		if err != nil {
			io.WriteString(c, "HTTP/1.1 502 Bad Gateway\r\n\r\n")
			return
		}
		defer up.Close()
		io.WriteString(c, "HTTP/1.1 200 Connection established\r\n\r\n")
		done := make(chan struct{})
		go func() {
			io.Copy(c, up)
			c.Close()
			close(done)
		}()
		io.Copy(up, br)
		up.Close()
		<-done
	})
	return p
}

func (p *testProxy) requests() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.seen...)
}

func envMap(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func TestProxy(t *testing.T) {
	tlsSrv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "origin %s %s", r.Host, r.RequestURI)
	}))
	defer tlsSrv.Close()
	_, port, _ := net.SplitHostPort(tlsSrv.Listener.Addr().String())
	authority := "example.com:" + port // example.com is in the httptest certificate
	basic := "Basic " + base64.StdEncoding.EncodeToString([]byte("user:p@ss"))

	t.Run("https via CONNECT", func(t *testing.T) {
		px := newTestProxy(t, map[string]string{authority: tlsSrv.Listener.Addr().String()}, 200)
		c := tlsClient(tlsSrv.Certificate())
		c.Getenv = envMap(map[string]string{"HTTPS_PROXY": "http://user:p%40ss@" + px.ln.Addr().String(), "HTTP_PROXY": "http://127.0.0.1:1"})
		defer c.CloseIdle()
		for range 2 {
			resp, err := c.Post(testCtx(t), "https://"+authority+"/v1?q=1", nil, nil, 0)
			if err != nil || string(resp.Body) != "origin "+authority+" /v1?q=1" {
				t.Fatalf("Post() = %v, %v", resp, err)
			}
		}
		want := []string{"CONNECT " + authority + " " + basic} // one tunnel, reused
		if got := px.requests(); strings.Join(got, "|") != strings.Join(want, "|") {
			t.Errorf("proxy saw %q, want %q", got, want)
		}
	})
	t.Run("http absolute form", func(t *testing.T) {
		px := newTestProxy(t, nil, 200)
		c := &Client{Getenv: envMap(map[string]string{"http_proxy": px.ln.Addr().String()})}
		resp, err := c.Post(testCtx(t), "http://vigil.test/x?y=1", nil, nil, 0)
		if err != nil || string(resp.Body) != "proxied http://vigil.test/x?y=1" {
			t.Fatalf("Post() = %v, %v", resp, err)
		}
	})
	t.Run("proxy refuses", func(t *testing.T) {
		px := newTestProxy(t, nil, 407)
		c := tlsClient(tlsSrv.Certificate())
		c.Getenv = envMap(map[string]string{"https_proxy": "http://" + px.ln.Addr().String()})
		_, err := c.Post(testCtx(t), "https://"+authority+"/", nil, nil, 0)
		if err == nil || !strings.Contains(err.Error(), "proxy connect: proxy answered 407") {
			t.Errorf("Post() error = %v, want the proxy's 407", err)
		}
	})
	t.Run("NO_PROXY and loopback go direct", func(t *testing.T) {
		px := newTestProxy(t, nil, 200)
		var dialed []string
		c := tlsClient(tlsSrv.Certificate())
		c.Getenv = envMap(map[string]string{"HTTPS_PROXY": "http://" + px.ln.Addr().String(), "NO_PROXY": "foo.lan, .bar.lan,example.com:9"})
		c.Dial = func(ctx context.Context, network, addr string) (net.Conn, error) {
			dialed = append(dialed, addr)
			var d net.Dialer
			return d.DialContext(ctx, network, strings.Replace(addr, "example.com", "127.0.0.1", 1))
		}
		for _, u := range []string{"https://" + authority + "/", tlsSrv.URL + "/"} {
			if _, err := c.Post(testCtx(t), u, nil, nil, 0); err != nil {
				t.Fatalf("Post(%q) error = %v", u, err)
			}
			c.CloseIdle()
		}
		if want := []string{authority, tlsSrv.Listener.Addr().String()}; strings.Join(dialed, "|") != strings.Join(want, "|") {
			t.Errorf("dialed %q, want %q", dialed, want)
		}
		if n := px.accepted.Load(); n != 0 {
			t.Errorf("proxy accepted %d connections, want 0", n)
		}
	})
	t.Run("unsupported proxy scheme", func(t *testing.T) {
		c := &Client{Getenv: envMap(map[string]string{"HTTPS_PROXY": "socks5://user:secret@proxy.lan:1080"})}
		_, err := c.Post(testCtx(t), "https://example.com/", nil, nil, 0)
		if err == nil || !strings.Contains(err.Error(), `proxy scheme "socks5" not supported`) || strings.Contains(err.Error(), "secret") {
			t.Errorf("Post() error = %v, want an unsupported scheme without the password", err)
		}
	})
}

func TestNoProxy(t *testing.T) {
	tests := []struct {
		list, host string
		want       bool
	}{
		{"", "example.com", false},
		{"*", "example.com", true},
		{"example.com", "example.com", true},
		{"example.com", "api.example.com", true},
		{"example.com", "notexample.com", false},
		{".example.com", "example.com", false},
		{".example.com", "api.example.com", true},
		{"*.example.com", "api.example.com", true},
		{"*.example.com", "example.com", false},
		{"EXAMPLE.com:8080", "example.COM", true},
		{"foo.lan, bar.lan", "bar.lan", true},
		{"foo.lan bar.lan", "bar.lan", true},
		{"10.0.0.0/8", "10.1.2.3", true},
		{"10.0.0.0/8", "11.1.2.3", false},
		{"192.168.1.5", "192.168.1.5", true},
		{"192.168.1.5:80", "192.168.1.5", true},
		{"[2001:db8::1]:443", "2001:db8::1", true},
		{"2001:db8::/32", "2001:db8::7", true},
		{"192.168.1.5", "192.168.1.6", false},
		{",,", "example.com", false},
	}
	for _, tt := range tests {
		if got := noProxy(tt.list, tt.host); got != tt.want {
			t.Errorf("noProxy(%q, %q) = %v, want %v", tt.list, tt.host, got, tt.want)
		}
	}
}

func TestProxyFor(t *testing.T) {
	tests := []struct {
		name string
		env  map[string]string
		url  string
		want string // proxy URL or ""
	}{
		{"none", nil, "https://api.openai.com/", ""},
		{"https", map[string]string{"HTTPS_PROXY": "http://p:3128"}, "https://api.openai.com/", "http://p:3128"},
		{"upper case first", map[string]string{"HTTPS_PROXY": "http://a:1", "https_proxy": "http://b:1"}, "https://x.com/", "http://a:1"},
		{"lower case", map[string]string{"https_proxy": "http://b:1"}, "https://x.com/", "http://b:1"},
		{"http proxy not for https", map[string]string{"HTTP_PROXY": "http://p:1"}, "https://x.com/", ""},
		{"https proxy not for http", map[string]string{"HTTPS_PROXY": "http://p:1"}, "http://x.com/", ""},
		{"no scheme", map[string]string{"HTTP_PROXY": "p.lan:3128"}, "http://x.com/", "http://p.lan:3128"},
		{"localhost", map[string]string{"HTTP_PROXY": "http://p:1"}, "http://localhost:8080/", ""},
		{"loopback v6", map[string]string{"HTTP_PROXY": "http://p:1"}, "http://[::1]:8080/", ""},
		{"no_proxy", map[string]string{"HTTP_PROXY": "http://p:1", "no_proxy": "x.com"}, "http://x.com/", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tg, err := parseTarget(tt.url)
			if err != nil {
				t.Fatal(err)
			}
			px, err := proxyFor(envMap(tt.env), tg)
			got := ""
			if px != nil {
				got = px.String()
			}
			if err != nil || got != tt.want {
				t.Errorf("proxyFor(%q) = %q, %v, want %q", tt.url, got, err, tt.want)
			}
		})
	}
}
