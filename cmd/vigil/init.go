package main

import (
	"context"
	"errors"
	"os"
	"time"

	"github.com/vigil-iot/vigil/config"
	"github.com/vigil-iot/vigil/setup"
	"periph.io/x/conn/v3/driver/driverreg"
)

// cmdInit is `vigil init`: the wizard of package setup, wired here.
func (e *env) cmdInit(ctx context.Context, args []string) error {
	o := &setup.Options{}
	if _, err := e.flags("init", args, o.Register, 0); err != nil {
		return err
	}
	o.Config = e.config
	w := setup.New(o, os.Stdin, e.stdout, os.Getenv, time.Now, setup.DeviceSurvey{Init: func() error { _, err := driverreg.Init(); return err }, Getenv: os.Getenv, Now: time.Now, Sleep: sleepCtx}, setup.Checks{})
	w.Check = setup.Checker{Options: config.HardwareOptions(), Validate: e.validate}
	err := w.Run(ctx)
	if se := (*setup.Error)(nil); errors.As(err, &se) {
		return &exitError{se.Code, se.Err}
	}
	return err
}
