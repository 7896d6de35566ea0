package mosquittotest

import (
	"io"
	"net"
	"sync"
	"sync/atomic"
	"testing"
)

// Proxy forwards TCP connections to a broker. It can cut them all at once,
// as a power cut or a pulled cable would (the broker sees the socket close
// without a DISCONNECT packet), or black-hole the client's bytes while the
// connection stays open (a publish is lost on the wire and its PUBACK never
// comes, as on a dead link).
type Proxy struct {
	ln        net.Listener
	target    string
	blackhole atomic.Bool

	mu    sync.Mutex
	conns []net.Conn
}

// StartProxy listens on a fresh loopback port and forwards every connection
// to target (host:port). When the test ends it stops listening and cuts
// what is still open.
func StartProxy(t testing.TB, target string) *Proxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &Proxy{ln: ln, target: target}
	var wg sync.WaitGroup
	wg.Go(p.serve)
	t.Cleanup(func() { ln.Close(); wg.Wait(); p.Cut() })
	return p
}

// URL is the proxy's address as a paho broker URL.
func (p *Proxy) URL() string { return "tcp://" + p.ln.Addr().String() }

// Blackhole starts (true) or stops (false) swallowing the bytes clients
// send; what the broker sends still reaches them.
func (p *Proxy) Blackhole(on bool) { p.blackhole.Store(on) }

// Cut closes every forwarded connection on both sides with a reset and
// stops black-holing.
func (p *Proxy) Cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	defer p.blackhole.Store(false)
	for _, c := range p.conns {
		if tc, ok := c.(*net.TCPConn); ok {
			_ = tc.SetLinger(0) // RST, no orderly shutdown
		}
		c.Close()
	}
	p.conns = nil
}

func (p *Proxy) serve() {
	for {
		in, err := p.ln.Accept()
		if err != nil {
			return
		}
		out, err := net.Dial("tcp", p.target)
		if err != nil {
			in.Close()
			continue
		}
		p.mu.Lock()
		p.conns = append(p.conns, in, out)
		p.mu.Unlock()
		go func() { p.forward(out, in); out.Close() }()
		go func() { _, _ = io.Copy(in, out); in.Close() }()
	}
}

// forward copies client bytes to the broker, swallowing them while the
// proxy is black-holing.
func (p *Proxy) forward(out, in net.Conn) {
	buf := make([]byte, 4096)
	for {
		n, err := in.Read(buf)
		if n > 0 && !p.blackhole.Load() {
			if _, werr := out.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}
