package device

import (
	"testing"

	"periph.io/x/conn/v3/i2c/i2ctest"
)

func mcp9808Open(addr uint16) []i2ctest.IO {
	return []i2ctest.IO{
		{Addr: addr, W: []byte{0x06}, R: []byte{0x00, 0x54}}, // manufacturer ID
		{Addr: addr, W: []byte{0x07}, R: []byte{0x04, 0x00}}, // device ID, revision
		{Addr: addr, W: []byte{0x08, 0x03}},                  // resolution 0.0625 °C
		{Addr: addr, W: []byte{0x01, 0x00, 0x00}},            // CONFIG: continuous conversion
	}
}

func TestMCP9808(t *testing.T) {
	// Ambient temperature register, datasheet §5.1.3 and equation 5-1: bits
	// 15-13 are alert flags, bit 12 the sign, bits 11-0 the temperature in
	// 1/16 °C, two's complement.
	tests := []struct {
		name       string
		upper, low byte
		want       float64
	}{
		{"25.25 °C", 0x01, 0x94, 25.25},
		{"alert flags ignored", 0xE1, 0x94, 25.25},
		{"0 °C", 0x00, 0x00, 0},
		{"0.0625 °C resolution", 0x00, 0x01, 0.0625},
		{"-6.75 °C", 0x1F, 0x94, -6.75},
		{"-40 °C", 0x1D, 0x80, -40},
		{"125 °C", 0x07, 0xD0, 125},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			bus := playback(append(mcp9808Open(0x1A), i2ctest.IO{Addr: 0x1A, W: []byte{0x05}, R: []byte{tt.upper, tt.low}})...)
			d, err := NewMCP9808(bus, "1", 0x1A)
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

func TestMCP9808Errors(t *testing.T) {
	open := mcp9808Open(0x18)
	tests := []struct {
		name     string
		ops      []i2ctest.IO
		openErr  bool
		prefix   string
		contains string
	}{
		{"absent", nil, true, "mcp9808: i2c bus 1 addr 0x18: init: sysfs-i2c: remote I/O error", ""},
		{"another chip", []i2ctest.IO{{Addr: 0x18, W: []byte{0x06}, R: []byte{0x12, 0x34}}}, true, "mcp9808: i2c bus 1 addr 0x18: init: manufacturer id 0x1234", "not an MCP9808"},
		{"wrong device id", []i2ctest.IO{open[0], {Addr: 0x18, W: []byte{0x07}, R: []byte{0x75, 0x00}}}, true, "mcp9808: i2c bus 1 addr 0x18: init: device id 0x75", ""},
		{"NACK on configuration", open[:3], true, "mcp9808: i2c bus 1 addr 0x18: init: sysfs-i2c: remote I/O error", ""},
		{"NACK on read", open, false, "mcp9808: i2c bus 1 addr 0x18: read: sysfs-i2c: remote I/O error", ""},
		// Sign set, 0xC00 magnitude: -64 °C, which the chip cannot measure.
		{"implausible", append(open, i2ctest.IO{Addr: 0x18, W: []byte{0x05}, R: []byte{0x1C, 0x00}}), false, "mcp9808: i2c bus 1 addr 0x18: implausible temperature -64 °C", "-40 to 125"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			bus := newNACKBus(tt.ops...)
			d, err := NewMCP9808(bus, "1", 0)
			if tt.openErr {
				wantErr(t, err, tt.prefix, tt.contains)
				mustConsume(t, bus)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			_, err = d.Sense(bg())
			wantErr(t, err, tt.prefix, tt.contains)
			mustConsume(t, bus)
		})
	}
}
