package heartbeat

import (
	"time"

	"github.com/vigil-iot/vigil/device"
	"github.com/vigil-iot/vigil/store"
)

// The history vigil keeps: the engine persists one snapshot per
// DefaultHistoryStep into the state file's ring of store.DefaultHistoryCap
// (2880) snapshots, so it reaches back HistoryKept, 48 h. Every window a
// person may ask for (vigil history --since, the page's /api/history) ends
// there.
const (
	DefaultHistoryStep = time.Minute
	HistoryKept        = store.DefaultHistoryCap * DefaultHistoryStep
)

// history keeps the readings of the last samples for delta(): one row of
// float64s per sample, in columns shared by every row, in a ring that
// reuses its rows. Keeping whole snapshots instead cost about 1.8 KB a
// sample (a map and its key strings) for the five-sensor sim board, 1.3 MB
// of live heap once 720 samples were held; a row costs 8 bytes a reading
// and, once the ring is full, no allocation.
type history struct {
	cols  map[string]int // reading key -> column
	rows  []histRow      // ring of at most max rows
	next  int            // where the next row goes once the ring is full
	max   int
	count int
}

type histRow struct {
	at   time.Time // mono
	vals []float64 // by column
	have []uint64  // bit per column: a reading was taken
}

func newHistory(max int) *history {
	return &history{cols: map[string]int{}, max: max}
}

// add records the readings taken at at (monotonic time).
func (h *history) add(at time.Time, readings map[string]device.Value) {
	for k := range readings {
		if _, ok := h.cols[k]; !ok {
			h.cols[k] = len(h.cols)
		}
	}
	n := len(h.cols)
	var r *histRow
	if len(h.rows) < h.max {
		h.rows = append(h.rows, histRow{})
		r = &h.rows[len(h.rows)-1]
	} else {
		r = &h.rows[h.next]
		h.next = (h.next + 1) % h.max
	}
	r.at = at
	if cap(r.vals) < n {
		r.vals = make([]float64, n, n+n/4+1) // room for sensors that appear later
	}
	r.vals = r.vals[:n]
	words := (n + 63) / 64
	if cap(r.have) < words {
		r.have = make([]uint64, words)
	}
	r.have = r.have[:words]
	clear(r.have)
	for k, v := range readings {
		c := h.cols[k]
		r.vals[c] = v.Value
		r.have[c/64] |= 1 << (c % 64)
	}
}

// first returns the reading of key in the oldest row taken at or after
// since, skipping rows without it.
func (h *history) first(key string, since time.Time) (float64, bool) {
	c, ok := h.cols[key]
	if !ok {
		return 0, false
	}
	for i := range h.rows {
		r := &h.rows[(h.next+i)%len(h.rows)]
		if r.at.Before(since) || c >= len(r.vals) || r.have[c/64]&(1<<(c%64)) == 0 {
			continue
		}
		return r.vals[c], true
	}
	return 0, false
}
