// Package baseline holds what is usual for each quantity at each hour of the
// day, learned on the device itself.
//
// A Set keeps, for every key ("air.temperature", "board.soc_temperature"),
// 24 hour-of-day bins in the device's zone. Each bin is an exponentially
// weighted mean and variance with a count. The sample loop calls Observe with
// every reading; the Set takes at most one observation a minute per key, so a
// bin gets at most 60 updates a day (one per minute of its hour).
//
// The weight. A change of season should be followed within about a week:
// after a step change, a bin should have moved 95 % of the way after seven
// days, i.e. after 7 × 60 = 420 updates the old level keeps a weight of 0.05.
// That gives Alpha = 1 − 0.05^(1/420) ≈ 0.0071 per minute of data (a
// half-life of about 97 updates, 1.6 days of its hour). When observations are
// farther apart than a minute (a longer sample interval), one update weighs
// as many minutes as passed since the key's previous observation, at most
// MaxGap, so the week holds at any sample interval. Until a bin has seen
// 1/Alpha updates it is a plain running mean (weight 1/n), so its first days
// are not biased towards the first value.
//
// Warming up. A bin is ready once it has seen its hour on MinDays (2) days,
// a day counting once the bin got MinPerDay updates in it. Until then Band
// falls back to the median and the median absolute deviation over the last
// 24 h, kept in a ring of one value per 10 minutes (144 values): the
// Iglewicz–Hoaglin modified z-score 0.6745·(x − median)/MAD, which is
// (x − median)/Spread with Spread = MAD/0.6745. The fallback itself needs a
// whole day (the ring must reach back 24 h and hold at least half its
// values): a shorter window would call every afternoon unusual on the first
// morning. Before that the band is not Ready: its usual value and z-score are
// unknown, and a rule that uses them is not firing.
//
// Outliers. Once a bin is in use, a reading more than Clip (3) spreads off
// its mean is an outlier. A run of outliers younger than Hold (2 h), such as
// a heater stuck on for an hour, is not learnt at all: it stays unusual
// while it lasts, and the next nights do not look unusually cold for a mean
// dragged towards it. A longer run is a new normal and is learnt, its
// variance from a deviation clipped at Clip spreads (a Huber-type update of
// the scale), so that one far reading cannot widen the spread by its whole
// squared deviation. A gradual change of season stays within a few spreads
// and is learnt unclipped; a sensor moved to another place is what `vigil
// baseline reset` is for.
//
// The noise floor. Spread is never below the floor the caller gives for the
// key (the sensor's resolution), so a flat series is not infinitely unusual
// at its first step.
//
// Size. A quantity costs about 1.3 KB in RAM and in MarshalBinary's output
// (24 bins of 27 bytes, 144 ring values of 4 bytes, and a few counters).
//
// A Set is safe for concurrent use. It reads no clock: every call takes the
// time it is about.
package baseline

import (
	"maps"
	"math"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"
)

// Tuning, explained in the package doc.
const (
	Hours     = 24               // bins per key, one per hour of the local day
	Alpha     = 0.007108         // weight of one minute of data: 1 − 0.05^(1/420)
	MaxGap    = 15               // minutes one observation may weigh after a gap
	MinDays   = 2                // days a bin must have seen its hour before it is used
	MinPerDay = 3                // updates in its hour that make a day count for a bin
	Slot      = 10 * time.Minute // the warm-up ring keeps one value per Slot
	Slots     = int(24 * time.Hour / Slot)
	MinSlots  = Slots / 2     // values the ring needs before the fallback is used
	MADScale  = 0.6745        // Iglewicz–Hoaglin: z = MADScale·(x − median)/MAD
	Clip      = 3.0           // a ready bin's spread learns from deviations of at most Clip spreads
	Hold      = 2 * time.Hour // a ready bin skips a run of outliers (beyond Clip spreads) younger than this
	Quiet     = time.Hour     // a run of outliers ends after this long without one
	minSpread = 1e-9          // the last guard when the caller gives no floor
	DefaultK  = 3.0           // heartbeat.unusual's default: |z| that counts as unusual
)

// Band is what is usual for one quantity at one moment.
type Band struct {
	Usual  float64 `json:"usual"`  // the value expected now (meaningful only when Ready)
	Spread float64 `json:"spread"` // robust spread, a standard deviation's equivalent, never below the noise floor
	Low    float64 `json:"low"`    // Usual − k·Spread: the band to draw (k is SetUnusual's, default 3)
	High   float64 `json:"high"`   // Usual + k·Spread
	// Ready is false while warming up: Usual and Z are unknown.
	Ready bool `json:"ready"`
	// Hourly is true when the band comes from this hour's own bin; false
	// while the bin warms up and the band is the last 24 h's median and MAD.
	Hourly bool `json:"hourly"`
	// ReadyAt, while !Ready, is when the band will be Ready; while Ready
	// but not Hourly, when this hour's own bin will be. Zero when Hourly or
	// unknown. It is an estimate that assumes the readings keep coming.
	ReadyAt time.Time `json:"ready_at,omitzero"`
}

// Z returns the signed robust z-score of v against the band: how many
// spreads v lies above (positive) or below (negative) the usual value. It
// is NaN when the band is not Ready.
func (b Band) Z(v float64) float64 {
	if !b.Ready {
		return math.NaN()
	}
	return (v - b.Usual) / b.Spread
}

// bin is one hour of the day's exponentially weighted mean and variance.
type bin struct {
	mean, vari float64
	n          uint32 // updates ever
	days       uint16 // days on which the bin got at least MinPerDay updates
	lastDay    int32  // the local day (days since 1970-01-01) of the last update
	dayN       uint8  // updates on lastDay, saturating
}

// series is one key's baseline.
type series struct {
	bins      [Hours]bin
	ring      [Slots]float32 // NaN where empty; slot s (Unix/600) at s % Slots
	lastMin   int64          // Unix minute of the last observation taken; 0 = none
	lastSlot  int64          // the newest ring slot written; 0 = none
	firstSlot int64          // the oldest ring slot written since the ring was (re)started
	// outSince is the Unix minute the current run of outliers began (0:
	// none), inSince the minute the readings last came back within their
	// bins; held in memory only, a restart begins the hold afresh.
	outSince, inSince int64
}

func newSeries() *series {
	s := &series{}
	for i := range s.ring {
		s.ring[i] = float32(math.NaN())
	}
	return s
}

// Set is every quantity's baseline. The zero value is not usable: call New.
type Set struct {
	mu    sync.Mutex
	loc   *time.Location
	floor func(key string) float64
	k     float64
	m     map[string]*series
}

// New returns an empty Set that bins hours in loc (nil means UTC) and never
// divides by a spread below floor(key) (nil means no floor beyond a tiny
// guard).
func New(loc *time.Location, floor func(key string) float64) *Set {
	if loc == nil {
		loc = time.UTC
	}
	return &Set{loc: loc, floor: floor, k: DefaultK, m: map[string]*series{}}
}

// SetUnusual sets k, the |z| that counts as unusual and the half-width of
// Band's Low–High in spreads (heartbeat.unusual). A k <= 0 means DefaultK.
func (s *Set) SetUnusual(k float64) {
	if k <= 0 || math.IsNaN(k) || math.IsInf(k, 0) {
		k = DefaultK
	}
	s.mu.Lock()
	s.k = k
	s.mu.Unlock()
}

// SetLocation bins hours in loc from now on (nil means UTC). The bins
// keep what they learnt under the old zone's hours: a caller that changes
// the zone should Reset them.
func (s *Set) SetLocation(loc *time.Location) {
	if loc == nil {
		loc = time.UTC
	}
	s.mu.Lock()
	s.loc = loc
	s.mu.Unlock()
}

// Unusual returns k, the |z| that counts as unusual.
func (s *Set) Unusual() float64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.k
}

// day returns the local day number and hour of t.
func (s *Set) day(t time.Time) (day int32, hour int) {
	lt := t.In(s.loc)
	y, m, d := lt.Date()
	return int32(time.Date(y, m, d, 0, 0, 0, 0, time.UTC).Unix() / 86400), lt.Hour()
}

// Observe feeds one reading taken at at. It takes at most one observation
// per key a minute (the first of each minute) and ignores NaN and
// infinities; it reports whether it took this one.
func (s *Set) Observe(key string, v float64, at time.Time) bool {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return false
	}
	minute := at.Unix() / 60
	s.mu.Lock()
	defer s.mu.Unlock()
	sr := s.m[key]
	if sr == nil {
		sr = newSeries()
		s.m[key] = sr
	}
	if minute == sr.lastMin {
		return false
	}
	gap := int64(1)
	if sr.lastMin != 0 && minute > sr.lastMin {
		gap = min(minute-sr.lastMin, MaxGap)
	}
	sr.lastMin = minute

	day, hour := s.day(at)
	b := &sr.bins[hour]
	if day > b.lastDay || b.n == 0 {
		b.lastDay, b.dayN = day, 0
	}
	if day == b.lastDay && b.dayN < math.MaxUint8 {
		b.dayN++
		if b.dayN == MinPerDay && b.days < math.MaxUint16 {
			b.days++
		}
	}
	if b.days >= MinDays && s.outlier(sr, b, key, v, minute) {
		sr.record(at, v) // the day's median and MAD still see it
		return true
	}
	a := 1 - math.Pow(1-Alpha, float64(gap))
	if b.n < math.MaxUint32 {
		b.n++
	}
	if w := 1 / float64(b.n); w > a {
		a = w
	}
	d := v - b.mean
	b.mean += a * d
	// The spread learns from a deviation of at most Clip spreads once
	// the bin is in use: a reading far off (a heater stuck on) moves
	// the usual value at the season's pace but cannot inflate the spread
	// by d² at once, which would make it look usual within minutes.
	dv := d
	if b.days >= MinDays {
		lim := Clip * math.Max(math.Sqrt(b.vari), s.floorOf(key))
		dv = math.Max(-lim, math.Min(lim, d))
	}
	b.vari = (1 - a) * (b.vari + a*dv*dv)

	sr.record(at, v)
	return true
}

// record puts v into the warm-up ring.
func (sr *series) record(at time.Time, v float64) {
	slot := at.Unix() / int64(Slot/time.Second)
	switch {
	case sr.lastSlot == 0 || slot < sr.lastSlot-int64(Slots):
		// First value, or the clock went back by more than a day:
		// start the ring again.
		for i := range sr.ring {
			sr.ring[i] = float32(math.NaN())
		}
		sr.firstSlot = slot
	case slot <= sr.lastSlot:
		return // this slot (or, after a small step back, a later one) is filled
	default:
		// Clear the slots skipped since the last value: they are a day old.
		from := sr.lastSlot + 1
		if slot-from >= int64(Slots) {
			from = slot - int64(Slots) + 1
			sr.firstSlot = slot // nothing left from before the gap
		}
		for i := from; i < slot; i++ {
			sr.ring[i%int64(Slots)] = float32(math.NaN())
		}
	}
	sr.ring[slot%int64(Slots)] = float32(v)
	sr.lastSlot = slot
}

// Band returns the band of key at at (its hour of the day in the Set's
// zone), and false if the key was never observed.
func (s *Set) Band(key string, at time.Time) (Band, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	sr := s.m[key]
	if sr == nil {
		return Band{}, false
	}
	floor := s.floorOf(key)
	day, hour := s.day(at)
	b := sr.bins[hour]
	var out Band
	if b.days >= MinDays {
		out = Band{Usual: b.mean, Spread: math.Sqrt(b.vari), Ready: true, Hourly: true}
	} else {
		out = sr.fallback(at)
		if out.Ready {
			out.ReadyAt = s.hourlyAt(b, day, hour, at)
		}
	}
	if out.Ready {
		out.Spread = math.Max(out.Spread, floor)
		out.Low, out.High = out.Usual-s.k*out.Spread, out.Usual+s.k*out.Spread
	}
	return out, true
}

// outlier reports whether v, more than Clip spreads from its ready bin's
// mean, belongs to a run of outliers younger than Hold, which the bins do
// not learn at all. The clip of the variance keeps a stuck heater unusual
// while it lasts, but its mean would still move towards 28 °C by Alpha·d a
// minute, and the next night's usual 15 °C would look unusually cold (z
// −4.4 after 45 minutes at 28 °C). A run that lasts longer is a new normal
// (a change of season starts as one) and is learned as before. A run ends
// after Quiet without an outlier, so the bins that have learned a new
// normal do not end it for those that have not yet. Caller holds s.mu.
func (s *Set) outlier(sr *series, b *bin, key string, v float64, minute int64) bool {
	lim := Clip * math.Max(math.Sqrt(b.vari), s.floorOf(key))
	if math.Abs(v-b.mean) <= lim {
		if sr.inSince == 0 {
			sr.inSince = minute
		}
		if minute-sr.inSince >= int64(Quiet/time.Minute) {
			sr.outSince = 0
		}
		return false
	}
	sr.inSince = 0
	if sr.outSince == 0 {
		sr.outSince = minute
	}
	return minute-sr.outSince < int64(Hold/time.Minute)
}

// floorOf is key's noise floor, at least minSpread.
func (s *Set) floorOf(key string) float64 {
	if s.floor != nil {
		if f := s.floor(key); f > minSpread {
			return f
		}
	}
	return minSpread
}

// fallback is the warm-up band: the median and MAD of the ring's last day.
func (sr *series) fallback(at time.Time) Band {
	now := at.Unix() / int64(Slot/time.Second)
	if now < sr.lastSlot {
		now = sr.lastSlot
	}
	vals := make([]float64, 0, Slots)
	for age := int64(0); age < int64(Slots); age++ {
		slot := now - age
		if slot > sr.lastSlot || slot < sr.firstSlot {
			continue
		}
		if v := sr.ring[slot%int64(Slots)]; !math.IsNaN(float64(v)) {
			vals = append(vals, float64(v))
		}
	}
	full := now-sr.firstSlot >= int64(Slots)-1
	if !full || len(vals) < MinSlots {
		wait := time.Duration(MinSlots-len(vals)) * Slot
		if !full {
			wait = max(wait, time.Duration(int64(Slots)-1-(now-sr.firstSlot))*Slot)
		}
		return Band{ReadyAt: time.Unix(now*int64(Slot/time.Second), 0).Add(wait)}
	}
	med := median(vals)
	for i, v := range vals {
		vals[i] = math.Abs(v - med)
	}
	mad := median(vals)
	return Band{Usual: med, Spread: mad / MADScale, Ready: true}
}

// hourlyAt estimates when bin b (of hour) will have seen MinDays days,
// assuming it gets MinPerDay updates in each coming occurrence of its hour.
func (s *Set) hourlyAt(b bin, day int32, hour int, at time.Time) time.Time {
	need := MinDays - int(b.days)
	lt := at.In(s.loc)
	start := time.Date(lt.Year(), lt.Month(), lt.Day(), hour, 0, 0, 0, s.loc)
	var t time.Time
	switch {
	case b.lastDay == day && b.dayN >= MinPerDay: // today has counted
		t = start.AddDate(0, 0, 1).Add(MinPerDay * time.Minute)
		need--
	case lt.Hour() == hour: // counting now
		done := 0
		if b.lastDay == day {
			done = int(b.dayN)
		}
		t = at.Add(time.Duration(MinPerDay-done) * time.Minute)
	case start.After(at): // later today
		t = start.Add(MinPerDay * time.Minute)
	default: // gone for today
		t = start.AddDate(0, 0, 1).Add(MinPerDay * time.Minute)
	}
	if need > 1 {
		t = t.AddDate(0, 0, need-1)
	}
	return t
}

func median(v []float64) float64 {
	sort.Float64s(v)
	n := len(v)
	if n%2 == 1 {
		return v[n/2]
	}
	return (v[n/2-1] + v[n/2]) / 2
}

// Keys returns the observed keys, sorted.
func (s *Set) Keys() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.keysLocked()
}

// keysLocked is Keys with s.mu held.
func (s *Set) keysLocked() []string { return slices.Sorted(maps.Keys(s.m)) }

// Reset forgets the baselines of sensor's quantities (keys "sensor.*"), or
// of every key when sensor is "". It returns the keys it forgot, sorted.
func (s *Set) Reset(sensor string) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var gone []string
	for k := range s.m {
		if sensor == "" || strings.HasPrefix(k, sensor+".") {
			delete(s.m, k)
			gone = append(gone, k)
		}
	}
	slices.Sort(gone)
	return gone
}
