package device

import (
	"math"
	"testing"

	"periph.io/x/conn/v3/i2c/i2ctest"
)

// ina219Cal is the datasheet's calibration (§8.5.1): Current_LSB = max
// expected current / 2^15 (equation 2), Cal = trunc(0.04096 / (Current_LSB *
// R_shunt)) (equation 1).
func ina219Cal(shunt, maxCurrent float64) []byte {
	cal := uint16(math.Trunc(0.04096 / (maxCurrent / 32768 * shunt)))
	return []byte{0x05, byte(cal >> 8), byte(cal)}
}

func ina219Open(addr uint16, shunt, maxCurrent float64) []i2ctest.IO {
	return []i2ctest.IO{
		{Addr: addr, W: ina219Cal(shunt, maxCurrent)},
		// CONFIG 0x1FFF: 32 V range, PGA /8 (±320 mV), 12-bit, continuous
		// shunt and bus conversions (datasheet §8.6.2.1).
		{Addr: addr, W: []byte{0x00, 0x1F, 0xFF}},
	}
}

func ina219Read(addr uint16, shunt, bus, current, power uint16) []i2ctest.IO {
	be := func(v uint16) []byte { return []byte{byte(v >> 8), byte(v)} }
	return []i2ctest.IO{
		{Addr: addr, W: []byte{0x01}, R: be(shunt)},
		{Addr: addr, W: []byte{0x02}, R: be(bus)},
		{Addr: addr, W: []byte{0x04}, R: be(current)},
		{Addr: addr, W: []byte{0x03}, R: be(power)},
	}
}

func TestINA219(t *testing.T) {
	if got := ina219Cal(0.1, 3.2); got[1] != 0x10 || got[2] != 0x62 {
		t.Fatalf("reference calibration for 0.1 Ω, 3.2 A = %x, want 0x1062 (4194)", got[1:])
	}
	tests := []struct {
		name              string
		shunt, maxCurrent float64 // as configured; 0 for the default
		calShunt, calMax  float64
		regs              [4]uint16 // shunt, bus, current, power
		want              []Reading
	}{
		{
			name: "defaults: 5 V, 0.5 A", calShunt: 0.1, calMax: 3.2,
			// Bus voltage: bits 15-3 in 4 mV, bit 1 CNVR (§8.6.3.2): 1250 ×
			// 4 mV. Current: 5120 × 3.2 A/2^15. Power: 1280 × 20 × Current_LSB.
			regs: [4]uint16{5000, 1250<<3 | 0x2, 5120, 1280},
			want: []Reading{{"voltage", 5, Volt}, {"current", 0.5, Ampere}, {"power", 2.5, Watt}},
		},
		{
			name: "10 A through 10 mΩ, charging backwards", shunt: 0.01, maxCurrent: 10, calShunt: 0.01, calMax: 10,
			// -1.5 A: two's complement current register.
			regs: [4]uint16{0xFFFF - 1500 + 1, 12000 / 4 << 3, uint16(0x10000 - 4915), 1474},
			want: []Reading{{"voltage", 12, Volt}, {"current", -1.5, Ampere}, {"power", 8.9966, Watt}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ops := append(ina219Open(0x41, tt.calShunt, tt.calMax), ina219Read(0x41, tt.regs[0], tt.regs[1], tt.regs[2], tt.regs[3])...)
			bus := playback(ops...)
			d, err := NewINA219(bus, "1", 0x41, tt.shunt, tt.maxCurrent)
			if err != nil {
				t.Fatal(err)
			}
			got, err := d.Sense(bg())
			if err != nil {
				t.Fatal(err)
			}
			wantReadings(t, got, tt.want, 0.0005)
			mustConsume(t, bus)
		})
	}
}

func TestINA219Errors(t *testing.T) {
	open := ina219Open(0x40, 0.1, 3.2)
	read := ina219Read(0x40, 5000, 1250<<3|0x2, 5120, 1280)
	tests := []struct {
		name    string
		ops     []i2ctest.IO
		openErr bool
		prefix  string
	}{
		{"absent", nil, true, "ina219: i2c bus 1 addr 0x40: init: sysfs-i2c: remote I/O error"},
		{"NACK mid-read", append(open, read[:2]...), false, "ina219: i2c bus 1 addr 0x40: read: sysfs-i2c: remote I/O error"},
		// OVF (bit 0): current or power out of range (§8.6.3.2).
		{"math overflow", append(open, ina219Read(0x40, 32000, 1250<<3|0x3, 0, 0)[:2]...), false, "ina219: i2c bus 1 addr 0x40: read: bus voltage register overflow"},
		// 8191 × 4 mV = 32.76 V: more than the input tolerates.
		{"implausible voltage", append(open, ina219Read(0x40, 0, 0xFFF8, 0, 0)...), false, "ina219: i2c bus 1 addr 0x40: implausible voltage 32.76 V"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			bus := newNACKBus(tt.ops...)
			d, err := NewINA219(bus, "1", 0, 0, 0)
			if tt.openErr {
				wantErr(t, err, tt.prefix)
				mustConsume(t, bus)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			_, err = d.Sense(bg())
			wantErr(t, err, tt.prefix)
			mustConsume(t, bus)
		})
	}
	if _, err := NewINA219(newNACKBus(), "1", 0, -0.1, 0); err == nil {
		t.Error("negative shunt accepted")
	}
}
