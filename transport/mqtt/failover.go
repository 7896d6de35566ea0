package mqtt

import (
	"net/url"
	"sync"
)

// Failover policy across the nodes of a cluster (Config.Brokers). paho
// tries its list of servers on every connection attempt, first to last,
// and goes on to the next node at once when one fails; its reconnect
// backoff only grows after a round in which every node failed. What it
// does not do is remember which node it lost: every round starts with the
// first node again, and a node that hangs with its port open (a frozen
// broker, a host whose kernel still accepts connections) then costs the
// connect timeout before the next node is tried. So before each reconnect
// the list is rotated to start after the node the connection was lost to,
// which is tried last: the others are tried at once, in the configured
// order. The first connection uses the configured order.
type failover struct {
	mu    sync.Mutex
	nodes []*url.URL
	last  int // index of the node of the last connection attempt; -1 before any
}

func newFailover(nodes []*url.URL) *failover {
	return &failover{nodes: nodes, last: -1}
}

// attempt records the node paho is about to try (its connection attempt
// handler). After a successful attempt it is the node connected to.
func (f *failover) attempt(u *url.URL) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for i, n := range f.nodes {
		if n.String() == u.String() {
			f.last = i
			return
		}
	}
}

// order is the list of nodes for the next round: the nodes after the one
// last tried, then the ones before it, then it.
func (f *failover) order() []*url.URL {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.last < 0 {
		return append([]*url.URL(nil), f.nodes...)
	}
	out := make([]*url.URL, 0, len(f.nodes))
	out = append(out, f.nodes[f.last+1:]...)
	return append(out, f.nodes[:f.last+1]...)
}

// current names the node of the last connection attempt, for logs; all
// nodes before the first attempt.
func (f *failover) current() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.last < 0 {
		return nodeList(f.nodes)
	}
	return f.nodes[f.last].Redacted()
}

func nodeList(nodes []*url.URL) string {
	s := ""
	for i, n := range nodes {
		if i > 0 {
			s += ", "
		}
		s += n.Redacted()
	}
	return s
}
