package device

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"slices"
	"strconv"
	"strings"
)

// Where the kernel lists its sensors, relative to the root of the file
// system (KernelSensor reads through an fs.FS rooted at "/").
const (
	IIODir   = "sys/bus/iio/devices" // Documentation/ABI/testing/sysfs-bus-iio
	HwmonDir = "sys/class/hwmon"     // Documentation/hwmon/sysfs-interface
)

// KernelSensor is a sensor the Linux kernel already drives, read from sysfs:
// an IIO device (driver "iio") or a hwmon chip (driver "hwmon"). It is
// found by its directory or by the name the kernel gives it (the device's
// "name" file), looked up again on every Sense so a device that appears
// later, or under another number after a reboot, is found.
//
// Its channels become vigil's quantities with vigil's units: temperature
// (°C), humidity (%), pressure (hPa), illuminance (lx), co2 (ppm), voc
// (ppb), resistance (Ω), voltage (V), current (A), power (W). The first
// channel of a kind is named plainly, later ones are numbered:
// temperature, temperature_2.
type KernelSensor struct {
	class kernelClass
	fsys  fs.FS
	path  string   // directory in fsys, or ""
	name  string   // the kernel's name for the device, or ""
	want  []string // quantities to return, in order; none: all
	board KernelBoard
}

// KernelBoard is what the hint for a missing device needs to know of the
// board: how a device the kernel drives is enabled there.
type KernelBoard struct {
	// Overlays: the firmware loads device-tree overlays named by
	// dtoverlay= lines in /boot/firmware/config.txt (a Raspberry Pi).
	Overlays bool
	// I2CBus is the header's I²C bus, for the new_device line given on
	// other boards; "" when the board names none.
	I2CBus string
}

// OnBoard sets the board whose way of enabling a device the error for a
// missing one names; without it the hint is for a board that is not a
// Raspberry Pi. Call it before the first Sense.
func (k *KernelSensor) OnBoard(b KernelBoard) *KernelSensor {
	k.board = b
	return k
}

// Locate reports whether the device is there now, without reading it:
// the error Sense would give for a missing one, with how to enable it.
func (k *KernelSensor) Locate() error {
	_, _, err := k.find()
	return err
}

var _ Sensor = (*KernelSensor)(nil)

// kernelKind is a kind of reading and its unit.
type kernelKind struct {
	quantity string
	unit     Unit
}

// kernelKinds are the kinds vigil reads, in the order readings are
// returned.
var kernelKinds = []kernelKind{
	{"temperature", Celsius},
	{"humidity", Percent},
	{"pressure", HectoPascal},
	{"illuminance", Lux},
	{"co2", PPM},
	{"voc", PPB},
	{"resistance", Ohm},
	{"voltage", Volt},
	{"current", Ampere},
	{"power", Watt},
}

// kernelClass is what differs between IIO and hwmon.
type kernelClass struct {
	driver string // "iio", "hwmon"
	dir    string // IIODir, HwmonDir
	prefix string // "iio:device", "hwmon"
	// example is a chip of the class, named in a hint about overlays.
	example string
	// channels lists the readable channels of a device directory, each
	// with its kind and a function that reads its value in vigil's unit.
	channels func(fsys fs.FS, dir string, names []string) []kernelChannel
}

// kernelChannel is one readable channel.
type kernelChannel struct {
	kind  int    // index into kernelKinds
	index int    // channel number, for ordering
	mod   string // modifier (IIO "ambient", "object"), for ordering
	file  string // the file read, for errors
	read  func() (float64, error)
}

var (
	iioClass   = kernelClass{driver: "iio", dir: IIODir, prefix: "iio:device", example: "bme680", channels: iioChannels}
	hwmonClass = kernelClass{driver: "hwmon", dir: HwmonDir, prefix: "hwmon", example: "lm75", channels: hwmonChannels}
)

// KernelQuantities returns the readings (quantity and unit) the named
// quantities of an iio or hwmon sensor have: "temperature" or a numbered
// "temperature_2". ok is false for a name that is no kernel quantity.
func KernelQuantities(names []string) ([]Reading, bool) {
	out := make([]Reading, 0, len(names))
	for _, n := range names {
		k, ok := kernelKindOf(n)
		if !ok {
			return nil, false
		}
		out = append(out, Reading{Quantity: n, Unit: kernelKinds[k].unit})
	}
	return out, true
}

// kernelKindOf returns the kind of "temperature" or "temperature_N" (N ≥ 2).
func kernelKindOf(q string) (int, bool) {
	base, num, numbered := strings.Cut(q, "_")
	if numbered {
		n, err := strconv.Atoi(num)
		if err != nil || n < 2 || strconv.Itoa(n) != num {
			return 0, false
		}
	}
	for i, k := range kernelKinds {
		if k.quantity == base {
			return i, true
		}
	}
	return 0, false
}

// NewIIO returns the IIO device at path (a directory such as
// "/sys/bus/iio/devices/iio:device0") or, with path empty, the one the
// kernel names name ("bme680", as in /sys/bus/iio/devices/*/name). fsys
// is the root file system: os.DirFS("/") on a board, a test tree in tests.
// quantities, if any, are the readings to return, in that order; a missing
// one is then an error. It does no IO.
func NewIIO(fsys fs.FS, path, name string, quantities []string) (*KernelSensor, error) {
	return newKernelSensor(iioClass, fsys, path, name, quantities)
}

// NewHwmon returns the hwmon chip at path ("/sys/class/hwmon/hwmon2") or
// named name ("lm75", as in /sys/class/hwmon/*/name), like NewIIO.
func NewHwmon(fsys fs.FS, path, name string, quantities []string) (*KernelSensor, error) {
	return newKernelSensor(hwmonClass, fsys, path, name, quantities)
}

func newKernelSensor(class kernelClass, fsys fs.FS, path, name string, quantities []string) (*KernelSensor, error) {
	d := class.driver
	switch {
	case (path == "") == (name == ""):
		return nil, fmt.Errorf("%s: give the device's path or its kernel name, one of them", d)
	case path != "" && !fs.ValidPath(strings.TrimPrefix(path, "/")):
		return nil, fmt.Errorf("%s: path %q: want an absolute, clean path like /%s/%s0", d, path, class.dir, class.prefix)
	case strings.ContainsAny(name, "/\n"):
		return nil, fmt.Errorf("%s: device name %q: want the kernel's name as in /%s/*/name", d, name, class.dir)
	}
	for i, q := range quantities {
		if _, ok := kernelKindOf(q); !ok {
			return nil, fmt.Errorf("%s: quantity %q: want one of %s, or one numbered like temperature_2", d, q, kernelQuantityNames())
		}
		if slices.Contains(quantities[:i], q) {
			return nil, fmt.Errorf("%s: quantity %q listed twice", d, q)
		}
	}
	return &KernelSensor{class: class, fsys: fsys, path: strings.TrimPrefix(path, "/"), name: name, want: slices.Clone(quantities)}, nil
}

func kernelQuantityNames() string {
	names := make([]string, len(kernelKinds))
	for i, k := range kernelKinds {
		names[i] = k.quantity
	}
	return strings.Join(names, ", ")
}

// Sense finds the device and reads its channels.
func (k *KernelSensor) Sense(ctx context.Context) ([]Reading, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("%s: read: %w", k.class.driver, err)
	}
	dir, a, err := k.find()
	if err != nil {
		return nil, err
	}
	entries, err := fs.ReadDir(k.fsys, dir)
	if err != nil {
		return nil, a.errorf("read", err)
	}
	names := make([]string, len(entries))
	for i, e := range entries {
		names[i] = e.Name()
	}
	chans := k.class.channels(k.fsys, dir, names)
	slices.SortStableFunc(chans, func(x, y kernelChannel) int {
		if x.kind != y.kind {
			return x.kind - y.kind
		}
		if x.index != y.index {
			return x.index - y.index
		}
		return strings.Compare(x.mod, y.mod)
	})
	var all []Reading
	count := make([]int, len(kernelKinds))
	for _, ch := range chans {
		v, err := ch.read()
		if err != nil {
			return nil, a.errorf("read "+ch.file, err)
		}
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, fmt.Errorf("%s: %s: implausible %s value %v", a.chip, a.where, ch.file, v)
		}
		kind := kernelKinds[ch.kind]
		count[ch.kind]++
		q := kind.quantity
		if n := count[ch.kind]; n > 1 {
			q += "_" + strconv.Itoa(n)
		}
		all = append(all, Reading{Quantity: q, Value: round(v, 4), Unit: kind.unit})
	}
	if len(all) == 0 {
		return nil, fmt.Errorf("%s: %s: no channel vigil reads (%s)", a.chip, a.where, kernelQuantityNames())
	}
	if len(k.want) == 0 {
		return all, nil
	}
	out := make([]Reading, 0, len(k.want))
	for _, q := range k.want {
		i := slices.IndexFunc(all, func(r Reading) bool { return r.Quantity == q })
		if i < 0 {
			have := make([]string, len(all))
			for j, r := range all {
				have[j] = r.Quantity
			}
			return nil, fmt.Errorf("%s: %s: no %s reading (it has %s)", a.chip, a.where, q, strings.Join(have, ", "))
		}
		out = append(out, all[i])
	}
	return out, nil
}

// find returns the device's directory and how errors name it.
func (k *KernelSensor) find() (string, at, error) {
	d := k.class.driver
	if k.path != "" {
		a := at{d, "/" + k.path}
		if _, err := fs.Stat(k.fsys, k.path); err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return "", a, fmt.Errorf("%s: %s: no such device: is its kernel driver loaded? ('ls /%s' lists the devices; %s)", d, a.where, k.class.dir, k.enableHint())
			}
			return "", a, a.errorf("read", err)
		}
		return k.path, a, nil
	}
	entries, err := fs.ReadDir(k.fsys, k.class.dir)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return "", at{d, "/" + k.class.dir}, at{d, "/" + k.class.dir}.errorf("list", err)
	}
	var found, others []string
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), k.class.prefix) {
			continue // IIO triggers have names too
		}
		dir := k.class.dir + "/" + e.Name()
		b, err := fs.ReadFile(k.fsys, dir+"/name")
		if err != nil {
			continue
		}
		n := strings.TrimSpace(string(b))
		// Some platform drivers name a device after its node ("dht11@4").
		if base, _, _ := strings.Cut(n, "@"); n == k.name || base == k.name {
			found = append(found, dir)
		} else {
			others = append(others, n)
		}
	}
	a := at{d, k.name}
	switch len(found) {
	case 0:
		present := "none"
		if len(others) > 0 {
			slices.Sort(others)
			present = strings.Join(slices.Compact(others), ", ")
		}
		return "", a, fmt.Errorf("%s: no device named %q in /%s (present: %s): %s", d, k.name, k.class.dir, present, k.enableHint())
	case 1:
		a.where = k.name + " at /" + found[0]
		return found[0], a, nil
	}
	for i := range found {
		found[i] = "/" + found[i]
	}
	return "", a, fmt.Errorf("%s: %d devices named %q (%s): set path to pick one", d, len(found), k.name, strings.Join(found, ", "))
}

// i2cSensorOverlay are the devices Raspberry Pi OS's i2c-sensor overlay
// enables (arch/arm/boot/dts/overlays/README, "i2c-sensor"), by the name
// the kernel gives them, with the overlay parameter that selects them.
var i2cSensorOverlay = map[string]string{
	"adt7410": "adt7410", "aht10": "aht10", "bh1750": "bh1750", "bme280": "bme280",
	"bme680": "bme680", "bmp085": "bmp085", "bmp180": "bmp180", "bmp280": "bmp280",
	"bmp380": "bmp380", "ccs811": "ccs811", "ds1621": "ds1621", "hdc1000": "hdc100x",
	"hdc1008": "hdc100x", "hdc1010": "hdc100x", "htu21": "htu21", "jc42": "jc42",
	"lm75": "lm75", "mcp980x": "mcp980x", "ms5637": "ms5637", "ms5803": "ms5803",
	"ms5805": "ms5805", "ms5837": "ms5837", "ms8607": "ms8607", "sgp30": "sgp30",
	"sht3x": "sht3x", "sht4x": "sht4x", "si7020": "si7020", "sps30": "sps30",
	"tmp102": "tmp102", "tsl4531": "tsl4531", "veml6070": "veml6070",
}

// knownAddr are the default I²C addresses of chips vigil has no driver
// for but the kernel does, for the new_device line (each datasheet's
// address with the address pins low, or its only address).
var knownAddr = map[string]uint16{
	"bme680": 0x76, "bmp085": 0x77, "bmp180": 0x77, "htu21": 0x40, "lm75": 0x48,
	"sgp30": 0x58, "si7020": 0x40,
}

// enableHint says how to make the kernel drive the device: on a Raspberry
// Pi the overlay to add, elsewhere its device-tree node or the new_device
// line that creates an I²C device from user space.
func (k *KernelSensor) enableHint() string {
	name, example := k.name, k.class.example
	if k.board.Overlays {
		return overlayHint(name, example)
	}
	if name == "dht11" || name == "dht22" || name == "am2302" {
		return "enable the dht11 node in the board's device tree, on the GPIO that DATA is wired to"
	}
	chip, addr := name, "0xADDR"
	if chip == "" {
		chip = "CHIP"
	}
	if a, ok := knownAddr[chip]; ok {
		addr = fmt.Sprintf("0x%02x", a)
	} else if d, ok := LookupDriver(chip); ok && len(d.Addresses) > 0 {
		addr = fmt.Sprintf("0x%02x", d.Addresses[0])
	}
	bus := k.board.I2CBus
	if bus == "" {
		bus = "N"
	}
	return "enable its node in the board's device tree, or, if the kernel has the driver, create the I²C device: echo " + chip + " " + addr +
		" | sudo tee /sys/bus/i2c/devices/i2c-" + bus + "/new_device (with its address and bus; 'vigil scan' lists what answers)"
}

// overlayHint says how to make the kernel drive the device named name on
// a Raspberry Pi (empty when it was looked for by path), with example, a
// chip of the same class, where it does not know the device's own overlay.
func overlayHint(name, example string) string {
	const cfg = " to /boot/firmware/config.txt and reboot"
	switch p, ok := i2cSensorOverlay[name]; {
	case ok:
		return "on a Raspberry Pi, add dtoverlay=i2c-sensor," + p + cfg + " (add addr=0x.. if it is not at the default address)"
	case name == "dht11" || name == "dht22" || name == "am2302":
		return "on a Raspberry Pi, add dtoverlay=dht11,gpiopin=4" + cfg + " (the pin DATA is wired to)"
	case name == "":
		return "on a Raspberry Pi, enable it with an overlay such as dtoverlay=i2c-sensor," + example + " in /boot/firmware/config.txt"
	}
	return "enable its kernel driver with a device-tree overlay (on a Raspberry Pi, /boot/firmware/overlays/README lists them, e.g. dtoverlay=i2c-sensor," + example + ")"
}

// readNumber reads a sysfs attribute holding one number.
func readNumber(fsys fs.FS, file string) (float64, error) {
	b, err := fs.ReadFile(fsys, file)
	if err != nil {
		return 0, err
	}
	s := strings.TrimSpace(string(b))
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return 0, fmt.Errorf("not a number: %q", s)
	}
	return v, nil
}

// iioType is an IIO channel type vigil reads: its kind, the factor from
// the ABI's unit to vigil's, and the modifiers it accepts ("" for none).
type iioType struct {
	name   string // "temp", as in in_temp_raw
	mods   map[string]int
	factor float64
}

// iioTypes follow Documentation/ABI/testing/sysfs-bus-iio: after _offset
// and _scale (or in _input) temperatures are in milli degrees Celsius,
// relative humidity in milli percent, pressure in kilopascal, illuminance
// in lux, concentrations in percent, resistance in ohms, voltages in
// millivolts, currents in milliamps and power in milliwatts. Modifiers:
// ambient and object temperatures of contact-less thermometers; the gas of
// a concentration.
var iioTypes = []iioType{
	{"temp", map[string]int{"": 0, "ambient": 0, "object": 0}, 1e-3},
	{"humidityrelative", map[string]int{"": 1}, 1e-3},
	{"pressure", map[string]int{"": 2}, 10},
	{"illuminance", map[string]int{"": 3}, 1},
	{"concentration", map[string]int{"co2": 4}, 1e4}, // percent to ppm
	{"concentration", map[string]int{"voc": 5}, 1e7}, // percent to ppb
	{"resistance", map[string]int{"": 6}, 1},
	{"voltage", map[string]int{"": 7}, 1e-3},
	{"current", map[string]int{"": 8}, 1e-3},
	{"power", map[string]int{"": 9}, 1e-3},
}

// iioChannels lists the channels of an IIO device directory. A channel is
// in_<type>[<index>][_<modifier>]_input (already scaled) or _raw, whose
// value is (raw + offset) · scale; offset and scale may be the channel's
// own or shared by the type ("in_voltage_scale").
func iioChannels(fsys fs.FS, dir string, names []string) []kernelChannel {
	have := make(map[string]bool, len(names))
	for _, n := range names {
		have[n] = true
	}
	seen := map[string]bool{}
	var out []kernelChannel
	for _, n := range names {
		rest, ok := strings.CutPrefix(n, "in_")
		if !ok {
			continue
		}
		body, isRaw := strings.CutSuffix(rest, "_raw")
		if !isRaw {
			if body, ok = strings.CutSuffix(rest, "_input"); !ok {
				continue
			}
		}
		for _, t := range iioTypes {
			after, ok := strings.CutPrefix(body, t.name)
			if !ok {
				continue
			}
			i := 0
			for i < len(after) && after[i] >= '0' && after[i] <= '9' {
				i++
			}
			idx, mod := after[:i], after[i:]
			if mod != "" && mod[0] != '_' {
				continue // "in_voltage0-voltage1_raw": differential, or another type
			}
			mod = strings.TrimPrefix(mod, "_")
			kind, ok := t.mods[mod]
			if !ok {
				continue
			}
			prefix := "in_" + body // in_temp0_ambient
			if seen[prefix] {
				break
			}
			seen[prefix] = true
			ch := kernelChannel{kind: kind, index: -1, mod: mod}
			if idx != "" {
				ch.index, _ = strconv.Atoi(idx)
			}
			factor := t.factor
			if input := prefix + "_input"; have[input] {
				ch.file = input
				ch.read = func() (float64, error) {
					v, err := readNumber(fsys, dir+"/"+input)
					return v * factor, err
				}
			} else {
				sm := ""
				if mod != "" {
					sm = "_" + mod
				}
				// The channel's own attribute first, then the ones shared
				// across indexes, then across the type.
				shared := func(attr string) string {
					for _, c := range []string{prefix + attr, "in_" + t.name + sm + attr, "in_" + t.name + attr} {
						if have[c] {
							return c
						}
					}
					return ""
				}
				raw, offset, scale := prefix+"_raw", shared("_offset"), shared("_scale")
				ch.file = raw
				ch.read = func() (float64, error) {
					r, err := readNumber(fsys, dir+"/"+raw)
					if err != nil {
						return 0, err
					}
					o, s := 0.0, 1.0
					if offset != "" {
						if o, err = readNumber(fsys, dir+"/"+offset); err != nil {
							return 0, fmt.Errorf("%s: %w", offset, err)
						}
					}
					if scale != "" {
						if s, err = readNumber(fsys, dir+"/"+scale); err != nil {
							return 0, fmt.Errorf("%s: %w", scale, err)
						}
					}
					return (r + o) * s * factor, nil
				}
			}
			out = append(out, ch)
			break
		}
	}
	return out
}

// hwmonTypes follow Documentation/hwmon/sysfs-interface: temp*_input in
// millidegree Celsius, humidity*_input in milli-percent, in*_input in
// millivolt, curr*_input in milliampere, power*_input in microwatt.
var hwmonTypes = []struct {
	name   string
	kind   int
	factor float64
}{
	{"temp", 0, 1e-3},
	{"humidity", 1, 1e-3},
	{"in", 7, 1e-3},
	{"curr", 8, 1e-3},
	{"power", 9, 1e-6},
}

// hwmonKinds are the kinds hwmonTypes read, in their order.
func hwmonKinds() []kernelKind {
	out := make([]kernelKind, len(hwmonTypes))
	for i, t := range hwmonTypes {
		out[i] = kernelKinds[t.kind]
	}
	return out
}

// hwmonChannels lists the <type><N>_input attributes of a hwmon chip.
func hwmonChannels(fsys fs.FS, dir string, names []string) []kernelChannel {
	var out []kernelChannel
	for _, n := range names {
		body, ok := strings.CutSuffix(n, "_input")
		if !ok {
			continue
		}
		for _, t := range hwmonTypes {
			num, ok := strings.CutPrefix(body, t.name)
			if !ok {
				continue
			}
			idx, err := strconv.Atoi(num)
			if err != nil || idx < 0 || strconv.Itoa(idx) != num {
				continue // "in" also prefixes "intrusion0_alarm"
			}
			file, factor := n, t.factor
			out = append(out, kernelChannel{kind: t.kind, index: idx, file: file, read: func() (float64, error) {
				v, err := readNumber(fsys, dir+"/"+file)
				return v * factor, err
			}})
			break
		}
	}
	return out
}

// Like the 1-Wire directory, a kernel device is looked up on every read:
// a driver not loaded yet is a reading error naming the overlay that
// loads it.
func iioDriver() DriverInfo {
	return DriverInfo{
		Name: "iio", Chip: "any sensor the kernel drives through IIO (BME680, DHT22, SCD30, ...)", Bus: "sysfs", Keys: []string{"path", "device", "quantities"},
		Quantities: kernelReadings(kernelKinds),
		Path:       "/" + iioClass.dir + "/" + iioClass.prefix + "0",
		Open:       func(o Opening) (Sensor, error) { return openKernel(NewIIO, o) },
		Readings:   listedReadings,
		Simulate:   simListed,
	}
}

func hwmonDriver() DriverInfo {
	return DriverInfo{
		Name: "hwmon", Chip: "any chip the kernel drives through hwmon (LM75, SHT3x, INA2xx, ...)", Bus: "sysfs", Keys: []string{"path", "device", "quantities"},
		Quantities: kernelReadings(hwmonKinds()),
		Path:       "/" + hwmonClass.dir + "/" + hwmonClass.prefix + "0",
		Open:       func(o Opening) (Sensor, error) { return openKernel(NewHwmon, o) },
		Readings:   listedReadings,
		Simulate:   simListed,
	}
}

func openKernel(open func(fs.FS, string, string, []string) (*KernelSensor, error), o Opening) (Sensor, error) {
	d, err := open(o.FS, o.Path, o.Device, o.Quantities)
	if err != nil {
		return nil, err
	}
	return d.OnBoard(KernelBoard{Overlays: o.Board.Overlays, I2CBus: o.Board.I2CBus}), nil
}

// listedReadings are the quantities a kernel sensor lists; not known when
// it lists none.
func listedReadings(s Spec) ([]Reading, bool) {
	if len(s.Quantities) == 0 {
		return nil, false
	}
	return KernelQuantities(s.Quantities)
}

// simListed simulates what a kernel sensor lists, or when it lists none,
// whatever its kind of device may report.
func simListed(s Spec, sim *Sim) Sensor {
	if q, ok := listedReadings(s); ok {
		sim.Produce(q)
	}
	return sim
}

func kernelReadings(kinds []kernelKind) []Reading {
	out := make([]Reading, len(kinds))
	for i, k := range kinds {
		out[i] = Reading{Quantity: k.quantity, Unit: k.unit}
	}
	return out
}

// KernelQuantityNames are the quantities an iio or hwmon sensor may list;
// a later channel of a kind is numbered: temperature_2.
func KernelQuantityNames() []string {
	out := make([]string, len(kernelKinds))
	for i, k := range kernelKinds {
		out[i] = k.quantity
	}
	return out
}

// KernelDriven says how to read a common sensor vigil has no driver for
// but the kernel has (driver = "iio" with device = ...), or "" for any
// other name.
func KernelDriven(chip string) string {
	return map[string]string{
		"dht11":   `driver = "iio" with device = "dht11" (dtoverlay=dht11,gpiopin=N)`,
		"dht22":   `driver = "iio" with device = "dht11" (dtoverlay=dht11,gpiopin=N drives the DHT22 too)`,
		"am2302":  `driver = "iio" with device = "dht11" (dtoverlay=dht11,gpiopin=N drives the AM2302 too)`,
		"bme680":  `driver = "iio" with device = "bme680" (dtoverlay=i2c-sensor,bme680)`,
		"bme688":  `driver = "iio" with device = "bme680" (dtoverlay=i2c-sensor,bme680)`,
		"bmp180":  `driver = "iio" with device = "bmp180" (dtoverlay=i2c-sensor,bmp180)`,
		"bmp388":  `driver = "iio" with device = "bmp380" (dtoverlay=i2c-sensor,bmp380)`,
		"htu21":   `driver = "iio" with device = "htu21" (dtoverlay=i2c-sensor,htu21)`,
		"si7021":  `driver = "iio" with device = "si7020" (dtoverlay=i2c-sensor,si7020)`,
		"ccs811":  `driver = "iio" with device = "ccs811" (dtoverlay=i2c-sensor,ccs811)`,
		"sgp30":   `driver = "iio" with device = "sgp30" (dtoverlay=i2c-sensor,sgp30)`,
		"lm75":    `driver = "hwmon" with device = "lm75" (dtoverlay=i2c-sensor,lm75)`,
		"ds1621":  `driver = "hwmon" with device = "ds1621" (dtoverlay=i2c-sensor,ds1621)`,
		"adt7410": `driver = "hwmon" with device = "adt7410" (dtoverlay=i2c-sensor,adt7410)`,
	}[chip]
}
