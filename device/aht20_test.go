package device

import (
	"testing"

	"periph.io/x/conn/v3/i2c/i2ctest"
)

var (
	aht20Status  = []byte{0x71}
	aht20Init    = []byte{0xBE, 0x08, 0x00} // datasheet §5.4: initialise/calibrate
	aht20Trigger = []byte{0xAC, 0x33, 0x00} // datasheet §5.4: trigger measurement
)

// aht20Frame builds the 7-byte answer: status, 20 bits humidity, 20 bits
// temperature, CRC-8 (datasheet §5.4 step 4).
func aht20Frame(status byte, rh, t uint32) []byte {
	b := []byte{status, byte(rh >> 12), byte(rh >> 4), byte(rh<<4) | byte(t>>16)&0x0F, byte(t >> 8), byte(t)}
	return append(b, sensirionCRC(b...))
}

func TestAHT20(t *testing.T) {
	// Datasheet §6: RH = S_RH / 2^20 * 100 %, T = S_T / 2^20 * 200 - 50 °C.
	// S_RH = 0x80000 is 50 %; S_T = 0x60000 is 25 °C.
	tests := []struct {
		name string
		ops  []i2ctest.IO
		want []Reading
	}{
		{
			name: "calibrated",
			ops: []i2ctest.IO{
				{Addr: 0x38, W: aht20Status, R: []byte{0x18}},
				{Addr: 0x38, W: aht20Trigger},
				{Addr: 0x38, R: aht20Frame(0x1C, 0x80000, 0x60000)},
			},
			want: []Reading{{"temperature", 25, Celsius}, {"humidity", 50, Percent}},
		},
		{
			name: "needs calibration, busy once",
			ops: []i2ctest.IO{
				{Addr: 0x38, W: aht20Status, R: []byte{0x10}},
				{Addr: 0x38, W: aht20Init},
				{Addr: 0x38, W: aht20Trigger},
				{Addr: 0x38, R: aht20Frame(0x9C, 0, 0)}, // bit 7: still measuring
				{Addr: 0x38, R: aht20Frame(0x1C, 0x4CCCD, 0x4CCCD)},
			},
			// 0x4CCCD / 2^20 = 0.3: 30 % and 10 °C.
			want: []Reading{{"temperature", 10, Celsius}, {"humidity", 30, Percent}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			bus := playback(tt.ops...)
			d, err := NewAHT20(bus, "1", 0)
			if err != nil {
				t.Fatal(err)
			}
			got, err := d.Sense(bg())
			if err != nil {
				t.Fatal(err)
			}
			wantReadings(t, got, tt.want, 0.005)
			mustConsume(t, bus)
		})
	}
}

func TestAHT20Errors(t *testing.T) {
	ready := i2ctest.IO{Addr: 0x38, W: aht20Status, R: []byte{0x18}}
	trigger := i2ctest.IO{Addr: 0x38, W: aht20Trigger}
	bad := aht20Frame(0x1C, 0x80000, 0x60000)
	bad[6] ^= 0xFF
	tests := []struct {
		name     string
		ops      []i2ctest.IO
		prefix   string
		contains string
	}{
		{"NACK after trigger", []i2ctest.IO{ready, trigger}, "aht20: i2c bus 1 addr 0x38: read: ", "remote I/O error"},
		{"bad CRC", []i2ctest.IO{ready, trigger, {Addr: 0x38, R: bad}}, "aht20: i2c bus 1 addr 0x38: read: crc mismatch", "computed 0x"},
		{"lost calibration", []i2ctest.IO{ready, trigger, {Addr: 0x38, R: aht20Frame(0x10, 0x80000, 0x60000)}}, "aht20: i2c bus 1 addr 0x38: read: ", "not calibrated"},
		{"all zeros: -50 °C", []i2ctest.IO{ready, trigger, {Addr: 0x38, R: aht20Frame(0x1C, 0, 0)}}, "aht20: i2c bus 1 addr 0x38: implausible temperature -50 °C", "-40 to 85"},
		{"all ones: 150 °C", []i2ctest.IO{ready, trigger, {Addr: 0x38, R: aht20Frame(0x1C, 0xFFFFF, 0xFFFFF)}}, "aht20: i2c bus 1 addr 0x38: implausible temperature 150 °C", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			bus := newNACKBus(tt.ops...)
			d, err := NewAHT20(bus, "1", 0x38)
			if err != nil {
				t.Fatal(err)
			}
			_, err = d.Sense(bg())
			wantErr(t, err, tt.prefix, tt.contains)
			mustConsume(t, bus)
		})
	}

	t.Run("absent", func(t *testing.T) {
		bus := newNACKBus()
		_, err := NewAHT20(bus, "2", 0x38)
		wantErr(t, err, "aht20: i2c bus 2 addr 0x38: init: sysfs-i2c: remote I/O error")
	})
	t.Run("wrong address", func(t *testing.T) {
		bus := newNACKBus()
		_, err := NewAHT20(bus, "1", 0x39)
		wantErr(t, err, "aht20: i2c bus 1 addr 0x39: ", "0x38")
		mustConsume(t, bus)
	})
}
