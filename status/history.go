package status

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/vigil-iot/vigil/heartbeat"
	"github.com/vigil-iot/vigil/store"
)

// The history a status carries, and its exports: `vigil history` and the
// page's /api/history print it as CSV or JSON over a window ParseSince reads.

// WriteCSV writes the series as one row per reading, oldest first within a
// series: time (RFC 3339 in loc), reading, value, unit — the long form that
// spreadsheets pivot and gnuplot filters.
func WriteCSV(w io.Writer, series []heartbeat.Series, loc *time.Location) error {
	cw := csv.NewWriter(w)
	if err := cw.Write([]string{"time", "reading", "value", "unit"}); err != nil {
		return fmt.Errorf("write csv: %w", err)
	}
	for _, s := range series {
		for _, p := range s.Points {
			row := []string{p.Time.In(loc).Format(time.RFC3339), s.Key, strconv.FormatFloat(p.Value, 'f', -1, 64), string(s.Unit)}
			if err := cw.Write(row); err != nil {
				return fmt.Errorf("write csv: %w", err)
			}
		}
	}
	cw.Flush()
	if err := cw.Error(); err != nil {
		return fmt.Errorf("write csv: %w", err)
	}
	return nil
}

// HistoryJSON is the JSON form of an export: `vigil history --json` and
// /api/history.
type HistoryJSON struct {
	Since  time.Time          `json:"since"`
	Series []heartbeat.Series `json:"series"`
}

// WriteJSON writes the series since since, with their usual bands, times
// in loc, indented.
func WriteJSON(w io.Writer, series []heartbeat.Series, since time.Time, loc *time.Location) error {
	out := HistoryJSON{Since: since.In(loc), Series: make([]heartbeat.Series, len(series))}
	for i, s := range series {
		pts := make([]heartbeat.Point, len(s.Points))
		for j, p := range s.Points {
			pts[j] = heartbeat.Point{Time: p.Time.In(loc), Value: p.Value}
		}
		var usual []heartbeat.UsualHour
		for _, u := range s.Usual {
			u.Time = u.Time.In(loc)
			usual = append(usual, u)
		}
		out.Series[i] = heartbeat.Series{Key: s.Key, Unit: s.Unit, Points: pts, Usual: usual}
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(out); err != nil {
		return fmt.Errorf("write json: %w", err)
	}
	return nil
}

// Filter keeps the series whose key is want ("air.temperature") or, when
// want names a sensor ("air"), every quantity of it. An empty want keeps
// all.
func Filter(series []heartbeat.Series, want string) []heartbeat.Series {
	if want == "" {
		return series
	}
	var out []heartbeat.Series
	for _, s := range series {
		if s.Key == want || (len(s.Key) > len(want) && s.Key[:len(want)] == want && s.Key[len(want)] == '.') {
			out = append(out, s)
		}
	}
	return out
}

// ParseSince reads a window such as 6h or 90m: at least a minute, at most
// the history kept (heartbeat.HistoryKept). A longer one is refused rather
// than cut short, so a window the history cannot fill is never mistaken for
// one it did.
func ParseSince(s string) (time.Duration, error) {
	most := fmt.Sprintf("%dh", int(heartbeat.HistoryKept/time.Hour))
	d, err := time.ParseDuration(s)
	switch {
	case err != nil || d < time.Minute:
		return 0, fmt.Errorf("since must be a duration from 1m to %s, as in 6h (got %q)", most, s)
	case d > heartbeat.HistoryKept:
		return 0, fmt.Errorf("since %s reaches past the history kept: at most %s (one sample a minute, %d samples)", s, most, store.DefaultHistoryCap)
	}
	return d, nil
}
