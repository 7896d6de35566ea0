// Package mqtt publishes vigil's alerts and retained state to an MQTT broker
// with github.com/eclipse/paho.mqtt.golang (MQTT 3.1.1 over TCP, TLS or
// WebSockets), and optionally accepts commands and announces the device to
// Home Assistant.
//
// Topics (<p> is the topic prefix, <id> the device id; see SPEC §5):
//
//	<p>/<id>/status             retained, QoS 1: online / offline (Last Will)
//	<p>/<id>/info               retained, QoS 1: board, version, intervals, tags, config digest (Info),
//	                            after every connect and every accepted change
//	<p>/<id>/alert              QoS 1: one alert as JSON (alert.Alert)
//	<p>/<id>/heartbeat          retained, QoS 1: the last heartbeat run
//	<p>/<id>/sensors            retained, QoS 1: the latest snapshot
//	<p>/<id>/problem            retained, QoS 1: ON while a problem is firing (Home Assistant); never for a notice
//	<p>/<id>/problem/attributes retained, QoS 1: the firing problems as JSON (Home Assistant)
//	<p>/<id>/cmd/check|pause|resume  inbound, only with Config.Commands
//	<p>/<id>/cmd/get|set|unset|checklist  inbound run-time settings and checklist, likewise
//	<p>/<id>/cmd/ack|rule       inbound acknowledgements and rule decisions, likewise
//	<p>/<id>/cmd/result         QoS 1: the answer to a command as JSON
//	<p>/fleet/rollcall          inbound, always: answered by publishing status,
//	                            info, heartbeat and problem state again, not
//	                            retained, at most once per RollCallLimit (the
//	                            roll calls within it: once, at its end)
//
// Info (retained on <p>/<id>/info, and again in a roll call's answer):
//
//	{"time": "2026-11-28T20:41:07Z", "board": "pi4", "version": "v1.4.2",
//	 "interval": "30m0s", "sample_interval": "30s",
//	 "tags": ["north", "tomatoes"], "config": "3f2a9c0d41be"}
//
// tags are device.tags of the config (absent when there are none); config is the first
// 12 hex digits of the SHA-256 of the config in force (config.Digest: the
// resolved config with the run-time overlay, the checklist in force, no
// secret and not the device id), so devices configured alike show the
// same digest. A set, unset, checklist set or reset, or a reload that
// changes what info says republishes it at once; time stays the
// connection's.
//
// Commands. Each command's payload has a short text form (cmd/pause "30",
// cmd/set "heartbeat.interval 10m") and a JSON form; only the JSON form can
// carry a correlation id, "cid": 1-64 bytes of A-Z a-z 0-9 . _ : -, which
// the result echoes (any other cid is refused before the command runs,
// with an error saying what a cid may be):
//
//	cmd/check, cmd/resume  {} or {"cid": "f7-1"}
//	cmd/pause              {"minutes": 30, "cid": "f7-1"}
//	cmd/get                {"key": "heartbeat.interval", "cid": "f7-1"} ("key": "" for every key)
//	cmd/set                {"key": "heartbeat.interval", "value": "10m", "cid": "f7-1"}
//	cmd/unset              {"key": "heartbeat.interval", "cid": "f7-1"}
//	cmd/checklist          {"op": "show"|"reset", "cid": "f7-1"}, {"op": "set", "text": "...", "cid": "f7-1"}
//	cmd/ack                {"target": "too_hot", "cid": "f7-1"} ("target" left out: the only problem firing)
//	cmd/rule               {"op": "approve"|"reject"|"drop", "target": "p7", "cid": "f7-1"}
//
// Every command, accepted or not, is answered on cmd/result:
//
//	{"command": "set", "cid": "f7-1", "key": "heartbeat.interval", "ok": true,
//	 "message": "heartbeat.interval set to 10m (was 30m)"}
//	{"command": "set", "cid": "f7-1", "key": "heartbeat.interval", "ok": false,
//	 "refused": true, "error": "not allowed: add \"set\" to [manage] remote"}
//	{"command": "pause", "cid": "f7-2", "ok": false, "error": "pause: minutes must be 1..1440 (at most 24 h)"}
//
// "refused": true means the device's policy turned the command down:
// [manage] remote lacks the verb, the channel made too many changes in
// the last minute, or a remote channel asked for more than it may (a
// raise of the daily LLM budget, a model [manage] models does not list).
// Without it a result that is not ok failed (a bad payload, an unknown key,
// a value out of range, an error of the device). With commands off
// (Config.Commands false) nothing is subscribed and nothing answers.
//
// With Config.Brokers the client knows every node of a cluster and fails
// over between them (see failover.go).
//
// Durability is not paho's job here: paho's stores are in memory (its
// FileStore never fsyncs), so Notify returns nil only after the broker's
// PUBACK and returns an error at once while the connection is down. The
// caller keeps the alert in its own durable outbox and retries, and it
// alone resends: paho keeps no outbound publish to replay after a
// reconnect (session.go), and NextConnect wakes the outbox the moment the
// connection is back. A retry after a lost PUBACK may still deliver an
// alert twice, with the same id (once before the drop, once from the
// outbox).
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
