package device

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"

	"periph.io/x/conn/v3/i2c"
	"periph.io/x/conn/v3/i2c/i2ctest"

	"github.com/vigil-iot/vigil/board"
)

// fakeBuses is a machine's I²C buses for scan: their numbers, and a
// Playback for each that replays the chips that answer.
type fakeBuses struct {
	names  []string
	buses  map[string]*i2ctest.Playback
	opened []string
}

func (f *fakeBuses) I2CBuses() ([]string, error) { return f.names, nil }

func (f *fakeBuses) I2C(name string) (i2c.Bus, error) {
	f.opened = append(f.opened, name)
	b, ok := f.buses[name]
	if !ok {
		return nil, fmt.Errorf("i2c bus %s: not found", name)
	}
	return b, nil
}

// TestScanTheOnlyBus: on a board profile with no default bus (generic), a
// scan without --bus scans the machine's only bus and says which; with
// several it asks for --bus and lists them; --bus always wins.
func TestScanTheOnlyBus(t *testing.T) {
	generic, ok := board.Lookup("generic")
	if !ok || generic.I2CBus != "" {
		t.Fatalf("the generic profile = %+v, %v: want one with no default bus", generic, ok)
	}
	var specs []Spec // the default config has no sensors
	bme280 := func() *i2ctest.Playback {
		return &i2ctest.Playback{DontPanic: true, Ops: []i2ctest.IO{{Addr: 0x76, R: []byte{0}}}}
	}

	one := &fakeBuses{names: []string{"3"}, buses: map[string]*i2ctest.Playback{"3": bme280()}}
	var out strings.Builder
	if err := ScanReport(context.Background(), &out, specs, generic, "", one); err != nil {
		t.Fatalf("scan with one bus: %v", err)
	}
	for _, want := range []string{"scanning i2c bus 3, the only one here (the generic board profile names no default bus)\n", "1 device(s) answered on i2c bus 3:", "0x76"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("scan with one bus lacks %q:\n%s", want, out.String())
		}
	}
	if err := one.buses["3"].Close(); err != nil {
		t.Errorf("the bus was not probed as recorded: %v", err)
	}

	two := &fakeBuses{names: []string{"1", "3"}, buses: map[string]*i2ctest.Playback{"1": bme280(), "3": bme280()}}
	err := ScanReport(context.Background(), &out, specs, generic, "", two)
	if want := "scan: the generic board profile has no default I²C bus; pick one with --bus (buses here: 1, 3)"; err == nil || err.Error() != want {
		t.Errorf("scan with two buses = %v, want %q", err, want)
	}
	if len(two.opened) != 0 {
		t.Errorf("scan with two buses and no --bus opened %q", two.opened)
	}

	out.Reset()
	if err := ScanReport(context.Background(), &out, specs, generic, "1", two); err != nil || strings.Contains(out.String(), "the only one") || len(two.opened) != 1 || two.opened[0] != "1" {
		t.Errorf("scan --bus 1: %v, opened %q:\n%s", err, two.opened, out.String())
	}

	none := &fakeBuses{}
	if err := ScanReport(context.Background(), &out, specs, generic, "", none); err == nil || err.Error() != "scan: this machine has no I²C bus (no /dev/i2c-*)" {
		t.Errorf("scan with no bus = %v", err)
	}
}

// TestScanNamesSHT: vigil scan names the SHT3x and SHT4x at their
// addresses.
func TestScanNamesSHT(t *testing.T) {
	var b bytes.Buffer
	writeScan(&b, "1", []uint16{0x44, 0x45, 0x46}, nil)
	for _, want := range []string{"  0x44  sht3x/sht4x/ina219\n", "  0x45  sht3x/sht4x/ina219\n", "  0x46  sht4x/ina219\n", "40: -- -- -- -- 44 45 46"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("writeScan does not show %q:\n%s", want, b.String())
		}
	}
}
