package device

import (
	"context"
	"fmt"

	"periph.io/x/conn/v3/i2c"
	"periph.io/x/conn/v3/physic"
	"periph.io/x/devices/v3/bh1750"
)

// BH1750Addr is the BH1750's address with ADDR low; ADDR high gives 0x5C
// (datasheet, "Slave Address").
const BH1750Addr = 0x23

// BH1750 is a ROHM BH1750FVI ambient light sensor, read through periph.io's
// bh1750 driver in continuous high-resolution mode (1 lx, 120 ms per
// measurement). periph.io truncates to whole lux.
type BH1750 struct {
	c   *chip
	dev *bh1750.Dev
}

var _ Sensor = (*BH1750)(nil)

// NewBH1750 opens a BH1750 at addr (0x23 or 0x5C, 0 for 0x23) on a borrowed
// I²C bus.
func NewBH1750(bus i2c.Bus, busName string, addr uint16) (*BH1750, error) {
	if addr == 0 {
		addr = BH1750Addr
	}
	c := newChip("bh1750", busName, bus, addr)
	if addr != bh1750.I2CAddr && addr != bh1750.AlternativeI2CAddr {
		return nil, fmt.Errorf("%s: %s: the BH1750 answers at 0x23 or 0x5c only", c.chip, c.where)
	}
	var dev *bh1750.Dev
	if err := c.open(func() (err error) {
		dev, err = bh1750.NewI2C(c.bus, addr)
		return err
	}); err != nil {
		return nil, err
	}
	return &BH1750{c: c, dev: dev}, nil
}

// Sense starts a measurement, waits for it and reads the illuminance.
func (d *BH1750) Sense(ctx context.Context) ([]Reading, error) {
	var lux physic.LuminousFlux
	if err := d.c.do(ctx, "read", func() (err error) {
		lux, err = d.dev.Sense()
		return err
	}); err != nil {
		return nil, err
	}
	// The 16-bit count divided by 1.2 (datasheet, "Measurement sequence example") cannot leave
	// 0..54612 lx, so there is no implausible value to reject.
	return []Reading{{Quantity: "illuminance", Value: float64(lux) / float64(physic.Lumen), Unit: Lux}}, nil
}

func bh1750Driver() DriverInfo {
	return DriverInfo{
		Name: "bh1750", Chip: "ROHM BH1750: illuminance", Bus: "i2c", Addresses: []uint16{0x23, 0x5C},
		Quantities: []Reading{{Quantity: "illuminance", Unit: Lux}},
		Open:       func(o Opening) (Sensor, error) { return NewBH1750(o.I2C, o.Bus, o.Addr) },
	}
}
