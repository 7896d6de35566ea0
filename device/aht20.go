package device

import (
	"context"
	"errors"
	"fmt"

	"periph.io/x/conn/v3/i2c"
	"periph.io/x/conn/v3/physic"
	"periph.io/x/devices/v3/aht20"
)

// AHT20Addr is the AHT20's only I²C address (datasheet §5).
const AHT20Addr = 0x38

// AHT20 is an Aosong AHT20 temperature and humidity sensor, read through
// periph.io's aht20 driver: a measurement is triggered, the driver waits the
// 80 ms conversion time (datasheet, "Sensor Reading Process") and checks the CRC-8 of the answer.
type AHT20 struct {
	c   *chip
	dev *aht20.Dev
}

var _ Sensor = (*AHT20)(nil)

// AHT20 temperature range, datasheet: -40 to 85 °C.
const aht20MinC, aht20MaxC = -40, 85

// NewAHT20 opens the AHT20 on a borrowed I²C bus, calibrating it if its
// status says it is not (datasheet, "Sensor Reading Process", step 1). addr must be 0x38 (or 0 for
// the default); busName is used in errors only.
func NewAHT20(bus i2c.Bus, busName string, addr uint16) (*AHT20, error) {
	if addr == 0 {
		addr = AHT20Addr
	}
	c := newChip("aht20", busName, bus, addr)
	if addr != AHT20Addr {
		return nil, fmt.Errorf("%s: %s: the AHT20 only answers at 0x38", c.chip, c.where)
	}
	var dev *aht20.Dev
	if err := c.open(func() (err error) {
		dev, err = aht20.NewI2C(c.bus, &aht20.DefaultOpts)
		return err
	}); err != nil {
		return nil, err
	}
	return &AHT20{c: c, dev: dev}, nil
}

// Sense triggers a measurement and reads temperature and humidity.
func (d *AHT20) Sense(ctx context.Context) ([]Reading, error) {
	var e physic.Env
	if err := d.c.do(ctx, "read", func() error { return aht20Error(d.dev.Sense(&e)) }); err != nil {
		return nil, err
	}
	out := []Reading{
		{Quantity: "temperature", Value: round(celsius(e.Temperature), 2), Unit: Celsius},
		{Quantity: "humidity", Value: round(percentRH(e.Humidity), 2), Unit: Percent},
	}
	if err := d.c.check(out[0], aht20MinC, aht20MaxC); err != nil {
		return nil, err
	}
	if err := d.c.check(out[1], 0, 100); err != nil {
		return nil, err
	}
	return out, nil
}

// aht20Error rewords periph.io's typed errors in vigil's style.
func aht20Error(err error) error {
	var crc *aht20.DataCorruptionError
	var timeout *aht20.ReadTimeoutError
	var uninit *aht20.NotInitializedError
	switch {
	case errors.As(err, &crc):
		return fmt.Errorf("crc mismatch: got 0x%02x, computed 0x%02x", crc.Received, crc.Calculated)
	case errors.As(err, &timeout):
		return fmt.Errorf("measurement not ready after %v", timeout.Timeout)
	case errors.As(err, &uninit):
		return errors.New("sensor not calibrated (status bit 3 clear)")
	}
	return err
}

func aht20Driver() DriverInfo {
	return DriverInfo{
		Name: "aht20", Chip: "Aosong AHT20: temperature, humidity", Bus: "i2c", Addresses: []uint16{AHT20Addr},
		Quantities: []Reading{{Quantity: "temperature", Unit: Celsius}, {Quantity: "humidity", Unit: Percent}},
		Open:       func(o Opening) (Sensor, error) { return NewAHT20(o.I2C, o.Bus, o.Addr) },
	}
}
