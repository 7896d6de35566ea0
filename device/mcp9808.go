package device

import (
	"context"
	"encoding/binary"
	"fmt"

	"periph.io/x/conn/v3/i2c"
	"periph.io/x/devices/v3/mcp9808"
)

// MCP9808Addr is the MCP9808's default address (A2..A0 to GND); A0..A2
// select 0x18-0x1F (datasheet, "Address Pins").
const MCP9808Addr = 0x18

// MCP9808 is a Microchip MCP9808 temperature sensor (±0.25 °C, 0.0625 °C
// resolution), read through periph.io's mcp9808 driver in continuous
// conversion mode.
type MCP9808 struct {
	c   *chip
	dev *mcp9808.Dev
}

var _ Sensor = (*MCP9808)(nil)

// Operating range, MCP9808 datasheet: -40 to +125 °C.
const mcp9808MinC, mcp9808MaxC = -40, 125

// Identification registers, datasheet §5.1.4 and §5.1.5.
const (
	mcp9808RegManufacturer = 0x06 // reads 0x0054
	mcp9808RegDevice       = 0x07 // upper byte 0x04, lower byte the revision
)

// NewMCP9808 opens an MCP9808 at addr (0x18-0x1F, 0 for 0x18) on a borrowed
// I²C bus. It checks the manufacturer and device ID first, so another chip
// at the address is an error rather than a stream of odd temperatures.
func NewMCP9808(bus i2c.Bus, busName string, addr uint16) (*MCP9808, error) {
	if addr == 0 {
		addr = MCP9808Addr
	}
	c := newChip("mcp9808", busName, bus, addr)
	var dev *mcp9808.Dev
	if err := c.open(func() error {
		var id [2]byte
		if err := c.bus.Tx(addr, []byte{mcp9808RegManufacturer}, id[:]); err != nil {
			return err
		}
		if m := binary.BigEndian.Uint16(id[:]); m != 0x0054 {
			return fmt.Errorf("manufacturer id 0x%04x, want 0x0054: not an MCP9808", m)
		}
		if err := c.bus.Tx(addr, []byte{mcp9808RegDevice}, id[:]); err != nil {
			return err
		}
		if id[0] != 0x04 {
			return fmt.Errorf("device id 0x%02x, want 0x04: not an MCP9808", id[0])
		}
		var err error
		dev, err = mcp9808.New(c.bus, &mcp9808.Opts{Addr: int(addr), Res: mcp9808.Maximum})
		return err
	}); err != nil {
		return nil, err
	}
	return &MCP9808{c: c, dev: dev}, nil
}

// Sense reads the ambient temperature register.
func (d *MCP9808) Sense(ctx context.Context) ([]Reading, error) {
	var r Reading
	if err := d.c.do(ctx, "read", func() error {
		t, err := d.dev.SenseTemp()
		r = Reading{Quantity: "temperature", Value: round(celsius(t), 4), Unit: Celsius}
		return err
	}); err != nil {
		return nil, err
	}
	if err := d.c.check(r, mcp9808MinC, mcp9808MaxC); err != nil {
		return nil, err
	}
	return []Reading{r}, nil
}

func mcp9808Driver() DriverInfo {
	return DriverInfo{
		Name: "mcp9808", Chip: "Microchip MCP9808: temperature ±0.25 °C", Bus: "i2c", Addresses: addrRange(0x18, 0x1F),
		Quantities: []Reading{{Quantity: "temperature", Unit: Celsius}},
		Resolution: map[string]float64{"temperature": 0.0625}, // datasheet 5.2.4, the power-on resolution
		Open:       func(o Opening) (Sensor, error) { return NewMCP9808(o.I2C, o.Bus, o.Addr) },
	}
}
