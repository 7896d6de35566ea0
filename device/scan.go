package device

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"

	"periph.io/x/conn/v3/i2c"

	"github.com/vigil-iot/vigil/board"
)

// I2CBuses are a machine's I²C buses, as a scan needs them: a Machine, or
// in a test a fake.
type I2CBuses interface {
	I2CBuses() ([]string, error)      // the buses present, by number
	I2C(name string) (i2c.Bus, error) // borrowed: the owner closes it
}

// Scan probes the I²C addresses from..to on bus and returns those that
// acknowledge, in order. Like `i2cdetect -r` it reads one byte from each
// address rather than writing: a write, even an empty one, can change the
// state of some chips (EEPROM write pointers, some sensors' commands), and
// periph.io offers no SMBus quick command. A read is harmless for every chip
// vigil knows; on a bus with unknown parts it is still the cautious probe.
func Scan(bus i2c.Bus, from, to uint16) []uint16 {
	var found []uint16
	var b [1]byte
	for a := from; a <= to && a <= 0x7F; a++ {
		if bus.Tx(a, nil, b[:]) == nil {
			found = append(found, a)
		}
	}
	return found
}

// ScanReport is `vigil scan`: it probes an I²C bus like i2cdetect, prints
// a grid and names the chips that may answer at each address, and says
// which configured sensors on the bus did not answer. With no busName it
// scans the board's default bus, or on a profile with none (generic) the
// machine's only one.
func ScanReport(ctx context.Context, stdout io.Writer, specs []Spec, prof board.Profile, busName string, buses I2CBuses) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	name, only := busName, ""
	if name == "" {
		name = prof.I2CBus
	}
	if name == "" {
		have, err := buses.I2CBuses()
		if err != nil {
			return err
		}
		switch len(have) {
		case 0:
			if prof.Name == "sim" {
				return fmt.Errorf("scan: the sim board has no bus; set %s=bme280@0x76 to emulate one", SimI2CEnv)
			}
			return fmt.Errorf("scan: this machine has no I²C bus (no /dev/i2c-*)")
		case 1: // nothing to choose between: the bus run gives its sensors that name none
			name, only = have[0], have[0]
			fmt.Fprintf(stdout, "scanning i2c bus %s, the only one here (the %s board profile names no default bus)\n", name, prof.Name)
		default:
			return fmt.Errorf("scan: the %s board profile has no default I²C bus; pick one with --bus (buses here: %s)", prof.Name, strings.Join(have, ", "))
		}
	}
	bus, err := buses.I2C(name)
	if err != nil {
		return fmt.Errorf("scan: %w", err)
	}
	key := I2CBusKey(name)
	found := Scan(bus, 0x08, 0x77)
	// Name the chips whose ID registers say what they are (identify.go:
	// reads only); the SHT3x/SHT4x commands need the machine's sleep.
	var sleep Sleep
	if m, ok := buses.(*Machine); ok {
		sleep = m.host.Sleep
	}
	ids := map[uint16]Identity{}
	for _, a := range found {
		ids[a] = Identify(ctx, bus, a, sleep)
	}
	writeScan(stdout, key, found, ids)

	// Say which configured sensors on this bus did not answer.
	for _, s := range specs {
		info, ok := LookupDriver(s.Driver)
		if !ok || len(info.Addresses) == 0 || strings.HasPrefix(s.Bus, "spi:") {
			continue
		}
		b := s.Bus
		if b == "" {
			b = prof.I2CBus
		}
		if b == "" {
			b = only
		}
		if I2CBusKey(b) != key {
			continue
		}
		addr := s.Address
		if addr == 0 {
			addr = info.Addresses[0]
		}
		if !slices.Contains(found, addr) {
			fmt.Fprintf(stdout, "sensor %s (%s at 0x%02x) did not answer: check wiring, power and the address jumper\n", s.Name, s.Driver, addr)
		}
	}
	return nil
}

// writeScan prints an i2cdetect-style grid and the list of answering
// addresses with the chip its ID registers name (ids), or else the chips
// that may be there.
func writeScan(w io.Writer, bus string, found []uint16, ids map[uint16]Identity) {
	fmt.Fprintln(w, "     0  1  2  3  4  5  6  7  8  9  a  b  c  d  e  f")
	for row := uint16(0); row < 0x80; row += 0x10 {
		fmt.Fprintf(w, "%02x:", row)
		for col := uint16(0); col < 0x10 && row+col <= 0x77; col++ {
			a := row + col
			switch {
			case a < 0x08:
				fmt.Fprint(w, "   ")
			case slices.Contains(found, a):
				fmt.Fprintf(w, " %02x", a)
			default:
				fmt.Fprint(w, " --")
			}
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintln(w)
	if len(found) == 0 {
		fmt.Fprintf(w, "no device answered on i2c bus %s: check wiring (SDA, SCL, GND, 3.3 V) and pull-ups\n", bus)
		return
	}
	fmt.Fprintf(w, "%d device(s) answered on i2c bus %s:\n", len(found), bus)
	for _, a := range found {
		if id, ok := ids[a]; ok && !id.Guess && id.Err == nil && id.Chip != "" {
			if id.Driver != "" {
				fmt.Fprintf(w, "  0x%02x  %s (%s)\n", a, id.Driver, id.How)
			} else {
				fmt.Fprintf(w, "  0x%02x  %s, no vigil driver (%s)\n", a, id.Chip, id.How)
			}
			continue
		}
		var drivers, others []string
		for _, c := range ChipsAt(a) {
			if _, ok := LookupDriver(c); ok {
				drivers = append(drivers, c)
			} else {
				others = append(others, c)
			}
		}
		line := strings.Join(drivers, "/")
		switch {
		case line == "" && len(others) == 0:
			line = "unknown"
		case line == "":
			line = strings.Join(others, ", ") + " (no vigil driver)"
		case len(others) > 0:
			line += "   (or: " + strings.Join(others, ", ") + ")"
		}
		fmt.Fprintf(w, "  0x%02x  %s\n", a, line)
	}
}
