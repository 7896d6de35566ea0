// Package mqtt publishes vigil's alerts and retained state to an MQTT broker
// with github.com/eclipse/paho.mqtt.golang (MQTT 3.1.1 over TCP, TLS or
// WebSockets), and optionally accepts commands and announces the device to
// Home Assistant.
//
// Topics (<p> is the topic prefix, <id> the device id; see SPEC §5):
//
//	<p>/<id>/status             retained, QoS 1: online / offline (Last Will)
//	<p>/<id>/info               retained, QoS 1: board, version, intervals (Info), after every connect
//	<p>/<id>/alert              QoS 1: one alert as JSON (alert.Alert)
//	<p>/<id>/heartbeat          retained, QoS 1: the last heartbeat run
//	<p>/<id>/sensors            retained, QoS 1: the latest snapshot
//	<p>/<id>/problem            retained, QoS 1: ON while a problem is firing (Home Assistant); never for a notice
//	<p>/<id>/problem/attributes retained, QoS 1: the firing problems as JSON (Home Assistant)
//	<p>/<id>/cmd/check|pause|resume  inbound, only with Config.Commands
//	<p>/<id>/cmd/get|set|unset|checklist  inbound run-time settings and checklist, likewise
//	<p>/<id>/cmd/result         QoS 1: the answer to a command as JSON
//	<p>/fleet/rollcall          inbound, always: answered by publishing status,
//	                            info, heartbeat and problem state again, not
//	                            retained, at most once per RollCallLimit
//
// With Config.Brokers the client knows every node of a cluster and fails
// over between them (see failover.go).
//
// Durability is not paho's job here: paho's stores are in memory (its
// FileStore never fsyncs), so Notify returns nil only after the broker's
// PUBACK and returns an error at once while the connection is down. The
// caller keeps the alert in its own durable outbox and retries; a retry
// after a lost PUBACK may deliver an alert twice, with the same id.
//
// The problem sensor is rebuilt after every connection from
// Config.Problems (the owner's durable rule and alert states), so the
// retained value is never one left over from before a restart.
//
// Home Assistant discovery uses one device message on
// <discovery>/device/<id>/config (Home Assistant 2025.10 and later, for
// default_entity_id; the device message itself dates from 2024.11) with the
// abbreviated keys dev, o, cmps and p; every component carries unique_id,
// default_entity_id (domain.object_id) and the status topic as availability.
package mqtt
