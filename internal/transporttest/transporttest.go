// Package transporttest holds fakes for testing the transports: the
// daemon's commands (every role mqtt and telegram call) recording what it
// was asked to run. It is test support only: nothing outside _test.go
// files imports it.
package transporttest

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/vigil-iot/vigil/alert"
	"github.com/vigil-iot/vigil/transport"
)

// Recorder records the commands it was asked to run and answers each with
// a fixed reply:
//
//	status   "next run 12:30, 0 failures"
//	check    "ok: all quiet"
//	pause d  "paused for " + d, or transport.CheckPause's error
//	resume   "resumed"
//	sensors  SensorsReply, or "air.temperature 21.4 °C" when that is empty
//	get, set, unset, toggle, checklist, logs, notes, ack: see each method
//
// Err, when set, may refuse a call as the real commands do (for instance
// with an error wrapping alert.ErrNotAllowed): a refused call is not
// run and not recorded. The zero value is ready to use.
type Recorder struct {
	// SensorsReply, when not empty, is the answer to Sensors.
	SensorsReply string
	// Err, when not nil, is asked before each call with the method's verb
	// ("status", "check", "pause", "resume", "sensors", "get", "set",
	// "unset", "toggle", "checklist", "logs", "notes", "ack", "rule"); a non-nil error is
	// returned instead of running it.
	Err func(verb string) error

	mu        sync.Mutex
	calls     []string
	sources   []transport.Source
	checklist string
}

// NotAllowed returns an Err that refuses every verb not in allowed with an
// error wrapping alert.ErrNotAllowed, as [manage] remote does for a
// remote channel ("toggle" counts as "set").
func NotAllowed(allowed ...string) func(verb string) error {
	return func(verb string) error {
		if verb == "toggle" {
			verb = "set"
		}
		if slices.Contains(allowed, verb) {
			return nil
		}
		return fmt.Errorf("%s: %w", verb, alert.ErrNotAllowed)
	}
}

// refused asks Err about verb.
func (f *Recorder) refused(verb string) error {
	if f.Err == nil {
		return nil
	}
	return f.Err(verb)
}

// ChecklistText returns the text of the last accepted checklist set.
func (f *Recorder) ChecklistText() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.checklist
}

// Calls returns the commands run so far, in order: "status", "check",
// "pause 30m0s", "resume", "sensors".
func (f *Recorder) Calls() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.calls...)
}

// Sources returns, for each call in Calls, who the transport said sent it
// (transport.SourceOf its context).
func (f *Recorder) Sources() []transport.Source {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]transport.Source(nil), f.sources...)
}

func (f *Recorder) record(ctx context.Context, s string) {
	f.mu.Lock()
	f.calls = append(f.calls, s)
	f.sources = append(f.sources, transport.SourceOf(ctx))
	f.mu.Unlock()
}

func (f *Recorder) Status(ctx context.Context) (string, error) {
	if err := f.refused("status"); err != nil {
		return "", err
	}
	f.record(ctx, "status")
	return "next run 12:30, 0 failures", nil
}

func (f *Recorder) Check(ctx context.Context) (string, error) {
	if err := f.refused("check"); err != nil {
		return "", err
	}
	f.record(ctx, "check")
	return "ok: all quiet", nil
}

func (f *Recorder) Pause(ctx context.Context, d time.Duration) (string, error) {
	if err := f.refused("pause"); err != nil {
		return "", err
	}
	if err := transport.CheckPause(d); err != nil {
		return "", err // refused, as the real commands do: not run, not recorded
	}
	f.record(ctx, "pause "+d.String())
	return "paused for " + d.String(), nil
}

func (f *Recorder) Resume(ctx context.Context) (string, error) {
	if err := f.refused("resume"); err != nil {
		return "", err
	}
	f.record(ctx, "resume")
	return "resumed", nil
}

func (f *Recorder) Sensors(ctx context.Context) (string, error) {
	if err := f.refused("sensors"); err != nil {
		return "", err
	}
	f.record(ctx, "sensors")
	if f.SensorsReply != "" {
		return f.SensorsReply, nil
	}
	return "air.temperature 21.4 °C", nil
}

func (f *Recorder) Get(ctx context.Context, key string) (string, error) {
	if err := f.refused("get"); err != nil {
		return "", err
	}
	f.record(ctx, "get "+key)
	return "heartbeat.interval = 30m (default)", nil
}

func (f *Recorder) Set(ctx context.Context, key, value string) (string, error) {
	if err := f.refused("set"); err != nil {
		return "", err
	}
	f.record(ctx, "set "+key+" "+value)
	return key + " set to " + value, nil
}

func (f *Recorder) Unset(ctx context.Context, key string) (string, error) {
	if err := f.refused("unset"); err != nil {
		return "", err
	}
	f.record(ctx, "unset "+key)
	return key + " unset", nil
}

func (f *Recorder) Toggle(ctx context.Context, rule string) (string, error) {
	if err := f.refused("toggle"); err != nil {
		return "", err
	}
	f.record(ctx, "toggle "+rule)
	return "rule." + rule + ".enabled set to false", nil
}

func (f *Recorder) Checklist(ctx context.Context, op, text string) (string, error) {
	if err := f.refused("checklist"); err != nil {
		return "", err
	}
	if op == transport.ChecklistSet {
		f.record(ctx, "checklist set "+strconv.Itoa(len(text)))
		f.mu.Lock()
		f.checklist = text
		f.mu.Unlock()
		return "checklist set", nil
	}
	f.record(ctx, "checklist "+op)
	return "checklist: " + op, nil
}

func (f *Recorder) Logs(ctx context.Context, n int) (string, error) {
	if err := f.refused("logs"); err != nil {
		return "", err
	}
	f.record(ctx, "logs "+strconv.Itoa(n))
	return "12:00 ok", nil
}

func (f *Recorder) Notes(ctx context.Context, clear bool) (string, error) {
	if err := f.refused("notes"); err != nil {
		return "", err
	}
	if clear {
		f.record(ctx, "notes clear")
		return "notes cleared", nil
	}
	f.record(ctx, "notes")
	return "no notes", nil
}

func (f *Recorder) Ack(ctx context.Context, target string) (string, error) {
	if err := f.refused("ack"); err != nil {
		return "", err
	}
	f.record(ctx, "ack "+target)
	return "acknowledged " + target, nil
}

// RuleDecide records "rule OP TARGET" and answers "approved p7",
// "rejected p7" or "dropped NAME"; a target "unknown" is refused with alert.ErrNoProposal, as the
// daemon refuses an ID that names no pending proposal.
func (f *Recorder) RuleDecide(ctx context.Context, op, target string) (string, error) {
	if err := f.refused("rule"); err != nil {
		return "", err
	}
	if target == "unknown" {
		return "", fmt.Errorf("rule %s %s: %w", op, target, alert.ErrNoProposal)
	}
	f.record(ctx, "rule "+op+" "+target)
	return map[string]string{"approve": "approved", "reject": "rejected", "drop": "dropped"}[op] + " " + target, nil
}
