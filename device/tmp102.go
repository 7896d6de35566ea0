package device

import (
	"context"

	"periph.io/x/conn/v3/i2c"
	"periph.io/x/conn/v3/physic"
	"periph.io/x/devices/v3/tmp102"
)

// TMP102Addr is the TMP102's address with ADD0 to GND; ADD0 to V+, SDA or
// SCL gives 0x49, 0x4A or 0x4B (datasheet, "Serial Bus Address").
const TMP102Addr = 0x48

// TMP102 is a Texas Instruments TMP102 temperature sensor (±0.5 °C,
// 0.0625 °C resolution), read through periph.io's tmp102 driver at four
// conversions a second.
type TMP102 struct {
	c   *chip
	dev *tmp102.Dev
}

var _ Sensor = (*TMP102)(nil)

// Operating range, TMP102 datasheet: -55 to 150 °C (specified -40 to
// 125 °C).
const tmp102MinC, tmp102MaxC = -55, 150

// NewTMP102 opens a TMP102 at addr (0x48-0x4B, 0 for 0x48) on a borrowed I²C
// bus and takes it out of shutdown.
func NewTMP102(bus i2c.Bus, busName string, addr uint16) (*TMP102, error) {
	if addr == 0 {
		addr = TMP102Addr
	}
	c := newChip("tmp102", busName, bus, addr)
	var dev *tmp102.Dev
	if err := c.open(func() (err error) {
		dev, err = tmp102.NewI2C(c.bus, addr, nil)
		return err
	}); err != nil {
		return nil, err
	}
	return &TMP102{c: c, dev: dev}, nil
}

// Sense reads the temperature register.
func (d *TMP102) Sense(ctx context.Context) ([]Reading, error) {
	var r Reading
	if err := d.c.do(ctx, "read", func() error {
		var e physic.Env
		err := d.dev.Sense(&e)
		r = Reading{Quantity: "temperature", Value: round(celsius(e.Temperature), 4), Unit: Celsius}
		return err
	}); err != nil {
		return nil, err
	}
	if err := d.c.check(r, tmp102MinC, tmp102MaxC); err != nil {
		return nil, err
	}
	return []Reading{r}, nil
}

func tmp102Driver() DriverInfo {
	return DriverInfo{
		Name: "tmp102", Chip: "Texas Instruments TMP102: temperature ±0.5 °C", Bus: "i2c", Addresses: addrRange(0x48, 0x4B),
		Quantities: []Reading{{Quantity: "temperature", Unit: Celsius}},
		Resolution: map[string]float64{"temperature": 0.0625}, // datasheet 7.3.1: 12 bits
		Open:       func(o Opening) (Sensor, error) { return NewTMP102(o.I2C, o.Bus, o.Addr) },
	}
}
