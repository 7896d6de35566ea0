package device

import (
	"testing"

	"periph.io/x/conn/v3/i2c/i2ctest"
)

// tmp102Open is the driver's start-up: read CONFIG (power-up default
// 0x60A0: 4 Hz, comparator mode, not shut down; datasheet,
// "Configuration Register") and write
// it back without the shutdown and thermostat bits.
func tmp102Open(addr uint16, config ...byte) []i2ctest.IO {
	if config == nil {
		config = []byte{0x60, 0xA0}
	}
	return []i2ctest.IO{
		{Addr: addr, W: []byte{0x01}, R: config},
		{Addr: addr, W: []byte{0x01, 0x60, 0xA0}},
	}
}

func TestTMP102(t *testing.T) {
	// TMP102 datasheet, table "12-Bit Temperature Data Format": the
	// register holds the value left-justified in 16 bits, 0.0625 °C per LSB.
	tests := []struct {
		name string
		reg  [2]byte
		want float64
	}{
		{"127.9375 °C", [2]byte{0x7F, 0xF0}, 127.9375},
		{"100 °C", [2]byte{0x64, 0x00}, 100},
		{"80 °C", [2]byte{0x50, 0x00}, 80},
		{"75 °C", [2]byte{0x4B, 0x00}, 75},
		{"50 °C", [2]byte{0x32, 0x00}, 50},
		{"25 °C", [2]byte{0x19, 0x00}, 25},
		{"0.25 °C", [2]byte{0x00, 0x40}, 0.25},
		{"0 °C", [2]byte{0x00, 0x00}, 0},
		{"-0.25 °C", [2]byte{0xFF, 0xC0}, -0.25},
		{"-25 °C", [2]byte{0xE7, 0x00}, -25},
		{"-55 °C", [2]byte{0xC9, 0x00}, -55},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			bus := playback(append(tmp102Open(0x49), i2ctest.IO{Addr: 0x49, W: []byte{0x00}, R: tt.reg[:]})...)
			d, err := NewTMP102(bus, "1", 0x49)
			if err != nil {
				t.Fatal(err)
			}
			got, err := d.Sense(bg())
			if err != nil {
				t.Fatal(err)
			}
			wantReadings(t, got, []Reading{{"temperature", tt.want, Celsius}}, 0)
			mustConsume(t, bus)
		})
	}
}

func TestTMP102WakesFromShutdown(t *testing.T) {
	// CONFIG 0x61A0 has SD (bit 8) set; the driver clears it.
	bus := playback(append(tmp102Open(0x48, 0x61, 0xA0), i2ctest.IO{Addr: 0x48, W: []byte{0x00}, R: []byte{0x19, 0x00}})...)
	d, err := NewTMP102(bus, "1", 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.Sense(bg()); err != nil {
		t.Fatal(err)
	}
	mustConsume(t, bus)
}

func TestTMP102Errors(t *testing.T) {
	open := tmp102Open(0x48)
	t.Run("absent", func(t *testing.T) {
		_, err := NewTMP102(newNACKBus(), "1", 0)
		wantErr(t, err, "tmp102: i2c bus 1 addr 0x48: init: sysfs-i2c: remote I/O error")
	})
	t.Run("NACK on read", func(t *testing.T) {
		bus := newNACKBus(open...)
		d, err := NewTMP102(bus, "1", 0)
		if err != nil {
			t.Fatal(err)
		}
		_, err = d.Sense(bg())
		wantErr(t, err, "tmp102: i2c bus 1 addr 0x48: read: sysfs-i2c: remote I/O error")
		mustConsume(t, bus)
	})
	t.Run("implausible", func(t *testing.T) {
		// 0x800 is -128 °C, below anything the chip can measure.
		bus := newNACKBus(append(open, i2ctest.IO{Addr: 0x48, W: []byte{0x00}, R: []byte{0x80, 0x00}})...)
		d, err := NewTMP102(bus, "1", 0)
		if err != nil {
			t.Fatal(err)
		}
		_, err = d.Sense(bg())
		wantErr(t, err, "tmp102: i2c bus 1 addr 0x48: implausible temperature -128 °C", "-55 to 150")
		mustConsume(t, bus)
	})
}
