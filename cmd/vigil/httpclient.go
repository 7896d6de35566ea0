package main

// Policy: vigil makes one HTTPS request every few minutes (an LLM run, an
// alert) and holds one long poll (Telegram getUpdates). Each destination
// gets its own http.Client whose Transport keeps at most one idle
// connection for a minute, bounds every phase of a request, and speaks
// HTTP/1.1 only: HTTP/2 would add a connection-level read loop and flow
// control buffers for no gain at this request rate, and with HTTP/1.1 a
// connection closed mid-request has one simple meaning to net/http's retry
// rules (a POST is re-sent only when nothing of it was written).

import (
	"net"
	"net/http"
	"net/url"
	"time"
)

// Phase timeouts of every outgoing HTTPS request. The whole request has
// its own deadline from its caller (llm.timeout, the Telegram poll).
const (
	dialTimeout         = 15 * time.Second
	tlsHandshakeTimeout = 15 * time.Second
	idleConnTimeout     = 60 * time.Second
	expectContinue      = time.Second
	maxHeaderBytes      = 64 << 10
)

// proxyFunc is http.Transport.Proxy.
type proxyFunc = func(*http.Request) (*url.URL, error)

// newHTTPClient returns the client for one destination. vigil passes
// http.ProxyFromEnvironment as proxy: HTTPS_PROXY, HTTP_PROXY and NO_PROXY
// (either case), where a proxy URL may be http://, https:// or socks5://
// (socks5h:// resolves names at the proxy) and a bare host:port means
// http://. Requests to localhost and loopback addresses never use a proxy.
// headerTimeout bounds the wait for the response header once the request
// is written: it must exceed the slowest answer expected (an LLM's reply,
// a long poll).
func newHTTPClient(proxy proxyFunc, headerTimeout time.Duration) *http.Client {
	return &http.Client{Transport: &http.Transport{
		Proxy:                  proxy,
		DialContext:            (&net.Dialer{Timeout: dialTimeout, KeepAlive: 30 * time.Second}).DialContext,
		TLSHandshakeTimeout:    tlsHandshakeTimeout,
		ResponseHeaderTimeout:  headerTimeout,
		ExpectContinueTimeout:  expectContinue,
		MaxIdleConns:           1,
		MaxIdleConnsPerHost:    1,
		IdleConnTimeout:        idleConnTimeout,
		MaxResponseHeaderBytes: maxHeaderBytes,
		ForceAttemptHTTP2:      false,
	}}
}
