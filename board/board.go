// Package board describes the single-board computers vigil runs on: which
// I²C bus and SPI ports the 40-pin header exposes, where the SoC temperature
// and the firmware's throttling flags are read, and which GOARCH/GOARM a
// binary for it needs. Detect picks a profile from the device tree's model
// string (or DMI on boards that boot through UEFI).
//
// The package only reads the few files Detect is given a root for; it opens
// no bus and imports no driver.
package board

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Profile is what vigil needs to know about a board.
type Profile struct {
	Name        string // "rpi4"; what device.board names
	Description string // "Raspberry Pi 4 Model B, 400"

	// Models are prefixes of the device-tree model (or DMI product name)
	// that select this profile, most specific first.
	Models []string

	I2CBus       string   // default I²C bus of the header ("1"); "" when there is no sensible default
	SPIPorts     []string // SPI ports of the header as "bus.cs" ("0.0", "0.1")
	ThermalZone  string   // SoC thermal zone under /sys/class/thermal ("thermal_zone0"); "" for none
	ThrottlePath string   // glob of the firmware's get_throttled file; "" where the board has none
	W1Dir        string   // kernel 1-Wire devices directory (DS18B20)

	GOARCH string // "arm64", "arm", "riscv64"; "" for any
	GOARM  string // "6", "7" for GOARCH=arm

	EnableI2C string // how to enable I²C on this board, shown when the bus is missing
	EnableSPI string // how to enable SPI on this board
	EnableW1  string // how to enable the kernel's 1-Wire bus (DS18B20) on this board
	// Overlays: the firmware loads device-tree overlays named by
	// dtoverlay= in /boot/firmware/config.txt (the Raspberry Pis), which is
	// how a sensor the kernel drives is enabled.
	Overlays bool
}

// Paths shared by the profiles.
const (
	// piThrottle matches the Raspberry Pi firmware driver's get_throttled
	// attribute: /sys/devices/platform/soc/soc:firmware/get_throttled on
	// the Pi 1-4, soc@107c000000/soc@107c000000:firmware on the Pi 5.
	piThrottle = "/sys/devices/platform/soc*/soc*:firmware/get_throttled"
	w1Dir      = "/sys/bus/w1/devices"
	zone0      = "thermal_zone0"

	piEnableI2C = "run 'sudo raspi-config nonint do_i2c 0' (or add 'dtparam=i2c_arm=on' to /boot/firmware/config.txt) and reboot"
	piEnableSPI = "run 'sudo raspi-config nonint do_spi 0' (or add 'dtparam=spi=on' to /boot/firmware/config.txt) and reboot"

	jhEnableI2C = "I²C0 on header pins 3/5 is enabled by the vendor's Debian image; on other images enable the i2c0 node in the device tree, and 'modprobe i2c-dev'"
	jhEnableSPI = "enable the spi0 node with a spidev child in the device tree (StarFive's image ships an overlay), and check /dev/spidev1.0"

	duoEnableI2C = "set the pin mux with 'duo-pinmux -w GP4/IIC1_SCL' and 'duo-pinmux -w GP5/IIC1_SDA' (or in the board's device tree), then check /dev/i2c-1"
	duoEnableSPI = "set the pin mux for SPI2 with duo-pinmux (GP6-GP9) and check /dev/spidev0.0"

	piEnableW1 = "add 'dtoverlay=w1-gpio' to /boot/firmware/config.txt (DATA on GPIO4, a 4.7 kΩ pull-up to 3.3 V) and reboot"

	genericEnableI2C = "load the i2c-dev module ('modprobe i2c-dev') and enable the bus in the device tree; 'ls /dev/i2c-*' lists the buses"
	genericEnableSPI = "enable a spidev node in the device tree; 'ls /dev/spidev*' lists the ports"
	genericEnableW1  = "enable a w1-gpio node in the device tree (a 4.7 kΩ pull-up on DATA) and 'modprobe w1-gpio w1-therm'; 'ls /sys/bus/w1/devices' lists the sensors"
)

func pi(name, desc, goarch, goarm string, models ...string) Profile {
	return Profile{
		Name: name, Description: desc, Models: models,
		I2CBus: "1", SPIPorts: []string{"0.0", "0.1"},
		ThermalZone: zone0, ThrottlePath: piThrottle, W1Dir: w1Dir,
		GOARCH: goarch, GOARM: goarm,
		EnableI2C: piEnableI2C, EnableSPI: piEnableSPI, EnableW1: piEnableW1, Overlays: true,
	}
}

// profiles is the table, in the order Profiles returns it and Detect tries
// it: a more specific model prefix must come before a shorter one that also
// matches ("Raspberry Pi Zero 2" before "Raspberry Pi Zero").
func profiles() []Profile {
	return []Profile{
		pi("rpi-zero2w", "Raspberry Pi Zero 2 W (64-bit OS)", "arm64", "", "Raspberry Pi Zero 2"),
		pi("rpi-zero", "Raspberry Pi Zero, Zero W (ARMv6)", "arm", "6", "Raspberry Pi Zero"),
		pi("rpi1", "Raspberry Pi 1 Model A/B/B+, Compute Module 1 (ARMv6)", "arm", "6",
			"Raspberry Pi Model", "Raspberry Pi Compute Module Rev"),
		pi("rpi2", "Raspberry Pi 2 Model B (ARMv7)", "arm", "7", "Raspberry Pi 2"),
		pi("rpi3", "Raspberry Pi 3 Model A+/B/B+, Compute Module 3 (64-bit OS)", "arm64", "",
			"Raspberry Pi 3", "Raspberry Pi Compute Module 3"),
		pi("rpi4", "Raspberry Pi 4 Model B, 400 (64-bit OS)", "arm64", "", "Raspberry Pi 4"),
		pi("rpi-cm4", "Raspberry Pi Compute Module 4 (64-bit OS)", "arm64", "", "Raspberry Pi Compute Module 4"),
		pi("rpi5", "Raspberry Pi 5, 500, Compute Module 5", "arm64", "",
			"Raspberry Pi 5", "Raspberry Pi Compute Module 5"),
		{
			Name: "visionfive2", Description: "StarFive VisionFive 2 (JH7110)",
			Models: []string{"StarFive VisionFive 2", "StarFive VisionFive V2"},
			I2CBus: "0", SPIPorts: []string{"1.0"}, ThermalZone: zone0, W1Dir: w1Dir,
			GOARCH: "riscv64", EnableI2C: jhEnableI2C, EnableSPI: jhEnableSPI, EnableW1: genericEnableW1,
		},
		{
			Name: "milkv-mars", Description: "Milk-V Mars (JH7110)",
			Models: []string{"Milk-V Mars"},
			I2CBus: "0", SPIPorts: []string{"1.0"}, ThermalZone: zone0, W1Dir: w1Dir,
			GOARCH: "riscv64", EnableI2C: jhEnableI2C, EnableSPI: jhEnableSPI, EnableW1: genericEnableW1,
		},
		{
			Name: "milkv-duo", Description: "Milk-V Duo, Duo 256M, Duo S (CV1800B/SG200x, RISC-V)",
			Models: []string{"Milk-V Duo"},
			I2CBus: "1", SPIPorts: []string{"0.0"}, ThermalZone: zone0, W1Dir: w1Dir,
			GOARCH: "riscv64", EnableI2C: duoEnableI2C, EnableSPI: duoEnableSPI, EnableW1: genericEnableW1,
		},
		{
			Name: "generic", Description: "any other Linux machine (set bus per sensor)",
			ThermalZone: zone0, W1Dir: w1Dir,
			EnableI2C: genericEnableI2C, EnableSPI: genericEnableSPI, EnableW1: genericEnableW1,
		},
		{
			Name: "sim", Description: "simulated sensors and board health, for development and demos",
		},
	}
}

// Profiles returns every known profile.
func Profiles() []Profile { return profiles() }

// Lookup returns the profile with the given name.
func Lookup(name string) (Profile, bool) {
	for _, p := range profiles() {
		if p.Name == name {
			return p, true
		}
	}
	return Profile{}, false
}

// Generic returns the profile used on machines that are not a known board.
func Generic() Profile {
	p, _ := Lookup("generic")
	return p
}

// Model returns the machine's model string: the device tree's model
// (<root>/proc/device-tree/model, NUL-terminated) or, on machines without a
// device tree, the DMI product name. It returns "" when neither exists.
func Model(root string) string {
	if m := readString(filepath.Join(root, "proc/device-tree/model")); m != "" {
		return m
	}
	return readString(filepath.Join(root, "sys/class/dmi/id/product_name"))
}

// Detect picks the profile of the machine whose filesystem is at root ("/"
// on the device; a fake tree in tests). It matches the device tree's model
// first and the DMI product name second. On a machine that is neither it
// returns the generic profile and false, so the caller can say so: vigil
// never falls back to the simulator on its own.
func Detect(root string) (Profile, bool) {
	for _, file := range []string{"proc/device-tree/model", "sys/class/dmi/id/product_name"} {
		if p, ok := match(readString(filepath.Join(root, file))); ok {
			return p, true
		}
	}
	return Generic(), false
}

// Detected is Detect that also says how the profile was picked, for
// `vigil init` to show: the file it matched and the model it read there,
// or that neither names a known board.
func Detected(root string) (Profile, string) {
	for _, f := range []struct{ file, what string }{
		{"proc/device-tree/model", "device-tree model"},
		{"sys/class/dmi/id/product_name", "DMI product name"},
	} {
		m := readString(filepath.Join(root, f.file))
		if p, ok := match(m); ok {
			return p, fmt.Sprintf("%s %q (/%s)", f.what, m, f.file)
		}
	}
	if m := Model(root); m != "" {
		return Generic(), fmt.Sprintf("model %q is not a board vigil knows: the generic Linux profile (set device.board to name one)", m)
	}
	return Generic(), "no device-tree model or DMI product name: the generic Linux profile (set device.board to name one)"
}

// match returns the first profile one of whose model prefixes starts model.
func match(model string) (Profile, bool) {
	if model == "" {
		return Profile{}, false
	}
	for _, p := range profiles() {
		for _, m := range p.Models {
			if strings.HasPrefix(model, m) {
				return p, true
			}
		}
	}
	return Profile{}, false
}

// readString reads a small sysfs/procfs string, dropping the device tree's
// trailing NUL and surrounding white space. A missing file reads as "".
func readString(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	if i := bytes.IndexByte(b, 0); i >= 0 {
		b = b[:i]
	}
	return strings.TrimSpace(string(b))
}
