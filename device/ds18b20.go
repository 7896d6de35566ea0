package device

import (
	"bytes"
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// W1Dir is where the Linux 1-Wire subsystem lists its devices.
const W1Dir = "/sys/bus/w1/devices"

// DS18B20 is a Maxim DS18B20 1-Wire temperature sensor read through the
// kernel's w1-gpio and w1_therm drivers: reading <dir>/28-<serial>/w1_slave
// makes the kernel run a conversion (up to 750 ms) and print the scratchpad
// with its CRC verdict and the temperature.
type DS18B20 struct {
	dir    string
	serial string
}

var _ Sensor = (*DS18B20)(nil)

// DS18B20 measuring range, datasheet: -55 to +125 °C.
const ds18b20MinC, ds18b20MaxC = -55, 125

// NewDS18B20 returns a DS18B20 in dir (W1Dir when empty) with the given
// serial ("28-0316a2790eff"); with no serial it uses the only DS18B20
// present, looked up on every Sense so a sensor plugged in later is found.
// It does no IO.
func NewDS18B20(dir, serial string) (*DS18B20, error) {
	if dir == "" {
		dir = W1Dir
	}
	if serial != "" && (!strings.HasPrefix(serial, "28-") || strings.ContainsAny(serial, `/\`)) {
		return nil, fmt.Errorf("ds18b20: serial %q: want 28-<12 hex digits> as listed in %s", serial, dir)
	}
	return &DS18B20{dir: dir, serial: serial}, nil
}

// Sense reads the temperature.
func (d *DS18B20) Sense(ctx context.Context) ([]Reading, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("ds18b20: w1 %s: read: %w", d.serial, err)
	}
	serial := d.serial
	if serial == "" {
		var err error
		if serial, err = d.only(); err != nil {
			return nil, err
		}
	}
	a := at{"ds18b20", "w1 " + serial}
	b, err := os.ReadFile(filepath.Join(d.dir, serial, "w1_slave"))
	if errors.Is(err, os.ErrNotExist) {
		return nil, a.errorf("read", fmt.Errorf("not present in %s (wiring, pull-up, or the w1-gpio overlay)", d.dir))
	}
	if err != nil {
		return nil, a.errorf("read", err)
	}
	c, err := parseW1Slave(b)
	if err != nil {
		return nil, a.errorf("read", err)
	}
	r := Reading{Quantity: "temperature", Value: c, Unit: Celsius}
	if err := a.check(r, ds18b20MinC, ds18b20MaxC); err != nil {
		return nil, err
	}
	return []Reading{r}, nil
}

// Locate reports whether the sensor is there now, without a conversion:
// the error Sense would give for a missing one.
func (d *DS18B20) Locate() error {
	serial := d.serial
	if serial == "" {
		_, err := d.only()
		return err
	}
	if _, err := os.Stat(filepath.Join(d.dir, serial, "w1_slave")); errors.Is(err, os.ErrNotExist) {
		return at{"ds18b20", "w1 " + serial}.errorf("read", fmt.Errorf("not present in %s (wiring, pull-up, or the w1-gpio overlay)", d.dir))
	}
	return nil
}

// only returns the serial of the single DS18B20 in the directory.
func (d *DS18B20) only() (string, error) {
	m, err := filepath.Glob(filepath.Join(d.dir, "28-*"))
	if err != nil {
		return "", fmt.Errorf("ds18b20: w1 %s: %w", d.dir, err)
	}
	switch len(m) {
	case 0:
		return "", fmt.Errorf("ds18b20: w1 %s: no DS18B20 (28-*) found: check wiring, the 4.7 kΩ pull-up and that 1-Wire is enabled (dtoverlay=w1-gpio)", d.dir)
	case 1:
		return filepath.Base(m[0]), nil
	}
	names := make([]string, len(m))
	for i, p := range m {
		names[i] = filepath.Base(p)
	}
	return "", fmt.Errorf("ds18b20: w1 %s: %d sensors found (%s): set serial to pick one", d.dir, len(m), strings.Join(names, ", "))
}

// parseW1Slave parses w1_therm's output:
//
//	72 01 4b 46 7f ff 0e 10 57 : crc=57 YES
//	72 01 4b 46 7f ff 0e 10 57 t=23125
//
// It checks the kernel's CRC verdict and the CRC itself, rejects a
// scratchpad of zeros (a missing sensor on some bus masters reads as zeros,
// whose CRC is zero too) and the power-on reset value 85 °C, and returns °C.
func parseW1Slave(b []byte) (float64, error) {
	line1, line2, ok := bytes.Cut(bytes.TrimSpace(b), []byte("\n"))
	if !ok {
		return 0, fmt.Errorf("malformed w1_slave: %q", b)
	}
	scratch, verdict, ok := bytes.Cut(line1, []byte(":"))
	if !ok {
		return 0, fmt.Errorf("malformed w1_slave: %q", line1)
	}
	if !bytes.HasSuffix(bytes.TrimSpace(verdict), []byte("YES")) {
		return 0, fmt.Errorf("crc check failed (%s)", bytes.TrimSpace(verdict))
	}
	pad, err := hex.DecodeString(string(bytes.ReplaceAll(bytes.TrimSpace(scratch), []byte(" "), nil)))
	if err != nil || len(pad) != 9 {
		return 0, fmt.Errorf("malformed scratchpad %q", bytes.TrimSpace(scratch))
	}
	if crc := dallasCRC(pad[:8]); crc != pad[8] {
		return 0, fmt.Errorf("crc mismatch: got 0x%02x, computed 0x%02x", pad[8], crc)
	}
	if bytes.Equal(pad, make([]byte, 9)) {
		return 0, errors.New("scratchpad all zeros: sensor not responding")
	}
	_, t, ok := bytes.Cut(line2, []byte("t="))
	if !ok {
		return 0, fmt.Errorf("no temperature in %q", line2)
	}
	milli, err := strconv.Atoi(string(bytes.TrimSpace(t)))
	if err != nil {
		return 0, fmt.Errorf("temperature %q: %w", bytes.TrimSpace(t), err)
	}
	// The temperature register powers up as 0x0550, +85 °C (datasheet,
	// "Operation — measuring temperature"): reading it means no conversion
	// ran, usually for lack of power in parasite mode.
	if pad[0] == 0x50 && pad[1] == 0x05 && milli == 85000 {
		return 0, errors.New("power-on reset value 85 °C: no conversion ran (check the sensor's power)")
	}
	return float64(milli) / 1000, nil
}

// dallasCRC is the 1-Wire CRC-8 (x^8 + x^5 + x^4 + 1, reflected; DS18B20
// datasheet "CRC generation").
func dallasCRC(b []byte) byte {
	var crc byte
	for _, x := range b {
		for range 8 {
			mix := (crc ^ x) & 1
			crc >>= 1
			if mix != 0 {
				crc ^= 0x8C
			}
			x >>= 1
		}
	}
	return crc
}

func ds18b20Driver() DriverInfo {
	return DriverInfo{
		Name: "ds18b20", Chip: "Maxim DS18B20: temperature, through the kernel's 1-Wire driver", Bus: "w1", Keys: []string{"serial", "w1_dir"},
		Quantities: []Reading{{Quantity: "temperature", Unit: Celsius}},
		Resolution: map[string]float64{"temperature": 0.0625}, // datasheet: 12-bit default
		// The w1 directory is looked at on every read: a missing 1-Wire
		// bus already is a reading error.
		Open: func(o Opening) (Sensor, error) {
			dir := o.W1Dir
			if dir == "" {
				dir = o.Board.W1Dir
			}
			return NewDS18B20(dir, o.Serial)
		},
	}
}
