package daemon

import (
	"context"
	"runtime"
	"runtime/metrics"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"

	"github.com/vigil-iot/vigil/config"
)

func heapFree() uint64 {
	s := []metrics.Sample{{Name: "/memory/classes/heap/free:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

var sink [][]byte

func TestTrimMemoryReturnsFreePages(t *testing.T) {
	// 16 MB of garbage, so that the 4 MB asked back below are well within
	// what is free even when the runtime returned some of it already.
	for range 512 {
		sink = append(sink, make([]byte, 32<<10))
	}
	sink = nil
	runtime.GC() // the garbage is now free heap, still resident
	before := heapFree()
	if before < 4<<20 {
		t.Skipf("only %d bytes free after GC; the runtime already returned them", before)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { trimMemory(ctx, clockwork.NewRealClock(), 0, time.Hour); close(done) }()
	deadline := time.Now().Add(5 * time.Second)
	// Most of it must go back to the kernel. Not all: goroutines that
	// earlier tests left running in this process allocate meanwhile.
	for before-min(before, heapFree()) < 4<<20 {
		if time.Now().After(deadline) {
			t.Fatalf("heap free still %d bytes (from %d) 5s after trimMemory started", heapFree(), before)
		}
		time.Sleep(10 * time.Millisecond)
	}
	cancel()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("trimMemory did not return when ctx ended")
	}
}

func TestTrimInterval(t *testing.T) {
	for _, tc := range []struct {
		enabled          bool
		sample, interval time.Duration
		want             time.Duration
	}{
		{true, 30 * time.Second, 30 * time.Minute, 10 * time.Minute}, // the defaults: 20 samples
		{true, 2 * time.Second, time.Minute, 40 * time.Second},       // config.toml's demo
		{true, time.Second, time.Minute, 20 * time.Second},
		{true, 10 * time.Second, time.Minute, time.Minute}, // a heartbeat comes first
		{true, 100 * time.Millisecond, time.Minute, 10 * time.Second},
		{true, time.Minute, 2 * time.Hour, 10 * time.Minute},
		{false, time.Minute, 5 * time.Minute, 10 * time.Minute},
		{true, 5 * time.Second, 0, 100 * time.Second},
	} {
		var cfg config.Config
		cfg.Heartbeat.Enabled = tc.enabled
		cfg.Heartbeat.SampleInterval.Duration = tc.sample
		cfg.Heartbeat.Interval.Duration = tc.interval
		if got := trimInterval(&cfg); got != tc.want {
			t.Errorf("trimInterval(enabled %v, samples %v, heartbeats %v) = %v, want %v", tc.enabled, tc.sample, tc.interval, got, tc.want)
		}
	}
}
