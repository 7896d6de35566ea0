package device

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"

	"periph.io/x/conn/v3/physic"
	"periph.io/x/conn/v3/spi"
)

// ADCChannel is one single-ended input of an ADC and what it measures: the
// input's voltage, mapped linearly from Volts[0]..Volts[1] to
// Values[0]..Values[1] of Quantity in Unit. A soil probe giving 0-3.3 V for
// 0-100 % is {0, "soil", Percent, [0, 3.3], [0, 100]}; the plain voltage of
// channel 2 is {2, "ch2", Volt, [0, 1], [0, 1]}.
type ADCChannel struct {
	Channel  int
	Quantity string
	Unit     Unit
	Volts    [2]float64
	Values   [2]float64
}

// Reading maps a voltage to the channel's reading: the line through
// (Volts[0], Values[0]) and (Volts[1], Values[1]), as a two-point
// calibration draws it.
func (c ADCChannel) Reading(v float64) Reading {
	x := TwoPoint(c.Volts[0], c.Values[0], c.Volts[1], c.Values[1]).Apply(v)
	return Reading{Quantity: c.Quantity, Value: round(x, 4), Unit: c.Unit}
}

// VoltsChannel is channel ch read in volts as "chN".
func VoltsChannel(ch int) ADCChannel {
	return ADCChannel{Channel: ch, Quantity: "ch" + strconv.Itoa(ch), Unit: Volt, Volts: [2]float64{0, 1}, Values: [2]float64{0, 1}}
}

// MCP3008 is a Microchip MCP3008 (10-bit) or MCP3208 (12-bit) 8-channel
// ADC on SPI. Each Sense converts the configured single-ended channels one
// after the other and maps each voltage to its channel's quantity.
type MCP3008 struct {
	c     *chip
	conn  spi.Conn
	bits  int     // 10 or 12
	vref  float64 // volts at VREF
	chans []ADCChannel
}

var _ Sensor = (*MCP3008)(nil)

// Serial interface: SPI mode 0,0 (or 1,1); the clock may run at 1.35 MHz
// (MCP3008) and 1 MHz (MCP3208) at VDD = 2.7 V, more at 5 V (datasheets,
// Electrical Characteristics "Clock Frequency"). 1 MHz suits both at 3.3 V.
const (
	mcp3008Speed = physic.MegaHertz
	mcp3008Mode  = spi.Mode0
	mcp3008MaxV  = 5.5 // VREF ≤ VDD ≤ 5.5 V (Electrical Characteristics)
)

// NewMCP3008 connects to an MCP3008 on a borrowed SPI port with vref volts
// at VREF (usually tied to VDD: 3.3 V) to read the given channels (0-7,
// each at most once, with distinct quantities). portName ("0.0") is used in
// errors only. The chip has nothing to configure.
func NewMCP3008(port spi.Port, portName string, vref float64, chans []ADCChannel) (*MCP3008, error) {
	return newMCP3x08("mcp3008", 10, port, portName, vref, chans)
}

// NewMCP3208 connects to an MCP3208 like NewMCP3008.
func NewMCP3208(port spi.Port, portName string, vref float64, chans []ADCChannel) (*MCP3008, error) {
	return newMCP3x08("mcp3208", 12, port, portName, vref, chans)
}

func newMCP3x08(name string, bits int, port spi.Port, portName string, vref float64, chans []ADCChannel) (*MCP3008, error) {
	a := at{name, "spi " + portName}
	if !(vref > 0 && vref <= mcp3008MaxV) {
		return nil, fmt.Errorf("%s: %s: vref %g V: want more than 0 and at most %g V", a.chip, a.where, vref, mcp3008MaxV)
	}
	if len(chans) == 0 {
		return nil, fmt.Errorf("%s: %s: no channels to read", a.chip, a.where)
	}
	for i, ch := range chans {
		switch {
		case ch.Channel < 0 || ch.Channel > 7:
			return nil, fmt.Errorf("%s: %s: channel %d: want 0-7", a.chip, a.where, ch.Channel)
		case ch.Quantity == "":
			return nil, fmt.Errorf("%s: %s: channel %d has no quantity", a.chip, a.where, ch.Channel)
		case ch.Volts[0] == ch.Volts[1]:
			return nil, fmt.Errorf("%s: %s: channel %d: volts %g to %g is no range", a.chip, a.where, ch.Channel, ch.Volts[0], ch.Volts[1])
		}
		for _, prev := range chans[:i] {
			if prev.Channel == ch.Channel {
				return nil, fmt.Errorf("%s: %s: channel %d listed twice", a.chip, a.where, ch.Channel)
			}
			if prev.Quantity == ch.Quantity {
				return nil, fmt.Errorf("%s: %s: quantity %q used by channels %d and %d", a.chip, a.where, ch.Quantity, prev.Channel, ch.Channel)
			}
		}
	}
	c, conn, err := spiChip(name, port, portName, mcp3008Speed, mcp3008Mode)
	if err != nil {
		return nil, err
	}
	return &MCP3008{c: c, conn: conn, bits: bits, vref: vref, chans: slices.Clone(chans)}, nil
}

// Sense converts each channel and returns its reading.
func (d *MCP3008) Sense(ctx context.Context) ([]Reading, error) {
	out := make([]Reading, 0, len(d.chans))
	for _, ch := range d.chans {
		var code int
		if err := d.c.do(ctx, "read ch"+strconv.Itoa(ch.Channel), func() (err error) {
			code, err = d.convert(ch.Channel)
			return err
		}); err != nil {
			return nil, err
		}
		// Equation 4-1: code = 2ⁿ · VIN / VREF.
		v := float64(code) * d.vref / float64(int(1)<<d.bits)
		r := ch.Reading(v)
		if math.IsNaN(r.Value) || math.IsInf(r.Value, 0) {
			return nil, fmt.Errorf("%s: %s: ch%d: %g V maps to %v", d.c.chip, d.c.where, ch.Channel, v, r.Value)
		}
		out = append(out, r)
	}
	return out, nil
}

// convert runs one single-ended conversion in three 8-bit transfers
// (datasheets §6.1, "Using the MCP3004/3008 (MCP3204/3208) with
// Microcontroller (MCU) SPI Ports", Figure 6-1). The MCP3008 takes a start
// bit, then SGL/DIFF = 1 and D2-D0 (Table 5-2, "Configuration Bits") and
// answers a null bit and B9-B0; the MCP3208 takes the start bit, SGL/DIFF
// and D2 in the first byte and D1-D0 in the second, and answers a null bit
// and B11-B0. The null bit is always 0: a 1 there means nothing drives
// DOUT.
func (d *MCP3008) convert(ch int) (int, error) {
	var w [3]byte
	var r [3]byte
	var null byte
	var mask int
	if d.bits == 10 {
		w = [3]byte{0x01, 0x80 | byte(ch)<<4, 0x00}
		null, mask = 1<<2, 0x3FF
	} else {
		w = [3]byte{0x06 | byte(ch)>>2, byte(ch&3) << 6, 0x00}
		null, mask = 1<<4, 0xFFF
	}
	if err := d.conn.Tx(w[:], r[:]); err != nil {
		return 0, err
	}
	if r[1]&null != 0 {
		return 0, errors.New("no answer (the null bit reads 1): check CS, DOUT (MISO) and power")
	}
	return (int(r[1])<<8 | int(r[2])) & mask, nil
}

func mcp3008Driver() DriverInfo {
	return DriverInfo{
		Name: "mcp3008", Chip: "Microchip MCP3008: 10-bit ADC, channels ch0-ch7 in volts or scaled to a quantity", Bus: "spi", Keys: []string{"channels", "vref"},
		Quantities: adcVolts(8),
		Open:       func(o Opening) (Sensor, error) { return NewMCP3008(o.SPI, o.Bus, o.VRef, o.Channels) },
		Readings:   scaledReadings,
		Simulate:   simScaled,
	}
}

func mcp3208Driver() DriverInfo {
	return DriverInfo{
		Name: "mcp3208", Chip: "Microchip MCP3208: 12-bit ADC, channels ch0-ch7 in volts or scaled to a quantity", Bus: "spi", Keys: []string{"channels", "vref"},
		Quantities: adcVolts(8),
		Open:       func(o Opening) (Sensor, error) { return NewMCP3208(o.SPI, o.Bus, o.VRef, o.Channels) },
		Readings:   scaledReadings,
		Simulate:   simScaled,
	}
}

// scaledReadings are an MCP3x08's configured channels: volts as chN, or
// the quantity a channel is scaled to.
func scaledReadings(s Spec) ([]Reading, bool) {
	out := make([]Reading, len(s.Channels))
	for i, ch := range s.Channels {
		out[i] = Reading{Quantity: ch.Quantity, Unit: ch.Unit}
	}
	return out, true
}

// simScaled is a simulated MCP3x08: the simulation gives each input a
// voltage; the channel's scale maps it, as the driver does.
func simScaled(s Spec, sim *Sim) Sensor {
	volts := make([]Reading, len(s.Channels))
	for i, ch := range s.Channels {
		volts[i] = Reading{Quantity: VoltsChannel(ch.Channel).Quantity, Unit: Volt}
	}
	sim.Produce(volts)
	return simADC{sim: sim, chans: s.Channels}
}

// simADC is a simulated MCP3008/MCP3208: simulated voltages, scaled.
type simADC struct {
	sim   *Sim
	chans []ADCChannel
}

func (a simADC) Sense(ctx context.Context) ([]Reading, error) {
	volts, err := a.sim.Sense(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]Reading, len(volts))
	for i, v := range volts {
		out[i] = a.chans[i].Reading(v.Value)
	}
	return out, nil
}
