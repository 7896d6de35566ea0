package device

// Opening the configured sensors: buses, drivers and the board health
// sensor.
//
// Failure policy: only a config error stops vigil; hardware trouble is a
// reading error. A configured bus that does not exist (no /dev/i2c-N, no
// /dev/spidevB.C: I²C not enabled yet, a HAT's overlay not loaded) and a
// chip that does not answer on a bus that exists are treated alike: the
// sensor is returned as a Reopen that tries to open the bus and the chip
// again on every read and reports the error meanwhile. The daemon starts,
// reads the other sensors and the board's health, and rules like
// error(air) or stale(air) > 5m fire for the missing one. Retrying costs
// one stat of the device node per sample (no periph.io re-init), so a bus
// that appears later (modprobe i2c-dev, dtoverlay at runtime) is picked up
// without a restart. A sensor the kernel drives (iio, hwmon) is looked up
// in sysfs on every read, like a DS18B20: until its driver is loaded the
// reading error says how to enable it on this board (an overlay on a
// Raspberry Pi, the device tree or a new_device line elsewhere). Whatever
// the cause, OpenSensors returns one OpenProblem for every sensor it
// cannot open (a missing bus once, naming its sensors), with the fix, for
// the caller to log; `vigil sensors` shows them in its table instead.
//
// Buses are opened through periph.io's registries (i2creg, spireg) once
// the caller's Host.Init has initialised its host drivers; the Machine
// owns the buses it opened and closes them in Close. Drivers borrow them.

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"periph.io/x/conn/v3/i2c"
	"periph.io/x/conn/v3/i2c/i2creg"
	"periph.io/x/conn/v3/spi"
	"periph.io/x/conn/v3/spi/spireg"
	"periph.io/x/host/v3/sysfs"

	"github.com/vigil-iot/vigil/board"
)

const (
	defaultSensorTimeout = 5 * time.Second
	healthTimeout        = 2 * time.Second
)

// BoardSensor is the reserved name of the board's own health sensor.
const BoardSensor = "board"

// Host is what opening sensors needs of the machine besides its buses.
type Host struct {
	Board board.Profile
	// Init initialises periph.io's host drivers (the command line's
	// host.Init); it is called once, before the first bus is opened. Nil
	// opens buses without.
	Init     func() error
	Now      func() time.Time
	Sleep    Sleep  // for drivers that wait out a conversion
	StateDir string // where the health sensor measures free disk
	// Getenv reads SimI2CEnv: on the sim board, the machine's only I²C
	// bus is the one it emulates (simi2c.go). Nil: the sim board has none.
	Getenv func(string) string
}

// OpenProblem is a sensor, or a bus and its sensors, that could not be
// opened at start. (With Info set it is a choice made for one: the bus it
// was given.)
type OpenProblem struct {
	Info   bool   // logged at Info, not Warn
	Msg    string // what vigil does about it
	Sensor string // "" for a missing bus: Err names its sensors
	Err    error  // what is wrong, and where a fix is known, the fix
	Fix    string // the fix, when Err does not say it
	Bus    string // the bus chosen for the sensor
}

// Log logs the problem once, at Warn (Info for a choice).
func (p OpenProblem) Log(log *slog.Logger) {
	var args []any
	if p.Sensor != "" {
		args = append(args, "sensor", p.Sensor)
	}
	if p.Bus != "" {
		args = append(args, "bus", p.Bus)
	}
	if p.Err != nil {
		args = append(args, "err", p.Err)
	}
	if p.Fix != "" {
		args = append(args, "fix", p.Fix)
	}
	level := slog.LevelWarn
	if p.Info {
		level = slog.LevelInfo
	}
	log.Log(context.Background(), level, p.Msg, args...)
}

// The problems' messages.
const (
	msgBusMissing    = "bus missing: its sensors read as errors and are retried on every sample"
	msgNotAnswering  = "sensor not answering; retrying on every read"
	msgSensorMissing = "sensor missing: it reads as an error and is looked for on every sample"
	msgSensorFailed  = "sensor cannot be opened: it reads as an error"
)

// OpenSensors opens every configured sensor and the board health sensor
// ("board"). Buses are opened once and shared; closeAll closes them. On the
// "sim" board every sensor is simulated and no hardware is touched. Every
// sensor that cannot be opened is returned as a problem that says how to
// fix it; it reports the error on every read until it can be read.
func OpenSensors(specs []Spec, h Host) (sensors []Named, closeAll func() error, problems []OpenProblem) {
	start := h.Now()
	if h.Board.Name == "sim" {
		var out []Named
		for _, s := range specs {
			out = append(out, s.Named(simulate(s, start, h.Now)))
		}
		out = append(out, Named{Name: BoardSensor, Sensor: NewSimHealth(start, h.Now), Timeout: healthTimeout})
		return out, func() error { return nil }, nil
	}

	m := NewMachine(h)
	var out []Named
	for _, s := range specs {
		out = append(out, s.Named(m.open(s)))
	}
	for _, f := range m.failures {
		problems = append(problems, OpenProblem{Msg: msgBusMissing, Err: fmt.Errorf("sensor %s: %w", strings.Join(f.sensors, ", "), f.err)})
	}
	problems = append(problems, m.problems...)
	out = append(out, Named{Name: BoardSensor, Sensor: &Health{
		Root:         "/",
		ThermalZone:  h.Board.ThermalZone,
		ThrottlePath: h.Board.ThrottlePath,
		StateDir:     h.StateDir,
		ClockSynced:  KernelClockSynced,
	}, Timeout: healthTimeout})
	return out, m.Close, problems
}

// Named binds the sensor's name, timeout (at least its driver's
// MinTimeout) and calibrations to what reads it.
func (s Spec) Named(sensor Sensor) Named {
	t := s.Timeout
	if t <= 0 {
		t = defaultSensorTimeout
	}
	if d, ok := LookupDriver(s.Driver); ok {
		t = max(t, d.MinTimeout)
	}
	return Named{Name: s.Name, Sensor: sensor, Timeout: t, Calibrate: s.Calibrate}
}

// Machine opens buses on demand, once each, and owns them. Its methods may
// be called from sensors' reads (retrying a missing bus) as well as at
// start-up.
type Machine struct {
	host Host

	mu       sync.Mutex // guards everything below, for retries from Sense
	hostErr  error
	hostDone bool
	i2c      map[string]i2c.BusCloser // by bus number or name
	i2cErr   map[string]error         // buses that could not be opened
	spi      map[string]string        // SPI port -> sensor using it
	closers  []func() error
	failures []*busFailure // missing buses, in the order sensors named them
	problems []OpenProblem // sensors that could not be opened for another reason, in config order
	simBus   *SimI2C       // the sim board's emulated bus, once read from Getenv
	simErr   error
	simDone  bool
}

// sim returns the sim board's emulated I²C bus: nil, nil on another board
// or when SimI2CEnv is not set.
func (m *Machine) sim() (*SimI2C, error) {
	if m.host.Board.Name != "sim" {
		return nil, nil
	}
	if !m.simDone {
		m.simDone = true
		m.simBus, m.simErr = SimI2CFrom(m.host.Getenv)
	}
	return m.simBus, m.simErr
}

// busFailure is a bus that could not be opened and the sensors on it.
type busFailure struct {
	err     error
	sensors []string
}

// NewMachine returns a Machine that has opened nothing yet.
func NewMachine(h Host) *Machine {
	return &Machine{host: h, i2c: map[string]i2c.BusCloser{}, i2cErr: map[string]error{}, spi: map[string]string{}}
}

// failed records that sensor could not get its bus.
func (m *Machine) failed(sensor string, err error) {
	for _, f := range m.failures {
		if f.err == err {
			f.sensors = append(f.sensors, sensor)
			return
		}
	}
	m.failures = append(m.failures, &busFailure{err: err, sensors: []string{sensor}})
}

func (m *Machine) init() error {
	if !m.hostDone {
		m.hostDone = true
		if m.host.Init != nil {
			if err := m.host.Init(); err != nil {
				m.hostErr = fmt.Errorf("initialize periph.io host drivers: %w", err)
			}
		}
	}
	return m.hostErr
}

// Close closes every bus the machine opened.
func (m *Machine) Close() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	var errs []error
	for _, c := range m.closers {
		errs = append(errs, c())
	}
	m.closers = nil
	return errors.Join(errs...)
}

// I2CBuses returns the I²C buses this machine has, by number, in order:
// those periph.io's registry knows and any /dev/i2c-N that appeared after
// it was filled.
func (m *Machine) I2CBuses() ([]string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.host.Board.Name == "sim" {
		sb, err := m.sim()
		if sb == nil || err != nil {
			return nil, err
		}
		return sb.I2CBuses()
	}
	if err := m.init(); err != nil {
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

// OnlyI2CBus picks the bus of an I²C sensor that names none on a board
// profile with no default (generic) from the buses the machine has: the
// only one, as `vigil scan` does. With none or several it says what to do.
func OnlyI2CBus(prof board.Profile, have []string) (string, error) {
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

// CheckI2CDefault is `vigil config check` on the I²C sensors that name no
// bus on a board profile with no default, against the buses list lists:
// with one bus it says each uses it, with none that each reads as an
// error until one appears (hardware, not the file), and with several it
// is an error for each (bad[i] for specs[i]; nil for the others), naming
// the buses found.
func CheckI2CDefault(specs []Spec, prof board.Profile, list func() ([]string, error)) (notes []string, bad []error) {
	if prof.I2CBus != "" || prof.Name == "sim" {
		return nil, nil
	}
	var idx []int
	for i, s := range specs {
		if NeedsI2CDefault(s.Driver, s.Bus) {
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
	bus, berr := OnlyI2CBus(prof, have)
	for _, i := range idx {
		name := specs[i].Name
		switch {
		case berr == nil:
			notes = append(notes, fmt.Sprintf("sensor %s names no I²C bus: it uses i2c bus %s, the only one here (the %s board profile names no default bus)", name, bus, prof.Name))
		case len(have) == 0:
			notes = append(notes, fmt.Sprintf("sensor %s reads as an error until a bus appears: %v", name, berr))
		default:
			if bad == nil {
				bad = make([]error, len(specs))
			}
			bad[i] = berr
		}
	}
	return notes, bad
}

// NeedsI2CDefault reports whether a sensor of driver on bus is an I²C chip
// that names no bus.
func NeedsI2CDefault(driver, bus string) bool {
	d, ok := LookupDriver(driver)
	return ok && bus == "" && d.I2C() && !d.SPIOnly()
}

// I2CBusKey canonicalizes "1", "I2C1" and "/dev/i2c-1" to "1".
func I2CBusKey(name string) string {
	for _, p := range []string{"/dev/i2c-", "I2C"} {
		if n, ok := strings.CutPrefix(name, p); ok {
			if _, err := strconv.Atoi(n); err == nil {
				return n
			}
		}
	}
	return name
}

// I2C opens an I²C bus, or says why not and how to fix it. A bus that
// could not be opened is not tried again: see retryI2C. The machine owns
// the bus: the caller borrows it.
func (m *Machine) I2C(name string) (i2c.Bus, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.host.Board.Name == "sim" {
		sb, err := m.sim()
		switch {
		case err != nil:
			return nil, err
		case sb == nil:
			return nil, fmt.Errorf("i2c bus %s: the sim board has no bus (set %s=bme280@0x76 to emulate one)", name, SimI2CEnv)
		}
		return sb.I2C(name)
	}
	return m.i2cBusLocked(name, false)
}

// retryI2C is I2C that tries a missing bus again, for a sensor's read.
func (m *Machine) retryI2C(name string) (i2c.Bus, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.i2cBusLocked(name, true)
}

func (m *Machine) i2cBusLocked(name string, retry bool) (i2c.Bus, error) {
	if name == "" {
		return nil, fmt.Errorf("no I²C bus: the %s board profile has no default bus; set bus = \"N\" for the sensor ('ls /dev/i2c-*' lists them)", m.host.Board.Name)
	}
	key := I2CBusKey(name)
	if b, ok := m.i2c[key]; ok {
		return b, nil
	}
	if err, ok := m.i2cErr[key]; ok && !retry {
		return nil, err
	}
	if err := m.init(); err != nil {
		return nil, err
	}
	b, err := openI2C(key, m.host.Board)
	if err != nil {
		m.i2cErr[key] = err
		return nil, err
	}
	delete(m.i2cErr, key)
	m.i2c[key] = b
	m.closers = append(m.closers, b.Close)
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
func (m *Machine) spiPort(port, sensor string) (spi.PortCloser, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if other, ok := m.spi[port]; ok {
		return nil, fmt.Errorf("spi %s: already used by sensor %s (one chip per chip select)", port, other)
	}
	if err := m.init(); err != nil {
		return nil, err
	}
	hint := ""
	if m.host.Board.EnableSPI != "" {
		hint = "; to enable SPI: " + m.host.Board.EnableSPI
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
	m.spi[port] = sensor
	m.closers = append(m.closers, p.Close)
	return p, nil
}

// locator is a sensor looked up on every read (a kernel device, a
// DS18B20): Locate says whether it is there now, without reading it.
type locator interface{ Locate() error }

// open builds one configured sensor. When its bus or chip cannot be opened
// it returns a Reopen that tries both again on every read; a missing bus
// is recorded in m.failures, every other sensor that cannot be opened or
// found in m.problems.
func (m *Machine) open(s Spec) Sensor {
	d := m.openSensor(s)
	switch d := d.(type) {
	case Failed:
		m.problems = append(m.problems, OpenProblem{Msg: msgSensorFailed, Sensor: s.Name, Err: d.Err})
	case locator:
		if err := d.Locate(); err != nil {
			m.problems = append(m.problems, OpenProblem{Msg: msgSensorMissing, Sensor: s.Name, Err: err})
		}
	}
	return d
}

// openSensor is open without the record of what failed, but a chip that
// does not answer.
func (m *Machine) openSensor(s Spec) Sensor {
	// Errors name the chip, like the drivers' own: "bme280: i2c bus 1: ...".
	failed := func(err error) Sensor {
		return Failed{Err: fmt.Errorf("%s: %w", s.Driver, err)}
	}
	info, ok := LookupDriver(s.Driver)
	if !ok {
		return failed(errors.New("unknown driver"))
	}
	o := Opening{Spec: s, Board: m.host.Board, FS: os.DirFS("/"), Now: m.host.Now, Sleep: m.host.Sleep}
	if !info.I2C() && !info.SPI() { // the kernel's (1-Wire, sysfs) or none
		d, err := info.Open(o)
		if err != nil {
			return Failed{Err: err}
		}
		return d
	}

	// openBus opens the sensor's bus and returns the chip's constructor;
	// retry says whether to try a bus that was found missing before.
	var openBus func(retry bool) (func() (Sensor, error), error)
	var i2cName string // the I²C bus, for the fix of a chip that does not answer
	port, isSPI := strings.CutPrefix(s.Bus, "spi:")
	if s.Bus == "" && info.SPIOnly() {
		// An SPI-only chip without a bus is on the board's first port.
		if len(m.host.Board.SPIPorts) == 0 {
			return failed(fmt.Errorf("no SPI port: the %s board profile has no default; set bus = \"spi:BUS.CS\"", m.host.Board.Name))
		}
		port, isSPI = m.host.Board.SPIPorts[0], true
	}
	if isSPI {
		if !info.SPI() {
			return failed(fmt.Errorf("spi %s: this driver is I²C only", port))
		}
		var p spi.Port
		openBus = func(bool) (func() (Sensor, error), error) {
			if p == nil { // a port, once opened, is this sensor's for good
				pc, err := m.spiPort(port, s.Name)
				if err != nil {
					return nil, err
				}
				p = pc
			}
			return func() (Sensor, error) {
				o := o
				o.SPI, o.Bus = p, port
				return info.Open(o)
			}, nil
		}
	} else {
		if !info.I2C() { // config check refuses this
			return failed(fmt.Errorf("bus %q: an SPI chip takes bus = \"spi:BUS.CS\"", s.Bus))
		}
		busName := s.Bus
		if busName == "" {
			busName = m.host.Board.I2CBus
		}
		if busName == "" { // a profile with no default (generic): the only bus, as scan picks it
			if have, err := m.I2CBuses(); err == nil {
				if only, err := OnlyI2CBus(m.host.Board, have); err == nil {
					busName = only
					m.problems = append(m.problems, OpenProblem{Info: true, Sensor: s.Name, Bus: only,
						Msg: fmt.Sprintf("sensor names no I²C bus: using the only one here (the %s board profile names no default bus)", m.host.Board.Name)})
				}
			}
		}
		i2cName = I2CBusKey(busName)
		addr := s.Address
		if addr == 0 {
			addr = info.Addresses[0]
		}
		openBus = func(retry bool) (func() (Sensor, error), error) {
			open := m.I2C
			if retry {
				open = m.retryI2C
			}
			name := busName
			if name == "" { // none yet, or several: look again, a bus may have appeared
				have, err := m.I2CBuses()
				if err != nil {
					return nil, err
				}
				if name, err = OnlyI2CBus(m.host.Board, have); err != nil {
					return nil, err
				}
			}
			bus, err := open(name)
			if err != nil {
				return nil, err
			}
			return func() (Sensor, error) {
				o := o
				o.I2C, o.Bus, o.Addr = bus, I2CBusKey(name), addr
				return info.Open(o)
			}, nil
		}
	}
	reopen := &Reopen{Open: func() (Sensor, error) {
		openChip, err := openBus(true)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", s.Driver, err)
		}
		return openChip()
	}}
	openChip, err := openBus(false)
	if err != nil {
		m.failed(s.Name, err)
		return reopen
	}
	d, err := openChip()
	if err != nil {
		fix := "check its wiring, power and address"
		if !isSPI {
			fix += fmt.Sprintf(" ('vigil scan --bus %s' lists the addresses that answer)", i2cName)
		}
		m.problems = append(m.problems, OpenProblem{Msg: msgNotAnswering, Sensor: s.Name, Err: err, Fix: fix})
		return reopen
	}
	return d
}
