package device

import (
	"testing"

	"periph.io/x/conn/v3/i2c/i2ctest"
)

func bh1750Open(addr uint16) []i2ctest.IO {
	return []i2ctest.IO{
		{Addr: addr, W: []byte{0x07}}, // reset (periph.io's power-on)
		{Addr: addr, W: []byte{0x10}}, // continuously H-resolution mode
		{Addr: addr, W: []byte{0x07}}, // reset data register
	}
}

func bh1750Read(addr uint16, hi, lo byte) []i2ctest.IO {
	return []i2ctest.IO{
		{Addr: addr, W: []byte{0x10}},
		{Addr: addr, W: []byte{0x10}, R: []byte{hi, lo}},
	}
}

func TestBH1750(t *testing.T) {
	tests := []struct {
		name   string
		hi, lo byte
		want   float64
	}{
		// Datasheet p. 7, "measurement sequence example": high byte
		// 1000_0011, low byte 1001_0000 is (2^15+2^9+2^8+2^7+2^4)/1.2 ≈
		// 28067 lx; periph.io truncates instead of rounding.
		{"datasheet example", 0x83, 0x90, 28066},
		{"dark", 0x00, 0x00, 0},
		{"saturated", 0xFF, 0xFF, 54612},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			bus := playback(append(bh1750Open(0x5C), bh1750Read(0x5C, tt.hi, tt.lo)...)...)
			d, err := NewBH1750(bus, "1", 0x5C)
			if err != nil {
				t.Fatal(err)
			}
			got, err := d.Sense(bg())
			if err != nil {
				t.Fatal(err)
			}
			wantReadings(t, got, []Reading{{"illuminance", tt.want, Lux}}, 0)
			mustConsume(t, bus)
		})
	}
}

func TestBH1750Errors(t *testing.T) {
	t.Run("absent", func(t *testing.T) {
		_, err := NewBH1750(newNACKBus(), "1", 0)
		wantErr(t, err, "bh1750: i2c bus 1 addr 0x23: init: sysfs-i2c: remote I/O error")
	})
	t.Run("NACK after starting a measurement", func(t *testing.T) {
		bus := newNACKBus(append(bh1750Open(0x23), bh1750Read(0x23, 0, 0)[0])...)
		d, err := NewBH1750(bus, "1", 0)
		if err != nil {
			t.Fatal(err)
		}
		_, err = d.Sense(bg())
		wantErr(t, err, "bh1750: i2c bus 1 addr 0x23: read: sysfs-i2c: remote I/O error")
		mustConsume(t, bus)
	})
	t.Run("wrong address", func(t *testing.T) {
		_, err := NewBH1750(newNACKBus(), "1", 0x24)
		wantErr(t, err, "bh1750: i2c bus 1 addr 0x24: ", "0x23 or 0x5c")
	})
}
