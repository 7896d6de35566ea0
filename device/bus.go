package device

import (
	"context"
	"fmt"
	"math"
	"sync"

	"periph.io/x/conn/v3/i2c"
	"periph.io/x/conn/v3/physic"
)

// at names where a chip sits, for error messages: "bme280: i2c bus 1 addr
// 0x76: read: ...".
type at struct {
	chip  string // "bme280"
	where string // "i2c bus 1 addr 0x76", "spi 0.0", "w1 28-0316a2790eff"
}

func i2cAt(chip, bus string, addr uint16) at {
	return at{chip, fmt.Sprintf("i2c bus %s addr 0x%02x", bus, addr)}
}

// errorf returns "chip: where: op: err", wrapping err.
func (a at) errorf(op string, err error) error {
	return fmt.Errorf("%s: %s: %s: %w", a.chip, a.where, op, err)
}

// implausible reports a value outside the range the datasheet allows.
func (a at) implausible(quantity string, v, lo, hi float64, unit Unit) error {
	return fmt.Errorf("%s: %s: implausible %s %.4g %s (datasheet range %g to %g %s)", a.chip, a.where, quantity, v, unit, lo, hi, unit)
}

// check returns an error when a reading lies outside [lo, hi].
func (a at) check(r Reading, lo, hi float64) error {
	if r.Value < lo || r.Value > hi || math.IsNaN(r.Value) {
		return a.implausible(r.Quantity, r.Value, lo, hi, r.Unit)
	}
	return nil
}

// txErrBus wraps a borrowed bus and remembers the last error of a
// transaction. Several periph.io drivers replace the bus error by a fixed
// message ("failed to read ambient temperature"); the remembered error lets
// vigil report the cause instead (a NACK, a timeout). One per chip, used
// under the chip's mutex.
type txErrBus struct {
	i2c.Bus
	err error
}

func (b *txErrBus) Tx(addr uint16, w, r []byte) error {
	err := b.Bus.Tx(addr, w, r)
	if err != nil {
		b.err = err
	}
	return err
}

// reset forgets the last error; call before each operation.
func (b *txErrBus) reset() { b.err = nil }

// cause returns the bus error behind a driver error when there was one
// (the root cause, whatever the driver made of it), else the driver's own
// error.
func (b *txErrBus) cause(err error) error {
	if err != nil && b.err != nil {
		return b.err
	}
	return err
}

// chip holds what every wrapped driver shares: where it is, the bus it
// borrows and a mutex that keeps one operation at a time on the chip, also
// when an abandoned read (after a timeout) is still running.
type chip struct {
	at
	mu  sync.Mutex
	bus *txErrBus
}

func newChip(name, busName string, bus i2c.Bus, addr uint16) *chip {
	return &chip{at: i2cAt(name, busName, addr), bus: &txErrBus{Bus: bus}}
}

// do runs op under the chip's lock after checking ctx, and names the
// operation in its error.
func (c *chip) do(ctx context.Context, name string, op func() error) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := ctx.Err(); err != nil {
		return c.errorf(name, err)
	}
	if c.bus == nil { // SPI, and vigil's own drivers: the error is the cause
		if err := op(); err != nil {
			return c.errorf(name, err)
		}
		return nil
	}
	c.bus.reset()
	if err := op(); err != nil {
		return c.errorf(name, c.bus.cause(err))
	}
	return nil
}

// open runs a periph.io constructor the same way, without a context.
func (c *chip) open(op func() error) error {
	return c.do(context.Background(), "init", op)
}

// round rounds v to the given number of decimals: a driver reports no more
// digits than the chip resolves.
func round(v float64, decimals int) float64 {
	p := math.Pow10(decimals)
	return math.Round(v*p) / p
}

// Conversions from periph.io's fixed-point physical units.

func celsius(t physic.Temperature) float64 {
	return float64(t-physic.ZeroCelsius) / float64(physic.Celsius)
}

func percentRH(h physic.RelativeHumidity) float64 {
	return float64(h) / float64(physic.PercentRH)
}

func hectopascal(p physic.Pressure) float64 {
	return float64(p) / float64(100*physic.Pascal)
}

func volts(v physic.ElectricPotential) float64 {
	return float64(v) / float64(physic.Volt)
}
