package config

import (
	"slices"

	"github.com/vigil-iot/vigil/board"
	"github.com/vigil-iot/vigil/device"
)

// HardwareOptions are the Options of this build's hardware: the
// quantities each driver (package device's registry) and the board's own
// health sensor produce, the board quantities that have a baseline, and
// the board profiles a config may name. With them ParseWith refuses what
// `vigil run` would: a rule on a quantity a sensor does not have, a board
// that does not exist. `vigil config check`, `run`, `init` and the tests
// of the docs all validate with these.
func HardwareOptions() Options {
	names := func(rs []device.Reading) []string {
		out := make([]string, len(rs))
		for i, r := range rs {
			out[i] = r.Quantity
		}
		return out
	}
	return Options{
		Quantities: func(s Sensor) ([]string, bool) {
			rs, ok := s.Spec().Readings()
			return names(rs), ok
		},
		Board:          names(device.HealthQuantities()),
		BoardBaselines: names(slices.DeleteFunc(device.HealthQuantities(), func(r device.Reading) bool { return !device.HasBaseline(r.Unit) })),
		Boards:         BoardNames(),
	}
}

// BoardNames lists the board profiles a config may name besides auto and
// sim.
func BoardNames() []string {
	var out []string
	for _, p := range board.Profiles() {
		if p.Name != "sim" {
			out = append(out, p.Name)
		}
	}
	return out
}
