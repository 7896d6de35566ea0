package device

import (
	"context"
	"sync"
)

// Reopen is a sensor whose driver could not be opened (its bus did not
// exist at start-up, the chip did not answer, a cable was loose). Every
// Sense tries to open it again and, once that works, reads it; until then
// Sense returns the open error, a reading error like any other. So a sensor
// plugged in, or a bus enabled, after vigil started shows up without a
// restart.
type Reopen struct {
	Open func() (Sensor, error)

	mu     sync.Mutex
	sensor Sensor
}

var _ Sensor = (*Reopen)(nil)

// Sense opens the driver if needed and reads it.
func (r *Reopen) Sense(ctx context.Context) ([]Reading, error) {
	r.mu.Lock()
	s := r.sensor
	if s == nil {
		if err := ctx.Err(); err != nil {
			r.mu.Unlock()
			return nil, err
		}
		var err error
		if s, err = r.Open(); err != nil {
			r.mu.Unlock()
			return nil, err
		}
		r.sensor = s
	}
	r.mu.Unlock()
	return s.Sense(ctx)
}

// Failed is a sensor that can never be read, for instance because its bus
// does not exist; Sense always returns Err.
type Failed struct{ Err error }

var _ Sensor = Failed{}

// Sense returns f.Err.
func (f Failed) Sense(context.Context) ([]Reading, error) { return nil, f.Err }
