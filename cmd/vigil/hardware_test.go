package main

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"periph.io/x/conn/v3/i2c"
	"periph.io/x/conn/v3/i2c/i2creg"
	"periph.io/x/conn/v3/i2c/i2ctest"

	"github.com/vigil-iot/vigil/board"
	"github.com/vigil-iot/vigil/config"
)

// TestCheckI2CDefault: on a profile with no default bus, config check
// says which bus an I²C sensor that names none uses (the only one), that
// it reads as an error while there is none, and refuses several, naming
// the sensor's key and line and the buses found.
func TestCheckI2CDefault(t *testing.T) {
	src := `
[[sensor]]
name = "air"
driver = "tmp102"

[[sensor]]
name = "soil"
driver = "ads1115"
bus = "1"

[[sensor]]
name = "probe"
driver = "max31855"
`
	cfg, err := config.Parse(strings.NewReader(src), "config.toml")
	if err != nil {
		t.Fatal(err)
	}
	generic, rpi := board.Generic(), mustBoard(t, "rpi4")
	buses := func(b ...string) func() ([]string, error) { return func() ([]string, error) { return b, nil } }
	for _, tt := range []struct {
		name    string
		prof    board.Profile
		list    func() ([]string, error)
		notes   []string
		wantErr string
	}{
		{"one bus", generic, buses("3"), []string{"sensor air names no I²C bus: it uses i2c bus 3, the only one here (the generic board profile names no default bus)"}, ""},
		{"no bus", generic, buses(), []string{"sensor air reads as an error until a bus appears: no I²C bus: the generic board profile names no default bus and this machine has none (no /dev/i2c-*)"}, ""},
		{"two buses", generic, buses("0", "1"), nil,
			`config.toml:2: sensor.air.bus: no I²C bus set: the generic board profile names no default bus and this machine has 2 (buses here: 0, 1); set bus = "N" to the one the sensor is on ('vigil scan --bus N' lists what answers on each)`},
		{"a profile with a default", rpi, buses("0", "1"), nil, ""},
		{"buses not listed", generic, func() ([]string, error) { return nil, errors.New("no host") }, []string{"cannot list the I²C buses: no host"}, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			notes, err := checkI2CDefault(cfg, tt.prof, tt.list)
			if len(notes) != len(tt.notes) {
				t.Fatalf("notes = %q, want %q", notes, tt.notes)
			}
			for i := range notes {
				if !strings.HasPrefix(notes[i], tt.notes[i]) {
					t.Errorf("note %d = %q, want %q", i, notes[i], tt.notes[i])
				}
			}
			if tt.wantErr == "" && err != nil || tt.wantErr != "" && (err == nil || err.Error() != tt.wantErr) {
				t.Errorf("err = %v, want %q", err, tt.wantErr)
			}
			var ce *config.Error
			if tt.wantErr != "" && !errors.As(err, &ce) {
				t.Errorf("err %T is no *config.Error", err)
			}
		})
	}
}

func mustBoard(t *testing.T, name string) board.Profile {
	t.Helper()
	p, ok := board.Lookup(name)
	if !ok {
		t.Fatalf("no board %s", name)
	}
	return p
}

// fakeBus is a Playback with a name, for periph.io's registry.
type fakeBus struct{ *i2ctest.Playback }

func (fakeBus) String() string { return "fake" }

var _ i2c.BusCloser = fakeBus{}

// TestRunUsesTheOnlyBus: on the generic profile an I²C sensor that names
// no bus is opened on the machine's only bus, as vigil scan picks it, and
// run says so; a chip that does not answer there is one warning that
// names the sensor and how to find it.
func TestRunUsesTheOnlyBus(t *testing.T) {
	if m, _ := filepath.Glob("/dev/i2c-*"); len(m) > 0 {
		t.Skip("this machine has I²C buses of its own")
	}
	const name = "vigil-test-97"
	if err := i2creg.Register(name, nil, 97, func() (i2c.BusCloser, error) {
		return fakeBus{&i2ctest.Playback{DontPanic: true}}, nil // no chip answers
	}); err != nil {
		t.Fatal(err)
	}
	defer i2creg.Unregister(name)
	cfg, err := config.Parse(strings.NewReader("[[sensor]]\nname = \"air\"\ndriver = \"tmp102\"\n"), "config.toml")
	if err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	sensors, closeAll := openSensors(cfg, board.Generic(), time.Now, slog.New(slog.NewTextHandler(&logs, nil)))
	defer closeAll()
	for _, want := range []string{
		`level=INFO msg="sensor names no I²C bus: using the only one here (the generic board profile names no default bus)" sensor=air bus=97`,
		`level=WARN msg="sensor not answering; retrying on every read" sensor=air err="tmp102: i2c bus 97 addr 0x48`,
		`fix="check its wiring, power and address ('vigil scan --bus 97' lists the addresses that answer)"`,
	} {
		if !strings.Contains(logs.String(), want) {
			t.Errorf("log lacks %q:\n%s", want, logs.String())
		}
	}
	if n := strings.Count(logs.String(), "level=WARN"); n != 1 {
		t.Errorf("%d warnings, want 1:\n%s", n, logs.String())
	}
	_, err = sensors[0].Sensor.Sense(context.Background())
	if err == nil || !strings.Contains(err.Error(), "i2c bus 97 addr 0x48") {
		t.Errorf("Sense() = %v, want the chip on bus 97", err)
	}
}
