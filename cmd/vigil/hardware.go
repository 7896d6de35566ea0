package main

// Hardware wiring: buses, sensor drivers and the board health sensor, and
// the `vigil sensors` and `vigil scan` commands.
//
// Failure policy: only a config error stops vigil; hardware trouble is a
// reading error. A configured bus that does not exist (no /dev/i2c-N, no
// /dev/spidevB.C: I²C not enabled yet, a HAT's overlay not loaded) and a
// chip that does not answer on a bus that exists are treated alike: the
// sensor is returned as a device.Reopen that tries to open the bus and the
// chip again on every read and reports the error meanwhile. The daemon
// starts, reads the other sensors and the board's health, and rules like
// error(air) or stale(air) > 5m fire for the missing one. Retrying costs
// one stat of the device node per sample (no periph.io re-init), so a bus
// that appears later (modprobe i2c-dev, dtoverlay at runtime) is picked up
// without a restart. A sensor the kernel drives (iio, hwmon) is looked up
// in sysfs on every read, like a DS18B20: until its driver is loaded the
// reading error says how to enable it on this board (an overlay on a
// Raspberry Pi, the device tree or a new_device line elsewhere). Whatever
// the cause, openSensors logs one warning at start for every sensor it
// cannot open (a missing bus once, naming its sensors), with the fix.
// `vigil sensors` never stops at the first problem: it prints every
// sensor's reading or error and then fails.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"periph.io/x/conn/v3/driver/driverreg"
	"periph.io/x/conn/v3/i2c"
	"periph.io/x/conn/v3/i2c/i2creg"
	"periph.io/x/conn/v3/spi"
	"periph.io/x/conn/v3/spi/spireg"
	_ "periph.io/x/host/v3/gpioioctl"
	"periph.io/x/host/v3/sysfs"

	"github.com/vigil-iot/vigil/board"
	"github.com/vigil-iot/vigil/config"
	"github.com/vigil-iot/vigil/device"
)

const (
	defaultSensorTimeout = 5 * time.Second
	// The SCD4x's first measurement is ready 5 s after start-up and
	// periph.io polls for it once a second: give it room.
	scd4xMinTimeout = 7 * time.Second
	healthTimeout   = 2 * time.Second
)

// openSensors opens every configured sensor and the board health sensor
// ("board"). Buses are opened once and shared; closeAll closes them. On the
// "sim" board every sensor is simulated and no hardware is touched. Every
// sensor that cannot be opened is logged once as a warning that says how
// to fix it; it reports the error on every read until it can be read.
func openSensors(cfg *config.Config, prof board.Profile, now func() time.Time, log *slog.Logger) (sensors []device.Named, closeAll func() error) {
	sensors, closeAll, problems := openSensorsLenient(cfg, prof, now)
	for _, p := range problems {
		p.log(log)
	}
	return sensors, closeAll
}

// openProblem is a sensor, or a bus and its sensors, that could not be
// opened at start.
// (With info set it is a choice made for one: the bus it was given.)
type openProblem struct {
	info   bool   // logged at Info, not Warn
	msg    string // what vigil does about it
	sensor string // "" for a missing bus: err names its sensors
	err    error  // what is wrong, and where a fix is known, the fix
	fix    string // the fix, when err does not say it
	bus    string // the bus chosen for the sensor
}

func (p openProblem) log(log *slog.Logger) {
	var args []any
	if p.sensor != "" {
		args = append(args, "sensor", p.sensor)
	}
	if p.bus != "" {
		args = append(args, "bus", p.bus)
	}
	if p.err != nil {
		args = append(args, "err", p.err)
	}
	if p.fix != "" {
		args = append(args, "fix", p.fix)
	}
	level := slog.LevelWarn
	if p.info {
		level = slog.LevelInfo
	}
	log.Log(context.Background(), level, p.msg, args...)
}

// listI2C returns the I²C buses this machine has, by number, in order:
// those periph.io's registry knows and any /dev/i2c-N that appeared after
// it was filled.
func (h *hardware) listI2C() ([]string, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if err := h.init(); err != nil {
		return nil, err
	}
	var have []string
	for _, r := range i2creg.All() {
		if r.Number >= 0 {
			have = append(have, strconv.Itoa(r.Number))
		} else {
			have = append(have, r.Name)
		}
	}
	devs, _ := filepath.Glob("/dev/i2c-*")
	for _, d := range devs {
		if n := strings.TrimPrefix(d, "/dev/i2c-"); n != "" && strings.Trim(n, "0123456789") == "" {
			have = append(have, n)
		}
	}
	slices.SortFunc(have, func(a, b string) int {
		x, errA := strconv.Atoi(a)
		y, errB := strconv.Atoi(b)
		if errA == nil && errB == nil {
			return x - y
		}
		return strings.Compare(a, b)
	})
	return slices.Compact(have), nil
}

// onlyI2CBus picks the bus of an I²C sensor that names none on a board
// profile with no default (generic) from the buses the machine has: the
// only one, as `vigil scan` does. With none or several it says what to do.
func onlyI2CBus(prof board.Profile, have []string) (string, error) {
	switch len(have) {
	case 1:
		return have[0], nil
	case 0:
		hint := ""
		if prof.EnableI2C != "" {
			hint = "; to enable I²C: " + prof.EnableI2C
		}
		return "", fmt.Errorf("no I²C bus: the %s board profile names no default bus and this machine has none (no /dev/i2c-*)%s; once it has one, vigil uses it", prof.Name, hint)
	}
	return "", fmt.Errorf("no I²C bus set: the %s board profile names no default bus and this machine has %d (buses here: %s); set bus = \"N\" to the one the sensor is on ('vigil scan --bus N' lists what answers on each)", prof.Name, len(have), strings.Join(have, ", "))
}

// needsDefaultI2C reports whether s is an I²C chip that names no bus.
func needsDefaultI2C(s config.Sensor) bool {
	info, ok := device.LookupDriver(s.Driver)
	return ok && s.Bus == "" && len(info.Addresses) > 0 && !slices.Contains(config.SPIOnly, s.Driver)
}

// checkI2CDefault is `vigil config check` on the I²C sensors that name no
// bus on a board profile with no default, against the buses have lists:
// with one bus it says each uses it, with none that each reads as an
// error until one appears (hardware, not the file), and with several it is
// a config error for each, naming its line and the buses found.
func checkI2CDefault(cfg *config.Config, prof board.Profile, list func() ([]string, error)) (notes []string, err error) {
	if prof.I2CBus != "" || prof.Name == "sim" {
		return nil, nil
	}
	var idx []int
	for i, s := range cfg.Sensors {
		if needsDefaultI2C(s) {
			idx = append(idx, i)
		}
	}
	if len(idx) == 0 {
		return nil, nil
	}
	have, err := list()
	if err != nil {
		return []string{fmt.Sprintf("cannot list the I²C buses: %v", err)}, nil
	}
	bus, berr := onlyI2CBus(prof, have)
	var errs []error
	for _, i := range idx {
		name := cfg.Sensors[i].Name
		switch {
		case berr == nil:
			notes = append(notes, fmt.Sprintf("sensor %s names no I²C bus: it uses i2c bus %s, the only one here (the %s board profile names no default bus)", name, bus, prof.Name))
		case len(have) == 0:
			notes = append(notes, fmt.Sprintf("sensor %s reads as an error until a bus appears: %v", name, berr))
		default:
			errs = append(errs, cfg.SensorError(i, "bus", berr))
		}
	}
	return notes, errors.Join(errs...)
}

// The warnings' messages.
const (
	msgBusMissing    = "bus missing: its sensors read as errors and are retried on every sample"
	msgNotAnswering  = "sensor not answering; retrying on every read"
	msgSensorMissing = "sensor missing: it reads as an error and is looked for on every sample"
	msgSensorFailed  = "sensor cannot be opened: it reads as an error"
)

// openSensorsLenient is openSensors that returns the sensors it could not
// open instead of logging them.
func openSensorsLenient(cfg *config.Config, prof board.Profile, now func() time.Time) ([]device.Named, func() error, []openProblem) {
	start := now()
	if prof.Name == "sim" {
		var out []device.Named
		for _, s := range cfg.Sensors {
			out = append(out, named(s, simSensor(s, start, now)))
		}
		out = append(out, device.Named{Name: config.BoardSensor, Sensor: device.NewSimHealth(start, now), Timeout: healthTimeout})
		return out, func() error { return nil }, nil
	}

	hw := newHardware(prof)
	var out []device.Named
	for _, s := range cfg.Sensors {
		out = append(out, named(s, hw.open(s, now)))
	}
	var problems []openProblem
	for _, f := range hw.failures {
		problems = append(problems, openProblem{msg: msgBusMissing, err: fmt.Errorf("sensor %s: %w", strings.Join(f.sensors, ", "), f.err)})
	}
	problems = append(problems, hw.problems...)
	out = append(out, device.Named{Name: config.BoardSensor, Sensor: &device.Health{
		Root:         "/",
		ThermalZone:  prof.ThermalZone,
		ThrottlePath: prof.ThrottlePath,
		StateDir:     cfg.Device.StateDir,
		ClockSynced:  device.KernelClockSynced,
	}, Timeout: healthTimeout})
	return out, hw.close, problems
}

// named binds a configured sensor's name, timeout and calibrations to
// what reads it.
func named(s config.Sensor, sensor device.Sensor) device.Named {
	return device.Named{Name: s.Name, Sensor: sensor, Timeout: sensorTimeout(s), Calibrate: calibrations(s)}
}

// calibrations turns a sensor's calibrate table into device's, which
// device.Sense applies before anything sees a reading. config check has
// made sure each is an offset or two points with different raw values.
func calibrations(s config.Sensor) map[string]device.Calibration {
	if len(s.Calibrate) == 0 {
		return nil
	}
	out := make(map[string]device.Calibration, len(s.Calibrate))
	for q, c := range s.Calibrate {
		switch p := c.Points; {
		case c.Offset != nil:
			out[q] = device.Offset(*c.Offset)
		case len(p) == 2 && len(p[0]) == 2 && len(p[1]) == 2:
			out[q] = device.TwoPoint(p[0][0], p[0][1], p[1][0], p[1][1])
		}
	}
	return out
}

func sensorTimeout(s config.Sensor) time.Duration {
	t := s.Timeout.Duration
	if t <= 0 {
		t = defaultSensorTimeout
	}
	if s.Driver == "scd4x" {
		t = max(t, scd4xMinTimeout)
	}
	return t
}

// sensorReadings returns the readings (quantity and unit) a configured
// sensor produces: its driver's, an ADC's configured channels, the
// quantities an iio or hwmon sensor lists. ok is false when they are not
// known: an unknown driver, an iio or hwmon sensor that lists none (it
// reports whatever the kernel exposes).
func sensorReadings(s config.Sensor) ([]device.Reading, bool) {
	switch s.Driver {
	case "mcp3008", "mcp3208":
		chans := adcChannels(s)
		out := make([]device.Reading, len(chans))
		for i, ch := range chans {
			out[i] = device.Reading{Quantity: ch.Quantity, Unit: ch.Unit}
		}
		return out, true
	case "iio", "hwmon":
		if len(s.Quantities) == 0 {
			return nil, false
		}
		return device.KernelQuantities(s.Quantities)
	}
	return device.SensorQuantities(s.Driver, s.Channels.Numbers())
}

// adcChannels maps an MCP3008's configured channels to the driver's: a
// bare number reads volts as chN; a table maps volts (default 0 to vref)
// linearly to values (default: the volts).
func adcChannels(s config.Sensor) []device.ADCChannel {
	out := make([]device.ADCChannel, 0, len(s.Channels))
	for _, c := range s.Channels {
		if c.Quantity == "" {
			out = append(out, device.VoltsChannel(c.Channel))
			continue
		}
		ch := device.ADCChannel{Channel: c.Channel, Quantity: c.Quantity, Unit: device.Unit(c.Unit), Volts: [2]float64{0, s.VRef}}
		if len(c.Volts) == 2 {
			ch.Volts = [2]float64{c.Volts[0], c.Volts[1]}
		}
		ch.Values = ch.Volts
		if len(c.Values) == 2 {
			ch.Values = [2]float64{c.Values[0], c.Values[1]}
		}
		out = append(out, ch)
	}
	return out
}

// sleepCtx is the drivers' device.Sleep: the wall clock, cut short by ctx.
func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// simSensor is the simulated stand-in for a configured sensor.
func simSensor(s config.Sensor, start time.Time, now func() time.Time) device.Sensor {
	sim, err := device.NewSim(s.Name, s.Driver, start, now)
	if err != nil {
		return device.Failed{Err: err}
	}
	if w := s.Sim; w != nil {
		sim.Every, sim.Length, sim.Rise = w.Every.Duration, w.Length.Duration, w.Rise
		if !w.Start.IsZero() {
			sim.Start = w.Start
		}
	}
	switch s.Driver {
	case "ads1015", "ads1115":
		q, _ := sensorReadings(s)
		names := make([]string, len(q))
		for i, r := range q {
			names[i] = r.Quantity
		}
		sim.Limit(names...)
	case "mcp3008", "mcp3208":
		// The simulation gives each input a voltage; the channel's scale
		// maps it, as the driver does.
		chans := adcChannels(s)
		volts := make([]device.Reading, len(chans))
		for i, ch := range chans {
			volts[i] = device.Reading{Quantity: device.VoltsChannel(ch.Channel).Quantity, Unit: device.Volt}
		}
		sim.Produce(volts)
		return simADC{sim: sim, chans: chans}
	case "iio", "hwmon":
		if q, ok := sensorReadings(s); ok {
			sim.Produce(q)
		}
	}
	return sim
}

// simADC is a simulated MCP3008/MCP3208: simulated voltages, scaled.
type simADC struct {
	sim   *device.Sim
	chans []device.ADCChannel
}

func (a simADC) Sense(ctx context.Context) ([]device.Reading, error) {
	volts, err := a.sim.Sense(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]device.Reading, len(volts))
	for i, v := range volts {
		out[i] = a.chans[i].Reading(v.Value)
	}
	return out, nil
}

// hardware opens buses on demand, once each. Its methods may be called from
// sensors' reads (retrying a missing bus) as well as at start-up.
type hardware struct {
	mu       sync.Mutex // guards everything below, for retries from Sense
	prof     board.Profile
	hostErr  error
	hostDone bool
	i2c      map[string]i2c.BusCloser // by bus number or name
	i2cErr   map[string]error         // buses that could not be opened
	spi      map[string]string        // SPI port -> sensor using it
	closers  []func() error
	failures []*busFailure // missing buses, in the order sensors named them
	problems []openProblem // sensors that could not be opened for another reason, in config order
}

// busFailure is a bus that could not be opened and the sensors on it.
type busFailure struct {
	err     error
	sensors []string
}

func newHardware(prof board.Profile) *hardware {
	return &hardware{prof: prof, i2c: map[string]i2c.BusCloser{}, i2cErr: map[string]error{}, spi: map[string]string{}}
}

// failed records that sensor could not get its bus.
func (h *hardware) failed(sensor string, err error) {
	for _, f := range h.failures {
		if f.err == err {
			f.sensors = append(f.sensors, sensor)
			return
		}
	}
	h.failures = append(h.failures, &busFailure{err: err, sensors: []string{sensor}})
}

func (h *hardware) init() error {
	if !h.hostDone {
		h.hostDone = true
		if _, err := driverreg.Init(); err != nil {
			h.hostErr = fmt.Errorf("initialize periph.io host drivers: %w", err)
		}
	}
	return h.hostErr
}

func (h *hardware) close() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	var errs []error
	for _, c := range h.closers {
		errs = append(errs, c())
	}
	h.closers = nil
	return errors.Join(errs...)
}

// i2cBusKey canonicalizes "1", "I2C1" and "/dev/i2c-1" to "1".
func i2cBusKey(name string) string {
	for _, p := range []string{"/dev/i2c-", "I2C"} {
		if n, ok := strings.CutPrefix(name, p); ok {
			if _, err := strconv.Atoi(n); err == nil {
				return n
			}
		}
	}
	return name
}

// i2cBus opens an I²C bus, or says why not and how to fix it. A bus that
// could not be opened is not tried again: see retryI2C.
func (h *hardware) i2cBus(name string) (i2c.Bus, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.i2cBusLocked(name, false)
}

// retryI2C is i2cBus that tries a missing bus again, for a sensor's read.
func (h *hardware) retryI2C(name string) (i2c.Bus, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.i2cBusLocked(name, true)
}

func (h *hardware) i2cBusLocked(name string, retry bool) (i2c.Bus, error) {
	if name == "" {
		return nil, fmt.Errorf("no I²C bus: the %s board profile has no default bus; set bus = \"N\" for the sensor ('ls /dev/i2c-*' lists them)", h.prof.Name)
	}
	key := i2cBusKey(name)
	if b, ok := h.i2c[key]; ok {
		return b, nil
	}
	if err, ok := h.i2cErr[key]; ok && !retry {
		return nil, err
	}
	if err := h.init(); err != nil {
		return nil, err
	}
	b, err := openI2C(key, h.prof)
	if err != nil {
		h.i2cErr[key] = err
		return nil, err
	}
	delete(h.i2cErr, key)
	h.i2c[key] = b
	h.closers = append(h.closers, b.Close)
	return b, nil
}

// openI2C opens a bus through periph.io's registry, or, for a numbered bus
// whose /dev/i2c-N appeared after the registry was filled at start-up,
// directly.
func openI2C(key string, prof board.Profile) (i2c.BusCloser, error) {
	var have []string
	found := false
	for _, r := range i2creg.All() {
		have = append(have, strconv.Itoa(r.Number))
		if strconv.Itoa(r.Number) == key || r.Name == key || slices.Contains(r.Aliases, key) {
			found = true
		}
	}
	hint := ""
	if prof.EnableI2C != "" {
		hint = "; to enable I²C: " + prof.EnableI2C
	}
	if !found {
		if n, err := strconv.Atoi(key); err == nil && n >= 0 {
			if _, err := os.Stat("/dev/i2c-" + key); err == nil {
				b, err := sysfs.NewI2C(n)
				if err != nil {
					return nil, fmt.Errorf("i2c bus %s: %w", key, err)
				}
				return b, nil
			}
		}
	}
	switch {
	case len(have) == 0:
		return nil, fmt.Errorf("i2c bus %s: this machine has no I²C bus (no /dev/i2c-*)%s", key, hint)
	case !found:
		return nil, fmt.Errorf("i2c bus %s: not found (buses here: %s)%s", key, strings.Join(have, ", "), hint)
	}
	b, err := i2creg.Open(key)
	if err != nil {
		if errors.Is(err, os.ErrPermission) || strings.Contains(err.Error(), "permission denied") { // no typed error: periph.io's sysfs I²C open formats the errno as text
			return nil, fmt.Errorf("i2c bus %s: %w (run as root, or add the user to the i2c group)", key, err)
		}
		return nil, fmt.Errorf("i2c bus %s: %w", key, err)
	}
	return b, nil
}

// spiPort opens an SPI port ("0.0") for one sensor: a chip select belongs to
// one chip. A port whose /dev/spidevB.C appeared after start-up is opened
// directly.
func (h *hardware) spiPort(port, sensor string) (spi.PortCloser, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if other, ok := h.spi[port]; ok {
		return nil, fmt.Errorf("spi %s: already used by sensor %s (one chip per chip select)", port, other)
	}
	if err := h.init(); err != nil {
		return nil, err
	}
	hint := ""
	if h.prof.EnableSPI != "" {
		hint = "; to enable SPI: " + h.prof.EnableSPI
	}
	p, err := spireg.Open("SPI" + port)
	if err != nil {
		bus, cs, _ := strings.Cut(port, ".")
		b, errB := strconv.Atoi(bus)
		c, errC := strconv.Atoi(cs)
		if _, statErr := os.Stat("/dev/spidev" + port); statErr == nil && errB == nil && errC == nil {
			p, err = sysfs.NewSPI(b, c)
		}
	}
	if err != nil {
		if len(spireg.All()) == 0 {
			return nil, fmt.Errorf("spi %s: this machine has no SPI port (no /dev/spidev*)%s", port, hint)
		}
		return nil, fmt.Errorf("spi %s: %w%s", port, err, hint)
	}
	h.spi[port] = sensor
	h.closers = append(h.closers, p.Close)
	return p, nil
}

// locator is a sensor looked up on every read (a kernel device, a
// DS18B20): Locate says whether it is there now, without reading it.
type locator interface{ Locate() error }

// open builds one configured sensor. When its bus or chip cannot be opened
// it returns a device.Reopen that tries both again on every read; a
// missing bus is recorded in h.failures, every other sensor that cannot
// be opened or found in h.problems.
func (h *hardware) open(s config.Sensor, now func() time.Time) device.Sensor {
	d := h.openSensor(s, now)
	switch d := d.(type) {
	case device.Failed:
		h.problems = append(h.problems, openProblem{msg: msgSensorFailed, sensor: s.Name, err: d.Err})
	case locator:
		if err := d.Locate(); err != nil {
			h.problems = append(h.problems, openProblem{msg: msgSensorMissing, sensor: s.Name, err: err})
		}
	}
	return d
}

// openSensor is open without the record of what failed, but a chip that
// does not answer.
func (h *hardware) openSensor(s config.Sensor, now func() time.Time) device.Sensor {
	// Errors name the chip, like the drivers' own: "bme280: i2c bus 1: ...".
	failed := func(err error) device.Sensor {
		return device.Failed{Err: fmt.Errorf("%s: %w", s.Driver, err)}
	}
	switch s.Driver {
	case "sim":
		return simSensor(s, now(), now)
	case "ds18b20":
		// The w1 directory is looked at on every read: a missing 1-Wire
		// bus already is a reading error.
		dir := s.W1Dir
		if dir == "" {
			dir = h.prof.W1Dir
		}
		d, err := device.NewDS18B20(dir, s.Serial)
		if err != nil {
			return device.Failed{Err: err}
		}
		return d
	case "iio", "hwmon":
		// Like the 1-Wire directory, the device is looked up on every
		// read: a driver not loaded yet is a reading error naming the
		// overlay that loads it.
		open := device.NewIIO
		if s.Driver == "hwmon" {
			open = device.NewHwmon
		}
		d, err := open(os.DirFS("/"), s.Path, s.Device, s.Quantities)
		if err != nil {
			return device.Failed{Err: err}
		}
		return d.OnBoard(device.KernelBoard{Overlays: h.prof.Overlays, I2CBus: h.prof.I2CBus})
	}
	info, ok := device.LookupDriver(s.Driver)
	if !ok {
		return failed(errors.New("unknown driver"))
	}

	// openBus opens the sensor's bus and returns the chip's constructor;
	// retry says whether to try a bus that was found missing before.
	var openBus func(retry bool) (func() (device.Sensor, error), error)
	var i2cName string // the I²C bus, for the fix of a chip that does not answer
	port, isSPI := strings.CutPrefix(s.Bus, "spi:")
	if s.Bus == "" && slices.Contains(config.SPIOnly, s.Driver) {
		// An SPI-only chip without a bus is on the board's first port.
		if len(h.prof.SPIPorts) == 0 {
			return failed(fmt.Errorf("no SPI port: the %s board profile has no default; set bus = \"spi:BUS.CS\"", h.prof.Name))
		}
		port, isSPI = h.prof.SPIPorts[0], true
	}
	if isSPI {
		var ctor func(spi.Port, string) (device.Sensor, error)
		switch s.Driver {
		case "bme280":
			ctor = func(p spi.Port, port string) (device.Sensor, error) { return device.NewBME280SPI(p, port) }
		case "bmp280":
			ctor = func(p spi.Port, port string) (device.Sensor, error) { return device.NewBMP280SPI(p, port) }
		case "max31855":
			ctor = func(p spi.Port, port string) (device.Sensor, error) { return device.NewMAX31855(p, port) }
		case "max31865":
			ctor = func(p spi.Port, port string) (device.Sensor, error) {
				return device.NewMAX31865(p, port, config.RTDs[s.RTD], s.Wires, s.RefOhms, sleepCtx)
			}
		case "mcp3008":
			ctor = func(p spi.Port, port string) (device.Sensor, error) {
				return device.NewMCP3008(p, port, s.VRef, adcChannels(s))
			}
		case "mcp3208":
			ctor = func(p spi.Port, port string) (device.Sensor, error) {
				return device.NewMCP3208(p, port, s.VRef, adcChannels(s))
			}
		default:
			return failed(fmt.Errorf("spi %s: this driver is I²C only", port))
		}
		var p spi.Port
		openBus = func(bool) (func() (device.Sensor, error), error) {
			if p == nil { // a port, once opened, is this sensor's for good
				pc, err := h.spiPort(port, s.Name)
				if err != nil {
					return nil, err
				}
				p = pc
			}
			return func() (device.Sensor, error) { return ctor(p, port) }, nil
		}
	} else {
		if len(info.Addresses) == 0 { // config check refuses this
			return failed(fmt.Errorf("bus %q: an SPI chip takes bus = \"spi:BUS.CS\"", s.Bus))
		}
		busName := s.Bus
		if busName == "" {
			busName = h.prof.I2CBus
		}
		if busName == "" { // a profile with no default (generic): the only bus, as scan picks it
			if have, err := h.listI2C(); err == nil {
				if only, err := onlyI2CBus(h.prof, have); err == nil {
					busName = only
					h.problems = append(h.problems, openProblem{info: true, sensor: s.Name, bus: only,
						msg: fmt.Sprintf("sensor names no I²C bus: using the only one here (the %s board profile names no default bus)", h.prof.Name)})
				}
			}
		}
		i2cName = i2cBusKey(busName)
		addr := uint16(s.Address)
		if addr == 0 {
			addr = info.Addresses[0]
		}
		openBus = func(retry bool) (func() (device.Sensor, error), error) {
			open := h.i2cBus
			if retry {
				open = h.retryI2C
			}
			name := busName
			if name == "" { // none yet, or several: look again, a bus may have appeared
				have, err := h.listI2C()
				if err != nil {
					return nil, err
				}
				if name, err = onlyI2CBus(h.prof, have); err != nil {
					return nil, err
				}
			}
			bus, err := open(name)
			if err != nil {
				return nil, err
			}
			return func() (device.Sensor, error) { return openI2CChip(s, bus, i2cBusKey(name), addr, now) }, nil
		}
	}
	reopen := &device.Reopen{Open: func() (device.Sensor, error) {
		openChip, err := openBus(true)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", s.Driver, err)
		}
		return openChip()
	}}
	openChip, err := openBus(false)
	if err != nil {
		h.failed(s.Name, err)
		return reopen
	}
	d, err := openChip()
	if err != nil {
		fix := "check its wiring, power and address"
		if !isSPI {
			fix += fmt.Sprintf(" ('vigil scan --bus %s' lists the addresses that answer)", i2cName)
		}
		h.problems = append(h.problems, openProblem{msg: msgNotAnswering, sensor: s.Name, err: err, fix: fix})
		return reopen
	}
	return d
}

// openI2CChip runs a driver's constructor.
func openI2CChip(s config.Sensor, bus i2c.Bus, busName string, addr uint16, now func() time.Time) (device.Sensor, error) {
	switch s.Driver {
	case "bme280":
		return device.NewBME280(bus, busName, addr)
	case "bmp280":
		return device.NewBMP280(bus, busName, addr)
	case "aht20":
		return device.NewAHT20(bus, busName, addr)
	case "mcp9808":
		return device.NewMCP9808(bus, busName, addr)
	case "tmp102":
		return device.NewTMP102(bus, busName, addr)
	case "ina219":
		return device.NewINA219(bus, busName, addr, s.ShuntOhms, s.MaxCurrent)
	case "bh1750":
		return device.NewBH1750(bus, busName, addr)
	case "scd4x":
		return device.NewSCD4x(bus, busName, addr, now)
	case "ads1015":
		return device.NewADS1015(bus, busName, addr, s.Channels.Numbers(), s.Gain)
	case "ads1115":
		return device.NewADS1115(bus, busName, addr, s.Channels.Numbers(), s.Gain)
	case "sht3x":
		return device.NewSHT3x(bus, busName, addr, sleepCtx)
	case "sht4x":
		return device.NewSHT4x(bus, busName, addr, sleepCtx)
	}
	return nil, fmt.Errorf("driver %s has no I²C constructor", s.Driver)
}

// sensorsOptions are the flags of `vigil sensors`.
type sensorsOptions struct{ json, drivers bool }

// cmdSensors is `vigil sensors [--json]`; --drivers never gets here.
func cmdSensors(ctx context.Context, cfg *config.Config, prof board.Profile, o sensorsOptions, stdout io.Writer, log *slog.Logger) error {

	// The table shows every open error; don't log them a second time.
	sensors, closeAll, problems := openSensorsLenient(cfg, prof, time.Now)
	defer closeAll()
	log.Debug("sensors opened", "sensors", len(sensors), "not_opened", len(problems))
	snap := device.Sense(ctx, sensors, time.Now())

	if o.json {
		if err := writeJSON(stdout, sensorsView(snap)); err != nil {
			return err
		}
	} else {
		printSnapshot(stdout, cfg, sensors, snap)
	}
	if n := len(snap.Errors); n > 0 {
		return fmt.Errorf("%d of %d sensors failed", n, len(sensors))
	}
	return nil
}

// sensorsJSON is what `vigil sensors --json` prints: the snapshot, with
// the driver's value next to each calibrated reading's.
type sensorsJSON struct {
	Time     time.Time               `json:"time"`
	Readings map[string]sensorsValue `json:"readings"`
	Errors   map[string]string       `json:"errors,omitempty"`
}

type sensorsValue struct {
	Value float64     `json:"value"`
	Unit  device.Unit `json:"unit"`
	Raw   *float64    `json:"raw,omitempty"` // before calibration; only for a calibrated reading
}

func sensorsView(snap device.Snapshot) sensorsJSON {
	out := sensorsJSON{Time: snap.Time, Readings: make(map[string]sensorsValue, len(snap.Readings)), Errors: snap.Errors}
	for k, v := range snap.Readings {
		sv := sensorsValue{Value: v.Value, Unit: v.Unit}
		if raw, ok := snap.Raw[k]; ok {
			sv.Raw = &raw
		}
		out.Readings[k] = sv
	}
	return out
}

// printSnapshot prints one row per reading, sensors in config order and
// quantities in driver order, and one row per failed sensor. With a
// calibrated sensor, a RAW column shows the driver's values next to the
// calibrated ones.
func printSnapshot(w io.Writer, cfg *config.Config, sensors []device.Named, snap device.Snapshot) {
	drivers := map[string]config.Sensor{}
	calibrated := false
	for _, s := range cfg.Sensors {
		drivers[s.Name] = s
		calibrated = calibrated || len(s.Calibrate) > 0
	}
	// The RAW column's header, its cell in a failed sensor's row, and its
	// cell for a reading; each with its tab, and nothing without the column.
	rawHead, rawFailed := "", ""
	if calibrated {
		rawHead, rawFailed = "RAW\t", "-\t"
	}
	raw := func(key string) string {
		v, ok := snap.Raw[key]
		switch {
		case !calibrated:
			return ""
		case !ok:
			return "\t"
		}
		return strconv.FormatFloat(v, 'f', -1, 64) + "\t"
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "SENSOR\tQUANTITY\tVALUE\t%sUNIT\tERROR\n", rawHead)
	for _, n := range sensors {
		if e, ok := snap.Errors[n.Name]; ok {
			fmt.Fprintf(tw, "%s\t-\t-\t%s-\t%s\n", n.Name, rawFailed, e)
			continue
		}
		var order []device.Reading
		if n.Name == config.BoardSensor {
			order = device.HealthQuantities()
		} else if s, ok := drivers[n.Name]; ok {
			var known bool
			if order, known = sensorReadings(s); !known {
				order, _ = device.Quantities(s.Driver) // iio, hwmon: the kinds' order
			}
		}
		var keys []string
		for _, r := range order {
			if _, ok := snap.Readings[device.Key(n.Name, r.Quantity)]; ok {
				keys = append(keys, device.Key(n.Name, r.Quantity))
			}
		}
		var rest []string
		for _, k := range snap.Keys() {
			if s, _ := device.SplitKey(k); s == n.Name && !slices.Contains(keys, k) {
				rest = append(rest, k)
			}
		}
		sort.Strings(rest)
		for _, k := range append(keys, rest...) {
			v := snap.Readings[k]
			_, q := device.SplitKey(k)
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s%s\t\n", n.Name, q, strconv.FormatFloat(v.Value, 'f', -1, 64), raw(k), v.Unit)
		}
	}
	tw.Flush()
}

func printDrivers(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "DRIVER\tBUS\tADDRESS\tKEYS\tQUANTITIES\tCHIP")
	for _, d := range device.Drivers() {
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
		qs, _ := device.Quantities(d.Name)
		var qn []string
		for _, q := range qs {
			qn = append(qn, q.Quantity)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", d.Name, d.Bus, addr, keys, strings.Join(qn, " "), d.Chip)
	}
	fmt.Fprintf(tw, "\nEvery [[sensor]] takes name, driver, bus (I²C bus number, or \"spi:B.C\" for %s), address, timeout, deadband and calibrate.\n", strings.Join(config.SPIDrivers, ", "))
	fmt.Fprintln(tw, "iio and hwmon read what the kernel drives: device = \"bme680\" (its name file) or path = \"/sys/...\".")
	fmt.Fprintln(tw, "The board's own health is the reserved sensor \"board\".")
	return tw.Flush()
}

// cmdScan is `vigil scan [--bus NAME]`: probe an I²C bus like i2cdetect and
// name the chips that may answer at each address.
func cmdScan(ctx context.Context, cfg *config.Config, prof board.Profile, busName string, stdout io.Writer) error {
	h := newHardware(prof)
	defer h.close()
	return scanWith(ctx, cfg, prof, busName, stdout, periphBuses{h})
}

// i2cBuses is what scan needs of the machine's I²C buses; tests give a fake.
type i2cBuses interface {
	list() ([]string, error)           // the buses present, by number
	open(name string) (i2c.Bus, error) // borrowed: the owner closes it
}

// periphBuses are the buses periph.io's registry knows.
type periphBuses struct{ h *hardware }

func (p periphBuses) list() ([]string, error) { return p.h.listI2C() }

func (p periphBuses) open(name string) (i2c.Bus, error) { return p.h.i2cBus(name) }

// scanWith is cmdScan on buses.
func scanWith(ctx context.Context, cfg *config.Config, prof board.Profile, busName string, stdout io.Writer, buses i2cBuses) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	name, only := busName, ""
	if name == "" {
		name = prof.I2CBus
	}
	if name == "" {
		if prof.Name == "sim" {
			return fmt.Errorf("scan: the sim board has no bus; pick a real one with --bus N")
		}
		have, err := buses.list()
		if err != nil {
			return err
		}
		switch len(have) {
		case 0:
			return fmt.Errorf("scan: this machine has no I²C bus (no /dev/i2c-*)")
		case 1: // nothing to choose between: the bus run gives its sensors that name none
			name, only = have[0], have[0]
			fmt.Fprintf(stdout, "scanning i2c bus %s, the only one here (the %s board profile names no default bus)\n", name, prof.Name)
		default:
			return fmt.Errorf("scan: the %s board profile has no default I²C bus; pick one with --bus (buses here: %s)", prof.Name, strings.Join(have, ", "))
		}
	}
	bus, err := buses.open(name)
	if err != nil {
		return fmt.Errorf("scan: %w", err)
	}
	key := i2cBusKey(name)
	found := device.Scan(bus, 0x08, 0x77)
	printScan(stdout, key, found)

	// Say which configured sensors on this bus did not answer.
	for _, s := range cfg.Sensors {
		info, ok := device.LookupDriver(s.Driver)
		if !ok || len(info.Addresses) == 0 || strings.HasPrefix(s.Bus, "spi:") {
			continue
		}
		b := s.Bus
		if b == "" {
			b = prof.I2CBus
		}
		if b == "" {
			b = only
		}
		if i2cBusKey(b) != key {
			continue
		}
		addr := uint16(s.Address)
		if addr == 0 {
			addr = info.Addresses[0]
		}
		if !slices.Contains(found, addr) {
			fmt.Fprintf(stdout, "sensor %s (%s at 0x%02x) did not answer: check wiring, power and the address jumper\n", s.Name, s.Driver, addr)
		}
	}
	return nil
}

// printScan prints an i2cdetect-style grid and the list of answering
// addresses with the chips that may be there.
func printScan(w io.Writer, bus string, found []uint16) {
	fmt.Fprintln(w, "     0  1  2  3  4  5  6  7  8  9  a  b  c  d  e  f")
	for row := uint16(0); row < 0x80; row += 0x10 {
		fmt.Fprintf(w, "%02x:", row)
		for col := uint16(0); col < 0x10 && row+col <= 0x77; col++ {
			a := row + col
			switch {
			case a < 0x08:
				fmt.Fprint(w, "   ")
			case slices.Contains(found, a):
				fmt.Fprintf(w, " %02x", a)
			default:
				fmt.Fprint(w, " --")
			}
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintln(w)
	if len(found) == 0 {
		fmt.Fprintf(w, "no device answered on i2c bus %s: check wiring (SDA, SCL, GND, 3.3 V) and pull-ups\n", bus)
		return
	}
	fmt.Fprintf(w, "%d device(s) answered on i2c bus %s:\n", len(found), bus)
	for _, a := range found {
		var drivers, others []string
		for _, c := range device.ChipsAt(a) {
			if _, ok := device.LookupDriver(c); ok {
				drivers = append(drivers, c)
			} else {
				others = append(others, c)
			}
		}
		line := strings.Join(drivers, "/")
		switch {
		case line == "" && len(others) == 0:
			line = "unknown"
		case line == "":
			line = strings.Join(others, ", ") + " (no vigil driver)"
		case len(others) > 0:
			line += "   (or: " + strings.Join(others, ", ") + ")"
		}
		fmt.Fprintf(w, "  0x%02x  %s\n", a, line)
	}
}
