package device

import (
	"context"
	"fmt"
	"hash/fnv"
	"math"
	"strconv"
	"strings"
	"time"
)

// Sim is a simulated sensor with a scripted, deterministic waveform: a daily
// cycle plus, for temperatures, a recurring excursion that rises well above
// the daily range and falls back, so a demo shows a rule firing and resolving
// within a few minutes. The waveform depends only on the time elapsed since
// Start and on the sensor's name. With Script = SimWeek it is the scripted
// week instead, on the clock of Location.
type Sim struct {
	Driver string
	Start  time.Time
	Now    func() time.Time

	// Excursion: every Every, temperatures climb by Rise over a quarter of
	// Length, hold, and fall back. Zero Every disables excursions.
	Every  time.Duration
	Length time.Duration
	Rise   float64

	// Script = SimWeek replaces the daily cycle and the excursion by the
	// scripted week, whose days and nights are those of Location.
	Script   string
	Location *time.Location

	phase    float64
	seed     uint64
	readings []Reading
}

// SimWeek is the scripted week (Sim.Script, sim.script in config.toml):
// nights at 15 °C and afternoons at 30 °C in the device's zone, each minute
// with a little seeded noise, and one injected event: on the night into
// day SimEventDay (counted from the local date of Start, modulo 7) the
// temperature climbs to SimEventTemp from 02:30, holds from 02:45 to 03:30
// and is back at 03:45. 28 °C is within every day's range, but not at 3 a.m.
const (
	SimWeek      = "week"
	SimEventDay  = 4
	SimEventTemp = 28.0
)

// The week's event, as offsets from local midnight of SimEventDay.
const (
	simEventRise = 2*time.Hour + 30*time.Minute
	simEventHold = 2*time.Hour + 45*time.Minute
	simEventFall = 3*time.Hour + 30*time.Minute
	simEventEnd  = 3*time.Hour + 45*time.Minute
)

var _ Sensor = (*Sim)(nil)

// NewSim returns a simulated sensor producing the quantities of driver.
func NewSim(name, driver string, start time.Time, now func() time.Time) (*Sim, error) {
	q, ok := Quantities(driver)
	if !ok {
		return nil, fmt.Errorf("sim: unknown driver %q", driver)
	}
	h := fnv.New32a()
	h.Write([]byte(name))
	return &Sim{
		Driver: driver, Start: start, Now: now,
		Every: 3 * time.Minute, Length: 90 * time.Second, Rise: 20,
		phase:    float64(h.Sum32()%1000) / 1000,
		seed:     uint64(h.Sum32()),
		readings: q,
	}, nil
}

func simDriver() DriverInfo {
	return DriverInfo{
		Name: "sim", Chip: "simulated temperature and humidity, for demos", Bus: "none",
		Quantities: []Reading{{Quantity: "temperature", Unit: Celsius}, {Quantity: "humidity", Unit: Percent}},
		Open:       func(o Opening) (Sensor, error) { return simulate(o.Spec, o.Now(), o.Now), nil },
	}
}

// simulate is the simulated stand-in for a configured sensor: its
// driver's quantities, adapted to its configuration as the driver
// registers (Simulate), with the sensor's own excursion.
func simulate(s Spec, start time.Time, now func() time.Time) Sensor {
	sim, err := NewSim(s.Name, s.Driver, start, now)
	if err != nil {
		return Failed{Err: err}
	}
	if w := s.Sim; w != nil {
		sim.Every, sim.Length, sim.Rise = w.Every, w.Length, w.Rise
		if !w.Start.IsZero() {
			sim.Start = w.Start
		}
		sim.Script, sim.Location = w.Script, w.Location
	}
	if d, _ := LookupDriver(s.Driver); d.Simulate != nil {
		return d.Simulate(s, sim)
	}
	return sim
}

// NewSimHealth returns a simulated board health sensor producing
// HealthQuantities: a warm, unthrottled board with a synchronized clock.
func NewSimHealth(start time.Time, now func() time.Time) *Sim {
	s, _ := NewSim("board", "sim", start, now)
	s.Driver = "health"
	s.readings = HealthQuantities()
	return s
}

// Produce sets the readings the simulation produces: a configured sensor's
// own quantities (an iio sensor's, an ADC's scaled channels).
func (s *Sim) Produce(readings []Reading) {
	s.readings = append([]Reading(nil), readings...)
}

// Limit keeps only the named quantities, in the driver's order: the
// configured channels of a simulated ADS1x15.
func (s *Sim) Limit(quantities ...string) {
	keep := s.readings[:0:0]
	for _, r := range s.readings {
		for _, q := range quantities {
			if r.Quantity == q {
				keep = append(keep, r)
			}
		}
	}
	s.readings = keep
}

// Sense returns the waveform's values at s.Now().
func (s *Sim) Sense(ctx context.Context) ([]Reading, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if s.Script == SimWeek {
		return s.week(s.Now()), nil
	}
	t := s.Now().Sub(s.Start)
	day := 2 * math.Pi * (t.Hours()/24 + s.phase)
	out := make([]Reading, len(s.readings))
	for i, r := range s.readings {
		q := simKind(r.Quantity)
		r.Value = s.base(q, day)
		if q == "uptime" {
			r.Value = 3600 + math.Floor(t.Seconds())
		}
		if q == "temperature" {
			r.Value += s.excursion(t)
		}
		r.Value = math.Round(r.Value*100) / 100
		out[i] = r
	}
	return out, nil
}

func (s *Sim) base(quantity string, day float64) float64 {
	switch quantity {
	case "temperature":
		return 21 + 3*math.Sin(day)
	case "humidity":
		return 55 - 10*math.Sin(day)
	case "pressure":
		return 1013 + 4*math.Sin(day/7)
	case "voltage":
		return 5.05 - 0.05*math.Sin(day*24)
	case "current":
		return 0.42 + 0.05*math.Sin(day*24)
	case "power":
		return 2.1 + 0.25*math.Sin(day*24)
	case "illuminance":
		return math.Max(0, 800*math.Sin(day))
	case "co2":
		return 600 + 150*math.Sin(day)
	case "voc":
		return 120 + 40*math.Sin(day)
	case "resistance":
		return 52000 - 8000*math.Sin(day)
	case "cold_junction":
		return 24 + 2*math.Sin(day)
	case "soc_temperature":
		return 47 + 4*math.Sin(day)
	case "undervoltage", "throttled", "undervoltage_since_boot", "throttled_since_boot":
		return 0
	case "clock_synced":
		return 1
	case "disk_free":
		return 11800 - 10*math.Sin(day)
	case "mem_available":
		return 612 + 20*math.Sin(day*24)
	case "load1":
		return 0.15 + 0.1*math.Sin(day*24)
	default:
		return 1.65 + 0.5*math.Sin(day)
	}
}

// simKind is the kind of a numbered quantity: temperature for
// temperature_2.
func simKind(q string) string {
	if i := strings.LastIndexByte(q, '_'); i > 0 {
		if _, err := strconv.Atoi(q[i+1:]); err == nil {
			return q[:i]
		}
	}
	return q
}

// excursion rises linearly over the first quarter of Length, holds for half,
// and falls over the last quarter, once every Every (starting one Every/5 in).
func (s *Sim) excursion(t time.Duration) float64 {
	if s.Every <= 0 || s.Length <= 0 {
		return 0
	}
	in := (t - s.Every/5) % s.Every
	if t < s.Every/5 || in >= s.Length {
		return 0
	}
	q := s.Length / 4
	switch {
	case in < q:
		return s.Rise * float64(in) / float64(q)
	case in < 3*q:
		return s.Rise
	default:
		return s.Rise * float64(s.Length-in) / float64(q)
	}
}

// week returns the scripted week's readings at now (see SimWeek). A
// temperature is 22.5 − 7.5·cos(2π(h−3)/24) at local hour h (15 °C at
// 03:00, 30 °C at 15:00) plus up to ±0.25 °C of noise; a humidity falls as
// the temperature rises (75 % at night, 45 % in the afternoon, ±1 %); the
// other quantities follow base's daily cycle on the local clock, with 1 %
// of noise. The noise is a hash of the sensor's name and the minute, so a
// rerun reads the same values.
func (s *Sim) week(now time.Time) []Reading {
	loc := s.Location
	if loc == nil {
		loc = time.UTC
	}
	local := now.In(loc)
	midnight := time.Date(local.Year(), local.Month(), local.Day(), 0, 0, 0, 0, loc)
	hour := local.Sub(midnight).Hours()
	temp := 22.5 - 7.5*math.Cos(2*math.Pi*(hour-3)/24)
	if simDays(s.Start.In(loc), local)%7 == SimEventDay {
		temp = simEvent(temp, local.Sub(midnight))
	}
	minute := uint64(now.Unix() / 60)
	day := 2 * math.Pi * (hour - 9) / 24 // base's sin(day) peaks at 15:00
	out := make([]Reading, len(s.readings))
	for i, r := range s.readings {
		noise := simNoise(s.seed, uint64(i), minute) // in [-1, 1)
		switch q := simKind(r.Quantity); q {
		case "temperature":
			r.Value = temp + 0.25*noise
		case "humidity":
			r.Value = 60 - 2*(temp-22.5) + noise
		case "uptime":
			r.Value = 3600 + math.Floor(now.Sub(s.Start).Seconds())
		default:
			v := s.base(q, day)
			r.Value = v + 0.01*math.Abs(v)*noise
		}
		r.Value = math.Round(r.Value*100) / 100
		out[i] = r
	}
	return out
}

// simEvent is the week's injected event at offset in from local midnight:
// a linear climb from temp to SimEventTemp, a hold and a linear fall.
func simEvent(temp float64, in time.Duration) float64 {
	frac := func(a, b time.Duration) float64 { return float64(in-a) / float64(b-a) }
	switch {
	case in < simEventRise || in >= simEventEnd:
		return temp
	case in < simEventHold:
		return temp + (SimEventTemp-temp)*frac(simEventRise, simEventHold)
	case in < simEventFall:
		return SimEventTemp
	default:
		return SimEventTemp + (temp-SimEventTemp)*frac(simEventFall, simEventEnd)
	}
}

// simDays counts the local dates from start's to now's: 0 on the day the
// simulation started.
func simDays(start, now time.Time) int {
	a := time.Date(start.Year(), start.Month(), start.Day(), 12, 0, 0, 0, time.UTC)
	b := time.Date(now.Year(), now.Month(), now.Day(), 12, 0, 0, 0, time.UTC)
	return int(b.Sub(a).Hours() / 24)
}

// simNoise is a deterministic number in [-1, 1) for a sensor (seed), one
// of its readings and a minute: splitmix64 of the three.
func simNoise(seed, reading, minute uint64) float64 {
	x := seed*0x9e3779b97f4a7c15 ^ reading*0xbf58476d1ce4e5b9 ^ minute*0x94d049bb133111eb
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	x ^= x >> 31
	return float64(x>>11)/float64(1<<53)*2 - 1
}
