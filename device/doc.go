// Package device defines what vigil senses: typed readings with units, the
// Sensor interface every driver implements, and the Snapshot that the watch
// loops evaluate. Drivers for concrete chips live in this package too, one
// file per chip; they borrow a bus and never close it.
//
// Reading the code: device.go holds Reading, Value, Snapshot, the Sensor
// interface and Named (a sensor with its config name and timeout); one
// file per chip (bme280.go, sht4x.go, ...) implements Sensor on a borrowed
// periph.io bus, citing its datasheet for every magic number; health.go
// is the board's own sensor (CPU temperature, load, memory, disk);
// kernel.go reads the kernel's IIO and hwmon sensors; calibrate.go
// corrects a reading with its [[sensor]]'s calibration; scan.go probes an
// I²C bus; sim.go is the simulated board `make run` uses. Drivers do not
// log; their errors start with the chip ("bme280: ...").
package device
