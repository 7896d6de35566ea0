package baseline_test

import (
	"fmt"
	"math"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/vigil-iot/vigil/baseline"
)

// fullSet returns a Set of n quantities, each observed once a minute for
// eight days, so every bin and the whole warm-up ring are in use: the
// largest a quantity's baseline gets.
func fullSet(n int) *baseline.Set {
	loc := time.FixedZone("CET", 3600)
	set := baseline.New(loc, func(string) float64 { return 0.01 })
	start := time.Date(2026, 6, 1, 0, 0, 0, 0, loc)
	for m := 0; m < 8*24*60; m++ {
		at := start.Add(time.Duration(m) * time.Minute)
		for k := 0; k < n; k++ {
			set.Observe(fmt.Sprintf("sensor%02d.temperature_%d", k, k), 20+5*math.Sin(float64(m)/229)+0.1*math.Sin(float64(m*k)), at)
		}
	}
	return set
}

// sizes returns the heap bytes and the encoded (state file) bytes per
// quantity of a full Set of n quantities. A quantity's memory is taken at
// its first observation (fixed-size bins and ring) and never grows, so RAM
// is the bytes allocated by n first observations (TotalAlloc: the map's
// growth and the keys' bytes included, an upper bound) and the state file's
// share the encoding after eight days of them.
func sizes(t testing.TB, n int) (ram, file float64) {
	t.Helper()
	keys := make([]string, n)
	for k := range keys {
		keys[k] = fmt.Sprintf("sensor%02d.temperature_%d", k, k)
	}
	at := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	set := baseline.New(time.UTC, nil)
	for _, k := range keys {
		set.Observe(strings.Clone(k), 20, at)
	}
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(set)
	data, err := fullSet(n).MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	return float64(after.TotalAlloc-before.TotalAlloc) / float64(n), float64(len(data)) / float64(n)
}

// TestSizePerQuantity: a quantity's baseline, full (every bin and the
// warm-up ring in use), takes at most 2 KB in RAM and in the state file
// (issue 30). A size, not a time: it may be asserted.
func TestSizePerQuantity(t *testing.T) {
	ram, file := sizes(t, 64)
	t.Logf("BASELINE ram_bytes_per_quantity=%.0f file_bytes_per_quantity=%.0f", ram, file)
	if ram > 2048 || file > 2048 {
		t.Errorf("a quantity's baseline takes %.0f B in RAM and %.0f B in the state file, want at most 2048 each", ram, file)
	}
}

// BenchmarkSetSize reports the same sizes (and how long encoding a full
// set of 16 quantities takes, as the heartbeat's commit does).
func BenchmarkSetSize(b *testing.B) {
	ram, file := sizes(b, 16)
	set := fullSet(16)
	for b.Loop() {
		if _, err := set.MarshalBinary(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(ram, "ram-B/quantity")
	b.ReportMetric(file, "file-B/quantity")
}
