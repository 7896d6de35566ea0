package main

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"github.com/vigil-iot/vigil/internal/mosquittotest"
)

// Helpers for the end-to-end MQTT tests: a real mosquitto owned by one test
// (from internal/mosquittotest), and what vigil's alerts and log say.

// startMosquitto starts a broker on a loopback port and stops it when the
// test ends. It persists its sessions, so a subscriber with a persistent
// session misses nothing across Stop/Start (Stop is SIGTERM, on which
// mosquitto saves its database).
func startMosquitto(t *testing.T) *mosquittotest.Broker {
	t.Helper()
	return mosquittotest.Start(t, mosquittotest.Options{
		Config: "listener %d 127.0.0.1\nallow_anonymous true\n" +
			"log_dest stderr\nlog_type error\nlog_type warning\nlog_type notice\nlog_type information\nlog_timestamp_format %%T\n",
		Persist: true,
	})
}

// payloadIs matches a message by its exact payload.
func payloadIs(p string) func(mosquittotest.Message) bool {
	return func(m mosquittotest.Message) bool { return m.Payload == p }
}

// alertIDs returns the ids of the alerts r received on topic, in arrival
// order, each once, and fails if one id arrived with different payloads.
func alertIDs(t *testing.T, r *mosquittotest.Subscriber, topic string) []string {
	t.Helper()
	seen := map[string]string{}
	var ids []string
	for _, m := range r.On(topic) {
		var a struct{ ID string }
		if err := json.Unmarshal([]byte(m.Payload), &a); err != nil || a.ID == "" {
			t.Fatalf("alert payload %q: no id (%v)", m.Payload, err)
		}
		if prev, ok := seen[a.ID]; ok {
			if prev != m.Payload {
				t.Fatalf("alert %s redelivered with a different payload:\n%s\n%s", a.ID, prev, m.Payload)
			}
			continue
		}
		seen[a.ID] = m.Payload
		ids = append(ids, a.ID)
	}
	return ids
}

// reCommitted matches a rule change committed with an alert queued.
var reCommitted = regexp.MustCompile(`msg=rule rule=\S+ event=\S+ alert=(\S+)`)

// committed returns the ids of the alerts a daemon's log says it queued, in
// commit order (alerts held by the flood guard have none).
func committed(log string) []string {
	var ids []string
	for _, m := range reCommitted.FindAllStringSubmatch(log, -1) {
		if m[1] != "held" {
			ids = append(ids, m[1])
		}
	}
	return ids
}

// mqttConfig is the [mqtt] section for a test broker, keepalive 5s.
func mqttConfig(url string, extra ...string) string {
	return "\n[mqtt]\nbroker = \"" + url + "\"\nkeepalive = \"5s\"\n" + strings.Join(extra, "\n") + "\n"
}
