package device

// Telling apart the chips that may answer at one I²C address, for `vigil
// init`'s survey.
//
// Policy: identification only reads. It writes nothing but a register
// pointer (Bosch, Microchip, TI parts) or a command that reads an ID
// without changing the chip's state (the SHT4x's serial number 0x89, the
// SHT3x's status 0xF32D, the SCD4x's serial number 0x3682). Where a chip
// has an ID register, Identify names it from that register and refuses to
// guess when the value is one it does not know. Where it has none (AHT20,
// BH1750, INA219, TMP102, ADS1x15), it names the likeliest driver with
// Guess set, and says on what the guess rests, so the wizard can say it
// is a guess. A chip that does not answer the identification (a NACK) is
// not guessed at either: Err says what failed.

import (
	"context"
	"encoding/binary"
	"fmt"
	"slices"
	"strings"
	"time"

	"periph.io/x/conn/v3/i2c"
)

// Identity is what an I²C chip's registers say it is.
type Identity struct {
	Addr uint16
	// Driver is the vigil driver that reads the chip; "" when the chip is
	// unknown or vigil has no driver for it.
	Driver string
	// Chip is what the chip is ("BME280", "BMP180"); "" when unknown.
	Chip string
	// Guess is set when no ID register settled it: the chip has none, or
	// it did not answer the read of one.
	Guess bool
	// How says how the chip was told ("chip id 0x60 at register 0xd0"),
	// why it is a guess ("a guess: no ID register"), or why it is unknown.
	How string
	// Others are the other chips that may be at the address, for a guess
	// or an unknown chip: vigil's drivers first, then parts it has none
	// for.
	Others []string
	// Err is the bus error that kept the chip from being identified (a
	// NACK); Driver is then "".
	Err error
}

// String is the identity as the wizard shows it: "0x76 bme280 (chip id
// 0x60 at register 0xd0)".
func (id Identity) String() string {
	what := id.Driver
	switch {
	case what == "" && id.Chip != "":
		what = id.Chip + " (no vigil driver)"
	case what == "":
		what = "unknown"
	}
	s := fmt.Sprintf("0x%02x %s", id.Addr, what)
	if id.How != "" {
		s += " (" + id.How + ")"
	}
	if id.Err != nil {
		s += ": " + id.Err.Error()
	}
	return s
}

// Identify reads the ID registers of the chip at addr on bus and says
// which of the chips that may answer there it is (see the policy at the
// top of this file). sleep waits out a command's execution time (the
// Sensirion serial-number reads).
func Identify(ctx context.Context, bus i2c.Bus, addr uint16, sleep Sleep) Identity {
	id := Identity{Addr: addr}
	if err := ctx.Err(); err != nil {
		id.Err = err
		return id
	}
	var drivers, others []string
	for _, c := range ChipsAt(addr) {
		if _, ok := LookupDriver(c); ok {
			drivers = append(drivers, c)
		} else {
			others = append(others, c)
		}
	}
	has := func(d string) bool { return slices.Contains(drivers, d) }
	switch {
	case has("bme280"):
		id = identifyBosch(bus, addr)
	case has("mcp9808"):
		id = identifyMCP9808(bus, addr)
	case has("sht3x") || has("sht4x"):
		id = identifySensirion(ctx, bus, addr, sleep, has("sht3x"), has("ina219"))
	case has("tmp102"):
		id = identifyTIAt48(bus, addr)
	case has("scd4x"):
		id = identifySCD4x(ctx, bus, addr, sleep)
	case has("ina219"):
		id = identifyINA219(bus, addr)
	case len(drivers) == 1: // AHT20, BH1750: no ID register at all
		id = Identity{Addr: addr, Driver: drivers[0], Guess: true, How: "a guess: no ID register"}
	case len(drivers) == 0 && len(others) > 0:
		id = Identity{Addr: addr, Chip: strings.Join(others, " or "), Guess: true, How: "a guess from the address: vigil has no driver for it"}
		for _, o := range others {
			if k := KernelDriven(o); k != "" {
				id.How += "; the kernel reads it: " + k
			}
		}
		return id
	default:
		id = Identity{Addr: addr, How: "no chip vigil knows answers at this address"}
		return id
	}
	id.Addr = addr
	// The alternatives of a guess or an unknown chip: every other chip at
	// the address.
	if id.Guess || id.Driver == "" {
		for _, c := range append(drivers, others...) {
			if c != id.Driver && !slices.Contains(id.Others, c) {
				id.Others = append(id.Others, c)
			}
		}
	}
	return id
}

// identifyBosch reads the chip_id register 0xD0 (BME280 datasheet §5.4.1:
// 0x60; BMP280 datasheet §4.3.1: 0x58, and 0x56/0x57 on samples; BMP180
// datasheet §5.4: 0x55; BME680 datasheet §5.3.4: 0x61).
func identifyBosch(bus i2c.Bus, addr uint16) Identity {
	var b [1]byte
	if err := bus.Tx(addr, []byte{0xD0}, b[:]); err != nil {
		return Identity{How: "did not answer the read of its chip id (register 0xd0)", Err: err}
	}
	how := fmt.Sprintf("chip id 0x%02x at register 0xd0", b[0])
	switch b[0] {
	case 0x60:
		return Identity{Driver: "bme280", Chip: "BME280", How: how}
	case 0x56, 0x57, 0x58:
		return Identity{Driver: "bmp280", Chip: "BMP280", How: how}
	case 0x55:
		return Identity{Chip: "BMP180", How: how + "; the kernel reads it: " + KernelDriven("bmp180")}
	case 0x61:
		return Identity{Chip: "BME680", How: how + "; the kernel reads it: " + KernelDriven("bme680")}
	}
	return Identity{How: how + ": not a BME280 (0x60) or BMP280 (0x58), not guessing"}
}

// identifyMCP9808 reads the manufacturer ID (register 0x06, 0x0054) and the
// device ID (register 0x07, upper byte 0x04), datasheet §5.1.4 and §5.1.5.
func identifyMCP9808(bus i2c.Bus, addr uint16) Identity {
	m, err := reg16(bus, addr, mcp9808RegManufacturer)
	if err != nil {
		return Identity{How: "did not answer the read of its manufacturer id (register 0x06)", Err: err}
	}
	d, err := reg16(bus, addr, mcp9808RegDevice)
	if err != nil {
		return Identity{How: "did not answer the read of its device id (register 0x07)", Err: err}
	}
	how := fmt.Sprintf("manufacturer id 0x%04x, device id 0x%04x", m, d)
	if m != 0x0054 || d>>8 != 0x04 {
		return Identity{How: how + ": not an MCP9808 (0x0054, 0x04xx), not guessing"}
	}
	return Identity{Driver: "mcp9808", Chip: "MCP9808", How: how}
}

// Sensirion identification commands.
var (
	sht4xReadSerial = []byte{0x89}       // SHT4x datasheet, "Command Overview": serial number, 2 words + CRC
	sht3xReadStatus = []byte{0xF3, 0x2D} // SHT3x-DIS datasheet §4.11, Table 17: status register, 1 word + CRC
	scd4xReadSerial = []byte{0x36, 0x82} // SCD4x datasheet §3.9.2 get_serial_number: 3 words + CRC, 1 ms
)

// sensirionCmdWait is how long vigil waits between a Sensirion read
// command and the read of its answer: the SHT4x and SCD4x need 1 ms for
// their serial number (SCD4x datasheet §3.9.2); 10 ms leaves margin, as
// Sensirion's own drivers do.
const sensirionCmdWait = 10 * time.Millisecond

// identifySensirion tells an SHT4x (which answers the one-byte serial
// number command 0x89 with two CRC-checked words) from an SHT3x (whose
// commands are 16 bits: it answers the status read 0xF32D with one). Both
// are reads. At 0x44 and 0x45 an INA219 may answer too; it is the guess
// when neither command gets a CRC-checked answer.
func identifySensirion(ctx context.Context, bus i2c.Bus, addr uint16, sleep Sleep, sht3x, ina bool) Identity {
	if sleep == nil {
		return Identity{How: "cannot tell SHT3x from SHT4x without a sleep function"}
	}
	if w, err := sensirionRead(ctx, bus, addr, sleep, sht4xReadSerial, 2); err == nil {
		return Identity{Driver: "sht4x", Chip: "SHT4x", How: fmt.Sprintf("serial number 0x%04x%04x (command 0x89)", w[0], w[1])}
	}
	if sht3x {
		if w, err := sensirionRead(ctx, bus, addr, sleep, sht3xReadStatus, 1); err == nil {
			return Identity{Driver: "sht3x", Chip: "SHT3x", How: fmt.Sprintf("status 0x%04x (command 0xf32d)", w[0])}
		}
	}
	if ina {
		id := identifyINA219(bus, addr)
		id.How += "; no SHT3x or SHT4x answered its ID command"
		return id
	}
	if sht3x {
		return Identity{How: "answered neither the SHT4x's serial number command nor the SHT3x's status read, not guessing"}
	}
	return Identity{How: "did not answer the SHT4x's serial number command, not guessing"}
}

// identifySCD4x reads the SCD4x's serial number. The chip ignores the
// command while a periodic measurement runs (another vigil, say): then
// the SCD4x is a guess.
func identifySCD4x(ctx context.Context, bus i2c.Bus, addr uint16, sleep Sleep) Identity {
	if sleep != nil {
		if w, err := sensirionRead(ctx, bus, addr, sleep, scd4xReadSerial, 3); err == nil {
			return Identity{Driver: "scd4x", Chip: "SCD4x", How: fmt.Sprintf("serial number 0x%04x%04x%04x (command 0x3682)", w[0], w[1], w[2])}
		}
	}
	return Identity{Driver: "scd4x", Guess: true, How: "a guess: it did not answer the serial number read (a measurement may be running)"}
}

// sensirionRead sends a read command, waits, and reads n CRC-checked
// words.
func sensirionRead(ctx context.Context, bus i2c.Bus, addr uint16, sleep Sleep, cmd []byte, n int) ([]uint16, error) {
	if err := bus.Tx(addr, cmd, nil); err != nil {
		return nil, err
	}
	if err := sleep(ctx, sensirionCmdWait); err != nil {
		return nil, err
	}
	b := make([]byte, 3*n)
	if err := bus.Tx(addr, nil, b); err != nil {
		return nil, err
	}
	names := make([]string, n)
	for i := range names {
		names[i] = fmt.Sprintf("word %d", i)
	}
	return sensirionWords(b, names...)
}

// Reset values that tell a TMP102 from an ADS1x15 at 0x48-0x4B, neither of
// which has an ID register.
const (
	// ADS111x datasheet §8.6: Lo_thresh resets to 0x8000 and Hi_thresh to
	// 0x7FFF (the ADS101x's are the same), and no driver vigil uses
	// writes them.
	adsLoThreshReset, adsHiThreshReset = 0x8000, 0x7FFF
	// TMP102 datasheet §7.5.3, Table 8: configuration bits R1 R0 (14:13)
	// are read-only ones and bits 3:0 read zero, whatever was written.
	tmp102ConfigMask, tmp102ConfigFixed = 0x600F, 0x6000
	// INA219 datasheet §8.6.2.1: the configuration register resets to
	// 0x399F.
	ina219ConfigReset = 0x399F
)

// identifyTIAt48 tells a TMP102, an ADS1x15 and an INA219 apart at
// 0x48-0x4B by the registers at 0x00-0x03, which they all have: the
// ADS1x15's threshold registers at their reset values, the TMP102's fixed
// configuration bits, the INA219's configuration at its reset value. None
// has an ID register, so each is a guess.
func identifyTIAt48(bus i2c.Bus, addr uint16) Identity {
	var r [4]uint16
	for i := range r {
		v, err := reg16(bus, addr, byte(i))
		if err != nil {
			return Identity{How: fmt.Sprintf("did not answer the read of register 0x%02x", i), Err: err}
		}
		r[i] = v
	}
	regs := fmt.Sprintf("registers 0x00-0x03: %04x %04x %04x %04x", r[0], r[1], r[2], r[3])
	switch {
	case r[2] == adsLoThreshReset && r[3] == adsHiThreshReset:
		return Identity{Driver: "ads1115", Chip: "ADS1115 or ADS1015", Guess: true,
			How: "a guess: no ID register; its threshold registers hold the ADS1x15's reset values (0x8000, 0x7fff), and the ADS1015 has the same registers (" + regs + ")"}
	case r[1]&tmp102ConfigMask == tmp102ConfigFixed && r[2]&0xF == 0 && r[3]&0xF == 0:
		return Identity{Driver: "tmp102", Chip: "TMP102", Guess: true,
			How: "a guess: no ID register; its configuration register has the TMP102's fixed bits (" + regs + ")"}
	case addr >= 0x40 && addr <= 0x4F && r[0] == ina219ConfigReset:
		return Identity{Driver: "ina219", Chip: "INA219", Guess: true,
			How: "a guess: no ID register; its configuration register holds the INA219's reset value 0x399f"}
	}
	return Identity{How: "matches neither a TMP102, an ADS1x15 nor an INA219, not guessing (" + regs + ")"}
}

// identifyINA219 names the INA219, which has no ID register; its
// configuration at the reset value makes the guess likelier.
func identifyINA219(bus i2c.Bus, addr uint16) Identity {
	c, err := reg16(bus, addr, 0x00)
	if err != nil {
		return Identity{How: "did not answer the read of register 0x00", Err: err}
	}
	how := "a guess: no ID register"
	if c == ina219ConfigReset {
		how += "; its configuration register holds the INA219's reset value 0x399f"
	}
	return Identity{Driver: "ina219", Chip: "INA219", Guess: true, How: how}
}

// reg16 reads a big-endian 16-bit register after writing its pointer.
func reg16(bus i2c.Bus, addr uint16, reg byte) (uint16, error) {
	var b [2]byte
	if err := bus.Tx(addr, []byte{reg}, b[:]); err != nil {
		return 0, err
	}
	return binary.BigEndian.Uint16(b[:]), nil
}
