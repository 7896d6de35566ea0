// Package rule implements vigil's local rule expressions and their lifecycle
// (firing, still firing, resolved). Rules run on every sample with no network.
//
// Grammar (precedence low to high):
//
//	expr    = or
//	or      = and { "or" and }
//	and     = not { "and" not }
//	not     = "not" not | cmp
//	cmp     = sum [ ("<" | "<=" | ">" | ">=" | "==" | "!=") sum ]
//	sum     = primary [ ("+" | "-") primary ]...
//	primary = number | duration | key | call | "(" expr ")"
//	call    = "delta(" key "," duration ")" | "stale(" sensor ")" | "error(" sensor ")"
//	          | "abs(" sum ")"
//
// A key is sensor.quantity (air.temperature); stale() yields a duration,
// compared with duration literals (stale(air) > 5m).
package rule

import (
	"fmt"
	"time"
)

// Env gives an expression access to the current readings and their history.
type Env interface {
	Value(key string) (float64, bool)                       // current reading of "sensor.quantity"
	Delta(key string, window time.Duration) (float64, bool) // current minus the oldest reading within window
	Stale(sensor string) time.Duration                      // time since the sensor's last good read
	Failed(sensor string) bool                              // the sensor's latest read failed
}

// SyntaxError is a parse error pointing at a 1-based column of the source.
type SyntaxError struct {
	Col int
	Msg string
}

func (e *SyntaxError) Error() string { return fmt.Sprintf("column %d: %s", e.Col, e.Msg) }

// Expr is a compiled expression.
type Expr struct {
	// implementation-defined
}

// Compile parses src. Errors are *SyntaxError.
func Compile(src string) (*Expr, error) { panic("unimplemented") }

// Eval evaluates the expression. ok is false when the result is unknown
// because a reading it needs is missing (sensor failed, no history yet);
// callers then keep the rule's previous state.
func (e *Expr) Eval(env Env) (result, ok bool) { panic("unimplemented") }

// Sensors returns the sensor names the expression refers to, sorted, deduplicated.
func (e *Expr) Sensors() []string { panic("unimplemented") }

// String returns the source text.
func (e *Expr) String() string { panic("unimplemented") }

// Spec is a rule ready to run.
type Spec struct {
	Name     string
	When     *Expr
	Clear    *Expr // nil: the rule clears when When is false
	For      time.Duration
	Renotify time.Duration // 0: never
}

// State is a rule's lifecycle state. Firing, Since and LastNotified are
// persisted by the caller; PendingSince is in-memory only.
type State struct {
	Firing       bool
	Since        time.Time // when it started firing
	LastNotified time.Time // last fire/renotify event
	PendingSince time.Time // when When first held while not firing (zero: not pending)
}

// Event is what a Step asks the caller to do.
type Event int

// Events.
const (
	None     Event = iota
	Fire           // send a firing alert; the state changed (persist)
	Renotify       // send a "still firing" alert; LastNotified changed (persist)
	Resolve        // send a resolved alert; the state changed (persist)
)

// Step advances one rule's lifecycle at now and reports what to do.
func Step(spec *Spec, st *State, env Env, now time.Time) Event { panic("unimplemented") }

// Render fills {sensor.quantity} placeholders in tmpl using lookup, which
// returns the formatted value with its unit ("21.4 °C"). Unknown keys render
// as "?".
func Render(tmpl string, lookup func(key string) (string, bool)) string { panic("unimplemented") }
