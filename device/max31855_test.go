package device

import (
	"encoding/binary"
	"strconv"
	"strings"
	"testing"

	"periph.io/x/conn/v3/conntest"
	"periph.io/x/conn/v3/spi/spitest"
)

// spiPlayback replays SPI transfers.
func spiPlayback(ops ...conntest.IO) *spitest.Playback {
	return &spitest.Playback{Playback: conntest.Playback{Ops: ops, DontPanic: true}}
}

// bits parses a bit pattern as the datasheets print it ("0110 0100 0000 00").
func bits(t *testing.T, s string) uint32 {
	t.Helper()
	v, err := strconv.ParseUint(strings.ReplaceAll(s, " ", ""), 2, 32)
	if err != nil {
		t.Fatal(err)
	}
	return uint32(v)
}

// max31855Frame builds the 32-bit frame (MAX31855 datasheet Table 2): the
// 14-bit thermocouple pattern in D31-D18, the 12-bit cold-junction pattern
// in D15-D4, and the given low bits (D16 fault, D2-D0 SCV, SCG, OC).
func max31855Frame(tc, cj, low uint32) conntest.IO {
	var b [4]byte
	binary.BigEndian.PutUint32(b[:], tc<<18|cj<<4|low)
	return conntest.IO{R: b[:]}
}

func TestMAX31855Datasheet(t *testing.T) {
	const cj25 = "0001 1001 0000" // Table 5: +25.0000 °C
	const tc25 = "0000 0001 1001 00"
	// Table 4, "Thermocouple Temperature Data Format".
	for _, row := range []struct {
		c    float64
		bits string
	}{
		{1600, "0110 0100 0000 00"},
		{1000, "0011 1110 1000 00"},
		{100.75, "0000 0110 0100 11"},
		{25, "0000 0001 1001 00"},
		{0, "0000 0000 0000 00"},
		{-0.25, "1111 1111 1111 11"},
		{-1, "1111 1111 1111 00"},
		{-250, "1111 0000 0110 00"},
	} {
		t.Run("thermocouple "+row.bits, func(t *testing.T) {
			port := spiPlayback(max31855Frame(bits(t, row.bits), bits(t, cj25), 0))
			senseOnce(t, port, func(Sleep) (Sensor, error) { return NewMAX31855(port, "0.0") },
				[]Reading{{"temperature", row.c, Celsius}, {"cold_junction", 25, Celsius}})
		})
	}
	// Table 5, "Reference Junction Temperature Data Format".
	for _, row := range []struct {
		c    float64
		bits string
	}{
		{127, "0111 1111 0000"},
		{100.5625, "0110 0100 1001"},
		{25, "0001 1001 0000"},
		{0, "0000 0000 0000"},
		{-0.0625, "1111 1111 1111"},
		{-1, "1111 1111 0000"},
		{-20, "1110 1100 0000"},
		{-55, "1100 1001 0000"},
	} {
		t.Run("cold junction "+row.bits, func(t *testing.T) {
			port := spiPlayback(max31855Frame(bits(t, tc25), bits(t, row.bits), 0))
			senseOnce(t, port, func(Sleep) (Sensor, error) { return NewMAX31855(port, "0.0") },
				[]Reading{{"temperature", 25, Celsius}, {"cold_junction", row.c, Celsius}})
		})
	}
}

func TestMAX31855Faults(t *testing.T) {
	// Table 3, "Memory Map—Descriptions": D16 is set with any fault; D2
	// SCV, D1 SCG, D0 OC. With a fault the temperature bits are not valid.
	const fault = 1 << 16
	tests := []struct {
		name     string
		low      uint32
		want     string
		contains string
	}{
		{"OC", fault | 1<<0, "max31855: spi 0.1: thermocouple open: check the wires at T+ and T−", ""},
		{"SCG", fault | 1<<1, "max31855: spi 0.1: thermocouple shorted to GND: ", "ungrounded"},
		{"SCV", fault | 1<<2, "max31855: spi 0.1: thermocouple shorted to VCC: ", "supply voltage"},
		{"SCG and SCV", fault | 1<<1 | 1<<2, "max31855: spi 0.1: thermocouple shorted to GND: ", "; thermocouple shorted to VCC"},
		{"fault bit alone", fault, "max31855: spi 0.1: fault bit D16 set without a cause bit", ""},
		{"reserved D17", 1 << 17, "max31855: spi 0.1: implausible frame 0x00020000: reserved bits D17 and D3 are set", "MISO"},
		{"all ones", 0xFFFFFFFF, "max31855: spi 0.1: implausible frame 0xffffffff", "check the SO/MISO wire"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			port := spiPlayback(max31855Frame(0, 0, tt.low))
			senseErr(t, port, func(Sleep) (Sensor, error) { return NewMAX31855(port, "0.1") }, tt.want, tt.contains)
		})
	}
	t.Run("port error", func(t *testing.T) {
		port := spiPlayback()
		d, err := NewMAX31855(port, "0.0")
		if err != nil {
			t.Fatal(err)
		}
		_, err = d.Sense(bg())
		wantErr(t, err, "max31855: spi 0.0: read: conntest: unexpected Tx()")
	})
}
