// Package heartbeat runs vigil's two loops (SPEC §1) and its delivery.
//
// The sample loop reads every sensor each sample interval, keeps a bounded
// in-memory history, evaluates the local rules and queues their alerts. It
// needs no network and writes to flash only when a rule changed state or an
// alert was queued.
//
// The heartbeat loop ticks every interval, on a phase derived from the device
// id, on monotonic time. A tick is skipped with a recorded reason (paused,
// inactive_hours, clock_unsynced, budget, busy, llm_backoff, rules_only,
// empty_checklist, unchanged) or asks the LLM through a Thinker. Each tick is
// recorded in one write transaction together with the sensor history since the
// last tick and any alert it queued. With Config.Schedule the loop runs at
// wall-clock times of day instead (schedule.go states how it distrusts that
// clock); its runs are gated and recorded the same way.
//
// Alerts of both loops go into the store's outbox; one delivery loop per
// Notifier drains it in order, deleting an entry only after the transport
// acknowledged it.
//
// Time comes from an injected clockwork.Clock (intervals, timers, elapsed
// time) and an injected wall clock (timestamps, active hours, schedules), so tests can
// skew, jump and boot in 1970.
package heartbeat
