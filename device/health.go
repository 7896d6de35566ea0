package device

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// HealthQuantities are the readings of the board health sensor, in order.
var healthQuantities = []Reading{
	{Quantity: "soc_temperature", Unit: Celsius},
	{Quantity: "undervoltage", Unit: Bool},
	{Quantity: "throttled", Unit: Bool},
	{Quantity: "undervoltage_since_boot", Unit: Bool},
	{Quantity: "throttled_since_boot", Unit: Bool},
	{Quantity: "disk_free", Unit: Megabyte},
	{Quantity: "mem_available", Unit: Megabyte},
	{Quantity: "load1", Unit: Count},
	{Quantity: "uptime", Unit: Second},
	{Quantity: "clock_synced", Unit: Bool},
}

// HealthQuantities returns the quantities (with units, zero values) the
// board health sensor can produce. A board reports the subset it has.
func HealthQuantities() []Reading { return append([]Reading(nil), healthQuantities...) }

// Bits of the Raspberry Pi firmware's get_throttled value.
const (
	throttleUndervoltage     = 1 << 0
	throttleThrottled        = 1 << 2
	throttleUndervoltageBoot = 1 << 16
	throttleThrottledBoot    = 1 << 18
)

// Health is the board's own health: SoC temperature, under-voltage and
// throttling now and since boot (on a Raspberry Pi), free space on the
// state directory's filesystem, available memory, load, uptime and whether
// the clock is synchronized. Sources a board does not have are left out;
// Sense fails only when none can be read.
type Health struct {
	// Root is the filesystem root procfs and sysfs are read under: "/"
	// on the device, a fake tree in tests.
	Root string
	// ThermalZone names the SoC's zone under /sys/class/thermal
	// ("thermal_zone0"); "" skips the temperature.
	ThermalZone string
	// ThrottlePath is a glob (under Root) of the firmware's get_throttled
	// file; "" skips throttling.
	ThrottlePath string
	// StateDir is the directory whose filesystem's free space is reported.
	// It is a real path, not under Root; "" skips it.
	StateDir string
	// ClockSynced asks the kernel whether its clock is disciplined
	// (KernelClockSynced); nil trusts systemd-timesyncd's flag file only.
	ClockSynced func() (bool, error)
}

var _ Sensor = (*Health)(nil)

// Sense reads every health source once.
func (h *Health) Sense(ctx context.Context) ([]Reading, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("health: %w", err)
	}
	var out []Reading
	var errs []error
	add := func(q string, unit Unit, v float64, err error) {
		switch {
		case err == nil:
			out = append(out, Reading{Quantity: q, Value: v, Unit: unit})
		case !errors.Is(err, fs.ErrNotExist):
			errs = append(errs, fmt.Errorf("%s: %w", q, err))
		}
	}
	if h.ThermalZone != "" {
		v, err := h.socTemperature()
		add("soc_temperature", Celsius, v, err)
	}
	if h.ThrottlePath != "" {
		v, err := h.throttled()
		if err == nil {
			add("undervoltage", Bool, bit(v, throttleUndervoltage), nil)
			add("throttled", Bool, bit(v, throttleThrottled), nil)
			add("undervoltage_since_boot", Bool, bit(v, throttleUndervoltageBoot), nil)
			add("throttled_since_boot", Bool, bit(v, throttleThrottledBoot), nil)
		} else {
			add("throttled", Bool, 0, err)
		}
	}
	if h.StateDir != "" {
		v, err := diskFree(h.StateDir)
		add("disk_free", Megabyte, round(v, 1), err)
	}
	v, err := h.memAvailable()
	add("mem_available", Megabyte, v, err)
	v, err = h.firstField("proc/loadavg")
	add("load1", Count, v, err)
	v, err = h.firstField("proc/uptime")
	add("uptime", Second, round(v, 0), err)
	synced, err := h.clockSynced()
	add("clock_synced", Bool, boolValue(synced), err)

	if len(out) == 0 {
		if len(errs) == 0 {
			return nil, fmt.Errorf("health: no source readable under %s", h.root())
		}
		return nil, fmt.Errorf("health: no source readable: %w", errors.Join(errs...))
	}
	return out, nil
}

func (h *Health) root() string {
	if h.Root == "" {
		return "/"
	}
	return h.Root
}

func (h *Health) read(name string) ([]byte, error) {
	return os.ReadFile(filepath.Join(h.root(), name))
}

// socTemperature reads the zone's temp file: millidegrees Celsius (kernel
// Documentation/driver-api/thermal/sysfs-api.rst).
func (h *Health) socTemperature() (float64, error) {
	b, err := h.read(filepath.Join("sys/class/thermal", h.ThermalZone, "temp"))
	if err != nil {
		return 0, err
	}
	m, err := strconv.Atoi(string(bytes.TrimSpace(b)))
	if err != nil {
		return 0, fmt.Errorf("parse %q: %w", bytes.TrimSpace(b), err)
	}
	c := float64(m) / 1000
	if c < -60 || c > 150 {
		return 0, fmt.Errorf("implausible %g °C", c)
	}
	return round(c, 1), nil
}

// throttled reads get_throttled: the firmware's flags in hexadecimal.
func (h *Health) throttled() (uint64, error) {
	m, err := filepath.Glob(filepath.Join(h.root(), h.ThrottlePath))
	if err != nil {
		return 0, err
	}
	if len(m) == 0 {
		return 0, fs.ErrNotExist
	}
	b, err := os.ReadFile(m[0])
	if err != nil {
		return 0, err
	}
	return parseThrottled(b)
}

func parseThrottled(b []byte) (uint64, error) {
	s := strings.TrimPrefix(strings.TrimSpace(string(b)), "0x")
	v, err := strconv.ParseUint(s, 16, 32)
	if err != nil {
		return 0, fmt.Errorf("parse get_throttled %q: %w", s, err)
	}
	return v, nil
}

// memAvailable reads MemAvailable from /proc/meminfo, in MB.
func (h *Health) memAvailable() (float64, error) {
	b, err := h.read("proc/meminfo")
	if err != nil {
		return 0, err
	}
	return parseMeminfo(b)
}

func parseMeminfo(b []byte) (float64, error) {
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		rest, ok := strings.CutPrefix(sc.Text(), "MemAvailable:")
		if !ok {
			continue
		}
		f := strings.Fields(rest)
		if len(f) != 2 || f[1] != "kB" {
			return 0, fmt.Errorf("parse MemAvailable %q", rest)
		}
		kb, err := strconv.ParseUint(f[0], 10, 64)
		if err != nil {
			return 0, fmt.Errorf("parse MemAvailable: %w", err)
		}
		return round(float64(kb)/1024, 1), nil
	}
	// Kernels before 3.14 have no MemAvailable.
	return 0, fs.ErrNotExist
}

// firstField parses the first number of /proc/loadavg or /proc/uptime.
func (h *Health) firstField(name string) (float64, error) {
	b, err := h.read(name)
	if err != nil {
		return 0, err
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return 0, fmt.Errorf("parse %s: empty", name)
	}
	v, err := strconv.ParseFloat(f[0], 64)
	if err != nil {
		return 0, fmt.Errorf("parse %s: %w", name, err)
	}
	return v, nil
}

// clockSynced: systemd-timesyncd touches /run/systemd/timesync/synchronized
// once it has synchronized; without it, the kernel's own view (chrony, ntpd).
func (h *Health) clockSynced() (bool, error) {
	_, err := os.Stat(filepath.Join(h.root(), "run/systemd/timesync/synchronized"))
	if err == nil {
		return true, nil
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return false, err
	}
	if h.ClockSynced == nil {
		return false, fs.ErrNotExist
	}
	return h.ClockSynced()
}

func bit(v, mask uint64) float64 { return boolValue(v&mask != 0) }

func boolValue(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
