package status

import (
	"context"
	"slices"
	"time"

	"github.com/vigil-iot/vigil/config"
	"github.com/vigil-iot/vigil/heartbeat"
	"github.com/vigil-iot/vigil/manage"
	"github.com/vigil-iot/vigil/rule"
)

// Window is "the last hour": the history that comes with a status, drawn
// as the sparklines of `vigil status` and carried by /api/status.
const Window = time.Hour

// RulesOnly is why a view in rules-only mode has no next run.
const RulesOnly = "rules-only: no LLM to ask"

// View is the status every surface shows: the engine's status with the
// history since the window asked for (Window for status), and what changed
// at run time (settings, checklist, notes). It is `vigil status --json`,
// /api/status and the control socket's answer to status.
type View struct {
	heartbeat.Status
	Series []heartbeat.Series `json:"series"`
	// Runtime is nil when it is not known (a daemon from before it was
	// sent, or a view gathered without it); its fields sit beside the
	// status's in JSON.
	*manage.Runtime
	// RuleBook lists the run-time rules (approved proposals, with their
	// origin) and the proposals waiting for a person; nil when not
	// gathered.
	RuleBook *manage.RulesView `json:"rule_book,omitempty"`
}

// Source is the engine as the view reads it, or a fake in tests.
type Source interface {
	Status(ctx context.Context) (heartbeat.Status, error)
	History(ctx context.Context, since time.Time) ([]heartbeat.Series, error)
}

// RuntimeFunc gives the run-time settings, the checklist in force and the
// model's notes.
type RuntimeFunc func(ctx context.Context) (manage.Runtime, error)

// Gather collects the view once: src's status, its history since since,
// and, when rt is not nil, the run-time view.
func Gather(ctx context.Context, src Source, rt RuntimeFunc, since time.Time) (View, error) {
	st, err := src.Status(ctx)
	if err != nil {
		return View{}, err
	}
	series, err := src.History(ctx, since)
	if err != nil {
		return View{}, err
	}
	if st.Mode == "rules-only" && st.HeartbeatsOff == "" {
		// No heartbeat asks anything without an LLM: a next run would
		// promise one.
		st.NextRun, st.HeartbeatsOff = time.Time{}, RulesOnly
	}
	v := View{Status: st, Series: series}
	if rt != nil {
		r, err := rt(ctx)
		if err != nil {
			return View{}, err
		}
		v.Runtime = &r
	}
	return v, nil
}

// RuleInfo is what a surface knows of a configured rule: the readings it
// watches and the thresholds the page draws.
type RuleInfo struct {
	Name       string
	Keys       []string         // the readings it watches
	Thresholds []rule.Threshold // drawn as lines on their charts
}

// Rules tells the page and `vigil status` which readings each of cfg's
// rules watches and which thresholds to draw.
func Rules(cfg *config.Config) []RuleInfo {
	var out []RuleInfo
	for _, r := range cfg.Rules {
		spec, err := cfg.RuleSpec(r)
		if err != nil {
			continue // Parse has compiled every rule
		}
		ri := RuleInfo{Name: spec.Name, Keys: spec.When.Keys(), Thresholds: spec.When.Thresholds()}
		if spec.Clear != nil {
			ri.Keys = append(ri.Keys, spec.Clear.Keys()...)
		}
		slices.Sort(ri.Keys)
		ri.Keys = slices.Compact(ri.Keys)
		out = append(out, ri)
	}
	return out
}
