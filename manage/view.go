package manage

import (
	"fmt"
	"slices"
	"time"

	"github.com/vigil-iot/vigil/config"
	"github.com/vigil-iot/vigil/store"
)

// Runtime is what changes while vigil runs beside the engine's status: the
// settings that do not come from the config file or a default (the
// environment, `vigil set`), the checklist in force, and the model's
// notes. RuntimeView fills it; the page, /api/status and `vigil status` show it.
type Runtime struct {
	Settings  []Setting    `json:"settings"`            // sorted by key
	Checklist *Checklist   `json:"checklist,omitempty"` // nil: not known
	Notes     []store.Note `json:"notes"`               // newest first; the model wrote them: untrusted text
	// Digest is the config in force as 12 hex digits (Digest), the one
	// the device's MQTT info carries and vigil fleet --versions groups by.
	Digest string `json:"config_digest,omitempty"`
	// Withheld names the verbs whose sections were left out for a remote
	// viewer whose [manage] remote does not list them: "get" (the
	// settings) and "notes" (the notes).
	Withheld []string `json:"withheld,omitempty"`
}

// Hides reports whether the section the verb shows was withheld.
func (r Runtime) Hides(verb string) bool { return slices.Contains(r.Withheld, verb) }

// HiddenText says why a section is not shown and how to show it.
func HiddenText(verb string) string {
	return fmt.Sprintf("not shown here: add %q to [manage] remote", verb)
}

// Setting is one key whose value is not the file's or a default.
type Setting struct {
	Key    string `json:"key"`
	Value  string `json:"value"`
	Origin string `json:"origin"` // "env", "set 2026-11-26 15:02:03 +01:00 by cli"
}

// Checklist is the checklist the next heartbeat reads.
type Checklist struct {
	Path string `json:"path"`
	// FromAfar: set with `vigil checklist set` (or remotely); it is in the
	// state directory and used instead of heartbeat.checklist.
	FromAfar bool `json:"from_afar"`
}

// String is how status shows it: the path, or "set from afar (path)".
func (c Checklist) String() string {
	if c.FromAfar {
		return "set from afar (" + c.Path + ")"
	}
	return c.Path
}

// Age says how long ago something was, coarsely: "40s", "12m", "2h",
// "3d". A time in the future (a clock step back) is "0s".
func Age(d time.Duration) string {
	switch {
	case d < 0:
		return "0s"
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d/time.Second))
	case d < time.Hour:
		return fmt.Sprintf("%dm", int(d/time.Minute))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh", int(d/time.Hour))
	}
	return fmt.Sprintf("%dd", int(d/(24*time.Hour)))
}

// NotesLine is the notes' count and the newest one's age:
// "3 (newest 2h ago)", or "none".
func (r Runtime) NotesLine(now time.Time) string {
	if r.Hides("notes") {
		return HiddenText("notes")
	}
	if len(r.Notes) == 0 {
		return "none"
	}
	return fmt.Sprintf("%d (newest %s ago)", len(r.Notes), Age(now.Sub(r.Notes[0].Time)))
}

// RuntimeView is what changed at run time, for status and the page: the
// keys whose value is not the file's or a default (the environment, the
// overlay), the checklist in force and the model's notes, newest first.
func RuntimeView(cfg *config.Config, db *store.DB) (Runtime, error) {
	rt := Runtime{Settings: []Setting{}}
	for _, k := range cfg.Overridden() {
		v, err := cfg.Get(k)
		if err != nil {
			continue // an override config left out has no value to show
		}
		rt.Settings = append(rt.Settings, Setting{Key: k, Value: v, Origin: OriginText(cfg, k)})
	}
	for _, r := range cfg.Rules {
		if r.Origin != "" { // a run-time rule: an approved proposal
			rt.Settings = append(rt.Settings, Setting{Key: "rule." + r.Name, Value: r.When, Origin: r.Origin})
		}
	}
	path, over := InForce(cfg)
	rt.Checklist = &Checklist{Path: path, FromAfar: over}
	rt.Digest = Digest(cfg)
	notes, err := db.Notes()
	if err != nil {
		return rt, err
	}
	slices.Reverse(notes)
	for i := range notes {
		notes[i].Time = notes[i].Time.In(cfg.Device.Location)
	}
	rt.Notes = append([]store.Note{}, notes...)
	return rt, nil
}

// ForRemote withholds from a remote viewer (MQTT, Telegram, the status
// page) what the verbs its [manage] remote lacks would show: the settings
// without "get", the notes without "notes". status is not a way around
// them.
func ForRemote(rt Runtime, m config.Manage) Runtime {
	if !m.Allows("get") {
		rt.Settings, rt.Withheld = nil, append(rt.Withheld, "get")
	}
	if !m.Allows("notes") {
		rt.Notes, rt.Withheld = nil, append(rt.Withheld, "notes")
	}
	return rt
}
