// Package device defines what vigil senses: typed readings with units, the
// Sensor interface every driver implements, and the Snapshot that the watch
// loops evaluate. Drivers for concrete chips live in this package too, one
// file per chip; they borrow a bus and never close it.
//
// Each driver registers itself in its own file, in the spirit of periph.io's
// registries: a function (bme280Driver in bme280.go) returns its DriverInfo,
// with its name, chip, bus, addresses, config keys, quantities and
// constructor, and drivers() in drivers.go lists them. Config validates a
// [[sensor]] against it (LookupDriver, DriverInfo.Takes), `vigil sensors
// --drivers` prints it, the simulator produces what it registers, and
// OpenSensors opens sensors through it. Adding a driver is its file, its
// test and its docs (docs/hardware.md), plus its line in drivers().
//
// Reading the code: device.go holds Reading, Value, Snapshot, the Sensor
// interface and Named (a sensor with its config name and timeout); one
// file per chip (bme280.go, sht4x.go, ...) implements Sensor on a borrowed
// periph.io bus, citing its datasheet for every magic number; health.go
// is the board's own sensor (CPU temperature, load, memory, disk);
// kernel.go reads the kernel's IIO and hwmon sensors; calibrate.go
// corrects a reading with its [[sensor]]'s calibration; drivers.go is the
// registry; spec.go is a configured sensor as a constructor takes it
// (Spec, Opening); open.go opens the configured sensors on the board's
// buses, shares a bus between chips, re-opens a sensor that failed and
// says how to fix what it cannot open (its failure policy is at its top);
// scan.go probes an I²C bus for `vigil scan`; identify.go tells apart the
// chips that share an address by their ID registers (reads only);
// survey.go is the hardware survey `vigil init` shows (the board, its
// buses and what answers on them, each sensor read once, a proposed name
// and [[sensor]] block for each) and starter.go the [[rule]] blocks it
// offers; table.go is the table `vigil sensors` prints; sim.go is the
// simulated board `make run` uses, and simi2c.go its emulated I²C bus.
// Drivers do not log; their errors start with the chip ("bme280: ...").
//
// The sim board's emulated I²C bus: with device.board = "sim" (or `vigil
// init --board sim`) and the environment variable VIGIL_SIM_I2C set to a
// list of CHIP@ADDRESS, as in VIGIL_SIM_I2C=bme280@0x76,bmp280@0x77, the
// machine has one I²C bus, "1", on which those chips answer. They are
// register-map emulations (bme280, bmp280, tmp102) built from the drivers'
// test fixtures, read by the real drivers: `vigil scan` and `vigil init`
// probe, identify and read them as on a board. The daemon's sensors stay
// simulated on the sim board (sim.go), whatever the variable says.
package device
