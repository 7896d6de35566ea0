package device

import (
	"errors"
	"strings"
	"testing"
)

// The emulated bus's chips are read by the real drivers, periph.io's
// bmxx80 and tmp102 included.
func TestSimI2CDrivers(t *testing.T) {
	bus, err := NewSimI2C("bme280@0x76, bmp280@0x77,tmp102@0x48")
	if err != nil {
		t.Fatal(err)
	}
	wantT, wantP, wantH := datasheetCal.compensate(519888, 415148, 0x6A50)
	tests := []struct {
		driver string
		addr   uint16
		want   []Reading
	}{
		{"bme280", 0x76, []Reading{{"temperature", wantT, Celsius}, {"humidity", wantH, Percent}, {"pressure", wantP, HectoPascal}}},
		{"bmp280", 0x77, []Reading{{"temperature", wantT, Celsius}, {"pressure", wantP, HectoPascal}}},
		{"bmp280", 0x76, []Reading{{"temperature", wantT, Celsius}, {"pressure", wantP, HectoPascal}}}, // a BME280 read as a BMP280
		{"tmp102", 0x48, []Reading{{"temperature", 25, Celsius}}},
	}
	for _, tt := range tests {
		info, _ := LookupDriver(tt.driver)
		s, err := info.Open(Opening{Spec: Spec{Driver: tt.driver}, I2C: bus, Bus: SimI2CBus, Addr: tt.addr})
		if err != nil {
			t.Fatalf("open %s at 0x%02x: %v", tt.driver, tt.addr, err)
		}
		for range 2 { // a second read reads the same
			got, err := s.Sense(bg())
			if err != nil {
				t.Fatalf("%s at 0x%02x: %v", tt.driver, tt.addr, err)
			}
			wantReadings(t, got, tt.want, 0.02)
		}
	}
	// The BMP280 is told from the BME280 as on a board.
	info, _ := LookupDriver("bme280")
	if _, err := info.Open(Opening{Spec: Spec{Driver: "bme280"}, I2C: bus, Bus: SimI2CBus, Addr: 0x77}); err == nil || !strings.Contains(err.Error(), "chip id says BMP280") {
		t.Errorf("bme280 driver on the emulated BMP280: err = %v, want the chip id says BMP280", err)
	}
	if err := bus.Tx(0x40, nil, make([]byte, 1)); !errors.Is(err, ErrSimNACK) {
		t.Errorf("Tx at an empty address = %v, want ErrSimNACK", err)
	}
	if got := Scan(bus, 0x08, 0x77); len(got) != 3 || got[0] != 0x48 || got[1] != 0x76 || got[2] != 0x77 {
		t.Errorf("Scan = %#x, want [0x48 0x76 0x77]", got)
	}
}

func TestSimI2CSpec(t *testing.T) {
	tests := []struct{ spec, err string }{
		{"bme280@0x76", ""},
		{"bme280", "want CHIP@ADDRESS"},
		{"bme280@0x99", "address"},
		{"bme280@0x76,bmp280@0x76", "two chips at 0x76"},
		{"sht99@0x44", `chip "sht99": want one of bme280, bmp280, tmp102`},
	}
	for _, tt := range tests {
		_, err := NewSimI2C(tt.spec)
		if tt.err == "" && err != nil || tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err) || !strings.HasPrefix(err.Error(), SimI2CEnv)) {
			t.Errorf("NewSimI2C(%q) = %v, want an error saying %q", tt.spec, err, tt.err)
		}
	}
	b, err := SimI2CFrom(func(string) string { return "" })
	if b != nil || err != nil {
		t.Errorf("SimI2CFrom(unset) = %v, %v, want nil, nil", b, err)
	}
	b, _ = SimI2CFrom(func(k string) string { return map[string]string{SimI2CEnv: "bme280@0x76"}[k] })
	if _, err := b.I2C("/dev/i2c-1"); err != nil {
		t.Errorf("I2C(/dev/i2c-1) = %v, want the emulated bus", err)
	}
	if _, err := b.I2C("3"); err == nil || !strings.Contains(err.Error(), "emulated by "+SimI2CEnv) {
		t.Errorf("I2C(3) = %v, want not found, emulated by %s", err, SimI2CEnv)
	}
}
