package heartbeat

// What is usual: the engine's baselines (package baseline), fed by the
// sample loop, persisted with the heartbeat's commit, read by the rules
// (usual(), unusual()), the gate, the prompt and the status.
//
// Policy, the unusual gate (heartbeat.gate = "unusual"): a heartbeat asks
// the LLM when a reading is unusual for its hour (|z| >= heartbeat.unusual)
// and that is news: it was not unusual at the last LLM run, or it moved
// beyond its deadband since. A reading whose baseline is still warming up,
// and a reading that has none (an on/off flag), is judged by its deadband
// as under the deadband gate; a sensor that starts or stops failing is
// news too. Besides, as under either gate: a rule changed state, or
// max_quiet elapsed. The skip reason stays "unchanged"; every run records
// which readings were unusual (store.Run.Unusual).

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"sync"
	"time"

	"github.com/vigil-iot/vigil/agent"
	"github.com/vigil-iot/vigil/baseline"
	"github.com/vigil-iot/vigil/device"
	"github.com/vigil-iot/vigil/store"
)

// Values of Config.Gate (heartbeat.gate).
const (
	GateDeadband = "deadband" // ask when a reading moved beyond its deadband (the default)
	GateUnusual  = "unusual"  // ask when a reading is unusual for its hour
)

// ReasonUnusual is the reason of a run the unusual gate let through.
const ReasonUnusual = "unusual"

// floorTable is each key's noise floor (its sensor's resolution), read by
// the baseline Set under its own lock, so it has a lock of its own.
type floorTable struct {
	mu sync.Mutex
	m  map[string]float64
}

func (f *floorTable) get(key string) float64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.m[key]
}

// learn records the floor of the keys not seen yet: the configured
// resolution, else the unit's default.
func (f *floorTable) learn(readings map[string]device.Value, res map[string]float64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for k, v := range readings {
		if _, ok := f.m[k]; ok {
			continue
		}
		r, ok := res[k]
		if !ok || r <= 0 {
			r = device.UnitResolution(v.Unit)
		}
		f.m[k] = r
	}
}

func (f *floorTable) reset() {
	f.mu.Lock()
	f.m = map[string]float64{}
	f.mu.Unlock()
}

// Baseline returns the engine's baselines, for the surfaces that draw the
// usual band (Band at any time); it is safe for concurrent use.
func (e *Engine) Baseline() *baseline.Set { return e.base }

// observe feeds a sample's readings to the baselines (the Set takes one a
// minute per key). Only on a plausible wall clock: a Pi without an RTC
// boots in 1970, and its hours of the day mean nothing yet. Caller holds
// e.mu.
func (e *Engine) observe(snap device.Snapshot) {
	if !Plausible(snap.Time, e.cfg.BuildTime) {
		return
	}
	e.floors.learn(snap.Readings, e.cfg.Resolutions)
	for k, v := range snap.Readings {
		if device.HasBaseline(v.Unit) {
			e.base.Observe(k, v.Value, snap.Time)
		}
	}
}

// Usual is usual(key) for the rules: the value expected at the sample's
// hour; false while the baseline warms up.
func (s *snapEnv) Usual(key string) (float64, bool) {
	b, ok := s.e.base.Band(key, s.snap.Time)
	if !ok || !b.Ready {
		return 0, false
	}
	return b.Usual, true
}

// Unusual is unusual(key): the current reading's signed robust z-score.
func (s *snapEnv) Unusual(key string) (float64, bool) {
	v, ok := s.snap.Readings[key]
	if !ok {
		return 0, false
	}
	b, ok := s.e.base.Band(key, s.snap.Time)
	if !ok || !b.Ready {
		return 0, false
	}
	return b.Z(v.Value), true
}

// unusualLocked returns the readings of the last sample that are unusual
// for their hour, by key, and as the run records them: "air.temperature=28
// °C usual 15.1 z=+8.7". Caller holds e.mu.
func (e *Engine) unusualLocked() (keys []string, text []string) {
	if e.last == nil {
		return nil, nil
	}
	k := e.base.Unusual()
	for _, key := range e.last.Keys() {
		v := e.last.Readings[key]
		b, ok := e.base.Band(key, e.last.Time)
		if !ok || !b.Ready || !device.HasBaseline(v.Unit) {
			continue
		}
		if z := b.Z(v.Value); math.Abs(z) >= k {
			keys = append(keys, key)
			text = append(text, fmt.Sprintf("%s=%s usual %s z=%s", key, FormatValue(v), trimNum(b.Usual), signed(z)))
		}
	}
	return keys, text
}

// unusualNews reports whether the last sample is news under the unusual
// gate (see the policy at the top of this file). Caller holds e.mu.
func (e *Engine) unusualNews() bool {
	prev, cur := e.llmSnap, e.last
	if prev == nil || cur == nil {
		return prev != cur
	}
	unusual, _ := e.unusualLocked()
	for _, k := range unusual {
		p, seen := prev.Readings[k]
		if !e.llmUnusual[k] || !seen || math.Abs(cur.Readings[k].Value-p.Value) > e.deadband(k, p.Unit) {
			return true
		}
	}
	// What has no band to be unusual against falls back to the deadband.
	banded := func(k string, u device.Unit) bool {
		b, ok := e.base.Band(k, cur.Time)
		return ok && b.Ready && device.HasBaseline(u)
	}
	before := &device.Snapshot{Readings: map[string]device.Value{}, Errors: prev.Errors}
	now := &device.Snapshot{Readings: map[string]device.Value{}, Errors: cur.Errors}
	for k, v := range cur.Readings {
		if !banded(k, v.Unit) {
			now.Readings[k] = v
		}
	}
	for k, v := range prev.Readings {
		if _, still := cur.Readings[k]; !still || !banded(k, v.Unit) {
			before.Readings[k] = v // gone is a change, whatever its band
		}
	}
	return e.changed(before, now)
}

// usualForPrompt gives the prompt each reading's usual value and z-score
// for this hour, where the baseline is ready. Caller holds e.mu.
func (e *Engine) usualForPrompt(snap device.Snapshot) map[string]agent.Usual {
	var out map[string]agent.Usual
	for k, v := range snap.Readings {
		b, ok := e.base.Band(k, snap.Time)
		if !ok || !b.Ready || !device.HasBaseline(v.Unit) {
			continue
		}
		if out == nil {
			out = map[string]agent.Usual{}
		}
		out[k] = agent.Usual{Value: b.Usual, Z: b.Z(v.Value)}
	}
	return out
}

// BandStatus is what is usual for one reading now, with the reading's
// z-score (0 while the band is not Ready).
type BandStatus struct {
	baseline.Band
	Z float64 `json:"z"`
}

// bands returns the band of every reading of snap that has a baseline, at
// wall time now.
func (e *Engine) bands(snap device.Snapshot, now time.Time, loc *time.Location) map[string]BandStatus {
	out := map[string]BandStatus{}
	for k, v := range snap.Readings {
		if !device.HasBaseline(v.Unit) {
			continue
		}
		b, ok := e.base.Band(k, now)
		if !ok {
			continue
		}
		bs := BandStatus{Band: b}
		if b.Ready {
			bs.Z = math.Round(b.Z(v.Value)*100) / 100
		}
		if !b.ReadyAt.IsZero() {
			bs.ReadyAt = b.ReadyAt.In(loc).Round(time.Second)
		}
		out[k] = bs
	}
	return out
}

// ResetBaseline forgets what is usual for sensor's readings ("" for every
// reading), after a sensor was moved, and writes that at once. It returns
// the readings it forgot.
func (e *Engine) ResetBaseline(ctx context.Context, sensor string) ([]string, error) {
	gone := e.base.Reset(sensor)
	blob, err := e.base.MarshalBinary()
	if err != nil {
		return gone, fmt.Errorf("encode baselines: %w", err)
	}
	if err := e.deps.DB.Update(func(tx *store.Tx) error { return tx.PutBaselines(blob) }); err != nil {
		return gone, fmt.Errorf("reset baselines: %w", err)
	}
	e.mu.Lock()
	for _, k := range gone {
		delete(e.llmUnusual, k)
	}
	e.mu.Unlock()
	return gone, nil
}

// baselineBlob encodes the baselines for the heartbeat's commit; nil (and
// a log line) if that fails, so the run is recorded all the same.
func (e *Engine) baselineBlob() []byte {
	blob, err := e.base.MarshalBinary()
	if err != nil {
		e.log.Error("encode baselines", "err", err)
		return nil
	}
	return blob
}

func signed(z float64) string {
	z = math.Round(z*10) / 10
	s := strconv.FormatFloat(z, 'f', 1, 64)
	if z >= 0 {
		s = "+" + s
	}
	return s
}

// trimNum formats a usual value to at most two decimals, fewer when they
// are zeros.
func trimNum(v float64) string {
	if math.Abs(v) >= 100 {
		return strconv.FormatFloat(v, 'f', 1, 64)
	}
	return strconv.FormatFloat(math.Round(v*100)/100, 'f', -1, 64)
}
