package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"

	"github.com/vigil-iot/vigil/config"
	"github.com/vigil-iot/vigil/manage"
)

func (e *env) cmdConfigCheck(ctx context.Context, args []string) error {
	if _, err := e.flags("config check", args, nil, 0); err != nil {
		return err
	}
	e.secrets = true
	base, cfg, err := e.load()
	if err != nil {
		return err
	}
	if cfg, err = e.overlaid(ctx, base, cfg); err != nil {
		return err
	}
	if err := e.validate(cfg); err != nil {
		return err
	}
	if path, over := manage.InForce(cfg); over || manage.FileExists(path) {
		_, empty, err := manage.ChecklistFunc(cfg)()
		if err != nil {
			return configErr(err)
		}
		if over {
			fmt.Fprintf(e.stderr, "checklist %s set from afar is in force instead of %s ('vigil checklist reset' removes it)\n", path, cfg.Heartbeat.Checklist)
		}
		if empty {
			fmt.Fprintf(e.stderr, "checklist %s is empty (headings and comments only): heartbeats will not call the LLM\n", path)
		}
	} else {
		fmt.Fprintf(e.stderr, "checklist %s does not exist yet: 'vigil run' writes a template there\n", cfg.Heartbeat.Checklist)
	}
	for _, w := range cfg.Warnings() {
		fmt.Fprintf(e.stderr, "warning: unsafe setup: %s\n", w)
	}
	for _, w := range cfg.Cautions() {
		fmt.Fprintf(e.stderr, "warning: %s\n", w)
	}
	writeOverrides(e.stdout, cfg)
	if err := cfg.WriteTOML(e.stdout); err != nil {
		return err
	}
	fmt.Fprintf(e.stderr, "%s: ok\n", e.config)
	return nil
}

// validate is what config check and init check beyond parsing: the
// engine, the board profile and the files the config names.
func (e *env) validate(cfg *config.Config) error {
	if err := checkEngine(cfg); err != nil {
		return err
	}
	prof, err := profile(cfg, e.logger(), slog.LevelDebug)
	if err != nil {
		return err
	}
	// An I²C sensor with no bus on a profile with no default: config does
	// no IO, so the machine's buses come from here.
	notes, err := checkI2CDefault(cfg, prof, listI2C(cfg, prof))
	if err != nil {
		return configErr(err)
	}
	for _, n := range notes {
		fmt.Fprintln(e.stderr, n)
	}
	if cfg.MQTTEnabled() {
		if _, err := mqttTLS(cfg); err != nil {
			return configErr(err)
		}
	}
	return nil
}

// writeOverrides lists, as TOML comments above the resolved config, the
// values that come from the environment or the run-time overlay rather
// than the file: "# heartbeat.interval = 10m (env)".
func writeOverrides(w io.Writer, cfg *config.Config) {
	keys := cfg.Overridden()
	if len(keys) == 0 {
		return
	}
	fmt.Fprintln(w, "# values set outside the file (VIGIL_<SECTION>_<KEY> or 'vigil set'):")
	for _, k := range keys {
		v, _ := cfg.Get(k)
		fmt.Fprintf(w, "# %s = %s (%s)\n", k, v, cfg.Origin(k))
	}
}
