package mosquittotest

import (
	"crypto/tls"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/gorilla/websocket"
)

// WSBridge serves MQTT over WebSockets on a loopback port and forwards each
// WebSocket connection to a broker's TCP listener, one binary message per
// read. It stands in for mosquitto's own `protocol websockets` listener,
// which Debian's mosquitto 2.0.11 fails to start on some machines ("Unable
// to start any listening sockets").
type WSBridge struct {
	srv *httptest.Server

	mu    sync.Mutex
	conns []io.Closer
}

// StartWSBridge starts a bridge to target (host:port) at path /mqtt. With
// tlsCfg it serves wss:// with that configuration, else ws://. It stops
// when the test ends.
func StartWSBridge(t testing.TB, target string, tlsCfg *tls.Config) *WSBridge {
	t.Helper()
	b := &WSBridge{}
	up := websocket.Upgrader{
		Subprotocols: []string{"mqtt"},
		CheckOrigin:  func(*http.Request) bool { return true },
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/mqtt", func(w http.ResponseWriter, r *http.Request) {
		ws, err := up.Upgrade(w, r, nil)
		if err != nil {
			return // Upgrade answered the client already
		}
		tcp, err := net.Dial("tcp", target)
		if err != nil {
			ws.Close()
			return
		}
		b.mu.Lock()
		b.conns = append(b.conns, ws.NetConn(), tcp)
		b.mu.Unlock()
		go func() { // broker -> client
			buf := make([]byte, 4096)
			for {
				n, err := tcp.Read(buf)
				if n > 0 && ws.WriteMessage(websocket.BinaryMessage, buf[:n]) != nil {
					break
				}
				if err != nil {
					break
				}
			}
			ws.Close()
		}()
		for { // client -> broker
			_, msg, err := ws.ReadMessage()
			if err != nil {
				break
			}
			if _, err := tcp.Write(msg); err != nil {
				break
			}
		}
		tcp.Close()
	})
	b.srv = httptest.NewUnstartedServer(mux)
	if tlsCfg != nil {
		b.srv.TLS = tlsCfg
		b.srv.StartTLS()
	} else {
		b.srv.Start()
	}
	t.Cleanup(func() { b.Cut(); b.srv.Close() })
	return b
}

// URL is the bridge as a broker URL: ws://127.0.0.1:PORT/mqtt, or wss://.
func (b *WSBridge) URL() string {
	return strings.Replace(b.srv.URL, "http", "ws", 1) + "/mqtt"
}

// Cut closes every bridged connection on both sides.
func (b *WSBridge) Cut() {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, c := range b.conns {
		c.Close()
	}
	b.conns = nil
}
