package store

import (
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/vigil-iot/vigil/alert"
	"github.com/vigil-iot/vigil/device"
)

// snap builds a snapshot with n readings taken at t.
func snap(t time.Time, n int) device.Snapshot {
	s := device.Snapshot{Time: t, Readings: map[string]device.Value{}, Errors: map[string]string{}}
	for i := range n {
		s.Readings[fmt.Sprintf("air%d.temperature", i)] = device.Value{Value: 20 + float64(i) + float64(t.Unix()%100)/10, Unit: device.Celsius}
	}
	return s
}

// churn does one heartbeat's worth of every kind of write.
func churn(tx *Tx, i int) error {
	at := t0.Add(time.Duration(i) * time.Minute)
	if _, err := tx.AppendRun(Run{Start: at, Outcome: "ok", DurationMS: 1234, Tokens: 800, LLMCalls: 1,
		ToolCalls: []string{"read_sensor", "heartbeat_respond"}, Reason: "changed"}); err != nil {
		return err
	}
	snaps := make([]device.Snapshot, 10)
	for j := range snaps {
		snaps[j] = snap(at.Add(time.Duration(j)*3*time.Second), 5)
	}
	if err := tx.AppendHistory(snaps); err != nil {
		return err
	}
	seq, _, err := tx.Enqueue(alert.Alert{ID: fmt.Sprintf("a%d", i), Device: "pi", Time: at,
		Severity: alert.Warning, Source: alert.SourceRule, Rule: "too_hot", State: alert.StateFiring,
		Summary: "greenhouse at 36 °C"})
	if err != nil {
		return err
	}
	// Leave a backlog of a few entries behind so drops and deletes both happen.
	if seq > 3 {
		for _, name := range []string{"mqtt", "telegram"} {
			if err := tx.Ack(name, seq-3, []string{"mqtt", "telegram"}); err != nil {
				return err
			}
		}
	}
	if err := tx.PutFingerprint(fmt.Sprintf("fp%d", i), at); err != nil {
		return err
	}
	return tx.PutState(State{LastSuccess: at, BudgetCalls: i, Counters: map[string]uint64{"runs": uint64(i)}})
}

func TestRuns(t *testing.T) {
	tests := []struct {
		name    string
		cap     int
		appends int
		n       int
		want    []uint64 // sequence numbers, newest first
	}{
		{"empty", 5, 0, 10, nil},
		{"fewer than n", 5, 3, 10, []uint64{3, 2, 1}},
		{"limit", 5, 3, 2, []uint64{3, 2}},
		{"all with n=0", 5, 3, 0, []uint64{3, 2, 1}},
		{"ring full", 5, 5, 10, []uint64{5, 4, 3, 2, 1}},
		{"ring wrapped", 5, 12, 10, []uint64{12, 11, 10, 9, 8}},
		{"ring wrapped, limit", 5, 12, 2, []uint64{12, 11}},
		{"cap one", 1, 4, 10, []uint64{4}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opts := Options{RunCap: tt.cap}
			db := openTemp(t, opts)
			runs := map[uint64]Run{}
			for i := range tt.appends {
				r := Run{Start: t0.Add(time.Duration(i) * time.Minute), Outcome: "skipped", Reason: "unchanged",
					DurationMS: int64(i), Alerts: []string{fmt.Sprint("x", i)}, Pause: time.Duration(i) * time.Second}
				update(t, db, func(tx *Tx) error {
					seq, err := tx.AppendRun(r)
					if err != nil {
						return err
					}
					if want := uint64(i + 1); seq != want {
						t.Errorf("AppendRun #%d = %d, want %d", i, seq, want)
					}
					r.Seq = seq
					runs[seq] = r
					return nil
				})
			}
			db = reopen(t, db, opts)
			view(t, db, func(tx *Tx) error {
				got, err := tx.Runs(tt.n)
				if err != nil {
					t.Fatal(err)
				}
				var want []Run
				for _, seq := range tt.want {
					want = append(want, runs[seq])
				}
				if diff := cmp.Diff(want, got, cmpopts.EquateEmpty()); diff != "" {
					t.Errorf("Runs(%d) mismatch (-want +got):\n%s", tt.n, diff)
				}
				all, _ := tx.Runs(0)
				if len(all) > tt.cap {
					t.Errorf("ring holds %d runs, cap %d", len(all), tt.cap)
				}
				return nil
			})
		})
	}
}

func TestRunSeqNotReusedAfterCapShrinks(t *testing.T) {
	db := openTemp(t, Options{RunCap: 10})
	for range 6 {
		update(t, db, func(tx *Tx) error { _, err := tx.AppendRun(Run{Outcome: "ok"}); return err })
	}
	db = reopen(t, db, Options{RunCap: 2})
	update(t, db, func(tx *Tx) error {
		seq, err := tx.AppendRun(Run{Outcome: "failed"})
		if seq != 7 || err != nil {
			t.Errorf("AppendRun = %d, %v, want 7", seq, err)
		}
		return err
	})
	view(t, db, func(tx *Tx) error {
		runs, _ := tx.Runs(0)
		if len(runs) != 2 || runs[0].Seq != 7 || runs[1].Seq != 6 {
			t.Errorf("Runs(0) after shrinking the cap = %+v, want seq 7, 6", runs)
		}
		return nil
	})
}

func TestHistory(t *testing.T) {
	ms := func(i int) time.Time { return t0.Add(time.Duration(i) * time.Second) }
	odd := device.Snapshot{Time: ms(100).In(time.FixedZone("X", 5*3600+1800)),
		Readings: map[string]device.Value{
			"air.temperature": {Value: math.Inf(1), Unit: device.Celsius},
			"air.humidity":    {Value: -0.0, Unit: device.Percent},
			"board.throttled": {Value: 1, Unit: device.Bool},
		},
		Errors: map[string]string{"soil": "ads1x15: i2c bus 1 addr 0x48: nack", "light": "timed out"},
	}
	tests := []struct {
		name    string
		cap     int
		batches [][]device.Snapshot
		since   time.Time
		want    []device.Snapshot
	}{
		{"empty", 10, nil, time.Time{}, nil},
		{"all", 10, [][]device.Snapshot{{snap(ms(1), 2), snap(ms(2), 2)}, {snap(ms(3), 2)}}, time.Time{},
			[]device.Snapshot{snap(ms(1), 2), snap(ms(2), 2), snap(ms(3), 2)}},
		{"since is inclusive", 10, [][]device.Snapshot{{snap(ms(1), 2), snap(ms(2), 2), snap(ms(3), 2)}}, ms(2),
			[]device.Snapshot{snap(ms(2), 2), snap(ms(3), 2)}},
		{"since after everything", 10, [][]device.Snapshot{{snap(ms(1), 2)}}, ms(2), nil},
		{"ring drops oldest", 3, [][]device.Snapshot{{snap(ms(1), 1), snap(ms(2), 1)}, {snap(ms(3), 1), snap(ms(4), 1), snap(ms(5), 1)}}, time.Time{},
			[]device.Snapshot{snap(ms(3), 1), snap(ms(4), 1), snap(ms(5), 1)}},
		{"one batch beyond cap", 2, [][]device.Snapshot{{snap(ms(1), 1), snap(ms(2), 1), snap(ms(3), 1), snap(ms(4), 1)}}, time.Time{},
			[]device.Snapshot{snap(ms(3), 1), snap(ms(4), 1)}},
		{"insertion order after a clock jump back", 10, [][]device.Snapshot{{snap(ms(50), 1), snap(ms(10), 1), snap(ms(60), 1)}}, ms(20),
			[]device.Snapshot{snap(ms(50), 1), snap(ms(60), 1)}},
		{"odd values, zone and errors survive", 10, [][]device.Snapshot{{odd, {Time: ms(101)}}}, time.Time{},
			[]device.Snapshot{odd, {Time: ms(101), Readings: map[string]device.Value{}, Errors: map[string]string{}}}},
		{"empty batch", 10, [][]device.Snapshot{{}}, time.Time{}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opts := Options{HistoryCap: tt.cap}
			db := openTemp(t, opts)
			for _, b := range tt.batches {
				update(t, db, func(tx *Tx) error { return tx.AppendHistory(b) })
			}
			db = reopen(t, db, opts)
			view(t, db, func(tx *Tx) error {
				got, err := tx.History(tt.since)
				if err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(tt.want, got, cmpopts.EquateEmpty()); diff != "" {
					t.Errorf("History(%v) mismatch (-want +got):\n%s", tt.since, diff)
				}
				for i := range got {
					if got[i].Readings == nil || got[i].Errors == nil {
						t.Errorf("History()[%d] has nil maps", i)
					}
				}
				// LastHistory is the last appended, whatever its time.
				all, err := tx.History(time.Time{})
				if err != nil {
					t.Fatal(err)
				}
				last, ok, err := tx.LastHistory()
				if err != nil || ok != (len(all) > 0) {
					t.Fatalf("LastHistory() ok = %v, %v; want %v", ok, err, len(all) > 0)
				}
				if ok {
					if diff := cmp.Diff(all[len(all)-1], last, cmpopts.EquateEmpty()); diff != "" {
						t.Errorf("LastHistory() mismatch (-want +got):\n%s", diff)
					}
				}
				return nil
			})
		})
	}
}

// TestValuesOutliveTx checks that returned values stay intact after the
// transaction and after later writes reused bbolt's pages.
func TestValuesOutliveTx(t *testing.T) {
	db := openTemp(t, Options{RunCap: 3, HistoryCap: 5, OutboxCap: 3})
	for i := range 5 {
		update(t, db, func(tx *Tx) error { return churn(tx, i) })
	}
	var (
		runs    []Run
		hist    []device.Snapshot
		pending []Entry
		rules   map[string]RuleState
	)
	update(t, db, func(tx *Tx) error { return tx.PutRuleState("too_hot", RuleState{AlertID: "a1"}) })
	view(t, db, func(tx *Tx) error {
		runs, _ = tx.Runs(0)
		hist, _ = tx.History(time.Time{})
		pending, _ = tx.Pending("mqtt", 0)
		rules, _ = tx.RuleStates()
		return nil
	})
	want := fmt.Sprint(runs, hist, pending, rules)
	for i := 5; i < 50; i++ {
		update(t, db, func(tx *Tx) error {
			tx.DeleteRuleState("too_hot")
			tx.PutRuleState("too_hot", RuleState{AlertID: "zzzzzzzzzzzzzzzzzzzzzzzzzzzzz"})
			return churn(tx, i)
		})
	}
	if got := fmt.Sprint(runs, hist, pending, rules); got != want {
		t.Errorf("values changed after their transaction:\n got %s\nwant %s", got, want)
	}
}
