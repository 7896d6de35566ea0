package main

// The `vigil sensors` and `vigil scan` commands, and the wiring of package
// device's sensor opener: periph.io's host drivers and the wall clock.
// Opening, bus sharing, re-opening after a failure and the failure policy
// are device's (device/open.go); each driver registers itself in its own
// file in device.

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"time"

	"periph.io/x/conn/v3/driver/driverreg"
	_ "periph.io/x/host/v3/gpioioctl"

	"github.com/vigil-iot/vigil/board"
	"github.com/vigil-iot/vigil/config"
	"github.com/vigil-iot/vigil/device"
	"github.com/vigil-iot/vigil/status"
)

func (e *env) cmdSensors(ctx context.Context, args []string) error {
	var o sensorsOptions
	if _, err := e.flags("sensors", args, func(fs *flag.FlagSet) {
		fs.BoolVar(&o.json, "json", false, "print the snapshot as JSON")
		fs.BoolVar(&o.drivers, "drivers", false, "list the sensor drivers and their config keys (needs no config)")
	}, 0); err != nil {
		return err
	}
	if o.drivers {
		return device.WriteDrivers(e.stdout)
	}
	cfg, err := e.loadConfig()
	if err != nil {
		return err
	}
	log := e.logger()
	prof, err := profile(cfg, log, slog.LevelDebug)
	if err != nil {
		return err
	}
	// What is usual now: the status's bands; none (no BASELINE column)
	// when neither a daemon nor the state file can say.
	usual, _, err := e.view(ctx, cfg, nil)
	if err != nil {
		log.Debug("no usual bands", "err", err)
	}
	return cmdSensors(ctx, cfg, prof, o, usual, e.stdout, log)
}

func (e *env) cmdScan(ctx context.Context, args []string) error {
	var bus string
	if _, err := e.flags("scan", args, func(fs *flag.FlagSet) {
		fs.StringVar(&bus, "bus", "", "I²C bus to probe (default: the board's)")
	}, 0); err != nil {
		return err
	}
	cfg, err := e.loadConfigOrDefaults()
	if err != nil {
		return err
	}
	prof, err := profile(cfg, e.logger(), slog.LevelDebug)
	if err != nil {
		return err
	}
	return cmdScan(ctx, cfg, prof, bus, e.stdout)
}

// host is what device's opener needs of this machine: periph.io's host
// drivers, initialised on the first bus opened, and the wall clock.
func host(cfg *config.Config, prof board.Profile, now func() time.Time) device.Host {
	return device.Host{
		Board:    prof,
		Init:     func() error { _, err := driverreg.Init(); return err },
		Now:      now,
		Sleep:    sleepCtx,
		StateDir: cfg.Device.StateDir,
		Getenv:   os.Getenv, // VIGIL_SIM_I2C: the sim board's emulated bus
	}
}

// openSensors opens every configured sensor and the board health sensor
// and logs one warning for every sensor it cannot open, with the fix.
func openSensors(cfg *config.Config, prof board.Profile, now func() time.Time, log *slog.Logger) (sensors []device.Named, closeAll func() error) {
	sensors, closeAll, problems := device.OpenSensors(cfg.Specs(), host(cfg, prof, now))
	for _, p := range problems {
		p.Log(log)
	}
	return sensors, closeAll
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

// checkI2CDefault is `vigil config check` on the I²C sensors that name no
// bus on a board profile with no default (device.CheckI2CDefault), with
// each sensor that must name one as a config error naming its line.
func checkI2CDefault(cfg *config.Config, prof board.Profile, list func() ([]string, error)) (notes []string, err error) {
	notes, bad := device.CheckI2CDefault(cfg.Specs(), prof, list)
	var errs []error
	for i, err := range bad {
		if err != nil {
			errs = append(errs, cfg.SensorError(i, "bus", err))
		}
	}
	return notes, errors.Join(errs...)
}

// sensorsOptions are the flags of `vigil sensors`.
type sensorsOptions struct{ json, drivers bool }

// cmdSensors is `vigil sensors [--json]`, with what is usual now from
// usual's bands; --drivers never gets here.
func cmdSensors(ctx context.Context, cfg *config.Config, prof board.Profile, o sensorsOptions, usual status.View, stdout io.Writer, log *slog.Logger) error {

	// The table shows every open error; don't log them a second time.
	sensors, closeAll, problems := device.OpenSensors(cfg.Specs(), host(cfg, prof, time.Now))
	defer closeAll()
	log.Debug("sensors opened", "sensors", len(sensors), "not_opened", len(problems))
	snap := device.Sense(ctx, sensors, time.Now())
	bands := status.BandsFor(snap, usual.Baselines)

	if o.json {
		if err := writeJSON(stdout, status.SensorsJSON{Table: snap.Table(), Baselines: bands}); err != nil {
			return err
		}
	} else {
		device.WriteTable(stdout, cfg.Specs(), sensors, snap, status.UsualCells(bands, usual.Unusual, snap.Time.In(cfg.Device.Location)))
	}
	if n := len(snap.Errors); n > 0 {
		return fmt.Errorf("%d of %d sensors failed", n, len(sensors))
	}
	return nil
}

// cmdScan is `vigil scan [--bus NAME]`: probe an I²C bus like i2cdetect and
// name the chips that may answer at each address.
func cmdScan(ctx context.Context, cfg *config.Config, prof board.Profile, busName string, stdout io.Writer) error {
	m := device.NewMachine(host(cfg, prof, time.Now))
	defer m.Close()
	return device.ScanReport(ctx, stdout, cfg.Specs(), prof, busName, m)
}

// listI2C lists the machine's I²C buses, for config check.
func listI2C(cfg *config.Config, prof board.Profile) func() ([]string, error) {
	return device.NewMachine(host(cfg, prof, time.Now)).I2CBuses
}
