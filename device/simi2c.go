package device

// The sim board's emulated I²C bus: register-map emulations of a few
// chips, built from the fixtures the drivers' tests use, so that `vigil
// init` and `vigil scan` can be tried, and tested end to end, without a
// board. It is a simulation and says so: the bus is named in errors as
// emulated, and only the sim board (device.board = "sim" or --board sim)
// uses it.

import (
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"

	"periph.io/x/conn/v3/i2c"
	"periph.io/x/conn/v3/physic"
)

// SimI2CEnv names the environment variable that gives the sim board an
// emulated I²C bus: a comma-separated list of CHIP@ADDRESS, as in
//
//	VIGIL_SIM_I2C=bme280@0x76,bmp280@0x77
//
// CHIP is one of SimI2CChips. The bus is named SimI2CBus ("1", the
// Raspberry Pi's header bus, so what `vigil init` writes on the sim board
// is what it writes on a Pi). Only the sim board reads it; the variable is
// passed in by the command line (SimI2CFrom), never read by package device.
const SimI2CEnv = "VIGIL_SIM_I2C"

// SimI2CBus is the emulated bus's name.
const SimI2CBus = "1"

// SimI2CChips are the chips the emulated bus can hold.
func SimI2CChips() []string { return []string{"bme280", "bmp280", "tmp102"} }

// ErrSimNACK is what the emulated bus answers at an address no emulated
// chip holds, as i2c-dev answers a NACK.
var ErrSimNACK = errors.New("emulated i2c bus: remote I/O error (no chip at this address)")

// SimI2C is the emulated bus: it implements I2CBuses (one bus, SimI2CBus)
// and i2c.Bus. Safe for concurrent use.
type SimI2C struct {
	spec  string
	mu    sync.Mutex
	chips map[uint16]*simChip
}

var (
	_ I2CBuses = (*SimI2C)(nil)
	_ i2c.Bus  = (*SimI2C)(nil)
)

// SimI2CFrom returns the emulated bus getenv(SimI2CEnv) describes, or nil
// when it is not set.
func SimI2CFrom(getenv func(string) string) (*SimI2C, error) {
	if getenv == nil {
		return nil, nil
	}
	v := strings.TrimSpace(getenv(SimI2CEnv))
	if v == "" {
		return nil, nil
	}
	return NewSimI2C(v)
}

// NewSimI2C returns an emulated bus holding the chips spec lists
// ("bme280@0x76,bmp280@0x77").
func NewSimI2C(spec string) (*SimI2C, error) {
	b := &SimI2C{spec: spec, chips: map[uint16]*simChip{}}
	for _, item := range strings.Split(spec, ",") {
		item = strings.TrimSpace(item)
		name, a, ok := strings.Cut(item, "@")
		if !ok {
			return nil, fmt.Errorf("%s: %q: want CHIP@ADDRESS, as in bme280@0x76", SimI2CEnv, item)
		}
		addr, err := strconv.ParseUint(a, 0, 8)
		if err != nil || addr < 0x03 || addr > 0x77 {
			return nil, fmt.Errorf("%s: %q: address %q: want an I²C address from 0x03 to 0x77, as in 0x76", SimI2CEnv, item, a)
		}
		if _, dup := b.chips[uint16(addr)]; dup {
			return nil, fmt.Errorf("%s: %q: two chips at 0x%02x", SimI2CEnv, item, addr)
		}
		c, ok := newSimChip(name)
		if !ok {
			return nil, fmt.Errorf("%s: %q: chip %q: want one of %s", SimI2CEnv, item, name, strings.Join(SimI2CChips(), ", "))
		}
		b.chips[uint16(addr)] = c
	}
	return b, nil
}

// I2CBuses returns the one emulated bus.
func (b *SimI2C) I2CBuses() ([]string, error) { return []string{SimI2CBus}, nil }

// I2C returns the emulated bus by its name ("1", "I2C1", "/dev/i2c-1").
func (b *SimI2C) I2C(name string) (i2c.Bus, error) {
	if I2CBusKey(name) != SimI2CBus {
		return nil, fmt.Errorf("i2c bus %s: not found (buses here: %s, emulated by %s=%s)", name, SimI2CBus, SimI2CEnv, b.spec)
	}
	return b, nil
}

// String names the bus.
func (b *SimI2C) String() string { return "sim-i2c (" + SimI2CEnv + "=" + b.spec + ")" }

// SetSpeed accepts any speed.
func (b *SimI2C) SetSpeed(physic.Frequency) error { return nil }

// Tx runs one transaction on the chip at addr.
func (b *SimI2C) Tx(addr uint16, w, r []byte) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	c, ok := b.chips[addr]
	if !ok {
		return ErrSimNACK
	}
	c.tx(w, r)
	return nil
}

// simChip is a register file: a write sets the register pointer (its
// first byte) and writes the registers that follow, a read returns
// successive registers from the pointer. Bosch chips write register and
// value pairs (BME280 datasheet §6.2.1); 16-bit TI registers are read and
// written two bytes at a time from their pointer.
type simChip struct {
	regs     [256]byte
	width    int    // bytes per register: 1 (Bosch) or 2 (TI)
	pairs    bool   // a write is register, value pairs
	writable []byte // registers a write may change; the others are read-only
	ptr      byte
	// Bits of a 16-bit register that read the same whatever is written:
	// mask, and their value (the TMP102's R1 R0 and bits 3:0).
	fixedMask, fixedBits map[byte]uint16
}

func newSimChip(name string) (*simChip, bool) {
	switch name {
	case "bme280", "bmp280":
		// The worked example of the BMP280 datasheet §3.12 (datasheetCal),
		// measuring the raw values that give 25.08 °C and 1006.53 hPa.
		c := &simChip{width: 1, pairs: true, writable: []byte{0xE0, 0xF2, 0xF4, 0xF5}}
		tp, h := datasheetCal.regs()
		copy(c.regs[0x88:], tp[:])
		c.regs[0xD0] = 0x60
		if name == "bmp280" {
			c.regs[0xD0] = 0x58
		} else {
			copy(c.regs[0xE1:], h[:])
		}
		hum := uint16(0x6A50)
		if name == "bmp280" {
			hum = 0x8000 // the BMP280's humidity registers read 0x8000, "skipped"
		}
		copy(c.regs[0xF7:], bmeData(519888, 415148, hum))
		return c, true
	case "tmp102":
		// Power-up values (TMP102 datasheet §7.5.3): configuration 0x60A0,
		// T_LOW 75 °C, T_HIGH 80 °C; the temperature is 25 °C.
		c := &simChip{width: 2, writable: []byte{0x01, 0x02, 0x03},
			fixedMask: map[byte]uint16{0x01: tmp102ConfigMask}, fixedBits: map[byte]uint16{0x01: tmp102ConfigFixed}}
		for reg, v := range map[byte]uint16{0x00: 0x1900, 0x01: 0x60A0, 0x02: 0x4B00, 0x03: 0x5000} {
			binary.BigEndian.PutUint16(c.regs[2*int(reg):], v)
		}
		return c, true
	}
	return nil, false
}

func (c *simChip) tx(w, r []byte) {
	if len(w) > 0 {
		c.ptr = w[0]
		switch {
		case c.pairs:
			for i := 0; i+1 < len(w); i += 2 {
				if slices.Contains(c.writable, w[i]) {
					c.regs[w[i]] = w[i+1]
				}
			}
		case len(w) == 1+c.width && slices.Contains(c.writable, w[0]):
			v := binary.BigEndian.Uint16(w[1:])
			if m, ok := c.fixedMask[w[0]]; ok {
				v = v&^m | c.fixedBits[w[0]]
			}
			binary.BigEndian.PutUint16(c.regs[2*int(w[0]):], v)
		}
	}
	if c.width == 2 { // a TI chip repeats its register
		for i := range r {
			r[i] = c.regs[(2*int(c.ptr&0x7F)+i%2)&0xFF]
		}
		return
	}
	for i := range r {
		r[i] = c.regs[byte(int(c.ptr)+i)]
	}
}

// The recorded BME280 fixture: the drivers' tests and the emulated bus
// read the same registers.

// bmeCal is a BME280 calibration set (datasheet §4.2.2).
type bmeCal struct {
	T1                             uint16
	T2, T3                         int16
	P1                             uint16
	P2, P3, P4, P5, P6, P7, P8, P9 int16
	H1                             uint8
	H2                             int16
	H3                             uint8
	H4, H5                         int16
	H6                             int8
}

// datasheetCal is the worked example of the BMP280 datasheet §3.12 (the
// BME280 uses the same temperature and pressure compensation); the humidity
// trimming is a typical BME280's.
var datasheetCal = bmeCal{
	T1: 27504, T2: 26435, T3: -1000,
	P1: 36477, P2: -10685, P3: 3024, P4: 2855, P5: 140, P6: -7, P7: 15500, P8: -14600, P9: 6000,
	H1: 75, H2: 362, H3: 0, H4: 313, H5: 50, H6: 30,
}

// regs returns the calibration registers 0x88..0xA1 and 0xE1..0xE7 as the
// chip lays them out.
func (c bmeCal) regs() (tp [26]byte, h [7]byte) {
	le := binary.LittleEndian
	le.PutUint16(tp[0:], c.T1)
	for i, v := range []int16{c.T2, c.T3} {
		le.PutUint16(tp[2+2*i:], uint16(v))
	}
	le.PutUint16(tp[6:], c.P1)
	for i, v := range []int16{c.P2, c.P3, c.P4, c.P5, c.P6, c.P7, c.P8, c.P9} {
		le.PutUint16(tp[8+2*i:], uint16(v))
	}
	tp[25] = c.H1
	le.PutUint16(h[0:], uint16(c.H2))
	h[2] = c.H3
	h[3] = byte(c.H4 >> 4)
	h[4] = byte(c.H4&0xF) | byte(c.H5&0xF)<<4
	h[5] = byte(c.H5 >> 4)
	h[6] = byte(c.H6)
	return tp, h
}

// bmeData returns the burst-read registers 0xF7..0xFE for raw ADC values.
func bmeData(adcT, adcP uint32, adcH uint16) []byte {
	return []byte{
		byte(adcP >> 12), byte(adcP >> 4), byte(adcP << 4),
		byte(adcT >> 12), byte(adcT >> 4), byte(adcT << 4),
		byte(adcH >> 8), byte(adcH),
	}
}
