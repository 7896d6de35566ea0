// Package fleet is the view model of `vigil fleet`: the state of every
// device seen on a broker, built from the retained and live messages vigil
// publishes under <prefix>/<id>/ (status, info, heartbeat, sensors, alert,
// problem/attributes), and from the devices' answers to a roll call
// (mqtt.RollCallTopic), which repeat status, info, heartbeat and problem
// state, not retained, for brokers that deliver no retained messages to a
// wildcard. It holds no connection: the caller subscribes and hands each
// message to View.Handle, so the view is testable without a broker, on an
// injected clock.
//
// Policy: a device is
//   - offline when its retained status says so (a clean stop or the Last
//     Will the broker sends after the device went silent: nominally 1.5 ×
//     keepalive, measured 1.7-2.9 × by the time the broker checks);
//   - stale when its status is still online but nothing was heard from it
//     for 3 × its heartbeat interval (or View's StaleAfter, when set): a
//     device that hangs with its TCP connection up, or a broker that has
//     not yet noticed;
//   - online otherwise, since the time its info says the connection came
//     up (a roll call's answer repeats it; only a change of status is
//     dated by its arrival).
//
// A notice (alert state "notice": a setting changed, the checklist
// replaced, a test alert; or the firing system alert an older vigil sent
// for one) is an event: it is never firing and never the last alert.
//
// The heartbeat interval comes from the retained info payload or, failing
// that, from the last heartbeat's next_at − time. A device with heartbeats
// off (interval 0) is never called stale unless StaleAfter is set.
package fleet

import (
	"cmp"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/jonboulle/clockwork"

	"github.com/vigil-iot/vigil/alert"
	"github.com/vigil-iot/vigil/transport"
	"github.com/vigil-iot/vigil/transport/mqtt"
)

// States a Device can be in.
const (
	Online  = "online"
	Offline = "offline"
	Stale   = "stale"
	Unknown = "unknown" // seen, but no status message yet
	// Missing: on the roster (seen before, on this broker and prefix)
	// but neither a status nor an answer to the roll call came: on a
	// broker that keeps no retained Will for a wildcard (RabbitMQ), a
	// device that died is missing rather than offline.
	Missing = "missing"
)

// StaleFactor times the heartbeat interval is how long a device may be
// silent before it is called stale.
const StaleFactor = 3

// Device is one device as the fleet view shows it, at one instant.
type Device struct {
	ID        string       `json:"id"`
	State     string       `json:"state"`            // online | offline | stale | unknown
	Status    string       `json:"status,omitempty"` // the status payload as published
	Since     time.Time    `json:"since,omitzero"`   // when the status took its value, when known
	LastSeen  time.Time    `json:"last_seen,omitzero"`
	SilentFor Duration     `json:"silent_for,omitzero"` // since LastSeen
	Board     string       `json:"board,omitempty"`
	Version   string       `json:"version,omitempty"`
	Config    string       `json:"config,omitempty"` // digest of the config in force
	Tags      []string     `json:"tags,omitempty"`
	Interval  Duration     `json:"interval,omitzero"` // heartbeat interval
	Heartbeat *Heartbeat   `json:"heartbeat,omitempty"`
	Firing    []Firing     `json:"firing"`
	LastAlert *alert.Alert `json:"last_alert,omitempty"` // seen live, else the newest firing one; never a notice
}

// Heartbeat is the device's last heartbeat run and its age.
type Heartbeat struct {
	Time    time.Time `json:"time"`
	Outcome string    `json:"outcome"`
	Reason  string    `json:"reason,omitempty"`
	NextAt  time.Time `json:"next_at,omitzero"`
	Age     Duration  `json:"age"`
}

// Firing is one alert that is firing on a device, with who acknowledged
// it and when (from the problem attributes), if someone did.
type Firing struct {
	Severity alert.Severity `json:"severity"`
	Source   string         `json:"source"`
	Rule     string         `json:"rule,omitempty"`
	Summary  string         `json:"summary"`
	Time     time.Time      `json:"time"`
	ID       string         `json:"id,omitempty"` // what cmd/ack may name
	AckedBy  string         `json:"acked_by,omitempty"`
	AckedAt  time.Time      `json:"acked_at,omitzero"`
}

// alert is the firing alert f stands for on device: with its id, so a
// consumer can drop duplicates, and its acknowledgement.
func (f Firing) alert(device string) alert.Alert {
	return alert.Alert{ID: f.ID, Device: device, Time: f.Time, Severity: f.Severity, Source: f.Source, Rule: f.Rule, State: alert.StateFiring, Summary: f.Summary, AckedBy: f.AckedBy, AckedAt: f.AckedAt}
}

// Duration is a time.Duration that reads and writes as a Go duration
// string ("1m30s") in JSON.
type Duration time.Duration

// MarshalText writes d as a Go duration, rounded to the millisecond.
func (d Duration) MarshalText() ([]byte, error) {
	return []byte(time.Duration(d).Round(time.Millisecond).String()), nil
}

// UnmarshalText reads a Go duration.
func (d *Duration) UnmarshalText(b []byte) error {
	v, err := time.ParseDuration(string(b))
	*d = Duration(v)
	return err
}

// View is the state of every device seen under one topic prefix. It is
// safe for concurrent use: paho's router calls Handle while a renderer
// calls Devices.
type View struct {
	prefix string
	clock  clockwork.Clock
	// StaleAfter, when positive, replaces 3 × the heartbeat interval as
	// the silence after which an online device is stale.
	StaleAfter time.Duration

	mu      sync.Mutex
	devices map[string]*entry
	changed chan struct{}
}

// entry is what View keeps per device; Devices turns it into a Device.
type entry struct {
	id        string
	status    string
	statusAt  time.Time // when a live status arrived; zero for a retained one
	info      *mqtt.Info
	interval  time.Duration
	hb        *transport.Heartbeat
	firing    map[string]Firing // by source/rule
	lastAlert *alert.Alert
	lastSeen  time.Time
}

// New returns an empty view of the devices under prefix (e.g. "vigil").
func New(prefix string, clock clockwork.Clock) *View {
	return &View{prefix: prefix, clock: clock, devices: map[string]*entry{}, changed: make(chan struct{}, 1)}
}

// Topics are the subscriptions that feed the view.
func (v *View) Topics() []string {
	return []string{v.prefix + "/+/+", v.prefix + "/+/problem/attributes"}
}

// Changed receives a value after Handle changed the view; several changes
// may collapse into one.
func (v *View) Changed() <-chan struct{} { return v.changed }

// Handle takes one message. retained is the MQTT retain flag: a retained
// message was published some time ago, so only its payload's own time
// counts as a sign of life; a live one means the device spoke just now.
// Topics the view does not use are ignored; a payload it cannot read is an
// error naming the topic, and leaves the view as it was.
func (v *View) Handle(topic string, payload []byte, retained bool) error {
	rest, ok := strings.CutPrefix(topic, v.prefix+"/")
	if !ok {
		return nil
	}
	id, leaf, ok := strings.Cut(rest, "/")
	if !ok || id == "" {
		return nil
	}
	now := v.clock.Now()
	v.mu.Lock()
	defer v.mu.Unlock()
	e := v.devices[id]
	fresh := e == nil
	if fresh {
		e = &entry{id: id, firing: map[string]Firing{}}
	}
	var seen time.Time // the payload's own time, if it has one
	switch leaf {
	case "status":
		p := strings.TrimSpace(string(payload))
		if p != Online && p != Offline {
			return fmt.Errorf("%s: status %q, want online or offline", topic, p)
		}
		// Only a change is dated: a roll call's answer repeats "online"
		// (not retained) without the device having come online again.
		if p != e.status {
			e.statusAt = time.Time{}
			if !retained {
				e.statusAt = now
			}
		}
		e.status = p
	case "info":
		var in mqtt.Info
		if err := json.Unmarshal(payload, &in); err != nil {
			return fmt.Errorf("%s: read info: %w", topic, err)
		}
		if in.Interval != "" {
			d, err := time.ParseDuration(in.Interval)
			if err != nil {
				return fmt.Errorf("%s: interval: %w", topic, err)
			}
			e.interval = d
		}
		e.info, seen = &in, in.Time
	case "heartbeat":
		var hb transport.Heartbeat
		if err := json.Unmarshal(payload, &hb); err != nil {
			return fmt.Errorf("%s: read heartbeat: %w", topic, err)
		}
		e.hb, seen = &hb, hb.Time
		if hb.Outcome == "ok" && !retained {
			// As the Home Assistant problem sensor does: an ok run
			// clears the LLM's alerts.
			maps.DeleteFunc(e.firing, func(_ string, f Firing) bool { return f.Source == alert.SourceLLM })
		}
	case "sensors":
		var s struct {
			Time time.Time `json:"time"`
		}
		if err := json.Unmarshal(payload, &s); err != nil {
			return fmt.Errorf("%s: read sensors: %w", topic, err)
		}
		seen = s.Time
	case "alert":
		var a alert.Alert
		if err := json.Unmarshal(payload, &a); err != nil {
			return fmt.Errorf("%s: read alert: %w", topic, err)
		}
		seen = a.Time
		if a.IsNotice() {
			break // an event: it neither fires nor is the last alert
		}
		key := a.Key()
		if a.State == alert.StateResolved {
			delete(e.firing, key)
		} else {
			e.firing[key] = Firing{a.Severity, a.Source, a.Rule, a.Summary, a.Time, a.ID, a.AckedBy, a.AckedAt}
		}
		if e.lastAlert == nil || !a.Time.Before(e.lastAlert.Time) {
			e.lastAlert = &a
		}
	case "problem/attributes":
		var p struct {
			Firing []Firing `json:"firing"`
		}
		if err := json.Unmarshal(payload, &p); err != nil {
			return fmt.Errorf("%s: read problem attributes: %w", topic, err)
		}
		e.firing = map[string]Firing{}
		for _, f := range p.Firing {
			// A vigil from before notices listed them as firing.
			if (alert.Alert{Source: f.Source, Rule: f.Rule, State: alert.StateFiring}).IsNotice() {
				continue
			}
			e.firing[f.Source+"/"+f.Rule] = f
		}
	default:
		return nil
	}
	if !retained {
		seen = now
	}
	if seen.After(e.lastSeen) {
		e.lastSeen = seen
	}
	if fresh {
		v.devices[id] = e
	}
	select {
	case v.changed <- struct{}{}:
	default:
	}
	return nil
}

// Devices returns every device seen, with states computed at the clock's
// now, in the order of Compare: the ones that need a look first.
func (v *View) Devices() []Device {
	now := v.clock.Now()
	v.mu.Lock()
	out := make([]Device, 0, len(v.devices))
	for _, e := range v.devices {
		out = append(out, e.device(now, v.StaleAfter))
	}
	v.mu.Unlock()
	slices.SortFunc(out, Compare)
	return out
}

// Compare orders devices for a person who has a thousand of them: the
// firing ones first, the most severe problem first (those with a problem
// nobody acknowledged before those whose every problem is acknowledged),
// then the offline, the
// stale, the unknown and last the online ones; within each, by id in
// natural order (dev-9 before dev-10). It depends on nothing but the
// devices, so the order is the same at every redraw and only a device
// whose state changed moves.
func Compare(a, b Device) int {
	if c := cmp.Compare(rank(a), rank(b)); c != 0 {
		return c
	}
	if c := compareIDs(a.ID, b.ID); c != 0 {
		return c
	}
	return strings.Compare(a.ID, b.ID)
}

// rank is a device's place in Compare: firing unacknowledged by
// severity, firing acknowledged by severity, then by state.
func rank(d Device) int {
	if len(d.Firing) > 0 {
		worst, open := alert.Severity(0), alert.Severity(0)
		for _, f := range d.Firing {
			worst = max(worst, f.Severity)
			if f.AckedBy == "" {
				open = max(open, f.Severity)
			}
		}
		if open > 0 {
			return -int(open) - int(alert.Critical)
		}
		return -int(worst)
	}
	switch d.State {
	case Offline, Missing:
		return 1
	case Stale:
		return 2
	case Unknown:
		return 3
	}
	return 4
}

// compareIDs compares ids with their runs of digits as numbers.
func compareIDs(a, b string) int {
	for a != "" && b != "" {
		da, db := digitRun(a), digitRun(b)
		if da > 0 && db > 0 {
			na, nb := strings.TrimLeft(a[:da], "0"), strings.TrimLeft(b[:db], "0")
			if c := cmp.Compare(len(na), len(nb)); c != 0 {
				return c
			}
			if c := strings.Compare(na, nb); c != 0 {
				return c
			}
			a, b = a[da:], b[db:]
			continue
		}
		if a[0] != b[0] {
			return cmp.Compare(a[0], b[0])
		}
		a, b = a[1:], b[1:]
	}
	return cmp.Compare(len(a), len(b))
}

func digitRun(s string) int {
	n := 0
	for n < len(s) && s[n] >= '0' && s[n] <= '9' {
		n++
	}
	return n
}

// Summary counts a fleet: the devices in each state, and those with a
// problem firing (in any state), of which Acked have had every problem
// acknowledged.
type Summary struct {
	Devices int `json:"devices"`
	Online  int `json:"online"`
	Offline int `json:"offline"`
	Stale   int `json:"stale"`
	Unknown int `json:"unknown"`
	Missing int `json:"missing"`
	Firing  int `json:"firing"`
	Acked   int `json:"acknowledged"`
}

// VersionCount is how many devices run one version.
type VersionCount struct {
	Version string `json:"version"`
	Count   int    `json:"count"`
}

// Summarize counts devs.
func Summarize(devs []Device) Summary {
	s := Summary{Devices: len(devs)}
	for _, d := range devs {
		switch d.State {
		case Online:
			s.Online++
		case Offline:
			s.Offline++
		case Stale:
			s.Stale++
		case Missing:
			s.Missing++
		default:
			s.Unknown++
		}
		if len(d.Firing) > 0 {
			s.Firing++
			if d.Acked() {
				s.Acked++
			}
		}
	}
	return s
}

// Acked reports whether d has a problem firing and every one of them was
// acknowledged.
func (d Device) Acked() bool {
	for _, f := range d.Firing {
		if f.AckedBy == "" {
			return false
		}
	}
	return len(d.Firing) > 0
}

// Filter picks the devices to show: those firing, offline (or missing)
// or stale, any of the states set, and of those the ones carrying any of
// Tags; every device when nothing is set.
type Filter struct {
	Firing  bool     `json:"firing,omitempty"`
	Offline bool     `json:"offline,omitempty"`
	Stale   bool     `json:"stale,omitempty"`
	Tags    []string `json:"tags,omitempty"`
}

// Any reports whether the filter picks anything out (some field is set).
func (f Filter) Any() bool { return f.states() || len(f.Tags) > 0 }

func (f Filter) states() bool { return f.Firing || f.Offline || f.Stale }

// Match reports whether d is shown.
func (f Filter) Match(d Device) bool {
	if len(f.Tags) > 0 && !slices.ContainsFunc(f.Tags, d.HasTag) {
		return false
	}
	return !f.states() || (f.Firing && len(d.Firing) > 0) || (f.Offline && (d.State == Offline || d.State == Missing)) || (f.Stale && d.State == Stale)
}

// HasTag reports whether d carries tag.
func (d Device) HasTag(tag string) bool { return slices.Contains(d.Tags, tag) }

// String names what the filter shows: "firing or offline".
func (f Filter) String() string {
	var parts []string
	for _, p := range []struct {
		on   bool
		name string
	}{{f.Firing, "firing"}, {f.Offline, Offline}, {f.Stale, Stale}} {
		if p.on {
			parts = append(parts, p.name)
		}
	}
	s := strings.Join(parts, " or ")
	if len(f.Tags) > 0 {
		tags := "tagged " + strings.Join(f.Tags, " or ")
		if s == "" {
			return tags
		}
		return s + ", " + tags
	}
	if s == "" {
		return "all"
	}
	return s
}

func (e *entry) device(now time.Time, staleAfter time.Duration) Device {
	d := Device{ID: e.id, Status: e.status, LastSeen: e.lastSeen, Firing: []Firing{}}
	if !e.lastSeen.IsZero() {
		d.SilentFor = Duration(max(now.Sub(e.lastSeen), 0))
	}
	interval := e.interval
	if e.info != nil {
		d.Board, d.Version, d.Config = e.info.Board, e.info.Version, e.info.Config
		d.Tags = slices.Clone(e.info.Tags)
	}
	if hb := e.hb; hb != nil {
		d.Heartbeat = &Heartbeat{Time: hb.Time, Outcome: hb.Outcome, Reason: hb.Reason, NextAt: hb.NextAt, Age: Duration(max(now.Sub(hb.Time), 0))}
		if e.info == nil && hb.NextAt.After(hb.Time) {
			interval = hb.NextAt.Sub(hb.Time)
		}
	}
	d.Interval = Duration(interval)
	for _, k := range slices.Sorted(maps.Keys(e.firing)) {
		d.Firing = append(d.Firing, e.firing[k])
	}
	if e.lastAlert != nil {
		a := *e.lastAlert
		d.LastAlert = &a
	} else if n := len(d.Firing); n > 0 {
		// No alert seen live: the newest firing one from the retained
		// problem attributes is the last alert known.
		f := slices.MaxFunc(d.Firing, func(a, b Firing) int { return a.Time.Compare(b.Time) })
		a := f.alert(e.id)
		d.LastAlert = &a
	}
	switch e.status {
	case Online:
		// info is published right after "online", and again in a roll
		// call's answer, with the time the connection came up.
		d.State, d.Since = Online, e.statusAt
		if e.info != nil && !e.info.Time.IsZero() {
			d.Since = e.info.Time
		}
	case Offline:
		// A retained offline says nothing of when: the device went
		// away after the last thing it said.
		d.State, d.Since = Offline, e.statusAt
		if d.Since.IsZero() {
			d.Since = e.lastSeen
		}
	default:
		d.State = Unknown
	}
	limit := staleAfter
	if limit <= 0 {
		limit = StaleFactor * interval
	}
	if d.State != Offline && limit > 0 && !e.lastSeen.IsZero() && now.Sub(e.lastSeen) > limit {
		d.State = Stale
	}
	return d
}
