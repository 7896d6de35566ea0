package device

import (
	"context"
	"time"

	"periph.io/x/conn/v3/i2c"
)

// SHT3xAddr is the SHT3x's address with its ADDR pin to VSS; ADDR to VDD
// gives 0x45 (SHT3x-DIS datasheet §3, "Pin Assignment", ADDR).
const SHT3xAddr = 0x44

// sht3xAddrs are the addresses an SHT3x can be strapped to.
var sht3xAddrs = []uint16{0x44, 0x45}

// SHT3x commands, all 16 bits sent MSB first (SHT3x-DIS datasheet §4).
var (
	// Single shot, high repeatability, clock stretching disabled (§4.3,
	// Table 9 "Measurement commands in single shot mode": 0x2400). Without
	// clock stretching the sensor does not hold the bus: vigil waits out
	// the measurement itself and then reads.
	sht3xMeasure = []byte{0x24, 0x00}
	// Heater disabled (§4.10, Table 16 "Heater command": 0x3066).
	sht3xHeaterOff = []byte{0x30, 0x66}
	// Soft reset (§4.9 "Reset": 0x30A2).
	sht3xSoftReset = []byte{0x30, 0xA2}
)

// SHT3x timing (datasheet §2.2, "Timing Specification for the Sensor
// System"): a high-repeatability measurement takes at most 15 ms, a soft
// reset at most 1.5 ms; and commands need at least 1 ms between them
// (Table 9, the "SCL free" block).
const (
	sht3xTMeas  = 15 * time.Millisecond
	sht3xTReset = 1500 * time.Microsecond
	sht3xTIdle  = time.Millisecond
	sht3xMinC   = -40 // temperature range, datasheet §1 "Sensor Performance"
	sht3xMaxC   = 125
)

// SHT3x is a Sensirion SHT30, SHT31 or SHT35 temperature and humidity
// sensor. Each Sense triggers one single-shot, high-repeatability
// measurement, so the sensor sleeps between reads and does not warm
// itself; the heater is switched off when the driver opens, and every
// word's CRC is checked.
type SHT3x struct {
	s *sensirion
}

var _ Sensor = (*SHT3x)(nil)

// NewSHT3x opens an SHT3x at addr (0x44 or 0x45, 0 for 0x44) on a borrowed
// I²C bus and switches its heater off, which also checks that it answers.
// sleep waits out the measurement time.
func NewSHT3x(bus i2c.Bus, busName string, addr uint16, sleep Sleep) (*SHT3x, error) {
	s, err := newSensirion("sht3x", bus, busName, addr, sht3xAddrs, sleep)
	if err != nil {
		return nil, err
	}
	s.measure, s.tMeas = sht3xMeasure, sht3xTMeas
	s.reset, s.tReset = sht3xSoftReset, sht3xTReset
	if err := s.c.open(func() error {
		if err := s.bus.Tx(s.addr, sht3xHeaterOff, nil); err != nil {
			return err
		}
		return sleep(context.Background(), sht3xTIdle)
	}); err != nil {
		return nil, err
	}
	return &SHT3x{s: s}, nil
}

// Sense measures temperature and humidity once.
func (d *SHT3x) Sense(ctx context.Context) ([]Reading, error) {
	st, srh, err := d.s.read(ctx)
	if err != nil {
		return nil, err
	}
	// §4.13 "Conversion of Signal Output": RH = 100 · S_RH / (2¹⁶ - 1).
	out := []Reading{
		{Quantity: "temperature", Value: round(sensirionTemperature(st), 2), Unit: Celsius},
		{Quantity: "humidity", Value: round(100*float64(srh)/65535, 2), Unit: Percent},
	}
	if err := d.s.c.check(out[0], sht3xMinC, sht3xMaxC); err != nil {
		return nil, err
	}
	return out, nil
}

func sht3xDriver() DriverInfo {
	return DriverInfo{
		Name: "sht3x", Chip: "Sensirion SHT30/SHT31/SHT35: temperature, humidity", Bus: "i2c", Addresses: sht3xAddrs,
		Quantities: []Reading{{Quantity: "temperature", Unit: Celsius}, {Quantity: "humidity", Unit: Percent}},
		Open:       func(o Opening) (Sensor, error) { return NewSHT3x(o.I2C, o.Bus, o.Addr, o.Sleep) },
	}
}
