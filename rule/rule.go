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
//	sum     = unary { ("+" | "-") unary }
//	unary   = "-" unary | primary
//	primary = number | duration | key | call | "(" expr ")"
//	call    = "delta(" key "," duration ")" | "stale(" sensor ")" | "error(" sensor ")"
//	          | "abs(" sum ")" | "usual(" key ")" | "unusual(" key ")"
//
// "&&", "||" and "!" are aliases of and, or and not; keywords are lowercase.
// A number is decimal (21, -3.5, .5); a duration is a Go duration (500ms,
// 10m, 1h30m). A key is sensor.quantity (air.temperature), a sensor is a bare
// name; both are [a-z0-9_]+.
//
// Expressions are typed when compiled: a key, delta() and abs() of a number
// are numbers; stale() is a duration, compared with duration literals
// (stale(air) > 5m); error() is a condition. Comparing a number with a
// duration, comparing conditions, or using a number as a condition are
// compile errors.
//
// usual(key) is the value expected for the reading at this hour of the day
// and unusual(key) the reading's signed robust z-score against it (package
// baseline); both are numbers, known only when the Env implements Baselines
// and the key's baseline has warmed up.
//
// Evaluation is three-valued: a comparison that needs a missing reading (a
// failed sensor, no history yet for delta, a baseline still warming up) is
// unknown, and "and", "or" and
// "not" follow Kleene's logic, so "error(air) or air.temperature > 30" is
// true while air is failing. error() and stale() are always known.
package rule

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// Limits on a source expression.
const (
	MaxLen   = 1024 // bytes
	MaxDepth = 32   // nested parentheses, not, unary minus and calls
)

// Env gives an expression access to the current readings and their history.
type Env interface {
	Value(key string) (float64, bool)                       // current reading of "sensor.quantity"
	Delta(key string, window time.Duration) (float64, bool) // current minus the oldest reading within window
	Stale(sensor string) time.Duration                      // time since the sensor's last good read
	Failed(sensor string) bool                              // the sensor's latest read failed
}

// Baselines is implemented by an Env that knows what is usual for each
// reading at this hour (package baseline): usual() and unusual() ask it.
// With an Env that does not implement it, or while a key's baseline warms
// up (ok false), both are unknown, so a rule on them is not firing.
type Baselines interface {
	Usual(key string) (float64, bool)   // the value expected now
	Unusual(key string) (float64, bool) // the current reading's signed robust z-score
}

// SyntaxError is a parse error pointing at a 1-based column of the source.
type SyntaxError struct {
	Col int
	Msg string
}

func (e *SyntaxError) Error() string { return fmt.Sprintf("column %d: %s", e.Col, e.Msg) }

// Expr is a compiled expression. It is immutable and safe for concurrent use.
type Expr struct {
	src     string
	root    *node
	sensors []string
	keys    []string
	bases   []string // keys of usual() and unusual()
}

// Compile parses and type-checks src, which may be at most MaxLen bytes
// nested at most MaxDepth deep. Errors are *SyntaxError.
func Compile(src string) (*Expr, error) { return parse(src, MaxLen, MaxDepth) }

// MustCompile is Compile for expressions known to be valid; it panics on an error.
func MustCompile(src string) *Expr {
	e, err := Compile(src)
	if err != nil {
		panic(fmt.Sprintf("rule: compile %q: %v", src, err))
	}
	return e
}

func newExpr(src string, root *node) *Expr {
	e := &Expr{src: src, root: root}
	walk(root, func(n *node) {
		switch n.op {
		case opKey, opDelta, opUsual, opUnusual:
			e.keys = append(e.keys, n.name)
			s, _, _ := strings.Cut(n.name, ".")
			e.sensors = append(e.sensors, s)
			if n.op == opUsual || n.op == opUnusual {
				e.bases = append(e.bases, n.name)
			}
		case opStale, opError:
			e.sensors = append(e.sensors, n.name)
		}
	})
	slices.Sort(e.keys)
	e.keys = slices.Compact(e.keys)
	slices.Sort(e.sensors)
	e.sensors = slices.Compact(e.sensors)
	slices.Sort(e.bases)
	e.bases = slices.Compact(e.bases)
	return e
}

// walk visits n and its operands in source order.
func walk(n *node, f func(*node)) {
	if n == nil {
		return
	}
	walk(n.l, f)
	f(n)
	walk(n.r, f)
}

// Eval evaluates the expression. ok is false when the result is unknown
// because a reading it needs is missing (sensor failed, no history yet);
// callers then keep the rule's previous state.
func (e *Expr) Eval(env Env) (result, ok bool) {
	if e == nil || e.root == nil {
		return false, false
	}
	return evalBool(e.root, env)
}

// Sensors returns the sensor names the expression refers to, sorted, deduplicated.
func (e *Expr) Sensors() []string {
	if e == nil {
		return nil
	}
	return slices.Clone(e.sensors)
}

// Baselines returns the readings whose baseline the expression uses
// through usual() and unusual(), sorted, deduplicated.
func (e *Expr) Baselines() []string {
	if e == nil {
		return nil
	}
	return slices.Clone(e.bases)
}

// Keys returns the readings ("sensor.quantity") the expression refers to
// through keys, delta(), usual() and unusual(), sorted, deduplicated. Sensors referred to only by
// stale() or error() are in Sensors, not here.
func (e *Expr) Keys() []string {
	if e == nil {
		return nil
	}
	return slices.Clone(e.keys)
}

// String returns the source text.
func (e *Expr) String() string {
	if e == nil {
		return ""
	}
	return e.src
}

// Canonical returns the expression in a normal form: single spaces, and
// keywords, numbers and durations spelled one way ("not", "5m0s"), with only
// the parentheses precedence needs. It compiles to the same expression,
// though it may be longer than the source ("1h" is "1h0m0s").
func (e *Expr) Canonical() string {
	if e == nil || e.root == nil {
		return ""
	}
	var b strings.Builder
	format(&b, e.root, precOr)
	return b.String()
}

// Describe lists the current values of the readings and functions the
// expression uses, in source order, for logs and alert context:
// "air.temperature=36.2 stale(air)=4s". Unknown values print as "?".
func (e *Expr) Describe(env Env) string {
	if e == nil || e.root == nil {
		return ""
	}
	var b strings.Builder
	seen := map[string]bool{}
	walk(e.root, func(n *node) {
		switch n.op {
		case opKey, opDelta, opStale, opError, opUsual, opUnusual:
		default:
			return
		}
		name := leaf(n)
		if seen[name] {
			return
		}
		seen[name] = true
		val := "?"
		if n.op == opError {
			v, _ := evalBool(n, env)
			val = fmt.Sprint(v)
		} else if v, ok := evalNum(n, env); ok {
			val = describeValue(n, v)
		}
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(name + "=" + val)
	})
	return b.String()
}

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

func (ev Event) String() string {
	switch ev {
	case None:
		return "none"
	case Fire:
		return "fire"
	case Renotify:
		return "renotify"
	case Resolve:
		return "resolve"
	}
	return fmt.Sprintf("Event(%d)", int(ev))
}

// Step advances one rule's lifecycle at now and reports what to do.
//
// A rule that is not firing fires when When has held for For (at once when
// For is zero); a false When resets the wait, an unknown one leaves it as it
// is. A firing rule resolves when Clear is true and When is not also true
// (so overlapping thresholds cannot flap), or, without Clear, when When is
// false. Unknown never fires and never resolves. While firing, a Renotify
// event comes every Renotify.
//
// Times are compared with Time.Sub, so times that carry a monotonic clock
// reading (time.Now, a real clockwork clock) are immune to wall-clock steps.
// Without one, a clock that steps backwards restarts the For wait and the
// Renotify cadence from now instead of stalling them; it never causes a burst.
func Step(spec *Spec, st *State, env Env, now time.Time) Event {
	if spec == nil || spec.When == nil || st == nil {
		return None
	}
	if !st.Firing {
		v, ok := spec.When.Eval(env)
		switch {
		case !ok:
			return None
		case !v:
			st.PendingSince = time.Time{}
			return None
		}
		if spec.For > 0 {
			if st.PendingSince.IsZero() || now.Before(st.PendingSince) {
				st.PendingSince = now
			}
			if now.Sub(st.PendingSince) < spec.For {
				return None
			}
		}
		*st = State{Firing: true, Since: now, LastNotified: now}
		return Fire
	}

	if resolved(spec, env) {
		*st = State{LastNotified: st.LastNotified}
		return Resolve
	}
	if spec.Renotify <= 0 {
		return None
	}
	if now.Before(st.LastNotified) { // the clock stepped back: count from now
		st.LastNotified = now
		return None
	}
	if now.Sub(st.LastNotified) >= spec.Renotify {
		st.LastNotified = now
		return Renotify
	}
	return None
}

// resolved reports whether a firing rule should resolve.
func resolved(spec *Spec, env Env) bool {
	when, whenOK := spec.When.Eval(env)
	if spec.Clear == nil {
		return whenOK && !when
	}
	clear, ok := spec.Clear.Eval(env)
	return ok && clear && !(whenOK && when)
}

// Render fills {sensor.quantity} placeholders in tmpl using lookup, which
// returns the formatted value with its unit ("21.4 °C"). Unknown keys render
// as "?". "{{" and "}}" stand for literal braces; a brace that does not
// enclose a key ("{", "{not a key}") is copied as it is.
func Render(tmpl string, lookup func(key string) (string, bool)) string {
	var b strings.Builder
	b.Grow(len(tmpl))
	for i := 0; i < len(tmpl); {
		c := tmpl[i]
		if (c == '{' || c == '}') && i+1 < len(tmpl) && tmpl[i+1] == c {
			b.WriteByte(c)
			i += 2
			continue
		}
		if c == '{' {
			if key, n, ok := placeholder(tmpl[i:]); ok {
				v, found := lookup(key)
				if !found {
					v = "?"
				}
				b.WriteString(v)
				i += n
				continue
			}
		}
		b.WriteByte(c)
		i++
	}
	return b.String()
}

// placeholder parses "{key}" at the start of s and returns the key and the
// placeholder's length.
func placeholder(s string) (key string, n int, ok bool) {
	end := strings.IndexAny(s[1:], "{}")
	if end < 0 || s[1+end] != '}' {
		return "", 0, false
	}
	key = strings.TrimSpace(s[1 : 1+end])
	return key, end + 2, isKey(key)
}

// Placeholders returns the keys tmpl refers to, in order of first use, so a
// configuration can be checked before Render ever runs.
func Placeholders(tmpl string) []string {
	var keys []string
	Render(tmpl, func(key string) (string, bool) {
		if !slices.Contains(keys, key) {
			keys = append(keys, key)
		}
		return "", true
	})
	return keys
}

// Threshold is a comparison of a reading with a number, such as
// air.temperature > 35: what a chart of the reading draws as a line.
type Threshold struct {
	Key   string  // sensor.quantity
	Op    string  // <, <=, >, >=, == or !=
	Value float64 // in the reading's unit
}

// Thresholds returns the comparisons of a plain reading (not delta() or
// abs()) with a number literal, in source order, the reading on the left.
func (e *Expr) Thresholds() []Threshold {
	if e == nil {
		return nil
	}
	flip := map[op]op{opLT: opGT, opLE: opGE, opGT: opLT, opGE: opLE, opEQ: opEQ, opNE: opNE}
	var out []Threshold
	walk(e.root, func(n *node) {
		if !n.op.isCmp() || n.l == nil || n.r == nil {
			return
		}
		switch {
		case n.l.op == opKey && n.r.op == opNum:
			out = append(out, Threshold{Key: n.l.name, Op: opText[n.op], Value: n.r.val})
		case n.l.op == opNum && n.r.op == opKey:
			out = append(out, Threshold{Key: n.r.name, Op: opText[flip[n.op]], Value: n.l.val})
		}
	})
	return out
}
