package device

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"periph.io/x/conn/v3/i2c"
)

// Shared by vigil's own Sensirion drivers (SHT3x, SHT4x): both answer a
// measurement with two 16-bit words, each followed by its CRC-8, and both
// are soft-reset after a CRC failure so that a sensor left in a confused
// state by a glitch on the bus starts the next read clean.

// ErrCRC is a checksum that does not match the data it protects.
var ErrCRC = errors.New("crc mismatch")

// sensirionCRC8 is the CRC-8 Sensirion appends to every 16-bit word:
// polynomial 0x31 (x⁸ + x⁵ + x⁴ + 1), initialization 0xFF, no reflection,
// no final XOR (SHT3x-DIS datasheet §4.12, Table 20 "I2C CRC properties";
// SHT4x datasheet, "Checksum Calculation"). Example: CRC(0xBEEF) = 0x92.
func sensirionCRC8(b []byte) byte {
	crc := byte(0xFF)
	for _, x := range b {
		crc ^= x
		for range 8 {
			if crc&0x80 != 0 {
				crc = crc<<1 ^ 0x31
			} else {
				crc <<= 1
			}
		}
	}
	return crc
}

// sensirionWords checks the CRC of each 3-byte group (MSB, LSB, CRC) of b
// and returns the words; names name them in errors ("temperature").
func sensirionWords(b []byte, names ...string) ([]uint16, error) {
	words := make([]uint16, len(names))
	for i, name := range names {
		g := b[3*i : 3*i+3]
		if crc := sensirionCRC8(g[:2]); crc != g[2] {
			return nil, fmt.Errorf("%w in the %s word: got 0x%02x, computed 0x%02x", ErrCRC, name, g[2], crc)
		}
		words[i] = uint16(g[0])<<8 | uint16(g[1])
	}
	return words, nil
}

// sensirion is an SHT3x or SHT4x: the command that starts a single-shot
// measurement, how long it takes at most, and the soft-reset command.
type sensirion struct {
	c       *chip // without a txErrBus: these errors are the causes
	bus     i2c.Bus
	addr    uint16
	sleep   Sleep
	measure []byte
	tMeas   time.Duration
	reset   []byte
	tReset  time.Duration
}

// read triggers one measurement, waits for it, reads the six bytes and
// checks both CRCs. After a CRC failure it soft-resets the sensor and
// returns the CRC error (and the reset's, if that failed too).
func (s *sensirion) read(ctx context.Context) (st, srh uint16, err error) {
	err = s.c.do(ctx, "read", func() error {
		if err := s.bus.Tx(s.addr, s.measure, nil); err != nil {
			return err
		}
		if err := s.sleep(ctx, s.tMeas); err != nil {
			return err
		}
		var b [6]byte
		if err := s.bus.Tx(s.addr, nil, b[:]); err != nil {
			return err
		}
		w, err := sensirionWords(b[:], "temperature", "humidity")
		if err != nil {
			return errors.Join(err, s.softReset(ctx))
		}
		st, srh = w[0], w[1]
		return nil
	})
	return st, srh, err
}

// softReset sends the soft-reset command and waits for the sensor to come
// back.
func (s *sensirion) softReset(ctx context.Context) error {
	if err := s.bus.Tx(s.addr, s.reset, nil); err != nil {
		return fmt.Errorf("soft reset: %w", err)
	}
	return s.sleep(ctx, s.tReset)
}

// sensirionTemperature converts a raw temperature word to °C; the SHT3x and
// SHT4x share the formula (SHT3x-DIS datasheet §4.13; SHT4x datasheet,
// "Conversion of Signal Output"): T = -45 + 175 · S_T / (2¹⁶ - 1).
func sensirionTemperature(st uint16) float64 {
	return -45 + 175*float64(st)/65535
}

// newSensirion checks the address against the chip's and opens the chip
// state shared by both drivers.
func newSensirion(name string, bus i2c.Bus, busName string, addr uint16, addrs []uint16, sleep Sleep) (*sensirion, error) {
	if addr == 0 {
		addr = addrs[0]
	}
	c := &chip{at: i2cAt(name, busName, addr)}
	if !slices.Contains(addrs, addr) {
		return nil, fmt.Errorf("%s: %s: the %s answers at %s only", c.chip, c.where, name, hexList(addrs))
	}
	if sleep == nil {
		return nil, fmt.Errorf("%s: %s: no sleep function", c.chip, c.where)
	}
	return &sensirion{c: c, bus: bus, addr: addr, sleep: sleep}, nil
}

// hexList formats addresses as "0x44 or 0x45".
func hexList(addrs []uint16) string {
	s := ""
	for i, a := range addrs {
		switch {
		case i == 0:
		case i == len(addrs)-1:
			s += " or "
		default:
			s += ", "
		}
		s += fmt.Sprintf("0x%02x", a)
	}
	return s
}
