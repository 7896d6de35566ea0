package device

import (
	"context"
	"errors"
	"math"
	"testing"
)

const piThrottleGlob = "sys/devices/platform/soc*/soc*:firmware/get_throttled"

func TestHealth(t *testing.T) {
	synced := func(v bool) func() (bool, error) { return func() (bool, error) { return v, nil } }
	tests := []struct {
		name string
		h    Health
		want []Reading
	}{
		{
			name: "pi4 under-voltage now",
			h:    Health{Root: "testdata/health/pi4", ThermalZone: "thermal_zone0", ThrottlePath: piThrottleGlob, ClockSynced: synced(false)},
			// get_throttled 0x50005: bits 0, 2, 16, 18.
			want: []Reading{
				{"soc_temperature", 48.3, Celsius},
				{"undervoltage", 1, Bool}, {"throttled", 1, Bool},
				{"undervoltage_since_boot", 1, Bool}, {"throttled_since_boot", 1, Bool},
				{"mem_available", 3280, Megabyte}, // 3358720 kB
				{"load1", 0.42, Count},
				{"uptime", 12346, Second},
				{"clock_synced", 1, Bool}, // timesyncd's flag wins over the kernel's view
			},
		},
		{
			name: "pi5 throttled earlier, clock from adjtimex",
			h:    Health{Root: "testdata/health/pi5", ThermalZone: "thermal_zone0", ThrottlePath: piThrottleGlob, ClockSynced: synced(false)},
			want: []Reading{
				{"soc_temperature", 61.3, Celsius}, // 61250 m°C, one decimal
				{"undervoltage", 0, Bool}, {"throttled", 0, Bool},
				{"undervoltage_since_boot", 1, Bool}, {"throttled_since_boot", 1, Bool},
				{"mem_available", 7474.9, Megabyte},
				{"load1", 1.05, Count},
				{"uptime", 86400, Second},
				{"clock_synced", 0, Bool},
			},
		},
		{
			name: "riscv: no throttle file, bad thermal, old kernel, no clock source",
			h:    Health{Root: "testdata/health/riscv", ThermalZone: "thermal_zone0", ThrottlePath: piThrottleGlob},
			want: []Reading{{"load1", 0, Count}, {"uptime", 42, Second}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.h.Sense(bg())
			if err != nil {
				t.Fatal(err)
			}
			wantReadings(t, got, tt.want, 1e-9)
		})
	}
}

func TestHealthDiskFree(t *testing.T) {
	h := Health{Root: "testdata/health/empty", StateDir: t.TempDir()}
	got, err := h.Sense(bg())
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].Quantity != "disk_free" || got[0].Unit != Megabyte || got[0].Value <= 0 || math.IsNaN(got[0].Value) {
		t.Fatalf("Sense = %v, want one positive disk_free in MB", got)
	}
}

func TestHealthNothingReadable(t *testing.T) {
	h := Health{Root: "testdata/health/empty", ThermalZone: "thermal_zone0", ThrottlePath: piThrottleGlob}
	_, err := h.Sense(bg())
	wantErr(t, err, "health: no source readable under testdata/health/empty")

	h = Health{Root: "testdata/health/empty", ClockSynced: func() (bool, error) {
		return false, errors.New("adjtimex: operation not permitted")
	}}
	_, err = h.Sense(bg())
	wantErr(t, err, "health: no source readable: clock_synced: adjtimex: operation not permitted")

	ctx, cancel := context.WithCancel(bg())
	cancel()
	if _, err := (&Health{Root: "testdata/health/pi4"}).Sense(ctx); !errors.Is(err, context.Canceled) {
		t.Errorf("Sense(canceled) = %v, want context.Canceled", err)
	}
}

func TestKernelClockSynced(t *testing.T) {
	// adjtimex with no modes only reads; whatever this machine's clock
	// state, it must answer.
	if _, err := KernelClockSynced(); err != nil {
		t.Fatal(err)
	}
}

func TestParseThrottled(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want uint64
		ok   bool
	}{
		{"0\n", 0, true}, {"50005\n", 0x50005, true}, {"0x50000", 0x50000, true}, {"e0008\n", 0xe0008, true},
		{"", 0, false}, {"throttled=0x0", 0, false}, {"fffffffff", 0, false},
	} {
		got, err := parseThrottled([]byte(tt.in))
		if (err == nil) != tt.ok || got != tt.want {
			t.Errorf("parseThrottled(%q) = %#x, %v, want %#x, ok=%v", tt.in, got, err, tt.want, tt.ok)
		}
	}
}

func FuzzParseMeminfo(f *testing.F) {
	f.Add([]byte("MemTotal: 3885052 kB\nMemAvailable:    3358720 kB\n"))
	f.Add([]byte("MemAvailable: -1 kB\n"))
	f.Add([]byte(""))
	f.Fuzz(func(t *testing.T, b []byte) {
		v, err := parseMeminfo(b)
		if err == nil && (v < 0 || math.IsNaN(v)) {
			t.Errorf("parseMeminfo(%q) = %v", b, v)
		}
	})
}

func FuzzParseThrottled(f *testing.F) {
	f.Add([]byte("50005\n"))
	f.Add([]byte("0x0"))
	f.Fuzz(func(t *testing.T, b []byte) {
		if v, err := parseThrottled(b); err == nil && v > math.MaxUint32 {
			t.Errorf("parseThrottled(%q) = %#x, more than 32 bits", b, v)
		}
	})
}
