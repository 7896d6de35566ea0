package device

import (
	"context"
	"errors"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"periph.io/x/conn/v3/i2c/i2ctest"
)

// TestDriversMatchQuantities reads every driver once from a recording and
// checks it produces exactly the quantities and units of the table the
// simulator uses, so a config written for hardware runs unchanged on
// board = "sim" (and the other way round).
func TestDriversMatchQuantities(t *testing.T) {
	open := map[string]func() (Sensor, error){
		"bme280": func() (Sensor, error) {
			return NewBME280(playback(append(bmeOpen(0x76, 0x60, datasheetCal), bmeRead(0x76, bmeData(519888, 415148, 0x6A50))...)...), "1", 0x76)
		},
		"bmp280": func() (Sensor, error) {
			return NewBMP280(playback(append(bmeOpen(0x76, 0x58, datasheetCal), bmeRead(0x76, bmeData(519888, 415148, 0)[:6])...)...), "1", 0x76)
		},
		"aht20": func() (Sensor, error) {
			return NewAHT20(playback(i2ctest.IO{Addr: 0x38, W: aht20Status, R: []byte{0x18}}, i2ctest.IO{Addr: 0x38, W: aht20Trigger},
				i2ctest.IO{Addr: 0x38, R: aht20Frame(0x1C, 0x80000, 0x60000)}), "1", 0)
		},
		"mcp9808": func() (Sensor, error) {
			return NewMCP9808(playback(append(mcp9808Open(0x18), i2ctest.IO{Addr: 0x18, W: []byte{0x05}, R: []byte{0x01, 0x94}})...), "1", 0)
		},
		"tmp102": func() (Sensor, error) {
			return NewTMP102(playback(append(tmp102Open(0x48), i2ctest.IO{Addr: 0x48, W: []byte{0x00}, R: []byte{0x19, 0x00}})...), "1", 0)
		},
		"ina219": func() (Sensor, error) {
			return NewINA219(playback(append(ina219Open(0x40, 0.1, 3.2), ina219Read(0x40, 5000, 1250<<3, 5120, 1280)...)...), "1", 0, 0, 0)
		},
		"bh1750": func() (Sensor, error) {
			return NewBH1750(playback(append(bh1750Open(0x23), bh1750Read(0x23, 0x83, 0x90)...)...), "1", 0)
		},
		"scd4x": func() (Sensor, error) {
			return NewSCD4x(playback(append(scd4xOpen(), scd4xMeasure(0x01F4, 0x6667, 0x5EB9)...)...), "1", 0, time.Now)
		},
		"ads1015": func() (Sensor, error) {
			return NewADS1015(playback(adsChannel(0x48, 0xC303, 0, 0x4000)...), "1", 0, nil, 0)
		},
		"ads1115": func() (Sensor, error) {
			return NewADS1115(playback(adsChannel(0x48, 0xC383, 0, 0x4000)...), "1", 0, nil, 0)
		},
		"ds18b20": func() (Sensor, error) { return NewDS18B20("testdata/w1/one", "") },
		"sht3x": func() (Sensor, error) {
			var s sleeps
			return NewSHT3x(playback(i2ctest.IO{Addr: 0x44, W: sht3xCmdHeaterOff}, i2ctest.IO{Addr: 0x44, W: sht3xCmdMeasure},
				i2ctest.IO{Addr: 0x44, R: shtFrame(0x6666, 0x3333)}), "1", 0, s.sleep)
		},
		"sht4x": func() (Sensor, error) {
			var s sleeps
			return NewSHT4x(playback(i2ctest.IO{Addr: 0x44, W: sht4xCmdReset}, i2ctest.IO{Addr: 0x44, W: sht4xCmdMeasure},
				i2ctest.IO{Addr: 0x44, R: shtFrame(0x6666, 0x3333)}), "1", 0, s.sleep)
		},
		"max31855": func() (Sensor, error) { return NewMAX31855(spiPlayback(max31855Frame(100, 400, 0)), "0.0") },
		"max31865": func() (Sensor, error) {
			var s sleeps
			return NewMAX31865(spiPlayback(append(max31865Open(0x01), max31865Read(0x01, 0x3B, 0x88)...)...), "0.0", 100, 2, 430, s.sleep)
		},
		"mcp3008": func() (Sensor, error) {
			return NewMCP3008(spiPlayback(mcp3008Conv(0, 512)), "0.0", 3.3, []ADCChannel{VoltsChannel(0)})
		},
		"mcp3208": func() (Sensor, error) {
			return NewMCP3208(spiPlayback(mcp3208Conv(0, 512)), "0.0", 3.3, []ADCChannel{VoltsChannel(0)})
		},
		"iio":   func() (Sensor, error) { return NewIIO(os.DirFS("testdata/sysfs/every"), "", "every", nil) },
		"hwmon": func() (Sensor, error) { return NewHwmon(os.DirFS("testdata/sysfs/every"), "", "every", nil) },
		"sim": func() (Sensor, error) {
			return NewSim("x", "sim", time.Unix(0, 0), func() time.Time { return time.Unix(60, 0) })
		},
	}
	for _, d := range Drivers() {
		t.Run(d.Name, func(t *testing.T) {
			o, ok := open[d.Name]
			if !ok {
				t.Fatalf("no recording for driver %q", d.Name)
			}
			s, err := o()
			if err != nil {
				t.Fatal(err)
			}
			got, err := s.Sense(bg())
			if err != nil {
				t.Fatal(err)
			}
			want, ok := SensorQuantities(d.Name, nil)
			if !ok {
				t.Fatalf("SensorQuantities(%q) unknown", d.Name)
			}
			if len(got) != len(want) {
				t.Fatalf("Sense = %v, want quantities %v", got, want)
			}
			for i := range want {
				if got[i].Quantity != want[i].Quantity || got[i].Unit != want[i].Unit {
					t.Errorf("reading %d = %s [%s], want %s [%s]", i, got[i].Quantity, got[i].Unit, want[i].Quantity, want[i].Unit)
				}
			}
		})
	}
}

func TestDrivers(t *testing.T) {
	for _, d := range Drivers() {
		if _, ok := Quantities(d.Name); !ok {
			t.Errorf("driver %q has no quantities", d.Name)
		}
		if strings.Contains(d.Bus, "i2c") != (len(d.Addresses) > 0) {
			t.Errorf("driver %q on bus %q lists addresses %#x: want addresses for I²C drivers only", d.Name, d.Bus, d.Addresses)
		}
		for _, a := range d.Addresses {
			if a < 0x08 || a > 0x77 {
				t.Errorf("driver %q: address %#x outside 0x08-0x77", d.Name, a)
			}
		}
	}
	if _, ok := LookupDriver("health"); ok {
		t.Error(`"health" is listed as a configurable driver`)
	}
}

func TestChipsAt(t *testing.T) {
	tests := []struct {
		addr uint16
		want []string
	}{
		{0x76, []string{"bme280", "bmp280", "tca9548a i2c mux"}},
		{0x77, []string{"bme280", "bmp280", "tca9548a i2c mux", "bmp180"}},
		{0x48, []string{"tmp102", "ina219", "ads1015", "ads1115"}},
		{0x40, []string{"ina219", "si7021/htu21d/pca9685"}},
		{0x38, []string{"aht20", "aht10"}},
		{0x62, []string{"scd4x"}},
		{0x44, []string{"sht3x", "sht4x", "ina219"}},
		{0x45, []string{"sht3x", "sht4x", "ina219"}},
		{0x46, []string{"sht4x", "ina219"}},
		{0x1A, []string{"mcp9808"}},
		{0x5C, []string{"bh1750", "am2320"}},
		{0x3C, []string{"ssd1306 oled"}},
		{0x10, nil},
	}
	for _, tt := range tests {
		if got := ChipsAt(tt.addr); !slices.Equal(got, tt.want) {
			t.Errorf("ChipsAt(%#x) = %q, want %q", tt.addr, got, tt.want)
		}
	}
}

func TestSensorQuantities(t *testing.T) {
	q, _ := SensorQuantities("ads1115", []int{3, 1})
	if len(q) != 2 || q[0].Quantity != "ch3" || q[1].Quantity != "ch1" || q[0].Unit != Volt {
		t.Errorf("SensorQuantities(ads1115, [3 1]) = %v", q)
	}
	q, _ = SensorQuantities("ads1015", nil)
	if len(q) != 1 || q[0].Quantity != "ch0" {
		t.Errorf("SensorQuantities(ads1015, nil) = %v, want ch0", q)
	}
	if q, ok := SensorQuantities("bme280", []int{1}); !ok || len(q) != 3 {
		t.Errorf("SensorQuantities(bme280) = %v, %v", q, ok)
	}
	q, _ = SensorQuantities("mcp3008", []int{7, 2})
	if len(q) != 2 || q[0].Quantity != "ch7" || q[1].Quantity != "ch2" || q[1].Unit != Volt {
		t.Errorf("SensorQuantities(mcp3008, [7 2]) = %v", q)
	}
	if _, ok := SensorQuantities("nope", nil); ok {
		t.Error("SensorQuantities(nope) ok")
	}
}

func TestScan(t *testing.T) {
	// A bus with an AHT20 and a BME280: the probe is a 1-byte read.
	bus := &scanBus{present: map[uint16]bool{0x38: true, 0x76: true}}
	if got := Scan(bus, 0x08, 0x77); !slices.Equal(got, []uint16{0x38, 0x76}) {
		t.Errorf("Scan = %#x, want [0x38 0x76]", got)
	}
	if bus.writes != 0 {
		t.Errorf("Scan wrote %d times, want read-only probes", bus.writes)
	}
	if bus.probes != 0x77-0x08+1 {
		t.Errorf("Scan probed %d addresses, want %d", bus.probes, 0x77-0x08+1)
	}
	if got := Scan(bus, 0x40, 0x4F); got != nil {
		t.Errorf("Scan(0x40-0x4f) = %#x, want none", got)
	}
}

// scanBus acknowledges reads at the present addresses.
type scanBus struct {
	i2ctest.Playback
	present        map[uint16]bool
	probes, writes int
}

func (b *scanBus) Tx(addr uint16, w, r []byte) error {
	b.probes++
	if len(w) > 0 {
		b.writes++
	}
	if len(r) != 1 || !b.present[addr] {
		return errNACK
	}
	return nil
}

func TestReopen(t *testing.T) {
	calls := 0
	r := &Reopen{Open: func() (Sensor, error) {
		calls++
		if calls < 3 {
			return nil, errors.New("aht20: i2c bus 1 addr 0x38: init: sysfs-i2c: remote I/O error")
		}
		return Failed{Err: errors.New("read")}, nil
	}}
	for i := 1; i <= 2; i++ {
		if _, err := r.Sense(bg()); err == nil || err.Error() != "aht20: i2c bus 1 addr 0x38: init: sysfs-i2c: remote I/O error" {
			t.Fatalf("Sense %d = %v, want the open error", i, err)
		}
	}
	for i := 3; i <= 4; i++ {
		if _, err := r.Sense(bg()); err == nil || err.Error() != "read" {
			t.Fatalf("Sense %d = %v, want the opened sensor's error", i, err)
		}
	}
	if calls != 3 {
		t.Errorf("Open called %d times, want 3 (not again once open)", calls)
	}
	ctx, cancel := context.WithCancel(bg())
	cancel()
	r = &Reopen{Open: func() (Sensor, error) { t.Error("Open called with a canceled context"); return nil, nil }}
	if _, err := r.Sense(ctx); !errors.Is(err, context.Canceled) {
		t.Errorf("Sense = %v, want context.Canceled", err)
	}
}

func TestSimHealthAndLimit(t *testing.T) {
	start := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	now := start.Add(90 * time.Second)
	h := NewSimHealth(start, func() time.Time { return now })
	got, err := h.Sense(bg())
	if err != nil {
		t.Fatal(err)
	}
	want := HealthQuantities()
	if len(got) != len(want) {
		t.Fatalf("sim health = %v, want %v", got, want)
	}
	for i, r := range got {
		if r.Quantity != want[i].Quantity || r.Unit != want[i].Unit {
			t.Errorf("sim health reading %d = %v, want %s [%s]", i, r, want[i].Quantity, want[i].Unit)
		}
		if r.Unit == Bool && r.Value != 0 && r.Value != 1 {
			t.Errorf("%s = %v, want 0 or 1", r.Quantity, r.Value)
		}
	}
	byQ := map[string]float64{}
	for _, r := range got {
		byQ[r.Quantity] = r.Value
	}
	if byQ["uptime"] != 3690 || byQ["clock_synced"] != 1 || byQ["undervoltage"] != 0 {
		t.Errorf("sim health = %v", byQ)
	}

	s, err := NewSim("adc", "ads1115", start, func() time.Time { return now })
	if err != nil {
		t.Fatal(err)
	}
	s.Limit("ch2", "ch0")
	got, _ = s.Sense(bg())
	if len(got) != 2 || got[0].Quantity != "ch0" || got[1].Quantity != "ch2" {
		t.Errorf("limited sim = %v, want ch0 and ch2", got)
	}
}
