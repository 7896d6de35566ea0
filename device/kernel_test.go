package device

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"
)

// The trees under testdata/sysfs follow the kernel's sysfs ABI
// (Documentation/ABI/testing/sysfs-bus-iio, Documentation/hwmon/sysfs-interface):
// iio:device0 a BME680 with processed _input channels (pressure in kPa),
// iio:device1 an SCD41 with _raw, _offset and _scale, iio:device2 an
// MCP3208 whose scale is shared by its voltage channels, iio:device3 an
// MLX90614 with ambient and object temperatures, iio:device4 a DHT11 named
// after its device-tree node; hwmon0-3 the SoC, an LM75, an INA219 and an
// SHT3x.
var (
	iioTree   = os.DirFS("testdata/sysfs/iio")
	hwmonTree = os.DirFS("testdata/sysfs/hwmon")
)

func TestIIO(t *testing.T) {
	tests := []struct {
		name         string
		path, device string
		quantities   []string
		want         []Reading
		tol          float64
	}{
		{"processed _input, pressure in kPa", "", "bme680", nil, []Reading{
			{"temperature", 23.45, Celsius}, {"humidity", 45.123, Percent},
			{"pressure", 1013.25, HectoPascal}, {"resistance", 52310, Ohm},
		}, 1e-9},
		{"by path", "/sys/bus/iio/devices/iio:device0", "", []string{"pressure", "temperature"}, []Reading{
			{"pressure", 1013.25, HectoPascal}, {"temperature", 23.45, Celsius},
		}, 1e-9},
		// (26214 − 16852.114286) · 2.670288085 = 24998.9 m°C;
		// 32768 · 1.525878906 = 50000 m%; 850 · 0.0001 % = 850 ppm.
		{"_raw with _offset and _scale", "", "scd41", nil, []Reading{
			{"temperature", 24.9989, Celsius}, {"humidity", 50, Percent}, {"co2", 850, PPM},
		}, 1e-4},
		// 2048 · 0.805664062 mV and 1024 · 0.805664062 mV; the
		// differential in_voltage0-voltage1_raw is not read.
		{"scale shared by type", "", "mcp3208", nil, []Reading{
			{"voltage", 1.65, Volt}, {"voltage_2", 0.825, Volt},
		}, 1e-4},
		// (15095 − 13657.5) · 20 and (15545 − 13657.5) · 20 m°C.
		{"modifiers, shared offset and scale", "", "mlx90614", nil, []Reading{
			{"temperature", 28.75, Celsius}, {"temperature_2", 37.75, Celsius},
		}, 1e-9},
		{"named after its node", "", "dht11", nil, []Reading{
			{"temperature", 21, Celsius}, {"humidity", 48, Percent},
		}, 1e-9},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := NewIIO(iioTree, tt.path, tt.device, tt.quantities)
			if err != nil {
				t.Fatal(err)
			}
			got, err := d.Sense(bg())
			if err != nil {
				t.Fatal(err)
			}
			wantReadings(t, got, tt.want, tt.tol)
		})
	}
}

func TestHwmon(t *testing.T) {
	tests := []struct {
		name         string
		path, device string
		want         []Reading
	}{
		{"lm75 by name", "", "lm75", []Reading{{"temperature", 21.5, Celsius}}},
		{"lm75 by path", "/sys/class/hwmon/hwmon1", "", []Reading{{"temperature", 21.5, Celsius}}},
		{"humidity in milli-percent", "", "sht3x", []Reading{{"temperature", 22.35, Celsius}, {"humidity", 41.2, Percent}}},
		// in0 (shunt) and in1 (bus) in mV, curr1 in mA, power1 in µW.
		{"ina219", "", "ina219", []Reading{
			{"voltage", 0.003, Volt}, {"voltage_2", 5.004, Volt}, {"current", 0.42, Ampere}, {"power", 2.1, Watt},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := NewHwmon(hwmonTree, tt.path, tt.device, nil)
			if err != nil {
				t.Fatal(err)
			}
			got, err := d.Sense(bg())
			if err != nil {
				t.Fatal(err)
			}
			wantReadings(t, got, tt.want, 1e-9)
		})
	}
}

func TestKernelSensorMissing(t *testing.T) {
	empty := fstest.MapFS{}
	tests := []struct {
		name     string
		open     func() (*KernelSensor, error)
		prefix   string
		contains string
	}{
		{"no such iio device", func() (*KernelSensor, error) { return NewIIO(iioTree, "", "bme280", nil) },
			`iio: no device named "bme280" in /sys/bus/iio/devices (present: bme680, dht11@4, mcp3208, mlx90614, scd41): `, "dtoverlay=i2c-sensor,bme280"},
		{"no iio at all", func() (*KernelSensor, error) { return NewIIO(empty, "", "bme680", nil) },
			`iio: no device named "bme680" in /sys/bus/iio/devices (present: none): `, "dtoverlay=i2c-sensor,bme680"},
		{"no such hwmon chip", func() (*KernelSensor, error) { return NewHwmon(hwmonTree, "", "tmp102", nil) },
			`hwmon: no device named "tmp102" in /sys/class/hwmon (present: cpu_thermal, ina219, lm75, sht3x): `, "dtoverlay=i2c-sensor,tmp102"},
		{"dht22", func() (*KernelSensor, error) { return NewIIO(empty, "", "dht22", nil) },
			`iio: no device named "dht22"`, "dtoverlay=dht11,gpiopin=4"},
		{"unknown chip", func() (*KernelSensor, error) { return NewIIO(empty, "", "xyz123", nil) },
			`iio: no device named "xyz123"`, "device-tree overlay"},
		{"no such path", func() (*KernelSensor, error) { return NewHwmon(hwmonTree, "/sys/class/hwmon/hwmon9", "", nil) },
			"hwmon: /sys/class/hwmon/hwmon9: no such device: is its kernel driver loaded? ('ls /sys/class/hwmon' lists the devices;", "dtoverlay=i2c-sensor,"},
		{"no such hwmon path names an hwmon chip", func() (*KernelSensor, error) { return NewHwmon(hwmonTree, "/sys/class/hwmon/hwmon9", "", nil) },
			"hwmon: /sys/class/hwmon/hwmon9: no such device", "dtoverlay=i2c-sensor,lm75 "},
		{"no such iio path names an iio device", func() (*KernelSensor, error) { return NewIIO(iioTree, "/sys/bus/iio/devices/iio:device9", "", nil) },
			"iio: /sys/bus/iio/devices/iio:device9: no such device", "dtoverlay=i2c-sensor,bme680 "},
		{"missing quantity", func() (*KernelSensor, error) {
			return NewHwmon(hwmonTree, "", "lm75", []string{"temperature", "humidity"})
		},
			"hwmon: lm75 at /sys/class/hwmon/hwmon1: no humidity reading (it has temperature)", ""},
		{"no channel vigil reads", func() (*KernelSensor, error) {
			return NewIIO(fstest.MapFS{"sys/bus/iio/devices/iio:device0/name": {Data: []byte("mpu6050\n")}, "sys/bus/iio/devices/iio:device0/in_accel_x_raw": {Data: []byte("12\n")}}, "", "mpu6050", nil)
		}, "iio: mpu6050 at /sys/bus/iio/devices/iio:device0: no channel vigil reads", ""},
		{"not a number", func() (*KernelSensor, error) {
			return NewHwmon(fstest.MapFS{"sys/class/hwmon/hwmon0/name": {Data: []byte("lm75\n")}, "sys/class/hwmon/hwmon0/temp1_input": {Data: []byte("x\n")}}, "", "lm75", nil)
		}, "hwmon: lm75 at /sys/class/hwmon/hwmon0: read temp1_input: not a number", ""},
		{"two devices", func() (*KernelSensor, error) {
			return NewHwmon(fstest.MapFS{"sys/class/hwmon/hwmon0/name": {Data: []byte("lm75\n")}, "sys/class/hwmon/hwmon1/name": {Data: []byte("lm75\n")}}, "", "lm75", nil)
		}, `hwmon: 2 devices named "lm75" (/sys/class/hwmon/hwmon0, /sys/class/hwmon/hwmon1): set path to pick one`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := tt.open()
			if err != nil {
				t.Fatal(err)
			}
			_, err = d.OnBoard(KernelBoard{Overlays: true, I2CBus: "1"}).Sense(bg()) // a Raspberry Pi
			wantErr(t, err, tt.prefix, tt.contains)
		})
	}
}

// TestKernelHintOtherBoards: on a board that takes no dtoverlay lines the
// hint for a missing device is its device-tree node or the new_device line
// docs/hardware.md gives, with the board's bus, never a Raspberry Pi's
// overlay; Locate gives the same error as Sense, without reading.
func TestKernelHintOtherBoards(t *testing.T) {
	empty := fstest.MapFS{}
	jh := KernelBoard{I2CBus: "0"} // a VisionFive 2
	tests := []struct {
		name     string
		open     func() (*KernelSensor, error)
		board    KernelBoard
		contains string
	}{
		{"iio by name", func() (*KernelSensor, error) { return NewIIO(empty, "", "bme680", nil) }, jh,
			"enable its node in the board's device tree, or, if the kernel has the driver, create the I²C device: echo bme680 0x76 | sudo tee /sys/bus/i2c/devices/i2c-0/new_device"},
		{"hwmon by name, no default bus", func() (*KernelSensor, error) { return NewHwmon(hwmonTree, "", "tmp102", nil) }, KernelBoard{},
			"echo tmp102 0x48 | sudo tee /sys/bus/i2c/devices/i2c-N/new_device"},
		{"unknown chip", func() (*KernelSensor, error) { return NewIIO(empty, "", "xyz123", nil) }, jh,
			"echo xyz123 0xADDR | sudo tee /sys/bus/i2c/devices/i2c-0/new_device"},
		{"by path", func() (*KernelSensor, error) { return NewHwmon(hwmonTree, "/sys/class/hwmon/hwmon9", "", nil) }, jh,
			"echo CHIP 0xADDR | sudo tee /sys/bus/i2c/devices/i2c-0/new_device"},
		{"dht22", func() (*KernelSensor, error) { return NewIIO(empty, "", "dht22", nil) }, jh,
			"enable the dht11 node in the board's device tree, on the GPIO that DATA is wired to"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := tt.open()
			if err != nil {
				t.Fatal(err)
			}
			d.OnBoard(tt.board)
			_, err = d.Sense(bg())
			wantErr(t, err, "", tt.contains)
			if strings.Contains(err.Error(), "Raspberry Pi") || strings.Contains(err.Error(), "dtoverlay") {
				t.Errorf("Sense() = %v: a Raspberry Pi's hint on another board", err)
			}
			if lerr := d.Locate(); lerr == nil || lerr.Error() != err.Error() {
				t.Errorf("Locate() = %v, want %v", lerr, err)
			}
		})
	}
	d, err := NewHwmon(hwmonTree, "", "lm75", nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Locate(); err != nil {
		t.Errorf("Locate() of a present chip = %v", err)
	}
}

func TestKernelSensorConfig(t *testing.T) {
	for _, tt := range []struct {
		name         string
		path, device string
		quantities   []string
		want         string
	}{
		{"neither", "", "", nil, "iio: give the device's path or its kernel name, one of them"},
		{"both", "/sys/bus/iio/devices/iio:device0", "bme680", nil, "iio: give the device's path or its kernel name, one of them"},
		{"unclean path", "/sys/bus/iio/devices/../iio:device0", "", nil, `iio: path "/sys/bus/iio/devices/../iio:device0": want an absolute, clean path`},
		{"unknown quantity", "", "bme680", []string{"gas"}, `iio: quantity "gas": want one of temperature, humidity, pressure,`},
		{"numbered 1", "", "bme680", []string{"temperature_1"}, `iio: quantity "temperature_1"`},
		{"twice", "", "bme680", []string{"pressure", "pressure"}, `iio: quantity "pressure" listed twice`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := NewIIO(iioTree, tt.path, tt.device, tt.quantities)
			wantErr(t, err, tt.want)
		})
	}
}

// A device found by name is looked up on every read: it may appear after
// start-up (a module loaded late) or under another number.
func TestKernelSensorAppears(t *testing.T) {
	dir := t.TempDir()
	d, err := NewHwmon(os.DirFS(dir), "", "lm75", nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.Sense(bg()); err == nil {
		t.Fatal("Sense before the chip exists: nil error")
	}
	chip := filepath.Join(dir, "sys/class/hwmon/hwmon4")
	if err := os.MkdirAll(chip, 0o755); err != nil {
		t.Fatal(err)
	}
	for f, v := range map[string]string{"name": "lm75\n", "temp1_input": "-12500\n"} {
		if err := os.WriteFile(filepath.Join(chip, f), []byte(v), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := d.Sense(bg())
	if err != nil {
		t.Fatal(err)
	}
	wantReadings(t, got, []Reading{{"temperature", -12.5, Celsius}}, 1e-9)
}

func TestKernelQuantities(t *testing.T) {
	got, ok := KernelQuantities([]string{"temperature", "pressure", "temperature_2", "co2"})
	want := []Reading{{"temperature", 0, Celsius}, {"pressure", 0, HectoPascal}, {"temperature_2", 0, Celsius}, {"co2", 0, PPM}}
	if !ok {
		t.Fatal("KernelQuantities: not ok")
	}
	wantReadings(t, got, want, 0)
	for _, bad := range []string{"gas", "temperature_1", "temperature_02", "temperature_x", ""} {
		if _, ok := KernelQuantities([]string{bad}); ok {
			t.Errorf("KernelQuantities(%q) ok, want not", bad)
		}
	}
}
