package device

import (
	"context"
	"fmt"
	"strings"

	"periph.io/x/conn/v3/i2c"
	"periph.io/x/conn/v3/physic"
	"periph.io/x/conn/v3/spi"
	"periph.io/x/devices/v3/bmxx80"
)

// BME280 is a Bosch BME280 (temperature, humidity, pressure) or BMP280
// (temperature, pressure) on I²C or SPI, read through periph.io's bmxx80
// driver in forced mode: each Sense triggers one measurement with 4×
// oversampling and returns to sleep (BME280 datasheet §3.3.2), so the chip
// does not warm itself between samples.
type BME280 struct {
	c        *chip
	dev      *bmxx80.Dev
	humidity bool
}

var _ Sensor = (*BME280)(nil)

// Operating ranges, BME280 datasheet table 1 (BMP280 table 1 agrees for
// temperature and pressure).
const (
	bmeMinC, bmeMaxC     = -40, 85
	bmeMinHPa, bmeMaxHPa = 300, 1100
)

// NewBME280 opens a BME280 at addr (0x76 with SDO to GND, 0x77 with SDO to
// VDDIO) on a borrowed I²C bus. busName is used in errors only. A BMP280 at
// that address is an error that says so: those boards are often sold as
// BME280 and have no humidity sensor.
func NewBME280(bus i2c.Bus, busName string, addr uint16) (*BME280, error) {
	return newBMx280(newChip("bme280", busName, bus, addr), true, func() (*bmxx80.Dev, error) {
		return bmxx80.NewI2C(bus, addr, &bmxx80.DefaultOpts)
	})
}

// NewBMP280 opens a BMP280 (or a BME280, of which it reads temperature and
// pressure only) at addr on a borrowed I²C bus.
func NewBMP280(bus i2c.Bus, busName string, addr uint16) (*BME280, error) {
	return newBMx280(newChip("bmp280", busName, bus, addr), false, func() (*bmxx80.Dev, error) {
		return bmxx80.NewI2C(bus, addr, &bmxx80.DefaultOpts)
	})
}

// NewBME280SPI opens a BME280 on a borrowed SPI port (mode 3, 10 MHz, CSB
// on the port's chip select). portName ("0.0") is used in errors only.
func NewBME280SPI(port spi.Port, portName string) (*BME280, error) {
	return newBMx280(&chip{at: at{"bme280", "spi " + portName}}, true, func() (*bmxx80.Dev, error) {
		return bmxx80.NewSPI(port, &bmxx80.DefaultOpts)
	})
}

// NewBMP280SPI opens a BMP280 (or a BME280, without humidity) on a borrowed
// SPI port.
func NewBMP280SPI(port spi.Port, portName string) (*BME280, error) {
	return newBMx280(&chip{at: at{"bmp280", "spi " + portName}}, false, func() (*bmxx80.Dev, error) {
		return bmxx80.NewSPI(port, &bmxx80.DefaultOpts)
	})
}

func newBMx280(c *chip, humidity bool, open func() (*bmxx80.Dev, error)) (*BME280, error) {
	var dev *bmxx80.Dev
	if err := c.open(func() (err error) {
		dev, err = open()
		return err
	}); err != nil {
		return nil, err
	}
	// periph.io identifies the chip from register 0xD0 (BME280 datasheet
	// §5.4.1: 0x60 BME280, 0x58 BMP280, 0x55 BMP180) and names it.
	name, _, _ := strings.Cut(dev.String(), "{")
	switch {
	case name == "BME280":
	case name == "BMP280" && humidity:
		return nil, fmt.Errorf("%s: %s: chip id says BMP280, which has no humidity sensor: use driver \"bmp280\"", c.chip, c.where)
	case name == "BMP180" && humidity:
		return nil, fmt.Errorf("%s: %s: chip id says BMP180, which has no humidity sensor: use driver \"bmp280\"", c.chip, c.where)
	case name == "BMP280" || name == "BMP180":
	default:
		return nil, fmt.Errorf("%s: %s: unexpected chip %q", c.chip, c.where, name)
	}
	return &BME280{c: c, dev: dev, humidity: humidity}, nil
}

// Sense triggers one measurement and reads temperature, pressure and, on a
// BME280, humidity.
func (d *BME280) Sense(ctx context.Context) ([]Reading, error) {
	var e physic.Env
	if err := d.c.do(ctx, "read", func() error { return d.dev.Sense(&e) }); err != nil {
		return nil, err
	}
	out := []Reading{
		{Quantity: "temperature", Value: round(celsius(e.Temperature), 2), Unit: Celsius},
	}
	if d.humidity {
		out = append(out, Reading{Quantity: "humidity", Value: round(percentRH(e.Humidity), 2), Unit: Percent})
	}
	out = append(out, Reading{Quantity: "pressure", Value: round(hectopascal(e.Pressure), 2), Unit: HectoPascal})
	if err := d.c.check(out[0], bmeMinC, bmeMaxC); err != nil {
		return nil, err
	}
	if err := d.c.check(out[len(out)-1], bmeMinHPa, bmeMaxHPa); err != nil {
		return nil, err
	}
	if d.humidity {
		if err := d.c.check(out[1], 0, 100); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func bme280Driver() DriverInfo {
	return DriverInfo{
		Name: "bme280", Chip: "Bosch BME280: temperature, humidity, pressure", Bus: "i2c or spi", Addresses: []uint16{0x76, 0x77},
		Quantities: []Reading{{Quantity: "temperature", Unit: Celsius}, {Quantity: "humidity", Unit: Percent}, {Quantity: "pressure", Unit: HectoPascal}},
		// Datasheet 3.4-3.6: 0.01 °C, 0.008 %RH, 0.18 Pa at 16× oversampling.
		Resolution: map[string]float64{"temperature": 0.01, "humidity": 0.008, "pressure": 0.0018},
		Open: func(o Opening) (Sensor, error) {
			if o.SPI != nil {
				return NewBME280SPI(o.SPI, o.Bus)
			}
			return NewBME280(o.I2C, o.Bus, o.Addr)
		},
	}
}

func bmp280Driver() DriverInfo {
	return DriverInfo{
		Name: "bmp280", Chip: "Bosch BMP280: temperature, pressure", Bus: "i2c or spi", Addresses: []uint16{0x76, 0x77},
		Quantities: []Reading{{Quantity: "temperature", Unit: Celsius}, {Quantity: "pressure", Unit: HectoPascal}},
		Resolution: map[string]float64{"temperature": 0.01, "pressure": 0.0018}, // BMP280 datasheet 3.4
		Open: func(o Opening) (Sensor, error) {
			if o.SPI != nil {
				return NewBMP280SPI(o.SPI, o.Bus)
			}
			return NewBMP280(o.I2C, o.Bus, o.Addr)
		},
	}
}
