package device

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"strings"

	"periph.io/x/conn/v3/physic"
	"periph.io/x/conn/v3/spi"
)

// MAX31855 is a Maxim MAX31855 cold-junction compensated
// thermocouple-to-digital converter on SPI. It converts continuously; each
// Sense reads its 32-bit frame (datasheet Table 2, "Memory Map—Bit Weights
// and Functions") and reports the thermocouple temperature and the cold
// junction (the chip's own) temperature. A fault the chip detects (open
// thermocouple, short to GND or VCC) is a reading error that names it and
// how to fix it.
type MAX31855 struct {
	c    *chip
	conn spi.Conn
}

var _ Sensor = (*MAX31855)(nil)

// MAX31855 serial interface: read-only, data shifted out on the falling
// edge of SCK, so SPI mode 0; SCK up to 5 MHz (datasheet, Electrical
// Characteristics "Serial Clock Frequency"). 1 MHz leaves room for long
// wires.
const (
	max31855Speed = physic.MegaHertz
	max31855Mode  = spi.Mode0
)

// Frame bits (datasheet Table 3, "Memory Map—Descriptions").
const (
	max31855OC       = 1 << 0 // D0: thermocouple open (no connections)
	max31855SCG      = 1 << 1 // D1: thermocouple short-circuited to GND
	max31855SCV      = 1 << 2 // D2: thermocouple short-circuited to VCC
	max31855Reserved = 1<<3 | 1<<17
	max31855FaultBit = 1 << 16 // D16: any of SCV, SCG, OC
)

// Ranges: the thermocouple reading spans -270 to +1800 °C (datasheet,
// General Description); the cold-junction format Table 5 ("Reference
// Junction Temperature Data Format") spans -55 to +127 °C.
const (
	max31855MinC, max31855MaxC     = -270, 1800
	max31855MinCJC, max31855MaxCJC = -55, 127
)

// max31855Faults are the fault bits with what they mean and what to do.
var max31855Faults = []faultBit{
	{max31855OC, "thermocouple open: check the wires at T+ and T−"},
	{max31855SCG, "thermocouple shorted to GND: check the insulation of the T+ and T− wires, and use an ungrounded (insulated-junction) probe"},
	{max31855SCV, "thermocouple shorted to VCC: check that the T+ and T− wires touch no supply voltage"},
}

// NewMAX31855 connects to a MAX31855 on a borrowed SPI port. portName
// ("0.0") is used in errors only. The chip has nothing to configure, so
// nothing is sent until the first Sense.
func NewMAX31855(port spi.Port, portName string) (*MAX31855, error) {
	c, conn, err := spiChip("max31855", port, portName, max31855Speed, max31855Mode)
	if err != nil {
		return nil, err
	}
	return &MAX31855{c: c, conn: conn}, nil
}

// Sense reads the frame and returns the thermocouple and cold-junction
// temperatures, or the faults it reports.
func (d *MAX31855) Sense(ctx context.Context) ([]Reading, error) {
	var b [4]byte
	if err := d.c.do(ctx, "read", func() error { return d.conn.Tx(nil, b[:]) }); err != nil {
		return nil, err
	}
	v := binary.BigEndian.Uint32(b[:])
	if v&max31855Reserved != 0 {
		// D17 and D3 always read 0: all ones is a floating SO line.
		return nil, fmt.Errorf("%s: %s: implausible frame 0x%08x: reserved bits D17 and D3 are set (check the SO/MISO wire, CS and 3.3 V)", d.c.chip, d.c.where, v)
	}
	if err := max31855Fault(v); err != nil {
		return nil, fmt.Errorf("%s: %s: %w", d.c.chip, d.c.where, err)
	}
	// D31-D18: signed 14-bit thermocouple temperature, 0.25 °C per LSB
	// (Table 4); D15-D4: signed 12-bit cold-junction temperature, 0.0625 °C
	// per LSB (Table 5).
	tc := float64(int32(v)>>18) * 0.25
	cj := float64(int32(v<<16)>>20) * 0.0625
	out := []Reading{
		{Quantity: "temperature", Value: tc, Unit: Celsius},
		{Quantity: "cold_junction", Value: cj, Unit: Celsius},
	}
	if err := d.c.check(out[0], max31855MinC, max31855MaxC); err != nil {
		return nil, err
	}
	if err := d.c.check(out[1], max31855MinCJC, max31855MaxCJC); err != nil {
		return nil, err
	}
	return out, nil
}

// max31855Fault returns the faults a frame reports, nil if none.
func max31855Fault(v uint32) error {
	if err := faults(v, max31855Faults); err != nil {
		return err
	}
	if v&max31855FaultBit != 0 {
		return errors.New("fault bit D16 set without a cause bit: check the wiring")
	}
	return nil
}

// faultBit is a fault bit of a status register and what it means, with
// what to check.
type faultBit struct {
	bit  uint32
	what string
}

// faults returns the meanings of the bits of table set in v, joined by
// "; ", or nil when none is set.
func faults(v uint32, table []faultBit) error {
	var msgs []string
	for _, f := range table {
		if v&f.bit != 0 {
			msgs = append(msgs, f.what)
		}
	}
	if len(msgs) == 0 {
		return nil
	}
	return errors.New(strings.Join(msgs, "; "))
}

// spiChip connects to a chip on a borrowed SPI port with 8-bit words.
func spiChip(name string, port spi.Port, portName string, f physic.Frequency, mode spi.Mode) (*chip, spi.Conn, error) {
	c := &chip{at: at{name, "spi " + portName}}
	conn, err := port.Connect(f, mode, 8)
	if err != nil {
		return nil, nil, c.errorf("connect", err)
	}
	return c, conn, nil
}

func max31855Driver() DriverInfo {
	return DriverInfo{
		Name: "max31855", Chip: "Maxim MAX31855: thermocouple and cold-junction temperature", Bus: "spi",
		Quantities: []Reading{{Quantity: "temperature", Unit: Celsius}, {Quantity: "cold_junction", Unit: Celsius}},
		Open:       func(o Opening) (Sensor, error) { return NewMAX31855(o.SPI, o.Bus) },
	}
}
