package device

import (
	"context"
	"time"
)

// Sleep waits for d, or until ctx is done and then returns ctx.Err(). The
// drivers that must wait out a conversion time themselves (SHT3x, SHT4x,
// MAX31865) take one, so that only cmd/ sleeps on the wall clock and a test
// can record the waits instead of spending them.
type Sleep func(ctx context.Context, d time.Duration) error
