package device

import (
	"math"
	"slices"
	"testing"
	"time"

	"periph.io/x/conn/v3/conntest"
)

// MAX31865 traffic, written out from the datasheet: register addresses
// (Table 1) with bit 7 set to write, configuration bits ("Configuration
// Register (00h)"): D7 VBIAS, D5 1-shot, D4 3-wire, D3:D2 = 01 automatic
// fault detection, D1 fault status clear, D0 50 Hz filter.
func max31865Open(cfg byte) []conntest.IO {
	return []conntest.IO{
		{W: []byte{0x80, cfg | 0x02}},
		// Thresholds at IEC 60751's 850 °C (390.48 Ω) and −200 °C
		// (18.52 Ω) for Rref = 430 Ω: codes 29756 and 1411, left-shifted by
		// one as in the RTD registers.
		{W: []byte{0x83, 0xE8, 0x78, 0x0B, 0x06}},
	}
}

// max31865Read is one conversion answering the RTD registers msb, lsb.
func max31865Read(cfg, msb, lsb byte) []conntest.IO {
	return []conntest.IO{
		{W: []byte{0x80, cfg | 0x80}},        // bias on
		{W: []byte{0x80, cfg | 0x80 | 0x04}}, // automatic fault detection
		{W: []byte{0x80, cfg | 0x80 | 0x20}}, // 1-shot
		{W: []byte{0x01, 0, 0}, R: []byte{0, msb, lsb}},
		{W: []byte{0x80, cfg}}, // bias off
	}
}

func TestMAX31865IEC60751(t *testing.T) {
	// PT100 resistances of the IEC 60751 table, and the ADC codes the
	// MAX31865 gives for them with Rref = 430 Ω: code = R/Rref · 2¹⁵
	// (datasheet Table 5, "RTD Resistance-Data Relationship"). The
	// temperature must come back within 0.05 °C: the code's resolution is
	// 0.013 Ω (0.034 °C) and the table's 0.01 Ω.
	for _, row := range []struct {
		c    float64
		ohms float64
	}{
		{-50, 80.31},
		{0, 100.00},
		{100, 138.51},
		{400, 247.09},
	} {
		for _, wires := range []int{2, 3, 4} {
			code := uint16(math.Round(row.ohms / 430 * 32768))
			cfg := byte(0x01)
			if wires == 3 {
				cfg |= 0x10
			}
			reg := code << 1
			port := spiPlayback(append(max31865Open(cfg), max31865Read(cfg, byte(reg>>8), byte(reg))...)...)
			var s sleeps
			d, err := NewMAX31865(port, "0.1", 100, wires, 430, s.sleep)
			if err != nil {
				t.Fatal(err)
			}
			got, err := d.Sense(bg())
			if err != nil {
				t.Fatalf("%g °C, %d wires: %v", row.c, wires, err)
			}
			wantReadings(t, got, []Reading{{"temperature", row.c, Celsius}}, 0.05)
			mustConsume(t, port)
			// Bias settling 10 ms, fault cycle 1 ms, 50 Hz conversion 66 ms.
			if want := []time.Duration{10 * time.Millisecond, time.Millisecond, 66 * time.Millisecond}; !slices.Equal(s.got, want) {
				t.Errorf("waits = %v, want %v", s.got, want)
			}
		}
	}
}

func TestMAX31865PT1000(t *testing.T) {
	// A PT1000 has ten times a PT100's resistance: 1385.1 Ω at 100 °C, and
	// with Rref = 4300 Ω the same codes (and thresholds) as above.
	code := uint16(math.Round(1385.1 / 4300 * 32768))
	reg := code << 1
	port := spiPlayback(append(max31865Open(0x01), max31865Read(0x01, byte(reg>>8), byte(reg))...)...)
	var s sleeps
	d, err := NewMAX31865(port, "0.0", 1000, 4, 4300, s.sleep)
	if err != nil {
		t.Fatal(err)
	}
	got, err := d.Sense(bg())
	if err != nil {
		t.Fatal(err)
	}
	wantReadings(t, got, []Reading{{"temperature", 100, Celsius}}, 0.05)
	mustConsume(t, port)
}

func TestCVD(t *testing.T) {
	// The IEC 60751 table for a PT100, in steps across the whole range;
	// inverting the equation must return the table's temperature within
	// what its 0.01 Ω rounding allows.
	for _, row := range []struct{ c, ohms float64 }{
		{-200, 18.52}, {-100, 60.26}, {-50, 80.31}, {-10, 96.09}, {0, 100.00},
		{10, 103.90}, {100, 138.51}, {200, 175.86}, {400, 247.09}, {600, 313.71}, {850, 390.48},
	} {
		if got := cvdTemperature(row.ohms / 100); math.Abs(got-row.c) > 0.03 {
			t.Errorf("cvdTemperature(%g Ω) = %.4f °C, want %g", row.ohms, got, row.c)
		}
		if got := 100 * cvdRatio(row.c); math.Abs(got-row.ohms) > 0.006 {
			t.Errorf("cvdRatio(%g °C) = %.4f Ω, want %g", row.c, got, row.ohms)
		}
	}
}

func TestMAX31865Faults(t *testing.T) {
	// Table 7, "Fault Status Register Definition", and Tables 10-12,
	// "Decoding RTD Faults": each bit is a reading error that names it; the
	// status is then cleared (configuration D1).
	tests := []struct {
		name   string
		status byte
		want   string
	}{
		{"D7 high threshold", 1 << 7, "RTD resistance at or above the high fault threshold (850 °C): the RTD or a wire to it is open"},
		{"D6 low threshold", 1 << 6, "RTD resistance at or below the low fault threshold (−200 °C): the RTD is shorted"},
		{"D5 REFIN- high", 1 << 5, "REFIN− above 0.85 × VBIAS: the RTD is open or FORCE− is unconnected"},
		{"D4 REFIN- low", 1 << 4, "REFIN− below 0.85 × VBIAS with FORCE− open: FORCE− or RTDIN− is shorted to GND"},
		{"D3 RTDIN- low", 1 << 3, "RTDIN− below 0.85 × VBIAS with FORCE− open: FORCE+ or RTDIN− is shorted to GND"},
		{"D2 over/undervoltage", 1 << 2, "overvoltage or undervoltage: an input is above VDD or below GND"},
		{"D1-D0 only", 0x03, "fault flag set with fault status 0x03: check the RTD wiring"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ops := append(max31865Open(0x11), max31865Read(0x11, 0xFF, 0xFF)...) // full scale with the fault flag
			ops = append(ops,
				conntest.IO{W: []byte{0x07, 0}, R: []byte{0, tt.status}}, // Fault Status (07h)
				conntest.IO{W: []byte{0x80, 0x11 | 0x02}},                // fault status clear
			)
			port := spiPlayback(ops...)
			senseErr(t, port, func(sleep Sleep) (Sensor, error) { return NewMAX31865(port, "0.1", 100, 3, 430, sleep) }, "max31865: spi 0.1: "+tt.want)
		})
	}
	t.Run("two faults", func(t *testing.T) {
		ops := append(max31865Open(0x01), max31865Read(0x01, 0x00, 0x01)...)
		ops = append(ops, conntest.IO{W: []byte{0x07, 0}, R: []byte{0, 1<<6 | 1<<2}}, conntest.IO{W: []byte{0x80, 0x03}})
		port := spiPlayback(ops...)
		senseErr(t, port, func(sleep Sleep) (Sensor, error) { return NewMAX31865(port, "0.0", 100, 4, 430, sleep) },
			"max31865: spi 0.0: RTD resistance at or below the low fault threshold", "; overvoltage or undervoltage")
	})
}

func TestMAX31865Errors(t *testing.T) {
	var s sleeps
	for _, tt := range []struct {
		name        string
		r0          float64
		wires       int
		rref        float64
		want        string
		sleepIsNone bool
	}{
		{"PT500", 500, 3, 2000, "max31865: spi 0.0: RTD of 500 Ω: want a PT100 (100) or PT1000 (1000)", false},
		{"5 wires", 100, 5, 430, "max31865: spi 0.0: 5 wires: want 2, 3 or 4", false},
		{"Rref below R0", 1000, 3, 430, "max31865: spi 0.0: reference resistor 430 Ω: want more than the RTD's 1000 Ω at 0 °C", false},
		{"no sleep", 100, 3, 430, "max31865: spi 0.0: no sleep function", true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			sleep := s.sleep
			if tt.sleepIsNone {
				sleep = nil
			}
			_, err := NewMAX31865(spiPlayback(), "0.0", tt.r0, tt.wires, tt.rref, sleep)
			wantErr(t, err, tt.want)
		})
	}
	t.Run("bias is switched off when the conversion fails", func(t *testing.T) {
		// The 1-shot write fails (the playback expects the bias-off write
		// instead), and the bias-off write still goes out.
		ops := append(max31865Open(0x01), conntest.IO{W: []byte{0x80, 0x81}}, conntest.IO{W: []byte{0x80, 0x85}}, conntest.IO{W: []byte{0x80, 0x01}})
		port := spiPlayback(ops...)
		senseErr(t, port, func(sleep Sleep) (Sensor, error) { return NewMAX31865(port, "0.0", 100, 2, 430, sleep) },
			"max31865: spi 0.0: read: conntest: unexpected write")
	})
}
