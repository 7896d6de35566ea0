package device

import (
	"testing"

	"periph.io/x/conn/v3/conntest"
)

// mcp3008Conv is one conversion as MCP3008 datasheet Figure 6-1 draws it
// ("SPI Communication with the MCP3004/3008 using 8-bit segments"): the MCU
// sends 0000 0001 (start), SGL/DIFF D2 D1 D0 XXXX, XXXX XXXX, and reads
// ???? ???? / ???? ?0 B9 B8 / B7-B0. The undefined bits come back as ones
// here, so the driver must mask them.
func mcp3008Conv(ch byte, code uint16) conntest.IO {
	return conntest.IO{
		W: []byte{0x01, 0x80 | ch<<4, 0x00},
		R: []byte{0xFF, 0xF8 | byte(code>>8)&0x03, byte(code)},
	}
}

// mcp3208Conv is MCP3208 datasheet Figure 6-1 ("SPI Communication with the
// MCP3204/3208 using 8-bit segments"): 0000 01 SGL D2, D1 D0 XX XXXX,
// XXXX XXXX; answers ???? ???? / ???0 B11-B8 / B7-B0.
func mcp3208Conv(ch byte, code uint16) conntest.IO {
	return conntest.IO{
		W: []byte{0x06 | ch>>2, (ch & 3) << 6, 0x00},
		R: []byte{0xFF, 0xE0 | byte(code>>8)&0x0F, byte(code)},
	}
}

func TestMCP3008(t *testing.T) {
	// Equation 4-1: code = 1024 · VIN / VREF. With VREF = 3.3 V, code 512
	// is 1.65 V and code 1023 is 3.2968 V.
	soil := ADCChannel{Channel: 0, Quantity: "soil", Unit: Percent, Volts: [2]float64{0, 3.3}, Values: [2]float64{0, 100}}
	// A capacitive probe reads lower when wet: 1.2 V wet (100 %), 2.8 V dry.
	wet := ADCChannel{Channel: 7, Quantity: "moisture", Unit: Percent, Volts: [2]float64{1.2, 2.8}, Values: [2]float64{100, 0}}
	port := spiPlayback(mcp3008Conv(0, 512), mcp3008Conv(7, 0x26C), mcp3008Conv(3, 1023))
	d, err := NewMCP3008(port, "0.0", 3.3, []ADCChannel{soil, wet, VoltsChannel(3)})
	if err != nil {
		t.Fatal(err)
	}
	got, err := d.Sense(bg())
	if err != nil {
		t.Fatal(err)
	}
	// 0x26C = 620 is 1.99805 V: (2.8 - 1.99805) / 1.6 · 100 = 50.122 %.
	wantReadings(t, got, []Reading{{"soil", 50, Percent}, {"moisture", 50.122, Percent}, {"ch3", 3.2968, Volt}}, 0.001)
	mustConsume(t, port)
}

func TestMCP3208(t *testing.T) {
	// Equation 4-1 of the MCP3208: code = 4096 · VIN / VREF.
	port := spiPlayback(mcp3208Conv(5, 2048), mcp3208Conv(2, 4095))
	d, err := NewMCP3208(port, "1.0", 5.0, []ADCChannel{VoltsChannel(5), VoltsChannel(2)})
	if err != nil {
		t.Fatal(err)
	}
	got, err := d.Sense(bg())
	if err != nil {
		t.Fatal(err)
	}
	wantReadings(t, got, []Reading{{"ch5", 2.5, Volt}, {"ch2", 4.9988, Volt}}, 0.0001)
	mustConsume(t, port)
}

func TestMCP3008Errors(t *testing.T) {
	t.Run("nothing drives DOUT", func(t *testing.T) {
		// A floating MISO reads all ones, including the null bit.
		port := spiPlayback(conntest.IO{W: []byte{0x01, 0x80, 0x00}, R: []byte{0xFF, 0xFF, 0xFF}})
		senseErr(t, port, func(Sleep) (Sensor, error) { return NewMCP3008(port, "0.0", 3.3, []ADCChannel{VoltsChannel(0)}) },
			"mcp3008: spi 0.0: read ch0: no answer (the null bit reads 1)", "check CS, DOUT (MISO) and power")
	})
	for _, tt := range []struct {
		name  string
		vref  float64
		chans []ADCChannel
		want  string
	}{
		{"channel 8", 3.3, []ADCChannel{VoltsChannel(8)}, "mcp3208: spi 0.0: channel 8: want 0-7"},
		{"twice", 3.3, []ADCChannel{VoltsChannel(1), VoltsChannel(1)}, "mcp3208: spi 0.0: channel 1 listed twice"},
		{"same quantity", 3.3, []ADCChannel{{Channel: 1, Quantity: "soil", Volts: [2]float64{0, 1}}, {Channel: 2, Quantity: "soil", Volts: [2]float64{0, 1}}}, `mcp3208: spi 0.0: quantity "soil" used by channels 1 and 2`},
		{"no range", 3.3, []ADCChannel{{Channel: 1, Quantity: "soil", Volts: [2]float64{1, 1}}}, "mcp3208: spi 0.0: channel 1: volts 1 to 1 is no range"},
		{"vref 0", 0, []ADCChannel{VoltsChannel(0)}, "mcp3208: spi 0.0: vref 0 V: want more than 0 and at most 5.5 V"},
		{"no channels", 3.3, nil, "mcp3208: spi 0.0: no channels to read"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := NewMCP3208(spiPlayback(), "0.0", tt.vref, tt.chans)
			wantErr(t, err, tt.want)
		})
	}
}
