// Package transporttest holds fakes for testing the transports: a
// transport.Commands that records what it was asked to run. It is test
// support only: nothing outside _test.go files imports it.
package transporttest

import (
	"context"
	"sync"
	"time"

	"github.com/vigil-iot/vigil/transport"
)

var _ transport.Commands = (*Commands)(nil)

// Commands records the commands it was asked to run and answers each with
// a fixed reply:
//
//	status   "next run 12:30, 0 failures"
//	check    "ok: all quiet"
//	pause d  "paused for " + d
//	resume   "resumed"
//	sensors  SensorsReply, or "air.temperature 21.4 °C" when that is empty
//
// The zero value is ready to use.
type Commands struct {
	// SensorsReply, when not empty, is the answer to Sensors.
	SensorsReply string

	mu    sync.Mutex
	calls []string
}

// Calls returns the commands run so far, in order: "status", "check",
// "pause 30m0s", "resume", "sensors".
func (f *Commands) Calls() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.calls...)
}

func (f *Commands) record(s string) {
	f.mu.Lock()
	f.calls = append(f.calls, s)
	f.mu.Unlock()
}

func (f *Commands) Status(context.Context) (string, error) {
	f.record("status")
	return "next run 12:30, 0 failures", nil
}

func (f *Commands) Check(context.Context) (string, error) {
	f.record("check")
	return "ok: all quiet", nil
}

func (f *Commands) Pause(_ context.Context, d time.Duration) (string, error) {
	f.record("pause " + d.String())
	return "paused for " + d.String(), nil
}

func (f *Commands) Resume(context.Context) (string, error) {
	f.record("resume")
	return "resumed", nil
}

func (f *Commands) Sensors(context.Context) (string, error) {
	f.record("sensors")
	if f.SensorsReply != "" {
		return f.SensorsReply, nil
	}
	return "air.temperature 21.4 °C", nil
}
