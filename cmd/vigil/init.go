package main

import (
	"bufio"
	"context"
	"errors"
	"os"
	"time"

	"github.com/vigil-iot/vigil/config"
	"github.com/vigil-iot/vigil/manage"
	"github.com/vigil-iot/vigil/setup"
)

// cmdInit is `vigil init`: the wizard in package setup, wired here.
func (e *env) cmdInit(ctx context.Context, args []string) error {
	o := &setup.Options{}
	if _, err := e.flags("init", args, o.Register, 0); err != nil {
		return err
	}
	o.Config = e.config
	in := bufio.NewReader(os.Stdin)
	w := &setup.Wizard{Opts: o, In: in, Out: e.stdout, Interactive: !o.Yes && setup.IsTerminal(os.Stdin),
		Hidden: setup.HiddenReader(os.Stdin, in), Survey: setup.ProfileSurvey{Root: "/"}, Channels: setup.Checks{},
		Systemd: setup.Unit{}, Now: time.Now, ReadFile: os.ReadFile,
		Check: func(data []byte, getenv func(string) string, readFile func(string) ([]byte, error)) (*config.Config, error) {
			b := &manage.Base{Name: e.config, Data: data, Options: parseOptions(), Getenv: getenv, ReadFile: readFile, Red: e.redactor()}
			cfg, err := b.Configured()
			if err == nil {
				_, err = validate(cfg, e.logger())
			}
			return cfg, err
		}}
	err := o.Finish(os.Getenv)
	if err == nil {
		err = w.Run(ctx)
	}
	if se := (*setup.Error)(nil); errors.As(err, &se) {
		return &exitError{se.Code, se.Err}
	}
	return err
}
