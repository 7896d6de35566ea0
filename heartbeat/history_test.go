package heartbeat

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/vigil-iot/vigil/device"
)

// naiveHistory is the old implementation: whole snapshots, oldest first.
type naiveHistory struct {
	max  int
	rows []struct {
		at time.Time
		r  map[string]device.Value
	}
}

func (n *naiveHistory) add(at time.Time, r map[string]device.Value) {
	n.rows = append(n.rows, struct {
		at time.Time
		r  map[string]device.Value
	}{at, r})
	if len(n.rows) > n.max {
		n.rows = n.rows[len(n.rows)-n.max:]
	}
}

func (n *naiveHistory) first(key string, since time.Time) (float64, bool) {
	for _, row := range n.rows {
		if row.at.Before(since) {
			continue
		}
		if v, ok := row.r[key]; ok {
			return v.Value, true
		}
	}
	return 0, false
}

func TestHistoryMatchesSnapshots(t *testing.T) {
	t0 := time.Unix(1000, 0)
	keys := []string{"air.temperature", "air.humidity", "co2.co2", "late.sensor"}
	for seed := range uint64(200) {
		rng := rand.New(rand.NewPCG(seed, 1))
		max := 1 + rng.IntN(40)
		h, n := newHistory(max), &naiveHistory{max: max}
		at := t0
		for step := range 300 {
			at = at.Add(time.Duration(1+rng.IntN(30)) * time.Second)
			r := map[string]device.Value{}
			for i, k := range keys {
				if i == 3 && step < 50 {
					continue // a sensor that appears later: a new column
				}
				if rng.IntN(5) == 0 {
					continue // a failed read
				}
				v := float64(rng.IntN(1000)) / 10
				if rng.IntN(50) == 0 {
					v = math.NaN() // a reading that is not a number is still a reading
				}
				r[k] = device.Value{Value: v}
			}
			h.add(at, r)
			n.add(at, r)
			for _, k := range append(keys, "never.seen") {
				since := at.Add(-time.Duration(rng.IntN(900)) * time.Second)
				got, gok := h.first(k, since)
				want, wok := n.first(k, since)
				if gok != wok || gok && !(got == want || math.IsNaN(got) && math.IsNaN(want)) {
					t.Fatalf("seed %d step %d: first(%s, -%v) = %v, %v; want %v, %v", seed, step, k, at.Sub(since), got, gok, want, wok)
				}
			}
		}
	}
}

func TestHistoryDoesNotAllocateWhenFull(t *testing.T) {
	h := newHistory(10)
	r := map[string]device.Value{"a.x": {Value: 1}, "b.y": {Value: 2}}
	at := time.Unix(0, 0)
	for range 10 {
		at = at.Add(time.Second)
		h.add(at, r)
	}
	if n := testing.AllocsPerRun(100, func() { at = at.Add(time.Second); h.add(at, r) }); n != 0 {
		t.Errorf("add on a full ring allocates %v times", n)
	}
}
