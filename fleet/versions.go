package fleet

import (
	"cmp"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/vigil-iot/vigil/internal/termtext"
)

// NoVersion groups the devices whose info (or roster entry) names none.
const NoVersion = "unknown"

// Version is one version string of a fleet and the devices that run it,
// with how many of them run each config digest.
type Version struct {
	Version string         `json:"version"`
	Count   int            `json:"count"`
	Devices []string       `json:"devices"`           // in the order of Compare
	Configs map[string]int `json:"configs,omitempty"` // config digest → devices
}

// Versions groups devs by version: the most common first, then by
// version string, newest first.
func Versions(devs []Device) []Version {
	by := map[string]*Version{}
	for _, d := range devs {
		name := cmp.Or(d.Version, NoVersion)
		v := by[name]
		if v == nil {
			v = &Version{Version: name}
			by[name] = v
		}
		v.Count++
		v.Devices = append(v.Devices, d.ID)
		if d.Config != "" {
			if v.Configs == nil {
				v.Configs = map[string]int{}
			}
			v.Configs[d.Config]++
		}
	}
	out := make([]Version, 0, len(by))
	for _, v := range by {
		out = append(out, *v)
	}
	slices.SortFunc(out, func(a, b Version) int {
		if c := cmp.Compare(b.Count, a.Count); c != 0 {
			return c
		}
		return -compareIDs(a.Version, b.Version)
	})
	return out
}

// skewLine names the versions when there is more than one: "3 versions:
// 41 on v1.4.2, 2 on v1.4.1, 1 on v1.3.0"; "" for a fleet on one version.
// Devices whose version is not known (no info yet) make no skew.
func skewLine(vs []VersionCount) string {
	var parts []string
	for _, v := range vs {
		if v.Version != NoVersion {
			parts = append(parts, fmt.Sprintf("%d on %s", v.Count, termtext.Line(v.Version)))
		}
	}
	if len(parts) < 2 {
		return ""
	}
	return fmt.Sprintf("%d versions: %s", len(parts), strings.Join(parts, ", "))
}

// WriteVersions writes the fleet grouped by version for a person: the
// summary line, then per version its count, its config digests and its
// devices, folded to Width.
func (s Snapshot) WriteVersions(w io.Writer) error {
	var b strings.Builder
	b.WriteString(s.summaryLine())
	for _, v := range Versions(s.Devices) {
		head := fmt.Sprintf("%s: %d device", termtext.Line(v.Version), v.Count)
		if v.Count != 1 {
			head += "s"
		}
		if n := len(v.Configs); n > 0 {
			digests := slices.Sorted(maps.Keys(v.Configs))
			if n > 3 {
				digests = append(digests[:3], "…")
			}
			head += fmt.Sprintf(", %d config", n)
			if n != 1 {
				head += "s"
			}
			head += " (" + termtext.Line(strings.Join(digests, " ")) + ")"
		}
		b.WriteString(clip(head, Width))
		b.WriteByte('\n')
		line := " "
		for _, id := range v.Devices {
			id = clip(termtext.Line(id), idWidth)
			if len([]rune(line))+1+len([]rune(id)) > Width {
				b.WriteString(line + "\n")
				line = " "
			}
			line += " " + id
		}
		b.WriteString(line + "\n")
	}
	if _, err := io.WriteString(w, b.String()); err != nil {
		return fmt.Errorf("write fleet versions: %w", err)
	}
	return nil
}
