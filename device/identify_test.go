package device

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"periph.io/x/conn/v3/i2c/i2ctest"
)

// sensirionAnswer is n words, each followed by its CRC.
func sensirionAnswer(words ...uint16) []byte {
	var b []byte
	for _, w := range words {
		b = append(b, byte(w>>8), byte(w), sensirionCRC(byte(w>>8), byte(w)))
	}
	return b
}

// reg16Read is a register-pointer write and a 16-bit read.
func reg16Read(addr uint16, reg byte, v uint16) i2ctest.IO {
	return i2ctest.IO{Addr: addr, W: []byte{reg}, R: []byte{byte(v >> 8), byte(v)}}
}

// tiRegs are the reads of registers 0x00-0x03 identifyTIAt48 makes.
func tiRegs(addr uint16, r0, r1, r2, r3 uint16) []i2ctest.IO {
	return []i2ctest.IO{reg16Read(addr, 0, r0), reg16Read(addr, 1, r1), reg16Read(addr, 2, r2), reg16Read(addr, 3, r3)}
}

func TestIdentify(t *testing.T) {
	badCRC := sensirionAnswer(0x1234, 0x5678)
	badCRC[2] ^= 0xFF
	tests := []struct {
		name   string
		addr   uint16
		ops    []i2ctest.IO
		nack   []int // ops answered with a NACK
		driver string
		guess  bool
		how    string // in How
		others []string
		err    bool
	}{
		{name: "bme280 at 0x76", addr: 0x76, ops: []i2ctest.IO{{Addr: 0x76, W: []byte{0xD0}, R: []byte{0x60}}},
			driver: "bme280", how: "chip id 0x60"},
		{name: "bmp280 at the same address", addr: 0x76, ops: []i2ctest.IO{{Addr: 0x76, W: []byte{0xD0}, R: []byte{0x58}}},
			driver: "bmp280", how: "chip id 0x58"},
		{name: "bmp280 sample", addr: 0x77, ops: []i2ctest.IO{{Addr: 0x77, W: []byte{0xD0}, R: []byte{0x56}}},
			driver: "bmp280"},
		{name: "bmp180: no vigil driver", addr: 0x77, ops: []i2ctest.IO{{Addr: 0x77, W: []byte{0xD0}, R: []byte{0x55}}},
			how: `driver = "iio" with device = "bmp180"`, others: []string{"bme280", "bmp280"}},
		{name: "unknown chip id", addr: 0x76, ops: []i2ctest.IO{{Addr: 0x76, W: []byte{0xD0}, R: []byte{0x42}}},
			how: "chip id 0x42 at register 0xd0: not a BME280 (0x60) or BMP280 (0x58), not guessing", others: []string{"bme280", "bmp280", "tca9548a i2c mux"}},
		{name: "a chip that NAKs its id read", addr: 0x76, ops: []i2ctest.IO{{Addr: 0x76, W: []byte{0xD0}, R: []byte{0}}}, nack: []int{0},
			how: "did not answer", err: true, others: []string{"bme280", "bmp280"}},
		{name: "mcp9808", addr: 0x18, ops: []i2ctest.IO{reg16Read(0x18, 0x06, 0x0054), reg16Read(0x18, 0x07, 0x0400)},
			driver: "mcp9808", how: "manufacturer id 0x0054, device id 0x0400"},
		{name: "not an mcp9808", addr: 0x19, ops: []i2ctest.IO{reg16Read(0x19, 0x06, 0x1234), reg16Read(0x19, 0x07, 0x0400)},
			how: "not an MCP9808", others: []string{"mcp9808"}},
		{name: "sht4x answers its serial number", addr: 0x44,
			ops:    []i2ctest.IO{{Addr: 0x44, W: []byte{0x89}}, {Addr: 0x44, R: sensirionAnswer(0x1234, 0x5678)}},
			driver: "sht4x", how: "serial number 0x12345678"},
		{name: "sht3x: no serial 0x89, status 0xf32d", addr: 0x45,
			ops: []i2ctest.IO{{Addr: 0x45, W: []byte{0x89}}, {Addr: 0x45, R: make([]byte, 6)},
				{Addr: 0x45, W: []byte{0xF3, 0x2D}}, {Addr: 0x45, R: sensirionAnswer(0x8010)}},
			nack: []int{1}, driver: "sht3x", how: "status 0x8010"},
		{name: "sht3x: garbage for 0x89 fails its crc", addr: 0x44,
			ops: []i2ctest.IO{{Addr: 0x44, W: []byte{0x89}}, {Addr: 0x44, R: badCRC},
				{Addr: 0x44, W: []byte{0xF3, 0x2D}}, {Addr: 0x44, R: sensirionAnswer(0x0000)}},
			driver: "sht3x"},
		{name: "ina219 where an sht could be", addr: 0x44,
			ops:  []i2ctest.IO{{Addr: 0x44, W: []byte{0x89}}, {Addr: 0x44, W: []byte{0xF3, 0x2D}}, reg16Read(0x44, 0, 0x399F)},
			nack: []int{0, 1}, driver: "ina219", guess: true, how: "reset value 0x399f", others: []string{"sht3x", "sht4x"}},
		{name: "sht4x-only address, no answer", addr: 0x46,
			ops: []i2ctest.IO{{Addr: 0x46, W: []byte{0x89}}, reg16Read(0x46, 0, 0x1234)}, nack: []int{0},
			driver: "ina219", guess: true, how: "a guess: no ID register; no SHT3x or SHT4x"},
		{name: "tmp102 at power-up", addr: 0x48, ops: tiRegs(0x48, 0x1900, 0x60A0, 0x4B00, 0x5000),
			driver: "tmp102", guess: true, how: "a guess: no ID register", others: []string{"ina219", "ads1015", "ads1115"}},
		{name: "tmp102 after its driver ran", addr: 0x49, ops: tiRegs(0x49, 0x1900, 0x60A0|0x0010, 0x4B00, 0x5000),
			driver: "tmp102", guess: true},
		{name: "ads1115 at power-up", addr: 0x48, ops: tiRegs(0x48, 0x0000, 0x8583, 0x8000, 0x7FFF),
			driver: "ads1115", guess: true, how: "the ADS1015 has the same registers", others: []string{"ina219", "tmp102", "ads1015"}},
		{name: "ads1115 after a conversion", addr: 0x4B, ops: tiRegs(0x4B, 0x1234, 0xC383, 0x8000, 0x7FFF),
			driver: "ads1115", guess: true},
		{name: "ina219 at 0x4a", addr: 0x4A, ops: tiRegs(0x4A, 0x399F, 0x0000, 0x0000, 0x0000),
			driver: "ina219", guess: true},
		{name: "none of them at 0x48", addr: 0x48, ops: tiRegs(0x48, 0x1234, 0xFFFF, 0x1111, 0x2222),
			how: "matches neither a TMP102, an ADS1x15 nor an INA219, not guessing", others: []string{"ina219", "tmp102", "ads1015", "ads1115"}},
		{name: "ina219 at 0x40", addr: 0x40, ops: []i2ctest.IO{reg16Read(0x40, 0, 0x399F)},
			driver: "ina219", guess: true, others: []string{"si7021/htu21d/pca9685"}},
		{name: "aht20: no id register", addr: 0x38, driver: "aht20", guess: true, how: "a guess: no ID register", others: []string{"aht10"}},
		{name: "bh1750 at 0x5c", addr: 0x5C, driver: "bh1750", guess: true, others: []string{"am2320"}},
		{name: "scd4x serial number", addr: 0x62,
			ops:    []i2ctest.IO{{Addr: 0x62, W: []byte{0x36, 0x82}}, {Addr: 0x62, R: sensirionAnswer(0xAAAA, 0xBBBB, 0xCCCC)}},
			driver: "scd4x", how: "serial number 0xaaaabbbbcccc"},
		{name: "scd4x measuring ignores the command", addr: 0x62,
			ops: []i2ctest.IO{{Addr: 0x62, W: []byte{0x36, 0x82}}}, nack: []int{0}, driver: "scd4x", guess: true},
		{name: "an oled", addr: 0x3C, guess: true, how: "vigil has no driver"},
		{name: "nothing known", addr: 0x11, how: "no chip vigil knows"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			bus := newNACKBus(tt.ops...)
			bus.nack = map[int]bool{}
			for _, i := range tt.nack {
				bus.nack[i] = true
			}
			var slept []time.Duration
			sleep := func(_ context.Context, d time.Duration) error { slept = append(slept, d); return nil }
			id := Identify(bg(), bus, tt.addr, sleep)
			if id.Addr != tt.addr || id.Driver != tt.driver || id.Guess != tt.guess || (id.Err != nil) != tt.err {
				t.Errorf("Identify(0x%02x) = %+v, want driver %q, guess %v, err %v", tt.addr, id, tt.driver, tt.guess, tt.err)
			}
			if !strings.Contains(id.How, tt.how) {
				t.Errorf("Identify(0x%02x).How = %q, want it to say %q", tt.addr, id.How, tt.how)
			}
			for _, o := range tt.others {
				if !slices.Contains(id.Others, o) {
					t.Errorf("Identify(0x%02x).Others = %q, want %q among them", tt.addr, id.Others, o)
				}
			}
			if slices.Contains(id.Others, id.Driver) && id.Driver != "" {
				t.Errorf("Identify(0x%02x).Others = %q names the driver %q itself", tt.addr, id.Others, id.Driver)
			}
			mustConsume(t, bus)
		})
	}
}

// Identification writes nothing but a register pointer or a read command:
// no transaction writes a value.
func TestIdentifyOnlyReads(t *testing.T) {
	sim, err := NewSimI2C("bme280@0x76,bmp280@0x77,tmp102@0x48")
	if err != nil {
		t.Fatal(err)
	}
	rec := &i2ctest.Record{Bus: sim}
	for _, a := range Scan(rec, 0x08, 0x77) {
		Identify(bg(), rec, a, func(context.Context, time.Duration) error { return nil })
	}
	if len(rec.Ops) == 0 {
		t.Fatal("no transactions recorded")
	}
	for _, op := range rec.Ops {
		if len(op.W) > 1 && !slices.Equal(op.W, sht3xReadStatus) && !slices.Equal(op.W, scd4xReadSerial) {
			t.Errorf("Identify wrote % x to 0x%02x: more than a register pointer", op.W, op.Addr)
		}
	}
}
