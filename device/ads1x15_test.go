package device

import (
	"testing"

	"periph.io/x/conn/v3/i2c/i2ctest"
)

// adsConvert is one single-shot conversion: write CONFIG, read CONVERSION.
// config is OS=1 | MUX=1xx (single-ended) | PGA | MODE=single | DR | comparator
// off (ADS111x datasheet, "Config Register").
func adsConvert(addr uint16, config uint16, result uint16) []i2ctest.IO {
	return []i2ctest.IO{
		{Addr: addr, W: []byte{0x01, byte(config >> 8), byte(config)}},
		{Addr: addr, W: []byte{0x00}, R: []byte{byte(result >> 8), byte(result)}},
	}
}

// adsChannel is a channel read: a first conversion whose result is
// discarded (stale) and the one that counts.
func adsChannel(addr uint16, config uint16, stale, result uint16) []i2ctest.IO {
	return append(adsConvert(addr, config, stale), adsConvert(addr, config, result)...)
}

func TestADS1115(t *testing.T) {
	// 0xC383: AIN0, ±4.096 V, single-shot, 128 SPS. Ideal output codes
	// (datasheet, "Ideal Output Code Versus Input Signal"): 0x7FFF is +FS − 1 LSB, one LSB is FS/2^15.
	ops := adsChannel(0x49, 0xC383, 0x1234, 0x4000)                // ch0: 2.048 V
	ops = append(ops, adsChannel(0x49, 0xE383, 0x4000, 0x7FFF)...) // ch2: 4.095875 V
	ops = append(ops, adsChannel(0x49, 0xF383, 0x7FFF, 0x0001)...) // ch3: 125 µV
	bus := playback(ops...)
	d, err := NewADS1115(bus, "1", 0x49, []int{0, 2, 3}, 0)
	if err != nil {
		t.Fatal(err)
	}
	got, err := d.Sense(bg())
	if err != nil {
		t.Fatal(err)
	}
	wantReadings(t, got, []Reading{{"ch0", 2.048, Volt}, {"ch2", 4.095875, Volt}, {"ch3", 0.000125, Volt}}, 1e-9)
	mustConsume(t, bus)
}

func TestADS1115Gain(t *testing.T) {
	// ±0.256 V: PGA 101 (0x0A00); 0x4000 is 0.128 V. ±6.144 V: PGA 000.
	tests := []struct {
		gain   float64
		config uint16
		want   float64
	}{
		{0.256, 0xCB83, 0.128},
		{6.144, 0xC183, 3.072},
		{2.048, 0xC583, 1.024},
	}
	for _, tt := range tests {
		bus := playback(adsChannel(0x48, tt.config, 0, 0x4000)...)
		d, err := NewADS1115(bus, "1", 0, nil, tt.gain)
		if err != nil {
			t.Fatal(err)
		}
		got, err := d.Sense(bg())
		if err != nil {
			t.Fatalf("gain %v: %v", tt.gain, err)
		}
		wantReadings(t, got, []Reading{{"ch0", tt.want, Volt}}, 1e-9)
		mustConsume(t, bus)
	}
}

func TestADS1015(t *testing.T) {
	// ADS1015: 128 SPS is DR=000; 12-bit results left-justified, so one LSB
	// at ±4.096 V is 2 mV and reads 0x0010 (ADS101x datasheet, "Ideal Output Code Versus Input Signal").
	ops := adsChannel(0x48, 0xD303, 0, 0x7FF0) // ch1: 4.094 V
	ops = append(ops, adsChannel(0x48, 0xC303, 0, 0x0010)...)
	bus := playback(ops...)
	d, err := NewADS1015(bus, "1", 0x48, []int{1, 0}, 4.096)
	if err != nil {
		t.Fatal(err)
	}
	got, err := d.Sense(bg())
	if err != nil {
		t.Fatal(err)
	}
	wantReadings(t, got, []Reading{{"ch1", 4.094, Volt}, {"ch0", 0.002, Volt}}, 1e-9)
	mustConsume(t, bus)
}

func TestADS1x15Errors(t *testing.T) {
	t.Run("NACK on second channel", func(t *testing.T) {
		bus := newNACKBus(append(adsChannel(0x48, 0xC383, 0, 0x4000), adsConvert(0x48, 0xD383, 0)[0])...)
		d, err := NewADS1115(bus, "1", 0, []int{0, 1}, 0)
		if err != nil {
			t.Fatal(err)
		}
		_, err = d.Sense(bg())
		wantErr(t, err, "ads1115: i2c bus 1 addr 0x48: read ch1: sysfs-i2c: remote I/O error")
		mustConsume(t, bus)
	})
	t.Run("ADS1115 configured as ADS1015", func(t *testing.T) {
		bus := newNACKBus(adsChannel(0x48, 0xC303, 0, 0x4001)...)
		d, err := NewADS1015(bus, "1", 0, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		_, err = d.Sense(bg())
		wantErr(t, err, "ads1015: i2c bus 1 addr 0x48: implausible ch0 conversion 0x4001", "ADS1115")
		mustConsume(t, bus)
	})
	for _, tt := range []struct {
		name     string
		addr     uint16
		channels []int
		gain     float64
		want     string
	}{
		{"bad gain", 0, nil, 5, "gain 5 is not one of"},
		{"bad channel", 0, []int{4}, 0, "channel 4"},
		{"duplicate channel", 0, []int{1, 1}, 0, "listed twice"},
		{"bad address", 0x50, nil, 0, "0x48-0x4b"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			bus := newNACKBus()
			_, err := NewADS1115(bus, "1", tt.addr, tt.channels, tt.gain)
			wantErr(t, err, "ads1115: i2c bus 1 addr 0x", tt.want)
		})
	}
}
