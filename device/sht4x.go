package device

import (
	"context"
	"time"

	"periph.io/x/conn/v3/i2c"
)

// SHT4xAddr is the address of the SHT4x-A variants (SHT40-AD1B, SHT41,
// SHT45): the address is fixed by the part number, 0x45 for the -B and 0x46
// for the -C variants (SHT4x datasheet, "Ordering Information" and
// "I2C communication").
const SHT4xAddr = 0x44

var sht4xAddrs = []uint16{0x44, 0x45, 0x46}

// SHT4x commands, one byte each (SHT4x datasheet, "Command Overview").
// vigil never sends the heater commands (0x39, 0x32, 0x2F, 0x24, 0x1E,
// 0x15): the SHT4x heats only while one of them runs, so the heater stays
// off.
var (
	sht4xMeasure   = []byte{0xFD} // measure T & RH with high precision (high repeatability)
	sht4xSoftReset = []byte{0x94} // soft reset
)

// SHT4x timing (datasheet, "System Timing Specifications"): a
// high-repeatability measurement takes at most 8.3 ms, a soft reset at most
// 1 ms.
const (
	sht4xTMeas  = 8300 * time.Microsecond
	sht4xTReset = time.Millisecond
	sht4xMinC   = -40 // operating range, datasheet "Temperature Sensor Performance"
	sht4xMaxC   = 125
)

// SHT4x is a Sensirion SHT40, SHT41, SHT43 or SHT45 temperature and humidity
// sensor, read in single shot with high repeatability; every word's CRC is
// checked.
type SHT4x struct {
	s *sensirion
}

var _ Sensor = (*SHT4x)(nil)

// NewSHT4x opens an SHT4x at addr (0x44, 0x45 or 0x46, 0 for 0x44) on a
// borrowed I²C bus with a soft reset, which also checks that it answers.
// sleep waits out the measurement time.
func NewSHT4x(bus i2c.Bus, busName string, addr uint16, sleep Sleep) (*SHT4x, error) {
	s, err := newSensirion("sht4x", bus, busName, addr, sht4xAddrs, sleep)
	if err != nil {
		return nil, err
	}
	s.measure, s.tMeas = sht4xMeasure, sht4xTMeas
	s.reset, s.tReset = sht4xSoftReset, sht4xTReset
	if err := s.c.open(func() error { return s.softReset(context.Background()) }); err != nil {
		return nil, err
	}
	return &SHT4x{s: s}, nil
}

// Sense measures temperature and humidity once.
func (d *SHT4x) Sense(ctx context.Context) ([]Reading, error) {
	st, srh, err := d.s.read(ctx)
	if err != nil {
		return nil, err
	}
	// "Conversion of Signal Output": RH = -6 + 125 · S_RH / (2¹⁶ - 1),
	// cropped to 0-100 %RH as the datasheet says (values outside are
	// physically impossible but the formula gives -6 to 119).
	rh := min(max(-6+125*float64(srh)/65535, 0), 100)
	out := []Reading{
		{Quantity: "temperature", Value: round(sensirionTemperature(st), 2), Unit: Celsius},
		{Quantity: "humidity", Value: round(rh, 2), Unit: Percent},
	}
	if err := d.s.c.check(out[0], sht4xMinC, sht4xMaxC); err != nil {
		return nil, err
	}
	return out, nil
}

func sht4xDriver() DriverInfo {
	return DriverInfo{
		Name: "sht4x", Chip: "Sensirion SHT40/SHT41/SHT43/SHT45: temperature, humidity", Bus: "i2c", Addresses: sht4xAddrs,
		Quantities: []Reading{{Quantity: "temperature", Unit: Celsius}, {Quantity: "humidity", Unit: Percent}},
		Open:       func(o Opening) (Sensor, error) { return NewSHT4x(o.I2C, o.Bus, o.Addr, o.Sleep) },
	}
}
