package device

import (
	"testing"
	"time"

	"periph.io/x/conn/v3/i2c/i2ctest"
)

var (
	scd4xWake  = []byte{0x36, 0xF6}
	scd4xStart = []byte{0x21, 0xB1}
	scd4xStop  = []byte{0x3F, 0x86}
	scd4xReady = []byte{0xE4, 0xB8}
	scd4xRead  = []byte{0xEC, 0x05}
)

// words encodes 16-bit words as the SCD4x sends them: big-endian, each
// followed by its CRC-8 (datasheet §3.11).
func words(w ...uint16) []byte {
	var b []byte
	for _, v := range w {
		hi, lo := byte(v>>8), byte(v)
		b = append(b, hi, lo, sensirionCRC(hi, lo))
	}
	return b
}

func scd4xOpen() []i2ctest.IO {
	return []i2ctest.IO{{Addr: 0x62, W: scd4xWake}, {Addr: 0x62, W: scd4xStart}}
}

func scd4xMeasure(co2, t, rh uint16) []i2ctest.IO {
	return []i2ctest.IO{
		{Addr: 0x62, W: scd4xReady, R: words(0x8006)}, // low 11 bits non-zero: data ready
		{Addr: 0x62, W: scd4xRead, R: words(co2, t, rh)},
	}
}

// fakeClock is a settable clock.
type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time { return c.t }

func TestSCD4x(t *testing.T) {
	// Datasheet §3.5.2, read_measurement example: words 0x01f4, 0x6667,
	// 0x5eb9 are 500 ppm, -45 + 175 × 0x6667/(2^16-1) = 25 °C and
	// 100 × 0x5eb9/(2^16-1) = 37 %RH.
	clock := &fakeClock{time.Date(2025, 1, 1, 12, 0, 0, 0, time.UTC)}
	ops := scd4xOpen()
	ops = append(ops, scd4xMeasure(0x01F4, 0x6667, 0x5EB9)...)
	ops = append(ops, scd4xMeasure(0x0320, 0x6667, 0x5EB9)...) // 800 ppm, after one period
	bus := playback(ops...)
	d, err := NewSCD4x(bus, "1", 0, clock.now)
	if err != nil {
		t.Fatal(err)
	}
	want := []Reading{{"co2", 500, PPM}, {"temperature", 25, Celsius}, {"humidity", 37, Percent}}
	got, err := d.Sense(bg())
	if err != nil {
		t.Fatal(err)
	}
	wantReadings(t, got, want, 0.005)

	// Within one measurement period: the cached reading, no bus traffic.
	clock.t = clock.t.Add(3 * time.Second)
	got, err = d.Sense(bg())
	if err != nil {
		t.Fatal(err)
	}
	wantReadings(t, got, want, 0.005)
	if bus.Count != 4 {
		t.Errorf("a Sense within %v touched the bus: %d ops", SCD4xPeriod, bus.Count)
	}

	clock.t = clock.t.Add(2 * time.Second)
	got, err = d.Sense(bg())
	if err != nil {
		t.Fatal(err)
	}
	want[0].Value = 800
	wantReadings(t, got, want, 0.005)
	mustConsume(t, bus)
}

func TestSCD4xAlreadyMeasuring(t *testing.T) {
	// A sensor left in periodic mode by an earlier process refuses wake_up;
	// the driver stops the measurement and starts it again.
	bus := newNACKBus(
		i2ctest.IO{Addr: 0x62, W: scd4xWake},
		i2ctest.IO{Addr: 0x62, W: scd4xStop},
		i2ctest.IO{Addr: 0x62, W: scd4xStart},
	)
	bus.nack = map[int]bool{0: true}
	if _, err := NewSCD4x(bus, "1", 0x62, time.Now); err != nil {
		t.Fatal(err)
	}
	mustConsume(t, bus)
}

func TestSCD4xErrors(t *testing.T) {
	badCRC := scd4xMeasure(0x01F4, 0x6667, 0x5EB9)
	badCRC[1].R[5] ^= 0x01
	tests := []struct {
		name   string
		ops    []i2ctest.IO
		nack   map[int]bool
		prefix string
		more   string
	}{
		{"NACK on read_measurement", scd4xMeasure(0x01F4, 0x6667, 0x5EB9), map[int]bool{1: true}, "scd4x: i2c bus 1 addr 0x62: read: sysfs-i2c: remote I/O error", ""},
		{"bad CRC", badCRC, nil, "scd4x: i2c bus 1 addr 0x62: read: ", "invalid crc"},
		{"implausible CO2", scd4xMeasure(0xFFFF, 0x6667, 0x5EB9), nil, "scd4x: i2c bus 1 addr 0x62: implausible co2 6.554e+04 ppm", "0 to 40000 ppm"},
		// 0x0000 is -45 °C, below the operating range.
		{"implausible temperature", scd4xMeasure(0x01F4, 0x0000, 0x5EB9), nil, "scd4x: i2c bus 1 addr 0x62: implausible temperature -45 °C", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			bus := newNACKBus(append(scd4xOpen(), tt.ops...)...)
			d, err := NewSCD4x(bus, "1", 0, time.Now)
			if err != nil {
				t.Fatal(err)
			}
			for k, v := range tt.nack {
				if bus.nack == nil {
					bus.nack = map[int]bool{}
				}
				bus.nack[k+2] = v // after the two start-up commands
			}
			_, err = d.Sense(bg())
			wantErr(t, err, tt.prefix, tt.more)
			mustConsume(t, bus)
		})
	}
}
