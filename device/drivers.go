package device

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
)

// DriverInfo is a sensor driver as it registers itself: what `vigil
// sensors --drivers` prints, what the config accepts, what the simulator
// produces and how the driver is opened. Each driver declares its own in
// its file (bme280Driver in bme280.go); drivers lists them. Config, the
// command line and the simulator ask this registry, by name.
type DriverInfo struct {
	Name      string   // the config's driver = "..."
	Chip      string   // what it is
	Bus       string   // "i2c", "i2c or spi", "spi", "w1" (kernel 1-Wire), "sysfs" (kernel IIO/hwmon), "none"
	Addresses []uint16 // I²C addresses the chip can be strapped to; the first is the default
	Keys      []string // driver-specific config keys, besides name, driver, bus, address, timeout, deadband and calibrate

	// Quantities are the readings (quantity and unit) the driver
	// produces, in its order; an ADC's are all its channels, a kernel
	// driver's what the kernel may report. The simulator produces these.
	Quantities []Reading
	// Resolution is the smallest step of a quantity's reading, by
	// quantity, where the datasheet gives one (the BME280's 0.01 °C): the
	// noise floor of its baseline, so a flat series is not infinitely
	// unusual at its first step. Missing: UnitResolution.
	Resolution map[string]float64
	// MinTimeout is the shortest read timeout the chip needs, when the
	// default is too short for it.
	MinTimeout time.Duration
	// Path is, for a driver of the kernel's, an example of a device's
	// directory, for messages.
	Path string

	// Open builds the driver for a configured sensor. A bus chip gets the
	// bus its sensor is on in o.I2C or o.SPI (borrowed: never closed).
	Open func(o Opening) (Sensor, error)
	// Readings returns what a configured sensor produces, when that is
	// not Quantities limited to its channels; ok is false when it is not
	// known. Nil: Quantities.
	Readings func(s Spec) ([]Reading, bool)
	// Simulate adapts the simulator to a configured sensor (its
	// channels, its scale). Nil: the simulator as it is.
	Simulate func(s Spec, sim *Sim) Sensor
}

// drivers lists every driver's registration. Each is declared in the
// driver's own file; this is the index of them, in the order `vigil
// sensors --drivers` lists them. (A table of functions rather than
// init-time Register calls: STYLE.md allows no init side effects and no
// mutable package globals, and a function per driver has neither.)
func drivers() []DriverInfo {
	return []DriverInfo{
		bme280Driver(), bmp280Driver(), aht20Driver(), sht3xDriver(), sht4xDriver(),
		mcp9808Driver(), tmp102Driver(), ina219Driver(), bh1750Driver(), scd4xDriver(),
		ads1015Driver(), ads1115Driver(),
		max31855Driver(), max31865Driver(), mcp3008Driver(), mcp3208Driver(),
		ds18b20Driver(), iioDriver(), hwmonDriver(), simDriver(),
	}
}

func addrRange(from, to uint16) []uint16 {
	var a []uint16
	for x := from; x <= to; x++ {
		a = append(a, x)
	}
	return a
}

// Drivers returns every sensor driver.
func Drivers() []DriverInfo { return drivers() }

// LookupDriver returns the driver with the given name.
func LookupDriver(name string) (DriverInfo, bool) {
	for _, d := range drivers() {
		if d.Name == name {
			return d, true
		}
	}
	return DriverInfo{}, false
}

// DriverNames returns the names of every driver, in the registry's order.
func DriverNames() []string {
	var out []string
	for _, d := range drivers() {
		out = append(out, d.Name)
	}
	return out
}

// DriversWith returns the names of the drivers for which ok holds.
func DriversWith(ok func(DriverInfo) bool) []string {
	var out []string
	for _, d := range drivers() {
		if ok(d) {
			out = append(out, d.Name)
		}
	}
	return out
}

// I2C reports whether the chip can be on an I²C bus.
func (d DriverInfo) I2C() bool { return strings.Contains(d.Bus, "i2c") }

// SPI reports whether the chip can be on an SPI port.
func (d DriverInfo) SPI() bool { return strings.Contains(d.Bus, "spi") }

// SPIOnly reports whether the chip is on nothing but SPI: its bus
// defaults to the board's first SPI port.
func (d DriverInfo) SPIOnly() bool { return d.Bus == "spi" }

// Takes reports whether a configured sensor of this driver takes key: one
// of its Keys, bus for a bus chip, address for an I²C chip.
func (d DriverInfo) Takes(key string) bool {
	switch key {
	case "bus":
		return d.I2C() || d.SPI()
	case "address":
		return len(d.Addresses) > 0
	}
	return slices.Contains(d.Keys, key)
}

// otherChips are common I²C parts vigil has no driver for, so that a scan
// can still say what an address probably is.
var otherChips = []struct {
	from, to uint16
	name     string
}{
	{0x0D, 0x0D, "qmc5883l"},
	{0x1E, 0x1E, "hmc5883l"},
	{0x20, 0x27, "pcf8574/mcp23017"},
	{0x29, 0x29, "vl53l0x/tsl2591"},
	{0x38, 0x38, "aht10"},
	{0x39, 0x39, "tsl2561/apds9960"},
	{0x3C, 0x3D, "ssd1306 oled"},
	{0x40, 0x40, "si7021/htu21d/pca9685"},
	{0x50, 0x57, "eeprom 24cxx"},
	{0x53, 0x53, "adxl345"},
	{0x58, 0x58, "sgp30"},
	{0x5A, 0x5B, "ccs811"},
	{0x5C, 0x5C, "am2320"},
	{0x68, 0x68, "ds3231/ds1307 rtc, mpu6050"},
	{0x69, 0x69, "mpu6050"},
	{0x70, 0x77, "tca9548a i2c mux"},
	{0x77, 0x77, "bmp180"},
}

// ChipsAt returns the chips that may answer at an I²C address: vigil's
// drivers first, then common parts it has no driver for.
func ChipsAt(addr uint16) []string {
	var out []string
	for _, d := range drivers() {
		if slices.Contains(d.Addresses, addr) {
			out = append(out, d.Name)
		}
	}
	for _, c := range otherChips {
		if addr >= c.from && addr <= c.to {
			out = append(out, c.name)
		}
	}
	return out
}

// Quantities returns the readings (quantity and unit, zero value) a driver
// produces, or false for an unknown driver. For an ADC these are all its
// channels; SensorQuantities limits them to a sensor's configuration.
func Quantities(driver string) ([]Reading, bool) {
	d, ok := LookupDriver(driver)
	return slices.Clone(d.Quantities), ok
}

// SensorQuantities returns the readings (quantity and unit, zero values) a
// configured sensor produces: the driver's, limited for a driver that
// takes channels (an ADC) to the configured channels read in volts (none
// means ch0).
func SensorQuantities(driver string, channels []int) ([]Reading, bool) {
	d, ok := LookupDriver(driver)
	switch {
	case !ok:
		return nil, false
	case d.Takes("channels"):
		return adsQuantities(d.Quantities, channels), true
	}
	return slices.Clone(d.Quantities), true
}

func adsQuantities(all []Reading, channels []int) []Reading {
	if len(channels) == 0 {
		channels = []int{0}
	}
	var out []Reading
	for _, ch := range channels {
		for _, r := range all {
			if r.Quantity == "ch"+strconv.Itoa(ch) {
				out = append(out, r)
			}
		}
	}
	return out
}

// adcVolts are the readings of an ADC's n channels in volts: ch0, ch1, ...
func adcVolts(n int) []Reading {
	out := make([]Reading, n)
	for i := range out {
		out[i] = Reading{Quantity: "ch" + strconv.Itoa(i), Unit: Volt}
	}
	return out
}

// Readings returns what the configured sensor produces (quantity and
// unit): its driver's, an ADC's configured channels, the quantities an iio
// or hwmon sensor lists. ok is false when they are not known: an unknown
// driver, an iio or hwmon sensor that lists none (it reports whatever the
// kernel exposes).
func (s Spec) Readings() ([]Reading, bool) {
	d, ok := LookupDriver(s.Driver)
	switch {
	case !ok:
		return nil, false
	case d.Readings != nil:
		return d.Readings(s)
	}
	return SensorQuantities(s.Driver, s.channelNumbers())
}

// Resolution returns the smallest step of the configured sensor's quantity
// q: the driver's, else UnitResolution(u).
func (s Spec) Resolution(q string, u Unit) float64 {
	if d, ok := LookupDriver(s.Driver); ok {
		if r, ok := d.Resolution[q]; ok && r > 0 {
			return r
		}
	}
	return UnitResolution(u)
}

// UnitResolution is the noise floor of a reading in unit u when its driver
// names none: a step any sensor of that unit resolves, and below which a
// change is not worth a z-score.
func UnitResolution(u Unit) float64 {
	switch u {
	case Celsius:
		return 0.1
	case Percent:
		return 0.5
	case HectoPascal:
		return 0.1
	case Volt:
		return 0.01
	case Ampere:
		return 0.001
	case Watt:
		return 0.01
	case Lux, PPM, PPB, Megabyte, Ohm:
		return 1
	}
	return 0.01
}

// HasBaseline reports whether a reading in unit u has a baseline (what is
// usual at each hour of the day): not an on/off flag (Bool) and not a
// count of seconds such as the uptime, which only grows.
func HasBaseline(u Unit) bool { return u != Bool && u != Second }

// WriteDrivers prints the registry as `vigil sensors --drivers` shows it:
// one row per driver with its bus, addresses, keys, quantities and chip.
func WriteDrivers(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "DRIVER\tBUS\tADDRESS\tKEYS\tQUANTITIES\tCHIP")
	for _, d := range drivers() {
		addr := "-"
		if len(d.Addresses) > 0 {
			addr = fmt.Sprintf("0x%02x", d.Addresses[0])
			if n := len(d.Addresses); n > 1 {
				addr += fmt.Sprintf(" (0x%02x-0x%02x)", slices.Min(d.Addresses), slices.Max(d.Addresses))
				if n == 2 {
					addr = fmt.Sprintf("0x%02x (or 0x%02x)", d.Addresses[0], d.Addresses[1])
				}
			}
		}
		keys := "-"
		if len(d.Keys) > 0 {
			keys = strings.Join(d.Keys, ", ")
		}
		qs, _ := Quantities(d.Name)
		var qn []string
		for _, q := range qs {
			qn = append(qn, q.Quantity)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", d.Name, d.Bus, addr, keys, strings.Join(qn, " "), d.Chip)
	}
	fmt.Fprintf(tw, "\nEvery [[sensor]] takes name, driver, bus (I²C bus number, or \"spi:B.C\" for %s), address, timeout, deadband and calibrate.\n", strings.Join(DriversWith(DriverInfo.SPI), ", "))
	fmt.Fprintln(tw, "iio and hwmon read what the kernel drives: device = \"bme680\" (its name file) or path = \"/sys/...\".")
	fmt.Fprintln(tw, "The board's own health is the reserved sensor \"board\".")
	return tw.Flush()
}
