package httpc

// Proxies, as net/http's ProxyFromEnvironment (golang.org/x/net/http/httpproxy)
// chose them: HTTPS_PROXY for https URLs, HTTP_PROXY for http URLs (upper
// case first, then lower case), NO_PROXY to exclude hosts, and never a
// proxy for localhost or a loopback address.

import (
	"encoding/base64"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"strings"
)

// proxyFor returns the proxy for t, or nil for a direct connection.
func proxyFor(getenv func(string) string, t *target) (*url.URL, error) {
	v := envAny(getenv, "HTTP_PROXY", "http_proxy")
	if t.https {
		v = envAny(getenv, "HTTPS_PROXY", "https_proxy")
	}
	if v == "" || isLoopback(t.hostname) || noProxy(envAny(getenv, "NO_PROXY", "no_proxy"), t.hostname) {
		return nil, nil
	}
	px, err := url.Parse(v)
	if err != nil || px.Scheme == "" || px.Host == "" {
		// "proxy.lan:3128" means http://proxy.lan:3128, as in net/http.
		if px2, err2 := url.Parse("http://" + v); err2 == nil && px2.Host != "" {
			px, err = px2, nil
		}
	}
	if err != nil || px.Host == "" {
		// The value may hold a password: leave it out of the error.
		return nil, errors.New("invalid proxy url in the environment")
	}
	if px.Scheme != "http" {
		return nil, fmt.Errorf("proxy scheme %q not supported (want http)", px.Scheme)
	}
	return px, nil
}

func envAny(getenv func(string) string, names ...string) string {
	for _, n := range names {
		if v := getenv(n); v != "" {
			return v
		}
	}
	return ""
}

func isLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.IsLoopback()
}

// noProxy reports whether host is excluded by list, a NO_PROXY value: a
// comma (or space) separated list of "*", IP addresses, CIDR prefixes and
// domain names. "example.com" matches the name and its subdomains,
// ".example.com" and "*.example.com" only subdomains. Ports are ignored.
func noProxy(list, host string) bool {
	host = strings.ToLower(strings.TrimSuffix(host, "."))
	ip, ipErr := netip.ParseAddr(host)
	for entry := range strings.FieldsFuncSeq(list, func(r rune) bool { return r == ',' || r == ' ' }) {
		entry = strings.ToLower(entry)
		if entry == "*" {
			return true
		}
		if p, err := netip.ParsePrefix(entry); err == nil {
			if ipErr == nil && p.Contains(ip.Unmap()) {
				return true
			}
			continue
		}
		if h, _, err := net.SplitHostPort(entry); err == nil {
			entry = h
		}
		if a, err := netip.ParseAddr(entry); err == nil {
			if ipErr == nil && a.Unmap() == ip.Unmap() {
				return true
			}
			continue
		}
		entry = strings.TrimSuffix(strings.TrimPrefix(entry, "*"), ".")
		switch {
		case entry == "" || entry == ".":
		case entry[0] == '.':
			if strings.HasSuffix(host, entry) {
				return true
			}
		case host == entry || strings.HasSuffix(host, "."+entry):
			return true
		}
	}
	return false
}

// proxyAddr is the host:port to dial for px.
func proxyAddr(px *url.URL) string {
	port := px.Port()
	if port == "" {
		port = "80"
	}
	return net.JoinHostPort(px.Hostname(), port)
}

// proxyAuth is the Proxy-Authorization value for px's userinfo, or "".
func proxyAuth(px *url.URL) string {
	if px.User == nil {
		return ""
	}
	pw, _ := px.User.Password()
	return "Basic " + base64.StdEncoding.EncodeToString([]byte(px.User.Username()+":"+pw))
}

// connect opens a tunnel to t through the proxy cn is connected to.
func connect(cn *conn, t *target, px *url.URL) error {
	b := make([]byte, 0, 128)
	b = append(b, "CONNECT "...)
	b = append(b, t.addr...)
	b = append(b, " HTTP/1.1\r\nHost: "...)
	b = append(b, t.addr...)
	b = append(b, "\r\n"...)
	if auth := proxyAuth(px); auth != "" {
		b = append(b, "Proxy-Authorization: "...)
		b = append(b, auth...)
		b = append(b, "\r\n"...)
	}
	b = append(b, "\r\n"...)
	if _, err := cn.rw.Write(b); err != nil {
		return err
	}
	budget := maxResponseHeader
	status, _, err := readStatusLine(cn.br, &budget)
	if err != nil {
		return err
	}
	if status < 200 || status > 299 {
		return fmt.Errorf("proxy answered %d", status)
	}
	if _, err := readFields(cn.br, &budget); err != nil {
		return err
	}
	if cn.br.Buffered() > 0 {
		return errors.New("proxy sent data before the tunnel was used")
	}
	return nil
}
