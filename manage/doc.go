// Package manage holds vigil's run-time settings: the overlay kept in the
// state file, resolved on the base config; who may change what; the
// checklist set from afar; and the run-time view that `vigil status` and
// the status page show. It is pure over a config and the stored settings:
// it starts nothing and builds no daemon (package daemon applies what it
// resolves).
//
// Where a change goes: manage holds the policy below and the one
// validation of a set (Base.Check, with CheckUnset for an unset); who
// asks comes in as a Who, which the daemon reads from the command's
// channel (transport.Source.Remote is the one place that says which
// channels are remote). Package daemon holds the one path every change
// takes, from every channel and from the CLI with no daemon running
// (daemon/change.go: gate, rate, check, store, apply, audit), because
// only the daemon can apply a change and audit it. A refusal of who asked
// wraps alert.ErrNotAllowed, the one value every side names.
//
// Run-time settings policy (vigil set/unset/get, and the same verbs over
// the control socket, MQTT and Telegram). config.toml stays the base and is
// never written (/etc/vigil is read-only under the unit's hardening); the
// environment's VIGIL_<SECTION>_<KEY> come next, and the overlay kept in the
// state file ("settings" bucket) last. Every value goes through the config
// validator, with its messages.
//   - A set is validated against the base the running config was built
//     from (the daemon keeps the file's bytes and the environment), so a
//     file edited but not yet reloaded does not change what a set means.
//   - An accepted set or unset is stored first (it survives a power cut),
//     then applied at once through the same path as a SIGHUP reload, logged
//     at INFO with its source, and queued as an info system alert.
//   - An overlay entry that no longer validates (its rule was removed from
//     the file, or the file changed under it) never stops the daemon: it is
//     left out with one ERROR line naming it and who set it, and kept in the
//     state file until someone unsets it.
//   - Who may: the CLI and the control socket (local root) may use every
//     verb; MQTT, Telegram and the status page only what [manage] remote
//     lists (toggle needs "set"). The model only sets heartbeat.interval,
//     when heartbeat.model_may lists "interval", within interval_min and
//     interval_max.
//   - What a remote channel may not do even with "set": raise the daily LLM
//     budget (heartbeat.max_llm_calls_per_day), which costs money. It may
//     lower it, and set at most the larger of the configured value
//     (config.toml and the environment) and the value in force; only the
//     device's own CLI or socket may go above both. Nor may it choose any
//     model (a model is money too): llm.model and llm.scout_model only to a
//     name [manage] models lists, or to model or scout_model as configured.
//   - How often: a remote channel may make 10 changes a minute (daemon's
//     ratelimit.go).
package manage
