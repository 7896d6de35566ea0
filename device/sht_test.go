package device

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"periph.io/x/conn/v3/i2c/i2ctest"
)

// sleeps records the waits a driver asks for instead of spending them.
type sleeps struct{ got []time.Duration }

func (s *sleeps) sleep(ctx context.Context, d time.Duration) error {
	s.got = append(s.got, d)
	return ctx.Err()
}

// senseOnce opens a driver with a recording sleep, reads it once and
// checks the readings (within 0.005), that every recorded op was used and
// the waits it asked for.
func senseOnce(t *testing.T, bus closer, open func(Sleep) (Sensor, error), want []Reading, waits ...time.Duration) {
	t.Helper()
	var s sleeps
	d, err := open(s.sleep)
	if err != nil {
		t.Fatal(err)
	}
	got, err := d.Sense(bg())
	if err != nil {
		t.Fatal(err)
	}
	wantReadings(t, got, want, 0.005)
	mustConsume(t, bus)
	if !slices.Equal(s.got, waits) {
		t.Errorf("waits = %v, want %v", s.got, waits)
	}
}

// senseErr opens a driver with a recording sleep, reads it once and checks
// the error as wantErr does, and that every recorded op was used.
func senseErr(t *testing.T, bus closer, open func(Sleep) (Sensor, error), prefix string, contains ...string) {
	t.Helper()
	var s sleeps
	d, err := open(s.sleep)
	if err != nil {
		t.Fatal(err)
	}
	_, err = d.Sense(bg())
	wantErr(t, err, prefix, contains...)
	mustConsume(t, bus)
}

// shtFrame is a measurement answer: temperature word, CRC, humidity word,
// CRC (SHT3x-DIS datasheet §4.4; SHT4x datasheet, "Command Overview"),
// with CRCs from the test's own sensirionCRC.
func shtFrame(st, srh uint16) []byte {
	return []byte{byte(st >> 8), byte(st), sensirionCRC(byte(st>>8), byte(st)), byte(srh >> 8), byte(srh), sensirionCRC(byte(srh>>8), byte(srh))}
}

// Commands, written out from the datasheets independently of the drivers.
var (
	sht3xCmdMeasure   = []byte{0x24, 0x00} // Table 9: single shot, high repeatability, no clock stretching
	sht3xCmdHeaterOff = []byte{0x30, 0x66} // Table 16
	sht3xCmdReset     = []byte{0x30, 0xA2} // §4.9
	sht4xCmdMeasure   = []byte{0xFD}       // "Command Overview": measure T & RH, high precision
	sht4xCmdReset     = []byte{0x94}       // soft reset
)

func TestSensirionCRC8(t *testing.T) {
	// SHT3x-DIS datasheet Table 20 "I2C CRC properties": CRC(0xBEEF) = 0x92.
	if got := sensirionCRC8([]byte{0xBE, 0xEF}); got != 0x92 {
		t.Errorf("sensirionCRC8(0xBEEF) = %#x, want 0x92", got)
	}
	for _, w := range []uint16{0, 0x6666, 0xFFFF, 0x1234} {
		b := []byte{byte(w >> 8), byte(w)}
		if got, want := sensirionCRC8(b), sensirionCRC(b...); got != want {
			t.Errorf("sensirionCRC8(%#04x) = %#x, want %#x", w, got, want)
		}
	}
}

func TestSHT3x(t *testing.T) {
	// §4.13: T = -45 + 175·S/65535, RH = 100·S/65535. 0x6666 is 0.4 of
	// full scale (25 °C), 0x3333 0.2 (20 %). The second frame carries the
	// datasheet's CRC example, 0xBEEF with CRC 0x92 (Table 20), as its
	// temperature word: 85.52 °C.
	tests := []struct {
		name  string
		addr  uint16
		frame []byte
		want  []Reading
	}{
		{"25 °C 20 %", 0, shtFrame(0x6666, 0x3333), []Reading{{"temperature", 25, Celsius}, {"humidity", 20, Percent}}},
		{"datasheet CRC example", 0x45, append([]byte{0xBE, 0xEF, 0x92}, shtFrame(0, 0x8000)[3:]...), []Reading{{"temperature", 85.52, Celsius}, {"humidity", 50, Percent}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			addr := tt.addr
			if addr == 0 {
				addr = 0x44
			}
			bus := playback(
				i2ctest.IO{Addr: addr, W: sht3xCmdHeaterOff},
				i2ctest.IO{Addr: addr, W: sht3xCmdMeasure},
				i2ctest.IO{Addr: addr, R: tt.frame},
			)
			// 1 ms between commands after the heater command, then the
			// 15 ms measurement time (§2.2).
			senseOnce(t, bus, func(sleep Sleep) (Sensor, error) { return NewSHT3x(bus, "1", tt.addr, sleep) },
				tt.want, time.Millisecond, 15*time.Millisecond)
		})
	}
}

func TestSHT3xCRCFailureResets(t *testing.T) {
	bad := shtFrame(0x6666, 0x3333)
	bad[5] ^= 0x01 // humidity CRC
	bus := newNACKBus(
		i2ctest.IO{Addr: 0x44, W: sht3xCmdHeaterOff},
		i2ctest.IO{Addr: 0x44, W: sht3xCmdMeasure},
		i2ctest.IO{Addr: 0x44, R: bad},
		i2ctest.IO{Addr: 0x44, W: sht3xCmdReset}, // soft reset after the CRC failure
		i2ctest.IO{Addr: 0x44, W: sht3xCmdMeasure},
		i2ctest.IO{Addr: 0x44, R: shtFrame(0x6666, 0x3333)},
	)
	var s sleeps
	d, err := NewSHT3x(bus, "1", 0, s.sleep)
	if err != nil {
		t.Fatal(err)
	}
	_, err = d.Sense(bg())
	wantErr(t, err, "sht3x: i2c bus 1 addr 0x44: read: crc mismatch in the humidity word", "computed 0x")
	if !errors.Is(err, ErrCRC) {
		t.Errorf("err = %v, want errors.Is ErrCRC", err)
	}
	if want := []time.Duration{time.Millisecond, 15 * time.Millisecond, 1500 * time.Microsecond}; !slices.Equal(s.got, want) {
		t.Errorf("waits = %v, want %v (the soft reset takes 1.5 ms)", s.got, want)
	}
	got, err := d.Sense(bg())
	if err != nil {
		t.Fatalf("Sense after the reset: %v", err)
	}
	wantReadings(t, got, []Reading{{"temperature", 25, Celsius}, {"humidity", 20, Percent}}, 0.005)
	mustConsume(t, bus)
}

func TestSHT3xErrors(t *testing.T) {
	heater := i2ctest.IO{Addr: 0x44, W: sht3xCmdHeaterOff}
	measure := i2ctest.IO{Addr: 0x44, W: sht3xCmdMeasure}
	badT := shtFrame(0x6666, 0x3333)
	badT[2] = 0x00
	tests := []struct {
		name     string
		ops      []i2ctest.IO
		prefix   string
		contains string
	}{
		{"not ready: NACK on read", []i2ctest.IO{heater, measure}, "sht3x: i2c bus 1 addr 0x44: read: ", "remote I/O error"},
		{"temperature CRC, reset NACKed", []i2ctest.IO{heater, measure, {Addr: 0x44, R: badT}},
			"sht3x: i2c bus 1 addr 0x44: read: crc mismatch in the temperature word: got 0x00, computed 0x", "soft reset: sysfs-i2c: remote I/O error"},
		{"all ones: 130 °C", []i2ctest.IO{heater, measure, {Addr: 0x44, R: shtFrame(0xFFFF, 0xFFFF)}},
			"sht3x: i2c bus 1 addr 0x44: implausible temperature 130 °C", "-40 to 125"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			bus := newNACKBus(tt.ops...)
			senseErr(t, bus, func(sleep Sleep) (Sensor, error) { return NewSHT3x(bus, "1", 0x44, sleep) }, tt.prefix, tt.contains)
		})
	}
	t.Run("absent", func(t *testing.T) {
		var s sleeps
		_, err := NewSHT3x(newNACKBus(), "1", 0x45, s.sleep)
		wantErr(t, err, "sht3x: i2c bus 1 addr 0x45: init: sysfs-i2c: remote I/O error")
	})
	t.Run("wrong address", func(t *testing.T) {
		var s sleeps
		_, err := NewSHT3x(newNACKBus(), "1", 0x46, s.sleep)
		wantErr(t, err, "sht3x: i2c bus 1 addr 0x46: the sht3x answers at 0x44 or 0x45 only")
	})
	t.Run("canceled", func(t *testing.T) {
		bus := newNACKBus(heater)
		var s sleeps
		d, err := NewSHT3x(bus, "1", 0, s.sleep)
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(bg())
		cancel()
		if _, err := d.Sense(ctx); !errors.Is(err, context.Canceled) {
			t.Errorf("Sense = %v, want context.Canceled", err)
		}
		mustConsume(t, bus)
	})
}

func TestSHT4x(t *testing.T) {
	// "Conversion of Signal Output": T = -45 + 175·S/65535,
	// RH = -6 + 125·S/65535 cropped to 0-100 %RH.
	tests := []struct {
		name  string
		frame []byte
		want  []Reading
	}{
		{"25 °C 19 %", shtFrame(0x6666, 0x3333), []Reading{{"temperature", 25, Celsius}, {"humidity", 19, Percent}}},
		{"RH above 100 is cropped", shtFrame(0x6666, 0xFFFF), []Reading{{"temperature", 25, Celsius}, {"humidity", 100, Percent}}},
		{"RH below 0 is cropped", shtFrame(0x6666, 0x0000), []Reading{{"temperature", 25, Celsius}, {"humidity", 0, Percent}}},
		{"datasheet CRC example", append([]byte{0xBE, 0xEF, 0x92}, shtFrame(0, 0x8000)[3:]...), []Reading{{"temperature", 85.52, Celsius}, {"humidity", 56.5, Percent}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			bus := playback(
				i2ctest.IO{Addr: 0x44, W: sht4xCmdReset},
				i2ctest.IO{Addr: 0x44, W: sht4xCmdMeasure},
				i2ctest.IO{Addr: 0x44, R: tt.frame},
			)
			// Soft reset 1 ms, measurement 8.3 ms ("System Timing Specifications").
			senseOnce(t, bus, func(sleep Sleep) (Sensor, error) { return NewSHT4x(bus, "1", 0, sleep) },
				tt.want, time.Millisecond, 8300*time.Microsecond)
		})
	}
}

func TestSHT4xCRCFailureResets(t *testing.T) {
	bad := shtFrame(0x6666, 0x3333)
	bad[2] ^= 0xFF
	bus := newNACKBus(
		i2ctest.IO{Addr: 0x46, W: sht4xCmdReset},
		i2ctest.IO{Addr: 0x46, W: sht4xCmdMeasure},
		i2ctest.IO{Addr: 0x46, R: bad},
		i2ctest.IO{Addr: 0x46, W: sht4xCmdReset},
		i2ctest.IO{Addr: 0x46, W: sht4xCmdMeasure},
		i2ctest.IO{Addr: 0x46, R: shtFrame(0x6666, 0x3333)},
	)
	var s sleeps
	d, err := NewSHT4x(bus, "3", 0x46, s.sleep)
	if err != nil {
		t.Fatal(err)
	}
	_, err = d.Sense(bg())
	wantErr(t, err, "sht4x: i2c bus 3 addr 0x46: read: crc mismatch in the temperature word", "computed 0x")
	if !errors.Is(err, ErrCRC) {
		t.Errorf("err = %v, want errors.Is ErrCRC", err)
	}
	if _, err := d.Sense(bg()); err != nil {
		t.Fatalf("Sense after the reset: %v", err)
	}
	mustConsume(t, bus)

	t.Run("wrong address", func(t *testing.T) {
		_, err := NewSHT4x(newNACKBus(), "1", 0x47, s.sleep)
		wantErr(t, err, "sht4x: i2c bus 1 addr 0x47: the sht4x answers at 0x44, 0x45 or 0x46 only")
	})
	t.Run("absent", func(t *testing.T) {
		_, err := NewSHT4x(newNACKBus(), "1", 0, s.sleep)
		wantErr(t, err, "sht4x: i2c bus 1 addr 0x44: init: soft reset: sysfs-i2c: remote I/O error")
	})
}
