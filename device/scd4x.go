package device

import (
	"context"
	"fmt"
	"time"

	"periph.io/x/conn/v3/i2c"
	"periph.io/x/devices/v3/scd4x"
)

// SCD4xAddr is the only address of the SCD40 and SCD41 (datasheet, "I2C communication").
const SCD4xAddr = 0x62

// SCD4xPeriod is the SCD4x's measurement interval in periodic mode
// (datasheet §3.5.1); the first measurement is ready one period after
// start-up.
const SCD4xPeriod = 5 * time.Second

// SCD4x is a Sensirion SCD40/SCD41 CO₂ sensor (with temperature and
// humidity), read through periph.io's scd4x driver in periodic mode. Each
// answer's CRC is checked. A Sense within SCD4xPeriod of the last good one
// returns that reading again instead of blocking until the next is ready.
type SCD4x struct {
	c      *chip
	dev    *scd4x.Dev
	now    func() time.Time
	last   []Reading
	lastAt time.Time
}

var _ Sensor = (*SCD4x)(nil)

// Ranges, SCD4x datasheet: CO₂ output range 0-40000 ppm, operating
// conditions -10 to 60 °C.
const (
	scd4xMaxPPM            = 40000
	scd4xMinC, scd4xMaxC   = -10, 60
	scd4xFirstReadingAfter = SCD4xPeriod
)

// NewSCD4x wakes the SCD4x on a borrowed I²C bus and starts periodic
// measurement (stopping a measurement left running by an earlier process
// first). addr must be 0x62 (or 0). now is the clock for the reading cache.
// The first Sense blocks until the first measurement, up to about 6 s.
func NewSCD4x(bus i2c.Bus, busName string, addr uint16, now func() time.Time) (*SCD4x, error) {
	if addr == 0 {
		addr = SCD4xAddr
	}
	c := newChip("scd4x", busName, bus, addr)
	if addr != SCD4xAddr {
		return nil, fmt.Errorf("%s: %s: the SCD4x only answers at 0x62", c.chip, c.where)
	}
	var dev *scd4x.Dev
	if err := c.open(func() (err error) {
		dev, err = scd4x.NewI2C(c.bus, addr)
		return err
	}); err != nil {
		return nil, err
	}
	return &SCD4x{c: c, dev: dev, now: now}, nil
}

// Sense waits for the data-ready flag and reads CO₂, temperature and
// humidity, or returns the last reading if it is younger than SCD4xPeriod.
func (d *SCD4x) Sense(ctx context.Context) ([]Reading, error) {
	var out []Reading
	fresh := false
	if err := d.c.do(ctx, "read", func() error {
		if t := d.now(); d.last != nil && !t.Before(d.lastAt) && t.Sub(d.lastAt) < SCD4xPeriod {
			out = d.last
			return nil
		}
		var e scd4x.Env
		if err := d.dev.Sense(&e); err != nil {
			return err
		}
		out = []Reading{
			{Quantity: "co2", Value: float64(e.CO2), Unit: PPM},
			{Quantity: "temperature", Value: round(celsius(e.Temperature), 2), Unit: Celsius},
			{Quantity: "humidity", Value: round(percentRH(e.Humidity), 2), Unit: Percent},
		}
		fresh = true
		return nil
	}); err != nil {
		return nil, err
	}
	if fresh {
		for i, lim := range [][2]float64{{0, scd4xMaxPPM}, {scd4xMinC, scd4xMaxC}, {0, 100}} {
			if err := d.c.check(out[i], lim[0], lim[1]); err != nil {
				return nil, err
			}
		}
		d.c.mu.Lock()
		d.last, d.lastAt = out, d.now()
		d.c.mu.Unlock()
	}
	return append([]Reading(nil), out...), nil
}

func scd4xDriver() DriverInfo {
	return DriverInfo{
		Name: "scd4x", Chip: "Sensirion SCD40/SCD41: CO₂, temperature, humidity", Bus: "i2c", Addresses: []uint16{SCD4xAddr},
		Quantities: []Reading{{Quantity: "co2", Unit: PPM}, {Quantity: "temperature", Unit: Celsius}, {Quantity: "humidity", Unit: Percent}},
		// The first measurement is ready 5 s after start-up and periph.io
		// polls for it once a second: give it room.
		MinTimeout: 7 * time.Second,
		Open:       func(o Opening) (Sensor, error) { return NewSCD4x(o.I2C, o.Bus, o.Addr, o.Now) },
	}
}
