package device

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strconv"

	"periph.io/x/conn/v3/i2c"
	"periph.io/x/conn/v3/physic"
	"periph.io/x/devices/v3/ads1x15"
)

// ADS1x15Addr is the ADS1015/ADS1115 address with ADDR to GND; ADDR to VDD,
// SDA or SCL gives 0x49, 0x4A or 0x4B (ADS111x datasheet, table "ADDR Pin Connection and Corresponding Slave
// Address").
const ADS1x15Addr = 0x48

// ADS1x15Gains are the full-scale ranges of the programmable gain amplifier
// in volts (ADS111x datasheet, "Programmable Gain Amplifier"); ADS1x15DefaultGain is the one used
// when none is configured.
var ADS1x15Gains = []float64{6.144, 4.096, 2.048, 1.024, 0.512, 0.256}

const ADS1x15DefaultGain = 4.096

// ADS1x15 is a Texas Instruments ADS1015 (12-bit) or ADS1115 (16-bit)
// analog-to-digital converter read through periph.io's ads1x15 driver:
// single-shot, single-ended conversions at 128 samples/s of the configured
// channels, reported as "ch0".."ch3" in volts.
//
// periph.io waits exactly one nominal conversion time before reading the
// result, but the chip's oscillator may run 10 % slow (datasheet, electrical
// characteristics: data rate variation), which would return the previous channel's value. Each
// channel is therefore converted twice and the second result kept: the
// second conversion can only start after the first one has finished.
type ADS1x15 struct {
	c      *chip
	chans  []int
	pins   []ads1x15.PinADC
	is1015 bool
}

var _ Sensor = (*ADS1x15)(nil)

// NewADS1115 opens an ADS1115 at addr (0x48-0x4B, 0 for 0x48) on a borrowed
// I²C bus to read the given single-ended channels (0-3; none means [0]) with
// a full-scale range of gain volts (one of ADS1x15Gains; 0 means 4.096).
// The chip is not touched until the first Sense: it has no ID register, and
// configuring it is part of every conversion.
func NewADS1115(bus i2c.Bus, busName string, addr uint16, channels []int, gain float64) (*ADS1x15, error) {
	return newADS1x15("ads1115", bus, busName, addr, channels, gain)
}

// NewADS1015 opens an ADS1015 like NewADS1115.
func NewADS1015(bus i2c.Bus, busName string, addr uint16, channels []int, gain float64) (*ADS1x15, error) {
	return newADS1x15("ads1015", bus, busName, addr, channels, gain)
}

func newADS1x15(name string, bus i2c.Bus, busName string, addr uint16, channels []int, gain float64) (*ADS1x15, error) {
	if addr == 0 {
		addr = ADS1x15Addr
	}
	if len(channels) == 0 {
		channels = []int{0}
	}
	if gain == 0 {
		gain = ADS1x15DefaultGain
	}
	c := newChip(name, busName, bus, addr)
	if addr < 0x48 || addr > 0x4B {
		return nil, fmt.Errorf("%s: %s: the %s answers at 0x48-0x4b only", c.chip, c.where, name)
	}
	if !slices.Contains(ADS1x15Gains, gain) {
		return nil, fmt.Errorf("%s: %s: gain %g is not one of %v", c.chip, c.where, gain, ADS1x15Gains)
	}
	d := &ADS1x15{c: c, is1015: name == "ads1015"}
	var dev *ads1x15.Dev
	var err error
	if d.is1015 {
		dev, err = ads1x15.NewADS1015(c.bus, &ads1x15.Opts{I2cAddress: addr})
	} else {
		dev, err = ads1x15.NewADS1115(c.bus, &ads1x15.Opts{I2cAddress: addr})
	}
	if err != nil {
		return nil, c.errorf("init", err)
	}
	fullScale := physic.ElectricPotential(math.Round(gain*1000)) * physic.MilliVolt
	for _, ch := range channels {
		if ch < 0 || ch > 3 {
			return nil, fmt.Errorf("%s: %s: channel %d: want 0-3", c.chip, c.where, ch)
		}
		if slices.Contains(d.chans, ch) {
			return nil, fmt.Errorf("%s: %s: channel %d listed twice", c.chip, c.where, ch)
		}
		pin, err := dev.PinForChannel(ads1x15.Channel0+ads1x15.Channel(ch), fullScale, 100*physic.Hertz, ads1x15.BestQuality)
		if err != nil {
			return nil, c.errorf("init", err)
		}
		d.chans = append(d.chans, ch)
		d.pins = append(d.pins, pin)
	}
	return d, nil
}

// Sense converts each configured channel and returns its voltage.
func (d *ADS1x15) Sense(ctx context.Context) ([]Reading, error) {
	out := make([]Reading, 0, len(d.pins))
	for i, pin := range d.pins {
		q := "ch" + strconv.Itoa(d.chans[i])
		var raw int32
		if err := d.c.do(ctx, "read "+q, func() error {
			if _, err := pin.Read(); err != nil { // may be the previous conversion
				return err
			}
			s, err := pin.Read()
			raw = s.Raw
			out = append(out, Reading{Quantity: q, Value: round(volts(s.V), 6), Unit: Volt})
			return err
		}); err != nil {
			return nil, err
		}
		// The ADS1015's 12-bit result is left-justified: bits 3-0 of the
		// conversion register always read 0 (ADS101x datasheet, "Conversion Register").
		if d.is1015 && raw&0xF != 0 {
			return nil, fmt.Errorf("%s: %s: implausible %s conversion 0x%04x: bits 3-0 set (is it an ADS1115?)", d.c.chip, d.c.where, q, uint16(raw))
		}
	}
	return out, nil
}

func ads1015Driver() DriverInfo {
	return DriverInfo{
		Name: "ads1015", Chip: "Texas Instruments ADS1015: 12-bit ADC, channels ch0-ch3 in volts", Bus: "i2c", Addresses: addrRange(0x48, 0x4B), Keys: []string{"channels", "gain"},
		Quantities: adcVolts(4),
		Open:       func(o Opening) (Sensor, error) { return NewADS1015(o.I2C, o.Bus, o.Addr, o.channelNumbers(), o.Gain) },
		Simulate:   simChannels,
	}
}

func ads1115Driver() DriverInfo {
	return DriverInfo{
		Name: "ads1115", Chip: "Texas Instruments ADS1115: 16-bit ADC, channels ch0-ch3 in volts", Bus: "i2c", Addresses: addrRange(0x48, 0x4B), Keys: []string{"channels", "gain"},
		Quantities: adcVolts(4),
		Open:       func(o Opening) (Sensor, error) { return NewADS1115(o.I2C, o.Bus, o.Addr, o.channelNumbers(), o.Gain) },
		Simulate:   simChannels,
	}
}

// simChannels limits a simulated ADS1x15 to its configured channels.
func simChannels(s Spec, sim *Sim) Sensor {
	q, _ := s.Readings()
	names := make([]string, len(q))
	for i, r := range q {
		names[i] = r.Quantity
	}
	sim.Limit(names...)
	return sim
}
