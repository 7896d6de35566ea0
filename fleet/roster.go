package fleet

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/vigil-iot/vigil/internal/atomicfile"
)

// The roster is what `vigil fleet` remembers between runs: the devices it
// has seen on one broker (its nodes, in any order) under one prefix, each
// with when it was last seen. A device on the roster that neither answers
// the roll call nor has a status now is Missing: on RabbitMQ a dead
// device's retained Will reaches no wildcard subscriber on another node,
// so without the roster it would simply vanish.
//
// Policy: one small JSON file per broker and prefix in the user's cache
// directory (RosterPath), written atomically (a temporary file renamed
// over it) and merged with what is on disk first, so two viewers lose
// nothing; at most RosterMax devices, those not seen for RosterKeep
// dropped (a device taken out of service leaves the roster by itself; or
// delete the file).
const (
	RosterMax  = 10000
	RosterKeep = 30 * 24 * time.Hour
)

// Roster is the devices seen before on one broker and prefix.
type Roster struct {
	Brokers []string               `json:"brokers"`
	Prefix  string                 `json:"prefix"`
	Devices map[string]RosterEntry `json:"devices"`
}

// RosterEntry is one device on the roster.
type RosterEntry struct {
	LastSeen time.Time `json:"last_seen"`
	Version  string    `json:"version,omitempty"`
	Config   string    `json:"config,omitempty"`
	Tags     []string  `json:"tags,omitempty"`
}

// RosterPath is the roster file of brokers and prefix under the cache
// directory dir (os.UserCacheDir): dir/vigil/fleet-<hash>.json.
func RosterPath(dir string, brokers []string, prefix string) string {
	b := slices.Sorted(slices.Values(brokers))
	sum := sha256.Sum256([]byte(strings.Join(b, ",") + "\n" + prefix))
	return filepath.Join(dir, "vigil", "fleet-"+hex.EncodeToString(sum[:6])+".json")
}

// LoadRoster reads the roster at path; a file that does not exist is an
// empty roster.
func LoadRoster(path string, brokers []string, prefix string) (*Roster, error) {
	r := &Roster{Brokers: slices.Sorted(slices.Values(brokers)), Prefix: prefix, Devices: map[string]RosterEntry{}}
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return r, nil
	}
	if err != nil {
		return r, fmt.Errorf("fleet roster: %w", err)
	}
	var on Roster
	if err := json.Unmarshal(b, &on); err != nil {
		return r, fmt.Errorf("fleet roster %s: %w (delete it: it is only a cache)", path, err)
	}
	maps.Copy(r.Devices, on.Devices)
	return r, nil
}

// Note puts the devices seen (all but the missing ones) on the roster: a
// device's own last sign of life, else now for one the roster did not
// have yet.
func (r *Roster) Note(devs []Device, now time.Time) {
	for _, d := range devs {
		if d.State == Missing {
			continue
		}
		e, had := r.Devices[d.ID]
		switch {
		case d.LastSeen.After(e.LastSeen):
			e.LastSeen = d.LastSeen
		case !had:
			e.LastSeen = now
		}
		if d.Version != "" {
			e.Version, e.Config, e.Tags = d.Version, d.Config, slices.Clone(d.Tags)
		}
		r.Devices[d.ID] = e
	}
}

// Missing is the devices on the roster that are not among devs, as
// Missing devices.
func (r *Roster) Missing(devs []Device, now time.Time) []Device {
	seen := make(map[string]bool, len(devs))
	for _, d := range devs {
		seen[d.ID] = true
	}
	var out []Device
	for id, e := range r.Devices {
		if seen[id] {
			continue
		}
		d := Device{ID: id, State: Missing, Since: e.LastSeen, LastSeen: e.LastSeen, Version: e.Version, Config: e.Config, Tags: slices.Clone(e.Tags), Firing: []Firing{}}
		if !e.LastSeen.IsZero() {
			d.SilentFor = Duration(max(now.Sub(e.LastSeen), 0))
		}
		out = append(out, d)
	}
	return out
}

// Fill gives the devices of devs that have said nothing of themselves
// (only a status: a retained Will, with their info gone or never
// delivered) the version, config and tags the roster knows.
func (r *Roster) Fill(devs []Device) {
	for i, d := range devs {
		if e, ok := r.Devices[d.ID]; ok && d.Version == "" && len(d.Tags) == 0 {
			devs[i].Version, devs[i].Config, devs[i].Tags = e.Version, e.Config, slices.Clone(e.Tags)
		}
	}
}

// Save merges the roster with the file at path (another viewer may have
// written it meanwhile), keeps the RosterMax devices seen last and none
// older than RosterKeep, and writes it atomically.
func (r *Roster) Save(path string, now time.Time) error {
	if on, err := LoadRoster(path, r.Brokers, r.Prefix); err == nil {
		for id, e := range on.Devices {
			if mine, ok := r.Devices[id]; !ok || e.LastSeen.After(mine.LastSeen) {
				r.Devices[id] = e
			}
		}
	}
	maps.DeleteFunc(r.Devices, func(_ string, e RosterEntry) bool { return now.Sub(e.LastSeen) > RosterKeep })
	if len(r.Devices) > RosterMax {
		ids := slices.SortedFunc(maps.Keys(r.Devices), func(a, b string) int {
			return r.Devices[b].LastSeen.Compare(r.Devices[a].LastSeen)
		})
		for _, id := range ids[RosterMax:] {
			delete(r.Devices, id)
		}
	}
	b, err := json.Marshal(r)
	if err != nil {
		return fmt.Errorf("fleet roster: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("fleet roster: %w", err)
	}
	if err := atomicfile.Write(path, b, 0o600, -1); err != nil {
		return fmt.Errorf("fleet roster %s: %w", path, err)
	}
	return nil
}
