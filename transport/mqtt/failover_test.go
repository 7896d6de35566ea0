package mqtt

import (
	"context"
	"crypto/tls"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	paho "github.com/eclipse/paho.mqtt.golang"

	"github.com/vigil-iot/vigil/alert"
	"github.com/vigil-iot/vigil/internal/mosquittotest"
)

// newClusterClient is a client for the nodes of a cluster (Config.Brokers)
// with the daemon's reconnect bounds: ReconnectMax stays at its default
// (1m), so a failover that waited on paho's backoff would show.
func newClusterClient(t *testing.T, nodes []string, keepalive time.Duration) *Client {
	t.Helper()
	return New(Config{Brokers: nodes, DeviceID: "dev1", ClientID: "vigil-" + strings.ReplaceAll(t.Name(), "/", "-"), Keepalive: keepalive},
		nil, testLogger(t))
}

func isOnline(m mosquittotest.Message) bool { return m.Payload == "online" }

// TestFailoverToNextBroker: with brokers = [a, b], the client connects to
// a; when a dies (its port refuses connections) it is on b within a few
// seconds, well under its reconnect backoff, and delivers there.
func TestFailoverToNextBroker(t *testing.T) {
	a := mosquittotest.Start(t, mosquittotest.Options{})
	b := mosquittotest.Start(t, mosquittotest.Options{})
	onA := mosquittotest.Subscribe(t, a.URL(), "vigil/dev1/#")
	onB := mosquittotest.Subscribe(t, b.URL(), "vigil/dev1/#")
	c := newClusterClient(t, []string{a.URL(), b.URL()}, 5*time.Second)
	runClient(t, c)
	onA.Wait("vigil/dev1/status", 10*time.Second, isOnline)
	if got := onB.On("vigil/dev1/status"); len(got) != 0 {
		t.Fatalf("status on b while a is up: %+v, want the first node used", got)
	}

	a.Kill()
	killed := time.Now()
	onB.Wait("vigil/dev1/status", 5*time.Second, isOnline)
	t.Logf("on b %v after a died", time.Since(killed).Round(10*time.Millisecond))
	ctx, cancel := context.WithTimeout(context.Background(), wait5)
	defer cancel()
	if err := c.Notify(ctx, testAlert("via-b", alert.Critical)); err != nil {
		t.Fatalf("Notify() after the failover = %v", err)
	}
	if m := onB.Next("vigil/dev1/alert", wait5); !strings.Contains(m.Payload, `"via-b"`) {
		t.Errorf("alert on b = %s", m.Payload)
	}
}

// TestFailoverFromFrozenBroker: a node that hangs with its port open (a
// frozen broker: the kernel still accepts TCP connections, nothing
// answers) is tried last after it failed, so the client is on b within
// about twice the keepalive (the time to notice) instead of spending a
// connect timeout (10 s) on a first.
func TestFailoverFromFrozenBroker(t *testing.T) {
	a := mosquittotest.Start(t, mosquittotest.Options{})
	t.Cleanup(a.Thaw) // before the broker's own cleanup stops it
	b := mosquittotest.Start(t, mosquittotest.Options{})
	onA := mosquittotest.Subscribe(t, a.URL(), "vigil/dev1/status")
	onB := mosquittotest.Subscribe(t, b.URL(), "vigil/dev1/status")
	const keepalive = 2 * time.Second
	c := newClusterClient(t, []string{a.URL(), b.URL()}, keepalive)
	runClient(t, c)
	onA.Wait("vigil/dev1/status", 10*time.Second, isOnline)

	a.Freeze()
	frozen := time.Now()
	onB.Wait("vigil/dev1/status", 2*keepalive+3*time.Second, isOnline)
	t.Logf("on b %v after a froze (keepalive %v)", time.Since(frozen).Round(10*time.Millisecond), keepalive)
}

// TestFailoverOrder: after losing node i the reconnect tries the nodes
// after it first, in the configured order, and i last.
func TestFailoverOrder(t *testing.T) {
	nodes := []string{"tcp://a:1883", "tcp://b:1883", "tcp://c:1883"}
	for _, tc := range []struct {
		lost string
		want []string
	}{
		{"tcp://a:1883", []string{"tcp://b:1883", "tcp://c:1883", "tcp://a:1883"}},
		{"tcp://b:1883", []string{"tcp://c:1883", "tcp://a:1883", "tcp://b:1883"}},
		{"tcp://c:1883", []string{"tcp://a:1883", "tcp://b:1883", "tcp://c:1883"}},
		{"", nodes}, // nothing connected yet: the configured order
	} {
		f := newFailover(urls(t, nodes...))
		if tc.lost != "" {
			f.attempt(urls(t, tc.lost)[0])
		}
		var got []string
		for _, u := range f.order() {
			got = append(got, u.String())
		}
		if strings.Join(got, " ") != strings.Join(tc.want, " ") {
			t.Errorf("after losing %q the order is %v, want %v", tc.lost, got, tc.want)
		}
	}
}

func urls(t *testing.T, raw ...string) []*url.URL {
	t.Helper()
	out := make([]*url.URL, len(raw))
	for i, r := range raw {
		u, err := url.Parse(r)
		if err != nil {
			t.Fatal(err)
		}
		out[i] = u
	}
	return out
}

// TestBrokersEveryURLForm: every URL form broker takes works as a node of
// brokers, with the TLS settings (CA and client certificate) applying to
// every node: each list has a dead node of the same scheme first, so the
// client reaches the live one only through the list.
func TestBrokersEveryURLForm(t *testing.T) {
	pki := mosquittotest.NewPKI(t)
	plain := mosquittotest.Start(t, mosquittotest.Options{})
	secure := startTLSBroker(t, pki)
	serverCert, err := tls.X509KeyPair(pki.ServerCert, pki.ServerKey)
	if err != nil {
		t.Fatal(err)
	}
	ws := mosquittotest.StartWSBridge(t, plain.Addr(), nil)
	wss := mosquittotest.StartWSBridge(t, plain.Addr(), &tls.Config{Certificates: []tls.Certificate{serverCert}})
	clientTLS, err := TLSConfig(pki.CA, pki.ClientCert, pki.ClientKey)
	if err != nil {
		t.Fatal(err)
	}
	dead := func(scheme, path string) string {
		return scheme + "://127.0.0.1:" + strconv.Itoa(mosquittotest.FreePort(t)) + path
	}
	for _, tc := range []struct {
		scheme, live, watch string // watch: where the test subscribes
		tls                 *tls.Config
	}{
		{"tcp", plain.URL(), plain.URL(), nil},
		{"mqtt", "mqtt://" + plain.Addr(), plain.URL(), nil},
		{"ssl", "ssl://" + secure.Addr(), "ssl://" + secure.Addr(), clientTLS},
		{"mqtts", "mqtts://" + secure.Addr(), "ssl://" + secure.Addr(), clientTLS},
		{"ws", ws.URL(), plain.URL(), nil},
		{"wss", wss.URL(), plain.URL(), clientTLS},
	} {
		t.Run(tc.scheme, func(t *testing.T) {
			path := ""
			if strings.HasPrefix(tc.scheme, "ws") {
				path = "/mqtt"
			}
			nodes := []string{dead(tc.scheme, path), tc.live}
			sub := mosquittotest.SubscribeWith(t, tc.watch, mosquittotest.SubscriberOptions{Configure: func(o *paho.ClientOptions) {
				o.SetTLSConfig(clientTLS.Clone())
			}}, "vigil/"+tc.scheme+"/status")
			c := New(Config{Brokers: nodes, DeviceID: tc.scheme, ClientID: "vigil-every-" + tc.scheme, TLS: tc.tls, Keepalive: 5 * time.Second},
				nil, testLogger(t))
			runClient(t, c)
			sub.Wait("vigil/"+tc.scheme+"/status", 10*time.Second, isOnline)
		})
	}
}
