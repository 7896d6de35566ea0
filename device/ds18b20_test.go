package device

import (
	"bytes"
	"encoding/hex"
	"os"
	"path/filepath"
	"testing"
)

func TestDS18B20(t *testing.T) {
	tests := []struct {
		name, dir, serial string
		want              float64
	}{
		{"the only sensor", "testdata/w1/one", "", 23.125},
		{"by serial", "testdata/w1/two", "28-01144c2b8aaa", 25.062},
		{"below zero", "testdata/w1/two", "28-01144c2b8bbb", -26.125},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := NewDS18B20(tt.dir, tt.serial)
			if err != nil {
				t.Fatal(err)
			}
			got, err := d.Sense(bg())
			if err != nil {
				t.Fatal(err)
			}
			wantReadings(t, got, []Reading{{"temperature", tt.want, Celsius}}, 0)
		})
	}
}

func TestDS18B20Errors(t *testing.T) {
	tests := []struct {
		name     string
		w1Slave  string // "" for no sensor directory
		prefix   string
		contains string
	}{
		{"kernel CRC verdict NO", "ff ff ff ff ff ff ff ff ff : crc=c9 NO\nff ff ff ff ff ff ff ff ff t=-62\n",
			"ds18b20: w1 28-000000000001: read: crc check failed", "NO"},
		{"CRC mismatch", "72 01 4b 46 7f ff 0e 10 58 : crc=58 YES\n72 01 4b 46 7f ff 0e 10 58 t=23125\n",
			"ds18b20: w1 28-000000000001: read: crc mismatch: got 0x58, computed 0x57", ""},
		{"all zeros", "00 00 00 00 00 00 00 00 00 : crc=00 YES\n00 00 00 00 00 00 00 00 00 t=0\n",
			"ds18b20: w1 28-000000000001: read: scratchpad all zeros", ""},
		{"power-on reset 85 °C", "50 05 4b 46 7f ff 0c 10 1c : crc=1c YES\n50 05 4b 46 7f ff 0c 10 1c t=85000\n",
			"ds18b20: w1 28-000000000001: read: power-on reset value", ""},
		{"implausible", "00 08 4b 46 7f ff 0c 10 39 : crc=39 YES\n00 08 4b 46 7f ff 0c 10 39 t=128000\n",
			"ds18b20: w1 28-000000000001: implausible temperature 128 °C", "-55 to 125"},
		{"truncated", "72 01 4b 46 7f ff 0e 10 57 : crc=57 YES\n",
			"ds18b20: w1 28-000000000001: read: malformed w1_slave", ""},
		{"unplugged", "", "ds18b20: w1 28-000000000001: read: not present", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			if tt.w1Slave != "" {
				if err := os.Mkdir(filepath.Join(dir, "28-000000000001"), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(dir, "28-000000000001", "w1_slave"), []byte(tt.w1Slave), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			d, err := NewDS18B20(dir, "28-000000000001")
			if err != nil {
				t.Fatal(err)
			}
			_, err = d.Sense(bg())
			wantErr(t, err, tt.prefix, tt.contains)
		})
	}
	t.Run("none", func(t *testing.T) {
		d, _ := NewDS18B20("testdata/w1/none", "")
		_, err := d.Sense(bg())
		wantErr(t, err, "ds18b20: w1 testdata/w1/none: no DS18B20", "w1-gpio")
	})
	t.Run("two without serial", func(t *testing.T) {
		d, _ := NewDS18B20("testdata/w1/two", "")
		_, err := d.Sense(bg())
		wantErr(t, err, "ds18b20: w1 testdata/w1/two: 2 sensors found (28-01144c2b8aaa, 28-01144c2b8bbb)", "set serial")
	})
	t.Run("bad serial", func(t *testing.T) {
		if _, err := NewDS18B20("", "../etc"); err == nil {
			t.Error("NewDS18B20 accepted serial ../etc")
		}
	})
}

func TestDallasCRC(t *testing.T) {
	// Scratchpads from real sensors with the CRC the kernel accepted
	// (crc=57, crc=1c); and appending a message's CRC makes the CRC of the
	// whole zero (DS18B20 datasheet, "CRC generation").
	for _, tt := range []struct {
		pad  string
		want byte
	}{{"72014b467fff0e10", 0x57}, {"50054b467fff0c10", 0x1c}, {"ffffffffffffffff", 0xc9}} {
		b, err := hex.DecodeString(tt.pad)
		if err != nil {
			t.Fatal(err)
		}
		if got := dallasCRC(b); got != tt.want {
			t.Errorf("dallasCRC(%s) = %#x, want %#x", tt.pad, got, tt.want)
		}
		if got := dallasCRC(append(b, tt.want)); got != 0 {
			t.Errorf("dallasCRC(%s + crc) = %#x, want 0", tt.pad, got)
		}
	}
}

func FuzzParseW1Slave(f *testing.F) {
	f.Add([]byte("72 01 4b 46 7f ff 0e 10 57 : crc=57 YES\n72 01 4b 46 7f ff 0e 10 57 t=23125\n"))
	f.Add([]byte("ff ff ff ff ff ff ff ff ff : crc=c9 NO\nff ff ff ff ff ff ff ff ff t=-62\n"))
	f.Add([]byte("50 05 4b 46 7f ff 0c 10 1c : crc=1c YES\n50 05 4b 46 7f ff 0c 10 1c t=85000\n"))
	f.Add([]byte(""))
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := parseW1Slave(b)
		if err == nil && !bytes.Contains(b, []byte("YES")) {
			t.Errorf("parseW1Slave(%q) = %v without a YES verdict", b, c)
		}
	})
}

// TestDS18B20Locate: Locate finds a sensor without a conversion and gives
// Sense's error for one that is not there.
func TestDS18B20Locate(t *testing.T) {
	for _, tt := range []struct {
		name, dir, serial string
		missing           bool
	}{
		{"the only sensor", "testdata/w1/one", "", false},
		{"by serial", "testdata/w1/two", "28-01144c2b8aaa", false},
		{"no such serial", "testdata/w1/two", "28-000000000000", true},
		{"two, no serial", "testdata/w1/two", "", true},
		{"no bus", t.TempDir(), "", true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			d, err := NewDS18B20(tt.dir, tt.serial)
			if err != nil {
				t.Fatal(err)
			}
			err = d.Locate()
			if (err != nil) != tt.missing {
				t.Fatalf("Locate() = %v, want an error: %v", err, tt.missing)
			}
			if _, serr := d.Sense(bg()); err != nil && (serr == nil || serr.Error() != err.Error()) {
				t.Errorf("Locate() = %v, Sense() = %v: want the same error", err, serr)
			}
		})
	}
}
