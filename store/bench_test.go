package store

import (
	"fmt"
	"testing"
	"time"

	"github.com/vigil-iot/vigil/alert"
	"github.com/vigil-iot/vigil/device"
)

// BenchmarkHeartbeatCommit measures one heartbeat's commit with the default
// caps on a full file: a run, 60 snapshots of 5 readings (30 minutes of 30 s
// samples), and the engine state.
func BenchmarkHeartbeatCommit(b *testing.B) {
	db := openTemp(b, Options{})
	snaps := make([]device.Snapshot, 60)
	i := 0
	commit := func() error {
		return db.Update(func(tx *Tx) error {
			at := t0.Add(time.Duration(i) * 30 * time.Minute)
			i++
			for j := range snaps {
				snaps[j] = snap(at.Add(time.Duration(j)*30*time.Second), 5)
			}
			if _, err := tx.AppendRun(Run{Start: at, Outcome: "ok", DurationMS: 2100, Tokens: 1200, LLMCalls: 1,
				ToolCalls: []string{"heartbeat_respond"}}); err != nil {
				return err
			}
			if err := tx.AppendHistory(snaps); err != nil {
				return err
			}
			return tx.PutState(State{LastSuccess: at, LastLLMCall: at, BudgetDay: "2025-06-01", BudgetCalls: i % 96,
				BudgetTokens: 1200 * (i % 96), Counters: map[string]uint64{"runs": uint64(i), "samples": uint64(60 * i)}})
		})
	}
	// Fill the rings first: the steady state of a device that ran for days.
	for range DefaultHistoryCap/len(snaps) + 1 {
		if err := commit(); err != nil {
			b.Fatal(err)
		}
	}
	start := db.Commits()
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if err := commit(); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	if got := db.Commits() - start; got != uint64(b.N) {
		b.Fatalf("Commits() grew by %d for %d updates", got, b.N)
	}
}

// BenchmarkEnqueueAck measures queuing one alert and its delivery by two
// transports: three commits, as in the daemon.
func BenchmarkEnqueueAck(b *testing.B) {
	db := openTemp(b, Options{})
	active := []string{"mqtt", "telegram"}
	i := 0
	b.ReportAllocs()
	for b.Loop() {
		var seq uint64
		err := db.Update(func(tx *Tx) error {
			var err error
			seq, _, err = tx.Enqueue(alert.Alert{ID: fmt.Sprint("a", i), Device: "pi", Time: t0,
				Severity: alert.Warning, Source: alert.SourceRule, Rule: "too_hot",
				State: alert.StateFiring, Summary: "greenhouse at 36 °C"})
			return err
		})
		if err != nil {
			b.Fatal(err)
		}
		for _, name := range active {
			err := db.Update(func(tx *Tx) error {
				if _, err := tx.Pending(name, 10); err != nil {
					return err
				}
				return tx.Ack(name, seq, active)
			})
			if err != nil {
				b.Fatal(err)
			}
		}
		i++
	}
}
