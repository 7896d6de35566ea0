package mqtt

import (
	paho "github.com/eclipse/paho.mqtt.golang"
	"github.com/eclipse/paho.mqtt.golang/packets"
)

// Resend policy. An alert in flight when the connection drops (sent, its
// PUBACK not yet come) is resent by exactly one party: the outbox, which
// is durable. Notify returns ErrConnectionLost for it, and the delivery
// loop resends it once connected again. paho would resend it too: on
// every automatic reconnect it replays the outbound QoS 1 publishes of its
// store (client.reconnect calls resume whatever CleanSession says), so one
// alert arrived three times after a failover (before the drop, from paho,
// from the outbox). So the daemon's client keeps no outbound publish in
// paho's store (outboxStore), and a waiter is released when its
// connection is gone for good (onLost, or the next onConnect, whichever
// comes first), never left waiting for a resend that does not come.

// outboxStore is paho's in-memory store without the outbound publishes:
// paho has nothing to replay after a reconnect. Everything else (inbound
// QoS 2 state) is kept as paho keeps it.
type outboxStore struct{ *paho.MemoryStore }

func newOutboxStore() outboxStore { return outboxStore{paho.NewMemoryStore()} }

func (s outboxStore) Put(key string, m packets.ControlPacket) {
	if _, ok := m.(*packets.PublishPacket); ok && len(key) > 1 && key[0] == 'o' {
		return // the outbox's to resend, not paho's
	}
	s.MemoryStore.Put(key, m)
}
