package store

import (
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/vigil-iot/vigil/alert"
	"github.com/vigil-iot/vigil/device"
)

// boundedOpts are small caps so that the rings fill within a few hundred commits.
var boundedOpts = Options{RunCap: 100, HistoryCap: 1000, OutboxCap: 30, FingerCap: 50}

// heartbeatWork is one commit of a busy device: a run, ten snapshots, an
// alert that mqtt acks at once and telegram acks late or (half of the time)
// not at all, a fresh fingerprint, a rule flipping, and the state.
func heartbeatWork(tx *Tx, i int) error {
	at := t0.Add(time.Duration(i) * time.Minute)
	if _, err := tx.AppendRun(Run{Start: at, Outcome: "alert", DurationMS: int64(i), Tokens: 900, LLMCalls: 2,
		ToolCalls: []string{"list_sensors", "read_sensor", "heartbeat_respond"}, Alerts: []string{fmt.Sprint("a", i)}}); err != nil {
		return err
	}
	snaps := make([]device.Snapshot, 10)
	for j := range snaps {
		snaps[j] = snap(at.Add(time.Duration(j)*6*time.Second), 5)
	}
	if err := tx.AppendHistory(snaps); err != nil {
		return err
	}
	seq, _, err := tx.Enqueue(alert.Alert{ID: fmt.Sprint("a", i), Device: "pi", Time: at, Severity: alert.Critical,
		Source: alert.SourceLLM, State: alert.StateFiring, Summary: fmt.Sprintf("alert number %d with some words", i)})
	if err != nil {
		return err
	}
	active := []string{"mqtt", "telegram"}
	if err := tx.Ack("mqtt", seq, active); err != nil {
		return err
	}
	if i%50 < 25 && seq > 20 {
		if err := tx.Ack("telegram", seq-20, active); err != nil {
			return err
		}
	}
	if err := tx.PutFingerprint(fmt.Sprintf("fingerprint-%08d", i), at); err != nil {
		return err
	}
	if i%2 == 0 {
		err = tx.PutRuleState(fmt.Sprint("rule", i%7), RuleState{Firing: true, Since: at, AlertID: fmt.Sprint("a", i)})
	} else {
		err = tx.DeleteRuleState(fmt.Sprint("rule", (i-1)%7))
	}
	if err != nil {
		return err
	}
	return tx.PutState(State{LastSuccess: at, BudgetCalls: i, Counters: map[string]uint64{"runs": uint64(i)}})
}

func TestBoundedSize(t *testing.T) {
	if testing.Short() {
		t.Skip("writes a few thousand commits")
	}
	db := openTemp(t, boundedOpts)
	size := func() int64 {
		fi, err := os.Stat(db.Path())
		if err != nil {
			t.Fatal(err)
		}
		return fi.Size()
	}
	// 100 commits fill the history ring (1000 snapshots) and the run ring.
	const fill = 150
	i := 0
	run := func(n int) {
		for range n {
			update(t, db, func(tx *Tx) error { return heartbeatWork(tx, i) })
			i++
		}
	}
	run(fill)
	s1 := size()
	run(fill)
	s2 := size()
	run(4 * fill)
	s3 := size()
	t.Logf("file size after %d commits: %d, after %d: %d, after %d: %d", fill, s1, 2*fill, s2, 6*fill, s3)

	// The rings filled during the first phase; from then on bbolt must reuse
	// freed pages. Allow one growth step (bbolt grows the file by doubling
	// its mapping) for fragmentation, and none after that.
	if s2 > 2*s1 {
		t.Errorf("file grew from %d to %d bytes after the rings were full", s1, s2)
	}
	if s3 > s2 {
		t.Errorf("file kept growing: %d bytes after %d commits, %d after %d", s2, 2*fill, s3, 6*fill)
	}
	view(t, db, func(tx *Tx) error {
		runs, _ := tx.Runs(0)
		hist, _ := tx.History(time.Time{})
		dropped, _ := tx.Dropped()
		rules, _ := tx.RuleStates()
		fingers := count(tx.bucket(bucketFingers))
		outbox := count(tx.bucket(bucketOutbox))
		if len(runs) != boundedOpts.RunCap || len(hist) != boundedOpts.HistoryCap || fingers != boundedOpts.FingerCap {
			t.Errorf("rings hold %d runs, %d snapshots, %d fingerprints, want %d, %d, %d",
				len(runs), len(hist), fingers, boundedOpts.RunCap, boundedOpts.HistoryCap, boundedOpts.FingerCap)
		}
		if outbox > boundedOpts.OutboxCap || dropped == 0 {
			t.Errorf("outbox holds %d entries (cap %d), dropped %d: the workload should fill it", outbox, boundedOpts.OutboxCap, dropped)
		}
		if len(rules) > 7 {
			t.Errorf("%d rule states, want at most 7", len(rules))
		}
		return nil
	})
	if err := db.Check(); err != nil {
		t.Errorf("Check() after %d commits: %v", i, err)
	}
}
