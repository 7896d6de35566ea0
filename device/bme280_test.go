package device

import (
	"context"
	"testing"

	"periph.io/x/conn/v3/conntest"
	"periph.io/x/conn/v3/i2c/i2ctest"
	"periph.io/x/conn/v3/spi/spitest"
)

// compensate is the datasheet's double-precision compensation (BME280
// datasheet §8.1), an independent reference for periph.io's integer code.
func (c bmeCal) compensate(adcT, adcP, adcH float64) (t, p, h float64) {
	v1 := (adcT/16384 - float64(c.T1)/1024) * float64(c.T2)
	v2 := (adcT/131072 - float64(c.T1)/8192) * (adcT/131072 - float64(c.T1)/8192) * float64(c.T3)
	tFine := v1 + v2
	t = tFine / 5120

	v1 = tFine/2 - 64000
	v2 = v1 * v1 * float64(c.P6) / 32768
	v2 += v1 * float64(c.P5) * 2
	v2 = v2/4 + float64(c.P4)*65536
	v1 = (float64(c.P3)*v1*v1/524288 + float64(c.P2)*v1) / 524288
	v1 = (1 + v1/32768) * float64(c.P1)
	p = 1048576 - adcP
	p = (p - v2/4096) * 6250 / v1
	v1 = float64(c.P9) * p * p / 2147483648
	v2 = p * float64(c.P8) / 32768
	p += (v1 + v2 + float64(c.P7)) / 16

	h = tFine - 76800
	h = (adcH - (float64(c.H4)*64 + float64(c.H5)/16384*h)) *
		(float64(c.H2) / 65536 * (1 + float64(c.H6)/67108864*h*(1+float64(c.H3)/67108864*h)))
	h *= 1 - float64(c.H1)*h/524288
	h = min(max(h, 0), 100)
	return t, p / 100, h
}

// The register traffic of periph.io's bmxx80 with DefaultOpts (4×
// oversampling, forced mode), BME280 datasheet §5.4.
var (
	bmeInitWrite  = []byte{0xF4, 0x6C, 0xF2, 0x03, 0xF5, 0xA0, 0xF4, 0x6C} // ctrl_meas sleep, ctrl_hum, config, ctrl_meas
	bmpInitWrite  = []byte{0xF4, 0x6C, 0xF5, 0xA0, 0xF4, 0x6C}
	bmeForced     = []byte{0xF4, 0x6D} // ctrl_meas: osrs_t=4×, osrs_p=4×, mode=forced
	bmeStatusIdle = []byte{0x00}
)

func bmeOpen(addr uint16, id byte, c bmeCal) []i2ctest.IO {
	tp, h := c.regs()
	ops := []i2ctest.IO{
		{Addr: addr, W: []byte{0xD0}, R: []byte{id}},
		{Addr: addr, W: []byte{0x88}, R: tp[:]},
	}
	if id == 0x60 {
		ops = append(ops, i2ctest.IO{Addr: addr, W: []byte{0xE1}, R: h[:]}, i2ctest.IO{Addr: addr, W: bmeInitWrite})
	} else {
		ops = append(ops, i2ctest.IO{Addr: addr, W: bmpInitWrite})
	}
	return ops
}

func bmeRead(addr uint16, regs []byte) []i2ctest.IO {
	return []i2ctest.IO{
		{Addr: addr, W: bmeForced},
		{Addr: addr, W: []byte{0xF3}, R: []byte{0x08}}, // measuring
		{Addr: addr, W: []byte{0xF3}, R: bmeStatusIdle},
		{Addr: addr, W: []byte{0xF7}, R: regs},
	}
}

func TestBME280Datasheet(t *testing.T) {
	// BMP280 datasheet §3.12: adc_T = 519888 gives 25.08 °C and adc_P =
	// 415148 gives 100653.27 Pa with the example calibration.
	const adcT, adcP, adcH = 519888, 415148, 0x6A50
	_, _, wantH := datasheetCal.compensate(adcT, adcP, adcH)
	if wantH < 30 || wantH > 70 {
		t.Fatalf("reference humidity %v: pick a more typical adc_H", wantH)
	}
	bus := playback(append(bmeOpen(0x76, 0x60, datasheetCal), bmeRead(0x76, bmeData(adcT, adcP, adcH))...)...)
	d, err := NewBME280(bus, "1", 0x76)
	if err != nil {
		t.Fatal(err)
	}
	got, err := d.Sense(bg())
	if err != nil {
		t.Fatal(err)
	}
	wantReadings(t, got, []Reading{
		{"temperature", 25.08, Celsius},
		{"humidity", wantH, Percent},
		{"pressure", 1006.53, HectoPascal},
	}, 0.011)
	mustConsume(t, bus)
}

// TestBME280Reference checks periph.io's integer compensation against the
// datasheet's floating-point formulas over a spread of raw values.
func TestBME280Reference(t *testing.T) {
	for _, raw := range []struct {
		t, p uint32
		h    uint16
	}{
		{519888, 415148, 0x6A50},
		{480000, 380000, 0x5000},
		{560000, 450000, 0x7800},
		{450000, 350000, 0x8800},
	} {
		wantT, wantP, wantH := datasheetCal.compensate(float64(raw.t), float64(raw.p), float64(raw.h))
		bus := playback(append(bmeOpen(0x77, 0x60, datasheetCal), bmeRead(0x77, bmeData(raw.t, raw.p, raw.h))...)...)
		d, err := NewBME280(bus, "1", 0x77)
		if err != nil {
			t.Fatal(err)
		}
		got, err := d.Sense(bg())
		if err != nil {
			t.Fatalf("raw %v: %v", raw, err)
		}
		wantReadings(t, got, []Reading{
			{"temperature", wantT, Celsius},
			{"humidity", wantH, Percent},
			{"pressure", wantP, HectoPascal},
		}, 0.02)
		mustConsume(t, bus)
	}
}

func TestBME280SPI(t *testing.T) {
	tp, h := datasheetCal.regs()
	// SPI: the register address goes out first, the answer comes back one
	// byte later; writes clear bit 7 of each register address (§6.3).
	port := &spitest.Playback{Playback: conntest.Playback{DontPanic: true, Ops: []conntest.IO{
		{W: []byte{0xD0, 0}, R: []byte{0, 0x60}},
		{W: append([]byte{0x88}, make([]byte, 26)...), R: append([]byte{0}, tp[:]...)},
		{W: append([]byte{0xE1}, make([]byte, 7)...), R: append([]byte{0}, h[:]...)},
		{W: []byte{0x74, 0x6C, 0x72, 0x03, 0x75, 0xA0, 0x74, 0x6C}},
		{W: []byte{0x74, 0x6D}},
		{W: []byte{0xF3, 0}, R: []byte{0, 0}},
		{W: append([]byte{0xF7}, make([]byte, 8)...), R: append([]byte{0}, bmeData(519888, 415148, 0x6A50)...)},
	}}}
	d, err := NewBME280SPI(port, "0.0")
	if err != nil {
		t.Fatal(err)
	}
	got, err := d.Sense(bg())
	if err != nil {
		t.Fatal(err)
	}
	if got[0].Value != 25.08 || got[2].Value != 1006.53 {
		t.Errorf("Sense = %v, want 25.08 °C and 1006.53 hPa", got)
	}
	mustConsume(t, port)
}

func TestBMP280(t *testing.T) {
	regs := bmeData(519888, 415148, 0)[:6] // no humidity registers on a BMP280
	bus := playback(append(bmeOpen(0x76, 0x58, datasheetCal), bmeRead(0x76, regs)...)...)
	d, err := NewBMP280(bus, "1", 0x76)
	if err != nil {
		t.Fatal(err)
	}
	got, err := d.Sense(bg())
	if err != nil {
		t.Fatal(err)
	}
	wantReadings(t, got, []Reading{{"temperature", 25.08, Celsius}, {"pressure", 1006.53, HectoPascal}}, 0.011)
	mustConsume(t, bus)
}

func TestBME280Errors(t *testing.T) {
	open := bmeOpen(0x76, 0x60, datasheetCal)
	tests := []struct {
		name     string
		bus      *nackBus
		driver   func(*nackBus) (*BME280, error)
		openErr  bool
		prefix   string
		contains []string
	}{
		{
			name:    "BMP280 sold as BME280",
			bus:     newNACKBus(bmeOpen(0x76, 0x58, datasheetCal)...),
			driver:  func(b *nackBus) (*BME280, error) { return NewBME280(b, "1", 0x76) },
			openErr: true, prefix: "bme280: i2c bus 1 addr 0x76: ", contains: []string{"BMP280", `"bmp280"`},
		},
		{
			name:    "another chip at the address",
			bus:     newNACKBus(i2ctest.IO{Addr: 0x77, W: []byte{0xD0}, R: []byte{0x00}}),
			driver:  func(b *nackBus) (*BME280, error) { return NewBME280(b, "3", 0x77) },
			openErr: true, prefix: "bme280: i2c bus 3 addr 0x77: init: ", contains: []string{"chip id"},
		},
		{
			name:    "nothing at the address",
			bus:     newNACKBus(),
			driver:  func(b *nackBus) (*BME280, error) { return NewBME280(b, "1", 0x76) },
			openErr: true, prefix: "bme280: i2c bus 1 addr 0x76: init: ", contains: []string{"remote I/O error"},
		},
		{
			name:    "NACK while reading calibration",
			bus:     newNACKBus(open[:1]...),
			driver:  func(b *nackBus) (*BME280, error) { return NewBME280(b, "1", 0x76) },
			openErr: true, prefix: "bme280: i2c bus 1 addr 0x76: init: ", contains: []string{"remote I/O error"},
		},
		{
			name:   "NACK mid-measurement",
			bus:    newNACKBus(append(open, i2ctest.IO{Addr: 0x76, W: bmeForced})...),
			driver: func(b *nackBus) (*BME280, error) { return NewBME280(b, "1", 0x76) },
			prefix: "bme280: i2c bus 1 addr 0x76: read: ", contains: []string{"remote I/O error"},
		},
		{
			name:   "all ones: implausible temperature",
			bus:    newNACKBus(append(open, bmeRead(0x76, bmeData(0xFFFFF, 0xFFFFF, 0xFFFF))...)...),
			driver: func(b *nackBus) (*BME280, error) { return NewBME280(b, "1", 0x76) },
			prefix: "bme280: i2c bus 1 addr 0x76: implausible temperature 187.6 °C", contains: []string{"-40 to 85"},
		},
		{
			name:   "implausible pressure",
			bus:    newNACKBus(append(open, bmeRead(0x76, bmeData(519888, 0xFFFF0, 0x6A50))...)...),
			driver: func(b *nackBus) (*BME280, error) { return NewBME280(b, "1", 0x76) },
			prefix: "bme280: i2c bus 1 addr 0x76: implausible pressure", contains: []string{"300 to 1100 hPa"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := tt.driver(tt.bus)
			if tt.openErr {
				wantErr(t, err, tt.prefix, tt.contains...)
				mustConsume(t, tt.bus)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			r, err := d.Sense(bg())
			wantErr(t, err, tt.prefix, tt.contains...)
			if r != nil {
				t.Errorf("Sense returned readings %v with an error", r)
			}
			mustConsume(t, tt.bus)
		})
	}
}

func TestBME280Canceled(t *testing.T) {
	bus := playback(bmeOpen(0x76, 0x60, datasheetCal)...)
	d, err := NewBME280(bus, "1", 0x76)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(bg())
	cancel()
	_, err = d.Sense(ctx)
	wantErr(t, err, "bme280: i2c bus 1 addr 0x76: read: ", "canceled")
	mustConsume(t, bus) // nothing was sent
}
