package rule

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// fakeEnv is a map-based Env. A key missing from values (or deltas) is an
// unknown reading.
type fakeEnv struct {
	values map[string]float64
	deltas map[string]float64 // "air.temperature/10m0s"
	stale  map[string]time.Duration
	failed map[string]bool
}

func (f fakeEnv) Value(key string) (float64, bool) {
	v, ok := f.values[key]
	return v, ok
}

func (f fakeEnv) Delta(key string, window time.Duration) (float64, bool) {
	v, ok := f.deltas[key+"/"+window.String()]
	return v, ok
}

func (f fakeEnv) Stale(sensor string) time.Duration { return f.stale[sensor] }
func (f fakeEnv) Failed(sensor string) bool         { return f.failed[sensor] }

func vals(kv ...any) fakeEnv {
	env := fakeEnv{values: map[string]float64{}}
	for i := 0; i < len(kv); i += 2 {
		env.values[kv[i].(string)] = kv[i+1].(float64)
	}
	return env
}

func TestCompile(t *testing.T) {
	tests := []struct {
		src, canonical string
		sensors, keys  []string
	}{
		{"air.temperature > 35", "air.temperature > 35", []string{"air"}, []string{"air.temperature"}},
		{"air.temperature>35&&air.humidity<=80.5", "air.temperature > 35 and air.humidity <= 80.5", []string{"air"}, []string{"air.humidity", "air.temperature"}},
		{"!error(air) || stale(soil) >= 10m", "not error(air) or stale(soil) >= 10m0s", []string{"air", "soil"}, nil},
		{"not not error(air)", "not not error(air)", []string{"air"}, nil},
		{"a.b > 1 or c.d > 2 and e.f > 3", "a.b > 1 or c.d > 2 and e.f > 3", []string{"a", "c", "e"}, []string{"a.b", "c.d", "e.f"}},
		{"(a.b > 1 or c.d > 2) and e.f > 3", "(a.b > 1 or c.d > 2) and e.f > 3", nil, nil},
		{"a.b > 1 or (c.d > 2 or e.f > 3)", "a.b > 1 or (c.d > 2 or e.f > 3)", nil, nil},
		{"a.b - (c.d - e.f) > 0", "a.b - (c.d - e.f) > 0", nil, nil},
		{"(a.b - c.d) - e.f > 0", "a.b - c.d - e.f > 0", nil, nil},
		{"-a.b > -5", "-a.b > -5", nil, nil},
		{"- -5 < a.b", "5 < a.b", nil, nil},
		{"--a.b > 0", "--a.b > 0", nil, nil},
		{"-(a.b + 1) > 0", "-(a.b + 1) > 0", nil, nil},
		{"abs(a.b - 20) > 2.5", "abs(a.b - 20) > 2.5", nil, nil},
		{"abs((a.b)) > 2", "abs(a.b) > 2", nil, nil},
		{"delta(air.temperature, 1h30m) < -3", "delta(air.temperature, 1h30m0s) < -3", []string{"air"}, []string{"air.temperature"}},
		{"delta (air.temperature , 10m) > 1 and air.temperature > 2", "delta(air.temperature, 10m0s) > 1 and air.temperature > 2", []string{"air"}, []string{"air.temperature"}},
		{"stale(air) > 500ms", "stale(air) > 500ms", nil, nil},
		{"stale(air) > 1.5h", "stale(air) > 1h30m0s", nil, nil},
		{"stale(air) > 10µs", "stale(air) > 10µs", nil, nil},
		{"stale(air) + 1m > -2m", "stale(air) + 1m0s > -2m0s", nil, nil},
		{"abs(stale(air) - 1h) < 1m", "abs(stale(air) - 1h0m0s) < 1m0s", nil, nil},
		{".5 < a.b", "0.5 < a.b", nil, nil},
		{"a.b == 1 or a.b != 2", "a.b == 1 or a.b != 2", []string{"a"}, []string{"a.b"}},
		{"not (a.b > 1)", "not a.b > 1", nil, nil},
		{"(not error(a)) and (error(b))", "not error(a) and error(b)", []string{"a", "b"}, nil},
		{"not (error(a) and error(b))", "not (error(a) and error(b))", nil, nil},
		{"stale(1wire) > 5m and 1wire.temperature < 4", "stale(1wire) > 5m0s and 1wire.temperature < 4", []string{"1wire"}, []string{"1wire.temperature"}},
		{"error(error) or error.count > 0", "error(error) or error.count > 0", []string{"error"}, []string{"error.count"}},
		{"1 > 0", "1 > 0", nil, nil},
		{"  a.b\t>\n1  ", "a.b > 1", nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.src, func(t *testing.T) {
			e, err := Compile(tt.src)
			if err != nil {
				t.Fatalf("Compile(%q) error: %v", tt.src, err)
			}
			if got := e.String(); got != tt.src {
				t.Errorf("String() = %q, want the source %q", got, tt.src)
			}
			if got := e.Canonical(); got != tt.canonical {
				t.Errorf("Canonical() = %q, want %q", got, tt.canonical)
			}
			e2, err := Compile(e.Canonical())
			if err != nil {
				t.Fatalf("Compile(Canonical()) error: %v", err)
			}
			if got := e2.Canonical(); got != tt.canonical {
				t.Errorf("canonical form does not round-trip: %q → %q", tt.canonical, got)
			}
			if tt.sensors != nil {
				if diff := cmp.Diff(tt.sensors, e.Sensors()); diff != "" {
					t.Errorf("Sensors() (-want +got):\n%s", diff)
				}
			}
			if tt.sensors != nil || tt.keys != nil {
				if diff := cmp.Diff(tt.keys, e.Keys()); diff != "" {
					t.Errorf("Keys() (-want +got):\n%s", diff)
				}
			}
		})
	}
}

func TestCompileErrors(t *testing.T) {
	tests := []struct{ src, want string }{
		{"", "column 1: empty expression"},
		{"   ", "column 1: empty expression"},
		{"air.temperature > 35)", `column 21: unexpected ")"`},
		{"()", `column 2: unexpected ")"`},
		{"air.temperature > 5,", `column 20: unexpected ","`},
		{"air.temperature > 5 air.humidity < 3", `column 21: unexpected "air.humidity"; join conditions with and/or`},
		{"foo(air)", `column 1: unknown function "foo" (have abs, delta, error, stale, unusual, usual)`},
		{"a.b > 1 or max(a.b, 2) > 1", `column 12: unknown function "max" (have abs, delta, error, stale, unusual, usual)`},
		{"delta > 5", "column 1: delta needs its arguments in parentheses: delta(air.temperature, 10m)"},
		{"delta(5m, 10m) > 1", "column 7: expected a sensor.quantity key, as in delta(air.temperature, 10m)"},
		{"delta(air.temperature 10m) > 1", `column 23: expected "," and a window, as in delta(air.temperature, 10m)`},
		{"delta(air.temperature, 10) > 1", "column 24: expected a window duration, as in delta(air.temperature, 10m)"},
		{"delta(air.temperature, -5m) > 1", "column 24: expected a window duration, as in delta(air.temperature, 10m)"},
		{"delta(air.temperature, 0s) > 1", "column 24: delta window must be positive"},
		{"delta(air.temperature,", "column 23: unterminated expression: expected a window duration, as in delta(air.temperature, 10m)"},
		{"(air.temperature > 5", `column 21: unterminated expression: missing ")" for "(" at column 1`},
		{"air.temperature >", "column 18: unterminated expression"},
		{"stale(air) >= 1h and", "column 21: unterminated expression"},
		{"not", "column 4: unterminated expression"},
		{"air.temperature > 5m", "column 17: cannot compare a number with a duration"},
		{"stale(air) > 5", "column 12: cannot compare a duration with a number; give 5 a unit, as in 5s or 5m"},
		{"abs(stale(air)) > 5", "column 17: cannot compare a duration with a number; give 5 a unit, as in 5s or 5m"},
		{"error(air) > 3", "column 1: error(air) is a condition, not a number; use error(air) or not error(air)"},
		{"(a.b > 1) == (c.d > 2)", "column 11: cannot compare conditions with ==; combine them with and, or, not"},
		{"air.temperature", "column 1: expected a condition, found a number; compare it, as in air.temperature > 30"},
		{"stale(air)", "column 1: expected a condition, found a duration; compare it, as in stale(air) > 5m"},
		{"air.temperature > 30 and air.humidity", "column 26: expected a condition, found a number; compare it, as in air.temperature > 30"},
		{"not air.temperature", "column 5: expected a condition, found a number; compare it, as in air.temperature > 30"},
		{"1 < air.temperature < 5", "column 21: comparisons cannot be chained; join them with and"},
		{"air.temperature = 5", `column 17: unexpected "="; compare with ==`},
		{"a.b > 5 & c.d < 3", `column 9: unexpected "&"; use and`},
		{"a.b > 5 | c.d < 3", `column 9: unexpected "|"; use or`},
		{"air > 5", `column 1: expected a sensor.quantity key, got "air"`},
		{"Air.temperature > 5", `column 1: unexpected "Air.temperature"; keywords and names are lowercase`},
		{"a.b > 1 AND c.d > 2", `column 9: unexpected "AND"; keywords and names are lowercase`},
		{"air.temp.x > 5", `column 1: invalid key "air.temp.x"; want sensor.quantity`},
		{"air. > 5", `column 1: invalid key "air."; want sensor.quantity`},
		{"air.temperature > 10x", `column 19: invalid duration "10x"; use a Go duration such as 90s, 10m or 1h30m`},
		{"stale(air) > 99999999999h", `column 14: invalid duration "99999999999h"; use a Go duration such as 90s, 10m or 1h30m`},
		{"air.temperature > 1.2.3", `column 19: invalid number "1.2.3"`},
		{"air.temperature > 1_000", `column 19: invalid number "1_000"`},
		{"air.temperature > 1" + strings.Repeat("0", 400), "column 19: number out of range"},
		{"air.temperature + stale(air) > 5", "column 17: cannot add a number and a duration"},
		{"air.temperature - error(air) > 5", "column 17: cannot subtract conditions"},
		{"-(air.temperature > 5)", "column 1: cannot negate a condition; use not"},
		{"stale(air.temperature) > 5m", "column 7: stale takes a sensor name, not a reading: stale(air)"},
		{"stale() > 5m", "column 7: expected a sensor name, as in stale(air)"},
		{"error(1.5)", "column 7: expected a sensor name, as in error(air)"},
		{"stale(air > 5m", `column 11: unexpected ">"; want ")"`},
		{"abs(air.temperature > 3) > 1", "column 5: abs takes a number or a duration, not a condition"},
		{"air.temperature > 5 °C", `column 21: unexpected "°"`},
		{"air.temperature > 5 \xff", "column 21: unexpected byte 0xff"},
		{"air.temperature > 5 °C (", `column 21: unexpected "°"`}, // columns count characters, not bytes
		{"°", `column 1: unexpected "°"`},
		{"tête.x > 1", `column 2: unexpected "ê"`},
		{"a.b > 1 and ê", `column 13: unexpected "ê"`},
		{strings.Repeat("(", 33) + "a.b > 1" + strings.Repeat(")", 33), "column 33: expression nested deeper than 32 levels"},
		{strings.Repeat("not ", 33) + "error(a)", "column 129: expression nested deeper than 32 levels"},
		{strings.Repeat("-", 33) + "a.b > 1", "column 33: expression nested deeper than 32 levels"},
		{strings.Repeat("abs(", 33) + "a.b" + strings.Repeat(")", 33) + " > 1", "column 132: expression nested deeper than 32 levels"},
		{"a.b > " + strings.Repeat(" ", 1019), "column 1: expression is 1025 bytes, longer than the limit of 1024"},
	}
	for _, tt := range tests {
		name := tt.src
		if len(name) > 40 {
			name = name[:40]
		}
		t.Run(name, func(t *testing.T) {
			e, err := Compile(tt.src)
			if err == nil {
				t.Fatalf("Compile(%q) = %q, want error %q", tt.src, e.Canonical(), tt.want)
			}
			var se *SyntaxError
			if !errors.As(err, &se) {
				t.Fatalf("Compile(%q) error %T, want *SyntaxError", tt.src, err)
			}
			if got := err.Error(); got != tt.want {
				t.Errorf("Compile(%q) error\n got %s\nwant %s", tt.src, got, tt.want)
			}
		})
	}
}

func TestCompileLimits(t *testing.T) {
	deep := strings.Repeat("(", MaxDepth) + "a.b > 1" + strings.Repeat(")", MaxDepth)
	if _, err := Compile(deep); err != nil {
		t.Errorf("Compile(%d parentheses) error: %v", MaxDepth, err)
	}
	long := "a.b > 1" + strings.Repeat(" ", MaxLen-len("a.b > 1"))
	if _, err := Compile(long); err != nil {
		t.Errorf("Compile(%d bytes) error: %v", len(long), err)
	}
	// A long flat chain is not nesting.
	chain := "a.b > 1" + strings.Repeat(" or a.b > 1", 90)
	if _, err := Compile(chain); err != nil {
		t.Errorf("Compile(long or chain) error: %v", err)
	}
}

func TestMustCompilePanics(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("MustCompile(bad) did not panic")
		}
	}()
	MustCompile("a.b >")
}

func TestEval(t *testing.T) {
	env := fakeEnv{
		values: map[string]float64{"air.temperature": 36.5, "air.humidity": 40, "soil.moisture": -2, "odd.nan": math.NaN()},
		deltas: map[string]float64{"air.temperature/10m0s": 3.5, "air.temperature/1h0m0s": -4},
		stale:  map[string]time.Duration{"air": 10 * time.Second, "soil": 2 * time.Hour},
		failed: map[string]bool{"soil": true},
	}
	const unknown = "unknown"
	tests := []struct {
		src  string
		want string // "true", "false" or unknown
	}{
		{"air.temperature > 35", "true"},
		{"air.temperature > 36.5", "false"},
		{"air.temperature >= 36.5", "true"},
		{"air.temperature < 36.5", "false"},
		{"air.temperature <= 36.5", "true"},
		{"air.temperature == 36.5", "true"},
		{"air.temperature != 36.5", "false"},
		{"soil.moisture < -1", "true"},
		{"-soil.moisture == 2", "true"},
		{"abs(soil.moisture) == 2", "true"},
		{"air.temperature - air.humidity < 0", "true"},
		{"air.temperature - air.humidity > 0", "false"},
		{"air.temperature + soil.moisture == 34.5", "true"},
		{"abs(air.humidity - air.temperature) > 3", "true"},
		{"delta(air.temperature, 10m) > 3", "true"},
		{"delta(air.temperature, 1h) < -3", "true"},
		{"abs(delta(air.temperature, 1h)) > 3", "true"},
		{"delta(air.temperature, 5m) > 3", unknown}, // no history for this window
		{"delta(air.humidity, 10m) > 3", unknown},
		{"stale(air) > 5s", "true"},
		{"stale(air) > 10s", "false"},
		{"stale(air) + 1m > 1m5s", "true"},
		{"stale(soil) > 1h", "true"},
		{"stale(nothing) > 1h", "false"},
		{"error(soil)", "true"},
		{"error(air)", "false"},
		{"not error(air)", "true"},
		{"missing.value > 1", unknown},
		{"missing.value < 1", unknown},
		{"not missing.value > 1", unknown},
		{"-missing.value > 1", unknown},
		{"abs(missing.value) > 1", unknown},
		{"missing.value + 1 > 1", unknown},
		{"1 + missing.value > 1", unknown},
		{"odd.nan > 1", unknown},
		{"odd.nan != 1", unknown},
		// Kleene logic.
		{"missing.value > 1 and air.temperature > 100", "false"},
		{"air.temperature > 100 and missing.value > 1", "false"},
		{"missing.value > 1 and air.temperature > 1", unknown},
		{"air.temperature > 1 and missing.value > 1", unknown},
		{"missing.value > 1 or air.temperature > 1", "true"},
		{"air.temperature > 1 or missing.value > 1", "true"},
		{"missing.value > 1 or air.temperature > 100", unknown},
		{"air.temperature > 100 or missing.value > 1", unknown},
		{"missing.value > 1 or missing.value < 1", unknown},
		{"missing.value > 1 and missing.value < 1", unknown},
		{"error(soil) or soil.level > 3", "true"},
		{"not (missing.value > 1 and air.temperature > 100)", "true"},
		{"air.temperature > 1 and air.humidity > 1 and error(soil)", "true"},
		{"air.temperature > 1 and (air.humidity > 100 or error(air))", "false"},
		{"1 > 0", "true"},
	}
	for _, tt := range tests {
		t.Run(tt.src, func(t *testing.T) {
			e := MustCompile(tt.src)
			v, ok := e.Eval(env)
			got := fmt.Sprint(v)
			if !ok {
				got = unknown
				if v {
					t.Errorf("Eval(%q) = true with ok false, want false", tt.src)
				}
			}
			if got != tt.want {
				t.Errorf("Eval(%q) = %s, want %s", tt.src, got, tt.want)
			}
		})
	}
}

func TestDescribe(t *testing.T) {
	env := fakeEnv{
		values: map[string]float64{"air.temperature": 36.123456},
		deltas: map[string]float64{"air.temperature/10m0s": 3},
		stale:  map[string]time.Duration{"air": 1234 * time.Millisecond, "soil": 250 * time.Millisecond},
		failed: map[string]bool{"soil": true},
	}
	e := MustCompile("air.temperature > 35 and delta(air.temperature, 10m) > 1 or air.temperature > 40 or stale(air) > 1m or stale(soil) > 1s or error(soil) or air.humidity > 90")
	want := "air.temperature=36.1235 delta(air.temperature, 10m0s)=3 stale(air)=1s stale(soil)=250ms error(soil)=true air.humidity=?"
	if got := e.Describe(env); got != want {
		t.Errorf("Describe() =\n%s\nwant\n%s", got, want)
	}
}

func TestNilExpr(t *testing.T) {
	var e *Expr
	if v, ok := e.Eval(fakeEnv{}); v || ok {
		t.Errorf("nil Eval() = %v, %v, want false, false", v, ok)
	}
	if e.Sensors() != nil || e.Keys() != nil || e.String() != "" || e.Canonical() != "" || e.Describe(fakeEnv{}) != "" {
		t.Error("nil Expr methods return non-zero values")
	}
}

func TestSensorsIsACopy(t *testing.T) {
	e := MustCompile("a.x > 1 and b.y > 2")
	e.Sensors()[0] = "zzz"
	e.Keys()[0] = "zzz"
	if got := e.Sensors(); got[0] != "a" {
		t.Errorf("Sensors() = %v after caller changed a copy", got)
	}
	if got := e.Keys(); got[0] != "a.x" {
		t.Errorf("Keys() = %v after caller changed a copy", got)
	}
}

// step is one sample of a lifecycle test.
type step struct {
	at     time.Duration // since t0; may go backwards
	v      float64       // t.v; NaN: the reading is missing
	want   Event
	firing bool
}

func TestStep(t *testing.T) {
	nan := math.NaN()
	tests := []struct {
		name             string
		when, clear      string
		forDur, renotify time.Duration
		steps            []step
	}{
		{
			name: "fires at once and resolves when false",
			when: "t.v > 35",
			steps: []step{
				{0, 30, None, false},
				{1 * time.Minute, 36, Fire, true},
				{2 * time.Minute, 37, None, true},
				{3 * time.Minute, 34, Resolve, false},
				{4 * time.Minute, 34, None, false},
				{5 * time.Minute, 36, Fire, true},
			},
		},
		{
			name: "fires after for",
			when: "t.v > 35", forDur: time.Minute,
			steps: []step{
				{0, 36, None, false},
				{30 * time.Second, 36, None, false},
				{59 * time.Second, 36, None, false},
				{60 * time.Second, 36, Fire, true},
				{90 * time.Second, 36, None, true},
			},
		},
		{
			name: "pending resets when the condition breaks",
			when: "t.v > 35", forDur: time.Minute,
			steps: []step{
				{0, 36, None, false},
				{30 * time.Second, 30, None, false},
				{60 * time.Second, 36, None, false},
				{90 * time.Second, 36, None, false},
				{119 * time.Second, 36, None, false},
				{120 * time.Second, 36, Fire, true},
			},
		},
		{
			name: "unknown keeps pending",
			when: "t.v > 35", forDur: time.Minute,
			steps: []step{
				{0, 36, None, false},
				{30 * time.Second, nan, None, false},
				{60 * time.Second, 36, Fire, true},
			},
		},
		{
			name: "unknown never fires",
			when: "t.v > 35",
			steps: []step{
				{0, nan, None, false},
				{time.Hour, nan, None, false},
			},
		},
		{
			name: "hysteresis band keeps firing",
			when: "t.v > 35", clear: "t.v < 33",
			steps: []step{
				{0, 36, Fire, true},
				{1 * time.Minute, 34, None, true},
				{2 * time.Minute, 33, None, true},
				{3 * time.Minute, 32.9, Resolve, false},
				{4 * time.Minute, 34, None, false},
				{5 * time.Minute, 35.1, Fire, true},
			},
		},
		{
			name: "overlapping clear does not flap",
			when: "t.v > 35", clear: "t.v < 36",
			steps: []step{
				{0, 35.5, Fire, true},
				{1 * time.Minute, 35.5, None, true},
				{2 * time.Minute, 35.5, None, true},
				{3 * time.Minute, 34, Resolve, false},
			},
		},
		{
			name: "renotify cadence",
			when: "t.v > 35", renotify: 10 * time.Minute,
			steps: []step{
				{0, 36, Fire, true},
				{4 * time.Minute, 36, None, true},
				{8 * time.Minute, 36, None, true},
				{12 * time.Minute, 36, Renotify, true},
				{16 * time.Minute, 36, None, true},
				{20 * time.Minute, 36, None, true},
				{22 * time.Minute, 36, Renotify, true},
				{23 * time.Minute, 30, Resolve, false},
				{40 * time.Minute, 30, None, false},
			},
		},
		{
			name: "no renotify without renotify",
			when: "t.v > 35",
			steps: []step{
				{0, 36, Fire, true},
				{1000 * time.Hour, 36, None, true},
			},
		},
		{
			name: "resolves once",
			when: "t.v > 35",
			steps: []step{
				{0, 36, Fire, true},
				{time.Minute, 30, Resolve, false},
				{2 * time.Minute, 30, None, false},
				{3 * time.Minute, 30, None, false},
			},
		},
		{
			name: "unknown never resolves but still renotifies",
			when: "t.v > 35", renotify: 10 * time.Minute,
			steps: []step{
				{0, 36, Fire, true},
				{5 * time.Minute, nan, None, true},
				{10 * time.Minute, nan, Renotify, true},
				{15 * time.Minute, 30, Resolve, false},
			},
		},
		{
			name: "unknown clear never resolves",
			when: "t.v > 35", clear: "t.v < 33",
			steps: []step{
				{0, 36, Fire, true},
				{time.Minute, nan, None, true},
				{2 * time.Minute, 30, Resolve, false},
			},
		},
		{
			name: "clock steps back while pending: the wait restarts, it does not stall",
			when: "t.v > 35", forDur: time.Minute,
			steps: []step{
				{10 * time.Hour, 36, None, false},
				{0, 36, None, false}, // clock stepped back ten hours
				{30 * time.Second, 36, None, false},
				{60 * time.Second, 36, Fire, true},
			},
		},
		{
			name: "clock steps back while firing: no burst, cadence restarts",
			when: "t.v > 35", renotify: 10 * time.Minute,
			steps: []step{
				{100 * time.Minute, 36, Fire, true},
				{50 * time.Minute, 36, None, true}, // stepped back
				{55 * time.Minute, 36, None, true},
				{59 * time.Minute, 36, None, true},
				{60 * time.Minute, 36, Renotify, true},
				{61 * time.Minute, 36, None, true},
				{100 * time.Minute, 36, Renotify, true},
			},
		},
		{
			name: "clock jumps forward: one renotify, not a burst",
			when: "t.v > 35", renotify: 10 * time.Minute,
			steps: []step{
				{0, 36, Fire, true},
				{24 * 365 * time.Hour, 36, Renotify, true},
				{24*365*time.Hour + time.Minute, 36, None, true},
				{24*365*time.Hour + 2*time.Minute, 36, None, true},
			},
		},
	}
	t0 := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			spec := &Spec{Name: "r", When: MustCompile(tt.when), For: tt.forDur, Renotify: tt.renotify}
			if tt.clear != "" {
				spec.Clear = MustCompile(tt.clear)
			}
			var st State
			for i, s := range tt.steps {
				env := vals()
				if !math.IsNaN(s.v) {
					env = vals("t.v", s.v)
				}
				got := Step(spec, &st, env, t0.Add(s.at))
				if got != s.want || st.Firing != s.firing {
					t.Fatalf("step %d (at %v, t.v=%v): Step() = %v, firing %v; want %v, firing %v", i, s.at, s.v, got, st.Firing, s.want, s.firing)
				}
			}
		})
	}
}

func TestStepState(t *testing.T) {
	t0 := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
	spec := &Spec{When: MustCompile("t.v > 35"), For: time.Minute, Renotify: time.Hour}
	var st State

	Step(spec, &st, vals("t.v", 36.0), t0)
	if want := (State{PendingSince: t0}); st != want {
		t.Fatalf("pending state = %+v, want %+v", st, want)
	}
	Step(spec, &st, vals(), t0.Add(30*time.Second))
	if want := (State{PendingSince: t0}); st != want {
		t.Fatalf("state after unknown = %+v, want %+v", st, want)
	}
	fired := t0.Add(time.Minute)
	if ev := Step(spec, &st, vals("t.v", 36.0), fired); ev != Fire {
		t.Fatalf("Step() = %v, want fire", ev)
	}
	if want := (State{Firing: true, Since: fired, LastNotified: fired}); st != want {
		t.Fatalf("firing state = %+v, want %+v", st, want)
	}
	renotified := fired.Add(time.Hour)
	if ev := Step(spec, &st, vals("t.v", 36.0), renotified); ev != Renotify {
		t.Fatalf("Step() = %v, want renotify", ev)
	}
	if want := (State{Firing: true, Since: fired, LastNotified: renotified}); st != want {
		t.Fatalf("renotified state = %+v, want %+v", st, want)
	}
	if ev := Step(spec, &st, vals("t.v", 30.0), renotified.Add(time.Minute)); ev != Resolve {
		t.Fatalf("Step() = %v, want resolve", ev)
	}
	if st.Firing || !st.Since.IsZero() || !st.PendingSince.IsZero() {
		t.Fatalf("resolved state = %+v, want not firing, zero Since and PendingSince", st)
	}
	Step(spec, &st, vals("t.v", 30.0), renotified.Add(2*time.Minute))
	if !st.PendingSince.IsZero() {
		t.Fatalf("PendingSince = %v after a false sample, want zero", st.PendingSince)
	}
}

// A persisted firing state survives a restart: the new process keeps firing
// and renotifies on the persisted cadence.
func TestStepRestoredState(t *testing.T) {
	t0 := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
	spec := &Spec{When: MustCompile("t.v > 35"), Renotify: time.Hour}
	st := State{Firing: true, Since: t0, LastNotified: t0.Add(30 * time.Minute)}
	if ev := Step(spec, &st, vals("t.v", 36.0), t0.Add(time.Hour)); ev != None {
		t.Errorf("Step() = %v, want none", ev)
	}
	if ev := Step(spec, &st, vals("t.v", 36.0), t0.Add(90*time.Minute)); ev != Renotify {
		t.Errorf("Step() = %v, want renotify", ev)
	}
}

func TestStepNil(t *testing.T) {
	var st State
	if ev := Step(&Spec{}, &st, vals(), time.Time{}); ev != None {
		t.Errorf("Step(no When) = %v, want none", ev)
	}
}

func TestEventString(t *testing.T) {
	for ev, want := range map[Event]string{None: "none", Fire: "fire", Renotify: "renotify", Resolve: "resolve", 9: "Event(9)"} {
		if got := ev.String(); got != want {
			t.Errorf("Event(%d).String() = %q, want %q", int(ev), got, want)
		}
	}
}

func TestRender(t *testing.T) {
	lookup := func(key string) (string, bool) {
		v, ok := map[string]string{"air.temperature": "21.4 °C", "air.humidity": "40 %"}[key]
		return v, ok
	}
	tests := []struct{ tmpl, want string }{
		{"", ""},
		{"no placeholders", "no placeholders"},
		{"Greenhouse at {air.temperature}", "Greenhouse at 21.4 °C"},
		{"{air.temperature}/{air.humidity}", "21.4 °C/40 %"},
		{"{ air.temperature }", "21.4 °C"},
		{"soil {soil.moisture}", "soil ?"},
		{"{{air.temperature}}", "{air.temperature}"},
		{"{{{air.temperature}}}", "{21.4 °C}"},
		{"{{", "{"},
		{"}}", "}"},
		{"}", "}"},
		{"{}", "{}"},
		{"{air.temperature", "{air.temperature"},
		{"open { brace", "open { brace"},
		{`json {"a":1}`, `json {"a":1}`},
		{"{not a key}", "{not a key}"},
		{"{a{air.temperature}", "{a21.4 °C"},
		{"°{air.temperature}°", "°21.4 °C°"},
		{"{Air.Temperature}", "{Air.Temperature}"},
	}
	for _, tt := range tests {
		if got := Render(tt.tmpl, lookup); got != tt.want {
			t.Errorf("Render(%q) = %q, want %q", tt.tmpl, got, tt.want)
		}
	}
}

func TestPlaceholders(t *testing.T) {
	got := Placeholders("{b.y} and {a.x} {{c.z}} {b.y} {nope} {d.w")
	if diff := cmp.Diff([]string{"b.y", "a.x"}, got); diff != "" {
		t.Errorf("Placeholders() (-want +got):\n%s", diff)
	}
}
