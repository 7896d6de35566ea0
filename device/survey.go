package device

// The hardware survey `vigil init` shows and builds its [[sensor]] blocks
// from: what the board is, its buses, what answers on them, and one
// reading of each sensor found.
//
// Policy: the survey only looks. It reads each found chip's ID registers
// (identify.go: reads and register-pointer writes only) and reads each
// sensor once through its driver, as `vigil sensors` would; it never
// changes a bus, a file or the board. Trouble is data, not an error: a bus
// that is off is listed with the dtparam/dtoverlay line that turns it on,
// a chip that does not answer or cannot be read carries its error, and
// Survey fails only for what the person asked for and cannot have (an
// unknown board profile, a --bus that does not exist).
//
// A wizard uses it like this:
//
//	s, err := device.Survey(ctx, device.SurveyOptions{Init: hostInit, Now: time.Now, Sleep: sleep, Getenv: os.Getenv})
//	for _, f := range s.Sensors { fmt.Println(f.Spec.Name, f.Identity.How, f.Readings, f.Err); f.TOML() }
//	rules := device.StarterRules(s.Sensors)

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/vigil-iot/vigil/board"
)

// ErrNoBus is a bus the survey was asked to scan that the machine does
// not have.
var ErrNoBus = errors.New("no such I²C bus")

// SurveyOptions say where Survey looks. The zero value surveys this
// machine ("/"), detecting its board, without reading on the wall clock:
// a caller that reads sensors sets Now and Sleep.
type SurveyOptions struct {
	// Root is the file system the survey reads: board detection, /dev,
	// the kernel's IIO and hwmon devices and the 1-Wire directory. ""
	// means "/"; tests give a tree in a temporary directory.
	Root string
	// Board names the profile ("rpi4", "sim"); "" or "auto" detects it
	// under Root.
	Board string
	// Buses are the I²C buses to scan. Nil: on the sim board the bus
	// SimI2CEnv describes (through Getenv), if set; elsewhere the
	// machine's own, opened through periph.io after Init, and closed
	// before Survey returns.
	Buses I2CBuses
	// Init initialises periph.io's host drivers before the machine's
	// first bus is opened (the command line's driverreg.Init); nil opens
	// buses without. Unused with Buses.
	Init func() error
	// Getenv reads SimI2CEnv on the sim board; nil reads nothing.
	Getenv func(string) string
	// OnlyBuses, when set, are the I²C buses to scan (`vigil init --bus
	// N`); one the machine does not have is an ErrNoBus. None: every bus.
	OnlyBuses []string
	// Now and Sleep are the drivers' clock and wait. Without Now the
	// sensors found are not read.
	Now   func() time.Time
	Sleep Sleep
	// Taken are sensor names already in use (a configured board's):
	// proposed names avoid them.
	Taken []string
}

// SurveyReport is what Survey found.
type SurveyReport struct {
	Board board.Profile
	// Detected says how the profile was picked: `device-tree model
	// "Raspberry Pi 4 Model B Rev 1.4" (/proc/device-tree/model)`, or
	// "named with --board".
	Detected string
	// I2C, SPI and W1 are the board's buses: each found, and each the
	// board profile names that is off, with how to turn it on.
	I2C []Port
	SPI []Port
	W1  []Port
	// Sensors are the sensors found, each with a proposed name, its
	// reading or error: I²C chips a vigil driver reads, in bus and
	// address order, then 1-Wire thermometers, then the devices the
	// kernel drives (IIO, hwmon).
	Sensors []Found
	// Notes are sentences for the person: "the sim board has no I²C bus
	// (set VIGIL_SIM_I2C=bme280@0x76 to emulate one)".
	Notes []string
}

// Port is a bus, SPI port or 1-Wire master of the board.
type Port struct {
	Kind string // "i2c", "spi", "w1"
	Name string // "1", "0.0", "w1_bus_master1"
	// On is false for a bus the board profile names that is not there:
	// Hint says how to turn it on.
	On   bool
	Hint string
	// Note says more: "emulated by VIGIL_SIM_I2C", "SPI chips cannot be
	// probed".
	Note string
	// Chips are the I²C addresses that answered, identified.
	Chips []Identity
	// Devices are the 1-Wire devices listed ("28-0316a2790eff").
	Devices []string
	// Err is why an I²C bus could not be opened or scanned.
	Err error
}

// Found is a sensor the survey found.
type Found struct {
	// Spec is the sensor as a [[sensor]] block gives it: the proposed
	// name, driver, and where it is (bus and address, serial, kernel
	// device name or path).
	Spec Spec
	// Identity is how an I²C chip was told (Guess says it is a guess);
	// for a 1-Wire or kernel sensor it says where it was found.
	Identity Identity
	// Readings is the one reading taken, in the driver's order; Err is
	// why there is none.
	Readings []Reading
	Err      error
	// Suggest is false for a device the survey lists but does not
	// propose: a kernel hwmon device that is the board's own (the CPU's
	// thermal zone, which the board sensor already reads).
	Suggest bool
}

// Quantities are the sensor's readings as the driver registers them, or
// for a kernel sensor those it read.
func (f Found) Quantities() []Reading {
	if q, ok := f.Spec.Readings(); ok {
		return q
	}
	out := make([]Reading, len(f.Readings))
	for i, r := range f.Readings {
		out[i] = Reading{Quantity: r.Quantity, Unit: r.Unit}
	}
	return out
}

// TOML is the sensor's [[sensor]] block as config.toml takes it, with a
// comment that says what it is and how it was told.
func (f Found) TOML() string {
	var b strings.Builder
	s := f.Spec
	comment := s.Driver
	d, ok := LookupDriver(s.Driver)
	switch {
	case ok && d.Bus == "sysfs":
		comment = f.Identity.Chip + ", which the kernel drives (" + s.Driver + ")"
	case ok:
		comment = d.Chip
	}
	if f.Identity.Guess {
		how, _, _ := strings.Cut(f.Identity.How, ";")
		comment += " (" + how + ")"
	}
	fmt.Fprintf(&b, "# %s\n", strings.ReplaceAll(comment, "\n", " "))
	fmt.Fprintf(&b, "[[sensor]]\nname = %s\ndriver = %s\n", strconv.Quote(s.Name), strconv.Quote(s.Driver))
	if s.Bus != "" {
		fmt.Fprintf(&b, "bus = %s\n", strconv.Quote(s.Bus))
	}
	if s.Address != 0 {
		fmt.Fprintf(&b, "address = 0x%02x\n", s.Address)
	}
	if s.Serial != "" {
		fmt.Fprintf(&b, "serial = %s\n", strconv.Quote(s.Serial))
	}
	if s.Device != "" {
		fmt.Fprintf(&b, "device = %s\n", strconv.Quote(s.Device))
	}
	if s.Path != "" {
		fmt.Fprintf(&b, "path = %s\n", strconv.Quote(s.Path))
	}
	return b.String()
}

// Survey looks at the board: its profile and how it was detected, its I²C
// buses (each scanned, each chip identified), SPI ports and 1-Wire
// devices, the sensors the kernel drives, and reads each sensor found
// once. It proposes a name for each sensor ("air", "air2", ...). See the
// policy at the top of this file.
func Survey(ctx context.Context, o SurveyOptions) (SurveyReport, error) {
	var rep SurveyReport
	root := o.Root
	if root == "" {
		root = "/"
	}
	switch o.Board {
	case "", "auto":
		rep.Board, rep.Detected = board.Detected(root)
	default:
		p, ok := board.Lookup(o.Board)
		if !ok {
			var names []string
			for _, p := range board.Profiles() {
				names = append(names, p.Name)
			}
			return rep, fmt.Errorf("board %q: not a board profile vigil knows (profiles: %s)", o.Board, strings.Join(names, ", "))
		}
		rep.Board, rep.Detected = p, "named with --board"
	}
	prof := rep.Board
	sim := prof.Name == "sim"

	// The buses to scan.
	buses := o.Buses
	if buses == nil && sim {
		sb, err := SimI2CFrom(o.Getenv)
		if err != nil {
			return rep, err
		}
		if sb == nil {
			rep.Notes = append(rep.Notes, fmt.Sprintf("the sim board has no I²C bus: its sensors are simulated (set %s=bme280@0x76,bmp280@0x77 to emulate a bus of chips)", SimI2CEnv))
		} else {
			buses = sb
		}
	}
	if buses == nil && !sim {
		m := NewMachine(Host{Board: prof, Init: o.Init, Now: o.Now, Sleep: o.Sleep})
		defer m.Close()
		buses = m
	}
	var scanErr error
	if buses != nil {
		rep.I2C, scanErr = surveyI2C(ctx, buses, prof, o)
	}
	for _, p := range rep.I2C {
		for _, id := range p.Chips {
			if id.Driver == "" {
				continue
			}
			rep.Sensors = append(rep.Sensors, Found{
				Spec:     Spec{Driver: id.Driver, Bus: p.Name, Address: id.Addr},
				Identity: id, Suggest: true,
			})
		}
	}
	if !sim {
		rep.SPI = surveySPI(root, prof)
		var w1 []Found
		rep.W1, w1 = surveyW1(root, prof)
		rep.Sensors = append(rep.Sensors, w1...)
		rep.Sensors = append(rep.Sensors, surveyKernel(root)...)
	}

	// Read each sensor once, through its driver as configured.
	if o.Now != nil {
		for i := range rep.Sensors {
			readFound(ctx, &rep.Sensors[i], buses, prof, root, o)
		}
	}
	nameFound(rep.Sensors, o.Taken)
	return rep, scanErr
}

// surveyI2C lists and scans the I²C buses, and lists the board's default
// bus as off when it is missing.
func surveyI2C(ctx context.Context, buses I2CBuses, prof board.Profile, o SurveyOptions) ([]Port, error) {
	have, err := buses.I2CBuses()
	if err != nil {
		return []Port{{Kind: "i2c", Name: prof.I2CBus, Err: err}}, nil
	}
	note := ""
	if _, ok := buses.(*SimI2C); ok {
		note = "emulated by " + SimI2CEnv
	}
	var out []Port
	if prof.I2CBus != "" && !slices.Contains(have, prof.I2CBus) {
		out = append(out, Port{Kind: "i2c", Name: prof.I2CBus, Hint: prof.EnableI2C})
	}
	scan := have
	var missing []string
	if len(o.OnlyBuses) > 0 {
		scan = nil
		for _, b := range o.OnlyBuses {
			if k := I2CBusKey(b); slices.Contains(have, k) {
				scan = append(scan, k)
			} else {
				missing = append(missing, b)
			}
		}
	}
	for _, name := range scan {
		p := Port{Kind: "i2c", Name: name, On: true, Note: note}
		bus, err := buses.I2C(name)
		if err != nil {
			p.Err = err
			out = append(out, p)
			continue
		}
		for _, a := range Scan(bus, 0x08, 0x77) {
			if err := ctx.Err(); err != nil {
				return out, err
			}
			p.Chips = append(p.Chips, Identify(ctx, bus, a, o.Sleep))
		}
		out = append(out, p)
	}
	if len(missing) > 0 {
		here := "none"
		if len(have) > 0 {
			here = strings.Join(have, ", ")
		}
		hint := ""
		if prof.EnableI2C != "" {
			hint = "; to enable I²C: " + prof.EnableI2C
		}
		return out, fmt.Errorf("i2c bus %s: %w (buses here: %s)%s", strings.Join(missing, ", "), ErrNoBus, here, hint)
	}
	return out, nil
}

// surveySPI lists the SPI ports (/dev/spidevB.C) and the board's that are
// missing.
func surveySPI(root string, prof board.Profile) []Port {
	devs, _ := filepath.Glob(filepath.Join(root, "dev", "spidev*"))
	var have []string
	for _, d := range devs {
		have = append(have, strings.TrimPrefix(filepath.Base(d), "spidev"))
	}
	var out []Port
	const note = "SPI chips cannot be probed: add a [[sensor]] with bus = \"spi:B.C\" for a MAX31855, MAX31865, MCP3008 or BME280 on it"
	for _, p := range have {
		out = append(out, Port{Kind: "spi", Name: p, On: true, Note: note})
	}
	for _, p := range prof.SPIPorts {
		if !slices.Contains(have, p) {
			out = append(out, Port{Kind: "spi", Name: p, Hint: prof.EnableSPI})
		}
	}
	return out
}

// surveyW1 lists the kernel's 1-Wire masters and devices, and proposes a
// ds18b20 sensor for each DS18B20 (family 28).
func surveyW1(root string, prof board.Profile) ([]Port, []Found) {
	if prof.W1Dir == "" {
		return nil, nil
	}
	dir := filepath.Join(root, prof.W1Dir)
	entries, err := os.ReadDir(dir)
	if err != nil {
		return []Port{{Kind: "w1", Name: prof.W1Dir, Hint: prof.EnableW1}}, nil
	}
	var masters, devices []string
	var found []Found
	for _, e := range entries {
		n := e.Name()
		switch {
		case strings.HasPrefix(n, "w1_bus_master"):
			masters = append(masters, n)
		case strings.HasPrefix(n, "28-"):
			devices = append(devices, n)
			found = append(found, Found{Spec: Spec{Driver: "ds18b20", Serial: n}, Identity: Identity{How: "1-Wire family 28 in " + prof.W1Dir}, Suggest: true})
		default:
			devices = append(devices, n)
		}
	}
	if len(masters) == 0 {
		return []Port{{Kind: "w1", Name: prof.W1Dir, Hint: prof.EnableW1, Devices: devices}}, found
	}
	var out []Port
	for i, m := range masters {
		p := Port{Kind: "w1", Name: m, On: true}
		if i == 0 {
			p.Devices = devices // the directory does not say which master a device is on
		}
		out = append(out, p)
	}
	return out, found
}

// boardOwn are hwmon devices that are the board's or the computer's own,
// not a sensor someone wired: listed, not proposed.
var boardOwn = []string{"cpu_thermal", "soc_thermal", "gpu_thermal", "rpi_volt", "acpitz", "coretemp", "k10temp", "nvme", "pch_", "iwlwifi", "bat", "ac", "cpu", "thermal"}

// surveyKernel lists the devices the kernel drives through IIO and hwmon.
func surveyKernel(root string) []Found {
	fsys := os.DirFS(root)
	var out []Found
	for _, c := range []kernelClass{iioClass, hwmonClass} {
		entries, _ := fs.ReadDir(fsys, c.dir)
		names := map[string]int{}
		var devs []Found
		for _, e := range entries {
			if !strings.HasPrefix(e.Name(), c.prefix) {
				continue
			}
			dir := c.dir + "/" + e.Name()
			b, err := fs.ReadFile(fsys, dir+"/name")
			if err != nil {
				continue
			}
			n := strings.TrimSpace(string(b))
			names[n]++
			own := false
			for _, p := range boardOwn {
				if c.driver == "hwmon" && strings.HasPrefix(strings.ToLower(n), p) {
					own = true
				}
			}
			devs = append(devs, Found{Spec: Spec{Driver: c.driver, Device: n, Path: "/" + dir},
				Identity: Identity{Chip: n, How: "the kernel drives it: /" + dir}, Suggest: !own})
		}
		for _, d := range devs {
			if names[d.Spec.Device] == 1 {
				d.Spec.Path = "" // its name finds it, whatever its number after a reboot
			} else {
				d.Spec.Device = ""
			}
			out = append(out, d)
		}
	}
	return out
}

// readFound reads a found sensor once, through its driver.
func readFound(ctx context.Context, f *Found, buses I2CBuses, prof board.Profile, root string, o SurveyOptions) {
	info, ok := LookupDriver(f.Spec.Driver)
	if !ok {
		f.Err = fmt.Errorf("%s: unknown driver", f.Spec.Driver)
		return
	}
	op := Opening{Spec: f.Spec, Board: prof, FS: os.DirFS(root), Now: o.Now, Sleep: o.Sleep}
	switch {
	case info.I2C():
		if buses == nil {
			f.Err = fmt.Errorf("%s: no I²C bus", f.Spec.Driver)
			return
		}
		bus, err := buses.I2C(f.Spec.Bus)
		if err != nil {
			f.Err = err
			return
		}
		op.I2C, op.Bus, op.Addr = bus, f.Spec.Bus, f.Spec.Address
	case f.Spec.Driver == "ds18b20":
		op.W1Dir = filepath.Join(root, prof.W1Dir)
	}
	d, err := info.Open(op)
	if err != nil {
		f.Err = err
		return
	}
	name := f.Spec.Name
	if name == "" {
		name = f.Spec.Driver
	}
	n := f.Spec.Named(d)
	n.Name = name
	snap := Sense(ctx, []Named{n}, o.Now())
	if e, ok := snap.Errors[name]; ok {
		f.Err = errors.New(e)
		return
	}
	// In the driver's order; a kernel device's in the order of the kinds
	// it may report, then the numbered ones (temperature_2).
	order, ok := f.Spec.Readings()
	if !ok {
		order, _ = Quantities(f.Spec.Driver)
	}
	for _, k := range snap.Keys() {
		if _, q := SplitKey(k); !slices.ContainsFunc(order, func(r Reading) bool { return r.Quantity == q }) {
			order = append(order, Reading{Quantity: q})
		}
	}
	for _, r := range order {
		if v, ok := snap.Readings[Key(name, r.Quantity)]; ok {
			f.Readings = append(f.Readings, Reading{Quantity: r.Quantity, Value: v.Value, Unit: v.Unit})
		}
	}
}

// nameFound proposes a name for each found sensor: a readable word for
// what it measures ("air" for a temperature and humidity or pressure
// sensor, "co2", "light", "power", "adc", "temp", "probe" for a 1-Wire
// thermometer), numbered from the second on ("air2"), never one in taken
// nor "board".
func nameFound(found []Found, taken []string) {
	used := map[string]bool{BoardSensor: true}
	for _, t := range taken {
		used[t] = true
	}
	for i := range found {
		base := proposeBase(found[i])
		name := base
		for n := 2; used[name]; n++ {
			name = base + strconv.Itoa(n)
		}
		used[name] = true
		found[i].Spec.Name = name
	}
}

func proposeBase(f Found) string {
	has := map[string]bool{}
	for _, r := range f.Quantities() {
		has[simKind(r.Quantity)] = true
	}
	switch {
	case f.Spec.Driver == "ds18b20":
		return "probe"
	case has["co2"]:
		return "co2"
	case has["humidity"] || has["pressure"]:
		return "air"
	case has["illuminance"]:
		return "light"
	case has["current"] || has["power"]:
		return "power"
	case has["ch0"]:
		return "adc"
	case has["temperature"]:
		return "temp"
	}
	return sensorWord(f.Spec.Device, f.Spec.Driver)
}

// sensorWord makes a sensor name ([a-z0-9_], at most 24 characters) of a
// kernel device's name, or returns fallback.
func sensorWord(s, fallback string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(s) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9', r == '_':
			b.WriteRune(r)
		case r == '-' || r == ' ' || r == '.':
			b.WriteByte('_')
		}
	}
	w := strings.Trim(b.String(), "_")
	if w == "" {
		return fallback
	}
	return w[:min(len(w), 24)]
}
