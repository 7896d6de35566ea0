package daemon

// Forgetting what is usual: `vigil baseline reset [SENSOR]` after a sensor
// was moved, and a reload that changes a sensor's driver, bus, address,
// path or serial (another chip, or the same one somewhere else), which
// resets that sensor's baseline with a notice. Both go through the
// engine's ResetBaseline and say so with a RuleBaseline notice.

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"

	"github.com/vigil-iot/vigil/alert"
	"github.com/vigil-iot/vigil/config"
	"github.com/vigil-iot/vigil/transport"
)

// BaselineReset forgets what is usual for sensor's readings ("" for every
// reading) and says so with a notice.
func (c *Commander) BaselineReset(ctx context.Context, sensor string) (string, error) {
	command := strings.TrimSpace("baseline reset " + sensor)
	return c.change(ctx, change{verb: "baseline", name: "baseline reset", command: command,
		check: func() error { return CheckBaselineSensor(c.app.current(), sensor) },
		do: func(ctx context.Context) (string, error) {
			gone, err := c.app.engine.ResetBaseline(ctx, sensor)
			if err != nil {
				return "", err
			}
			text := resetText(sensor, "by "+transport.SourceOf(ctx).String(), gone)
			c.auditKind(ctx, command, text, alert.RuleBaseline)
			return text, nil
		}})
}

// CheckBaselineSensor refuses a sensor that cfg does not configure ("" and
// the board's own health are always there).
func CheckBaselineSensor(cfg *config.Config, sensor string) error {
	names := []string{config.BoardSensor}
	for _, s := range cfg.Sensors {
		names = append(names, s.Name)
	}
	if sensor == "" || slices.Contains(names, sensor) {
		return nil
	}
	return fmt.Errorf("baseline reset: no sensor %q (configured: %s)", sensor, strings.Join(names, ", "))
}

// resetText says what a reset forgot, and why (who, or what moved).
func resetText(sensor, why string, gone []string) string {
	what := "every reading"
	if sensor != "" {
		what = "sensor " + sensor
	}
	if len(gone) == 0 {
		return fmt.Sprintf("baseline reset for %s %s: nothing learnt yet", what, why)
	}
	return fmt.Sprintf("baseline reset for %s %s: forgot what is usual for %s; learning again (ready in a day, hourly in two)",
		what, why, strings.Join(gone, ", "))
}

// movedSensors are the sensors in both lists whose driver, bus, address,
// path or serial changed: what they measure now is not what was learnt.
func movedSensors(old, cur []config.Sensor) []string {
	var out []string
	for _, n := range cur {
		for _, o := range old {
			if o.Name == n.Name && (o.Driver != n.Driver || o.Bus != n.Bus || o.Address != n.Address ||
				o.Path != n.Path || o.Serial != n.Serial) {
				out = append(out, n.Name)
			}
		}
	}
	return out
}

// resetMoved resets the baselines of the sensors a reload moved, each with
// a notice.
func (a *App) resetMoved(ctx context.Context, old, cur []config.Sensor, log *slog.Logger) {
	if ctx == nil { // reloaded before Run
		ctx = context.Background()
	}
	for _, name := range movedSensors(old, cur) {
		gone, err := a.engine.ResetBaseline(ctx, name)
		if err != nil {
			log.Error("reset the baseline of a moved sensor", "sensor", name, "err", err)
			continue
		}
		text := resetText(name, "as its driver, bus, address, path or serial changed in the reloaded config", gone)
		log.Warn(text, "sensor", name)
		if _, err := a.engine.Notice(ctx, alert.RuleBaseline, text); err != nil {
			log.Error("queue the baseline reset's notice", "err", err)
		}
	}
}
