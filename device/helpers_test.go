package device

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"

	"periph.io/x/conn/v3/i2c/i2ctest"
)

// errNACK is what Linux's i2c-dev reports, through periph.io's sysfs bus,
// when a chip does not acknowledge its address or a byte.
var errNACK = errors.New("sysfs-i2c: remote I/O error")

// nackBus plays back the recorded transactions and then answers every
// further one with a NACK: a chip that stops responding mid-way (a loose
// wire, a brown-out). Close still fails unless every recorded op was used.
//
// Ops listed in nack are checked and consumed like the others but answered
// with a NACK: a chip that refuses one command and goes on.
type nackBus struct {
	i2ctest.Playback
	nack map[int]bool
}

func newNACKBus(ops ...i2ctest.IO) *nackBus {
	return &nackBus{Playback: i2ctest.Playback{Ops: ops, DontPanic: true}}
}

func (b *nackBus) Tx(addr uint16, w, r []byte) error {
	b.Lock()
	i := b.Count
	b.Unlock()
	if i >= len(b.Ops) {
		return errNACK
	}
	if err := b.Playback.Tx(addr, w, r); err != nil {
		return err
	}
	if b.nack[i] {
		return errNACK
	}
	return nil
}

func playback(ops ...i2ctest.IO) *i2ctest.Playback {
	return &i2ctest.Playback{Ops: ops, DontPanic: true}
}

// closer is a bus fake that reports unconsumed recorded operations.
type closer interface{ Close() error }

// mustConsume fails the test unless every recorded operation was used.
func mustConsume(t *testing.T, bus closer) {
	t.Helper()
	if err := bus.Close(); err != nil {
		t.Errorf("bus.Close() = %v, want nil (every recorded op consumed)", err)
	}
}

// wantReadings compares readings by quantity, value (within tol) and unit.
func wantReadings(t *testing.T, got []Reading, want []Reading, tol float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("got %d readings %v, want %d %v", len(got), got, len(want), want)
	}
	for i := range want {
		g, w := got[i], want[i]
		if g.Quantity != w.Quantity || g.Unit != w.Unit || math.Abs(g.Value-w.Value) > tol {
			t.Errorf("reading %d = %v, want %v (±%g)", i, g, w, tol)
		}
	}
}

// wantErr checks an error's prefix (chip, bus, address, operation) and that
// it mentions the given text.
func wantErr(t *testing.T, err error, prefix string, contains ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("err = nil, want %q...", prefix)
	}
	if !strings.HasPrefix(err.Error(), prefix) {
		t.Errorf("err = %q, want prefix %q", err, prefix)
	}
	for _, c := range contains {
		if !strings.Contains(err.Error(), c) {
			t.Errorf("err = %q, want it to mention %q", err, c)
		}
	}
}

// sensirionCRC is the CRC-8 of Sensirion and Aosong sensors (polynomial
// 0x31, init 0xFF), written out independently of the drivers under test.
func sensirionCRC(b ...byte) byte {
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

func TestSensirionCRC(t *testing.T) {
	// SCD4x datasheet §3.11: CRC of 0xBEEF is 0x92.
	if got := sensirionCRC(0xBE, 0xEF); got != 0x92 {
		t.Fatalf("sensirionCRC(0xBEEF) = %#x, want 0x92", got)
	}
}

func bg() context.Context { return context.Background() }
