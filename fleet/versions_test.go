package fleet

import (
	"bytes"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/jonboulle/clockwork"
)

// TestTagsAndVersions: info's tags show in the table and --tag filters by
// them; the summary names the version skew, the most common first;
// --versions groups the devices under each version.
func TestTagsAndVersions(t *testing.T) {
	clock := clockwork.NewFakeClockAt(t0)
	v := New("vigil", clock)
	for i, d := range []struct{ id, version, tags string }{
		{"gh-1", "v1.4.2", `["north","tomatoes"]`}, {"gh-2", "v1.4.2", `["north"]`},
		{"gh-3", "v1.4.1", `[]`}, {"gh-4", "v1.3.0", `["south"]`},
	} {
		feed(t, v, msg{"vigil/" + d.id + "/status", "online", true},
			msg{"vigil/" + d.id + "/info", fmt.Sprintf(`{"time":"2026-11-26T11:00:00Z","version":%q,"interval":"1m0s","tags":%s,"config":"abcdef01234%d"}`, d.version, d.tags, i), true})
	}
	all := table(t, v, Filter{})
	for _, want := range []string{"3 versions: 2 on v1.4.2, 1 on v1.4.1, 1 on v1.3.0\n", "TAGS", "north,tomatoes"} {
		if !strings.Contains(all, want) {
			t.Errorf("table lacks %q:\n%s", want, all)
		}
	}
	north := table(t, v, Filter{Tags: []string{"north"}})
	if !strings.Contains(north, "2 shown: tagged north") || strings.Contains(north, "gh-3") || strings.Contains(north, "gh-4") {
		t.Errorf("--tag north:\n%s", north)
	}
	var buf bytes.Buffer
	if err := NewSnapshot(clock.Now(), v.Devices(), Filter{}).WriteVersions(&buf); err != nil {
		t.Fatal(err)
	}
	want := "v1.4.2: 2 devices, 2 configs (abcdef012340 abcdef012341)\n  gh-1 gh-2\nv1.4.1: 1 device, 1 config (abcdef012342)\n  gh-3\n"
	if !strings.Contains(buf.String(), want) {
		t.Errorf("--versions:\n%s\nwant it to contain:\n%s", buf.String(), want)
	}
	if vs := Versions(v.Devices()); len(vs) != 3 || vs[2].Version != "v1.3.0" || vs[2].Devices[0] != "gh-4" {
		t.Errorf("Versions = %+v", vs)
	}
}

// TestVersionsFitWidth: many devices and versions fold to 80 columns.
func TestVersionsFitWidth(t *testing.T) {
	clock := clockwork.NewFakeClockAt(t0)
	v := New("vigil", clock)
	for i := range 300 {
		feed(t, v, msg{fmt.Sprintf("vigil/greenhouse-%03d/info", i), fmt.Sprintf(`{"version":"v1.%d.0-long-build-name"}`, i%9), true})
	}
	var buf bytes.Buffer
	snap := NewSnapshot(clock.Now(), v.Devices(), Filter{})
	if err := snap.WriteVersions(&buf); err != nil {
		t.Fatal(err)
	}
	if err := snap.WriteTable(&buf); err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(buf.String(), "\n") {
		if n := utf8.RuneCountInString(l); n > Width {
			t.Errorf("line of %d columns: %q", n, l)
		}
	}
}

// TestRosterBounded: the roster merges with what another viewer wrote,
// drops what was not seen for RosterKeep and keeps the RosterMax seen
// last.
func TestRosterBounded(t *testing.T) {
	path := RosterPath(t.TempDir(), []string{"tcp://b:1883", "tcp://a:1883"}, "vigil")
	if other := RosterPath("x", []string{"tcp://a:1883", "tcp://b:1883"}, "vigil"); filepath.Base(other) != filepath.Base(path) {
		t.Errorf("the nodes' order changes the roster: %s, %s", other, path)
	}
	now := t0
	mine, _ := LoadRoster(path, nil, "vigil")
	var devs []Device
	for i := range RosterMax + 5 {
		devs = append(devs, Device{ID: fmt.Sprintf("d%d", i), State: Online, LastSeen: now.Add(-time.Duration(i) * time.Second)})
	}
	theirs, _ := LoadRoster(path, nil, "vigil")
	theirs.Note([]Device{{ID: "elsewhere", State: Online, LastSeen: now}, {ID: "ancient", State: Offline, LastSeen: now.Add(-RosterKeep - time.Hour)}}, now)
	if err := theirs.Save(path, now); err != nil {
		t.Fatal(err)
	}
	mine.Note(devs, now)
	if err := mine.Save(path, now); err != nil {
		t.Fatal(err)
	}
	got, err := LoadRoster(path, nil, "vigil")
	if err != nil {
		t.Fatal(err)
	}
	_, hasOther := got.Devices["elsewhere"]
	_, hasAncient := got.Devices["ancient"]
	_, hasOldest := got.Devices[fmt.Sprintf("d%d", RosterMax+4)]
	if len(got.Devices) != RosterMax || !hasOther || hasAncient || hasOldest {
		t.Errorf("roster: %d devices (want %d), elsewhere %v (want true), ancient %v, oldest %v (want false)", len(got.Devices), RosterMax, hasOther, hasAncient, hasOldest)
	}
	missing := got.Missing(devs[:10], now)
	if len(missing) != RosterMax-10 || missing[0].State != Missing {
		t.Errorf("Missing: %d, want %d", len(missing), RosterMax-10)
	}
}
