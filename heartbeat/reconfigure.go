package heartbeat

import (
	"github.com/vigil-iot/vigil/device"
)

// Reconfigure applies a reloaded config to a running engine (SIGHUP). The
// new settings take effect at once: the sample loop samples now and then at
// the new interval, and the heartbeat loop starts a new schedule when the
// interval changed. Rules keep their state by name (a firing rule stays
// firing until its clear condition holds); new rules start idle and removed
// ones are forgotten. sensors and thinker replace the current ones (pass
// the current ones to keep them; a nil thinker means rules-only).
//
// It waits for a heartbeat run and a sample in progress to finish, so the
// caller may close the old sensors once it returns. A changed time zone
// resets the baselines, whose bins are hours of the old zone's day. The device ID, the
// flood guard and the history sizes are fixed at New and kept.
func (e *Engine) Reconfigure(cfg Config, sensors []device.Named, thinker Thinker) {
	e.runMu.Lock()
	defer e.runMu.Unlock()
	e.sampleMu.Lock()
	defer e.sampleMu.Unlock()
	e.mu.Lock()
	defer e.mu.Unlock()

	old := e.cfg
	cfg.DeviceID = old.DeviceID
	cfg.FloodLimit, cfg.FloodWindow = old.FloodLimit, old.FloodWindow
	cfg.HistoryStep, cfg.MemHistory = old.HistoryStep, old.MemHistory
	if cfg.Location == nil {
		cfg.Location = old.Location
	}
	if cfg.SampleInterval <= 0 {
		cfg.SampleInterval = old.SampleInterval
	}
	if cfg.Checklist == nil {
		cfg.Checklist = old.Checklist
	}
	rules := make(map[string]*ruleRun, len(cfg.Rules))
	for _, r := range cfg.Rules {
		rr, ok := e.rules[r.Spec.Name]
		if !ok {
			rr = &ruleRun{}
		}
		rr.rule = r
		rules[r.Spec.Name] = rr
	}
	e.rules = rules
	e.cfg = cfg
	e.base.SetUnusual(cfg.Unusual)
	if cfg.Location.String() != old.Location.String() {
		// The bins are hours of the old zone's day: learn them again.
		e.base.SetLocation(cfg.Location)
		gone := e.base.Reset("")
		e.log.Warn("device.timezone changed: forgot what is usual at each hour, learning it again", "readings", len(gone))
	}
	e.floors.reset() // a reload may change a driver, and with it the resolution
	e.deps.Sensors = sensors
	e.deps.Thinker = thinker
	close(e.reconf)
	e.reconf = make(chan struct{})
}
