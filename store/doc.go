// Package store keeps vigil's durable state in one bbolt file: schema version,
// pause, counters, rule states, alert fingerprints, the LLM budget, a bounded
// run ring, a bounded sensor history, the alert outbox with one cursor per
// transport, and the alerts Telegram holds for its digest. It is the only
// package that imports bbolt. Everything that grows is a bounded ring, so
// the file stops growing once the rings are full.
//
// Reading the code: Open (store.go) opens the file once, verifies an
// existing one read-only before writing to it, and with Options.Reset
// moves a damaged file aside (corrupt.go) instead of failing; Update and
// View are the only transactions, and what they return is copied out of
// bbolt before the transaction ends. outbox.go is the alert queue with
// its per-transport cursors, ring.go the bounded rings (runs, history),
// settings.go the run-time overlay that package manage resolves,
// notes.go the model's notes, digest.go what Telegram holds for its
// digest, codec.go the value encodings. Bucket names
// and the schema version are constants; every commit is fsynced.
package store
