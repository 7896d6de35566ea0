package alert

import (
	"strconv"
	"strings"
)

// Dropped counts the alerts a full, bounded store dropped, by kind:
// notices, and the other alerts by severity. Other counts those whose kind
// is not known (dropped by an older vigil, which counted only a total, or
// unreadable).
type Dropped struct {
	Notices  int `json:"notices,omitempty"`
	Info     int `json:"info,omitempty"`
	Warning  int `json:"warning,omitempty"`
	Critical int `json:"critical,omitempty"`
	Other    int `json:"other,omitempty"`
}

// Add counts a as dropped.
func (d *Dropped) Add(a Alert) {
	switch {
	case a.IsNotice():
		d.Notices++
	case a.Severity == Info:
		d.Info++
	case a.Severity == Warning:
		d.Warning++
	case a.Severity == Critical:
		d.Critical++
	default:
		d.Other++
	}
}

// Plus returns the sum of d and e.
func (d Dropped) Plus(e Dropped) Dropped {
	return Dropped{Notices: d.Notices + e.Notices, Info: d.Info + e.Info, Warning: d.Warning + e.Warning,
		Critical: d.Critical + e.Critical, Other: d.Other + e.Other}
}

// Total returns how many were dropped.
func (d Dropped) Total() int { return d.Notices + d.Info + d.Warning + d.Critical + d.Other }

// String names the counts that are not zero, most severe first:
// "1 critical, 2 warning, 45 notices"; "" when nothing was dropped.
func (d Dropped) String() string {
	var parts []string
	for _, c := range []struct {
		n          int
		one, other string
	}{
		{d.Critical, "critical", "critical"},
		{d.Warning, "warning", "warning"},
		{d.Info, "info", "info"},
		{d.Notices, "notice", "notices"},
		{d.Other, "other", "other"},
	} {
		switch {
		case c.n == 1:
			parts = append(parts, "1 "+c.one)
		case c.n > 1:
			parts = append(parts, strconv.Itoa(c.n)+" "+c.other)
		}
	}
	return strings.Join(parts, ", ")
}
