package device

import (
	"context"
	"fmt"
	"math"

	"periph.io/x/conn/v3/i2c"
	"periph.io/x/conn/v3/physic"
	"periph.io/x/devices/v3/ina219"
)

// INA219Addr is the INA219's address with A1 and A0 to GND; the two pins
// select 0x40-0x4F (datasheet, "Address Pins and Slave Addresses").
const INA219Addr = 0x40

// INA219 defaults: the 0.1 Ω shunt of the common breakout boards and the
// 3.2 A that its ±320 mV range allows.
const (
	INA219ShuntOhms  = 0.1
	INA219MaxCurrent = 3.2
)

// INA219 is a Texas Instruments INA219 current and power monitor, read
// through periph.io's ina219 driver: bus voltage, current through the
// shunt and power, in the 32 V / ±320 mV range with 12-bit conversions.
type INA219 struct {
	c   *chip
	dev *ina219.Dev
}

var _ Sensor = (*INA219)(nil)

// The bus voltage input measures 0 to 26 V (datasheet, features); a
// higher value is a misread.
const ina219MaxV = 26

// NewINA219 opens an INA219 at addr (0x40-0x4F, 0 for 0x40) on a borrowed I²C
// bus and programs its calibration register for the shunt (ohms) and the
// largest current expected (amps); zero selects the defaults.
func NewINA219(bus i2c.Bus, busName string, addr uint16, shuntOhms, maxCurrent float64) (*INA219, error) {
	if addr == 0 {
		addr = INA219Addr
	}
	if shuntOhms == 0 {
		shuntOhms = INA219ShuntOhms
	}
	if maxCurrent == 0 {
		maxCurrent = INA219MaxCurrent
	}
	c := newChip("ina219", busName, bus, addr)
	if shuntOhms < 0 || maxCurrent < 0 || math.IsNaN(shuntOhms+maxCurrent) {
		return nil, fmt.Errorf("%s: %s: shunt_ohms and max_current must be positive", c.chip, c.where)
	}
	var dev *ina219.Dev
	if err := c.open(func() (err error) {
		dev, err = ina219.New(c.bus, &ina219.Opts{
			Address:       int(addr),
			SenseResistor: physic.ElectricResistance(math.Round(shuntOhms * float64(physic.Ohm))),
			MaxCurrent:    physic.ElectricCurrent(math.Round(maxCurrent * float64(physic.Ampere))),
		})
		return err
	}); err != nil {
		return nil, err
	}
	return &INA219{c: c, dev: dev}, nil
}

// Sense reads bus voltage, current and power.
func (d *INA219) Sense(ctx context.Context) ([]Reading, error) {
	var pm ina219.PowerMonitor
	if err := d.c.do(ctx, "read", func() (err error) {
		pm, err = d.dev.Sense()
		return err
	}); err != nil {
		return nil, err
	}
	out := []Reading{
		{Quantity: "voltage", Value: round(volts(pm.Voltage), 3), Unit: Volt},
		{Quantity: "current", Value: round(float64(pm.Current)/float64(physic.Ampere), 4), Unit: Ampere},
		{Quantity: "power", Value: round(float64(pm.Power)/float64(physic.Watt), 4), Unit: Watt},
	}
	if err := d.c.check(out[0], 0, ina219MaxV); err != nil {
		return nil, err
	}
	return out, nil
}

func ina219Driver() DriverInfo {
	return DriverInfo{
		Name: "ina219", Chip: "Texas Instruments INA219: bus voltage, current, power", Bus: "i2c", Addresses: addrRange(0x40, 0x4F), Keys: []string{"shunt_ohms", "max_current"},
		Quantities: []Reading{{Quantity: "voltage", Unit: Volt}, {Quantity: "current", Unit: Ampere}, {Quantity: "power", Unit: Watt}},
		Open:       func(o Opening) (Sensor, error) { return NewINA219(o.I2C, o.Bus, o.Addr, o.ShuntOhms, o.MaxCurrent) },
	}
}
