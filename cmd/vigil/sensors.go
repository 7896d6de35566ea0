package main

import (
	"context"
	"flag"
	"log/slog"
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
		return printDrivers(e.stdout)
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
	return cmdSensors(ctx, cfg, prof, o, e.stdout, log)
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
