package heartbeat

import (
	"context"
	"fmt"
	"sort"
	"time"

	"github.com/vigil-iot/vigil/alert"
	"github.com/vigil-iot/vigil/device"
	"github.com/vigil-iot/vigil/store"
)

// Series is the history of one reading, oldest point first.
type Series struct {
	Key    string      `json:"key"` // sensor.quantity
	Unit   device.Unit `json:"unit"`
	Points []Point     `json:"points"`
	// Usual is the usual band over the series' window, one entry an hour,
	// oldest first; hours still warming up are left out.
	Usual []UsualHour `json:"usual,omitempty"`
}

// UsualHour is what the baseline holds as usual for one hour of the day,
// as a chart draws it behind a series: from Time (the start of an hour in
// the device's zone) for an hour, Usual with the band from Low to High.
// An hour whose baseline is still warming up has none.
type UsualHour struct {
	Time  time.Time `json:"t"`
	Usual float64   `json:"usual"`
	Low   float64   `json:"low"`
	High  float64   `json:"high"`
}

// Point is one reading in a Series, at its wall-clock time.
type Point struct {
	Time  time.Time `json:"t"`
	Value float64   `json:"v"`
}

// History returns every reading's history since since, from the persisted
// ring, the samples the next heartbeat will persist and the latest sample,
// sorted by key. A daemon's history runs up to its last sample; an engine
// on a read-only state file has only what was persisted.
func (e *Engine) History(ctx context.Context, since time.Time) ([]Series, error) {
	byKey := map[string]*Series{}
	last := map[string]time.Time{}
	add := func(s device.Snapshot) {
		if s.Time.Before(since) {
			return
		}
		for k, v := range s.Readings {
			if t, ok := last[k]; ok && !s.Time.After(t) {
				continue // already have it, or out of order
			}
			sr := byKey[k]
			if sr == nil {
				sr = &Series{Key: k}
				byKey[k] = sr
			}
			sr.Unit = v.Unit
			sr.Points = append(sr.Points, Point{Time: s.Time, Value: v.Value})
			last[k] = s.Time
		}
	}
	if err := e.eachSnapshot(since, add); err != nil {
		return nil, err
	}
	out := make([]Series, 0, len(byKey))
	end := e.deps.Wall()
	for _, s := range byKey {
		s.Usual = e.usualHours(s.Key, since, end)
		out = append(out, *s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out, nil
}

// usualHours is key's usual band for each hour of the day from the one
// since is in to the one end is in, in the device's zone; the hours whose
// band is not ready yet are left out.
func (e *Engine) usualHours(key string, since, end time.Time) []UsualHour {
	l := since.In(e.cfg.Location)
	var out []UsualHour
	for t := time.Date(l.Year(), l.Month(), l.Day(), l.Hour(), 0, 0, 0, l.Location()); !t.After(end); t = t.Add(time.Hour) {
		b, ok := e.base.Band(key, t)
		if !ok {
			return nil
		}
		if b.Ready {
			out = append(out, UsualHour{Time: t, Usual: b.Usual, Low: b.Low, High: b.High})
		}
	}
	return out
}

// eachSnapshot calls add, under e.mu, for every snapshot since since: the
// persisted ring's, then the samples the next heartbeat will persist, then
// the latest sample. A daemon's history runs up to its last sample; an
// engine on a read-only state file has only what was persisted.
func (e *Engine) eachSnapshot(since time.Time, add func(device.Snapshot)) error {
	var stored []device.Snapshot
	if err := e.deps.DB.View(func(tx *store.Tx) error {
		var err error
		stored, err = tx.History(since)
		return err
	}); err != nil {
		return fmt.Errorf("read history: %w", err)
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, s := range stored {
		add(s)
	}
	for _, s := range e.pending {
		add(s)
	}
	if e.last != nil {
		add(*e.last)
	}
	return nil
}

// Alerts returns up to n of the last queued alerts, newest first.
func (e *Engine) Alerts(ctx context.Context, n int) ([]alert.Alert, error) {
	var as []alert.Alert
	err := e.deps.DB.View(func(tx *store.Tx) error {
		var err error
		as, err = tx.Alerts(n)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("read alert log: %w", err)
	}
	for i := range as { // what the log held from before it was redacted too
		as[i].Summary = e.deps.Redactor.String(as[i].Summary)
	}
	return as, nil
}
