package rule

import (
	"errors"
	"slices"
	"testing"
	"time"
	"unicode/utf8"
)

var fuzzSeeds = []string{
	"air.temperature > 35",
	"air.temperature > 35 and not error(air) or delta(air.temperature, 10m) > 3",
	"!error(air) || stale(soil) >= 10m && -a.b < abs(c.d - 1.5)",
	"(a.b - (c.d - e.f)) > -5 or not (g.h == 1)",
	"stale(air) + 1h30m > 500ms",
	"- -5 < a.b",
	"abs(abs(a.b)) != .5",
	"stale(1wire) > 5m and 1wire.temperature < 4",
	"1 < a.b < 2",
	"delta(a.b, 0s) > 1",
	"stale(air) > 5",
	"((((a.b > 1))))",
	"a.b > 1e3",
	"tête.x > 1 °",
	"a.b > 1 \xff",
}

// FuzzCompile checks that Compile never panics, that errors are
// *SyntaxError with a column inside the source, and that an accepted
// expression's canonical form compiles back to itself.
func FuzzCompile(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		e, err := Compile(src)
		if err != nil {
			var se *SyntaxError
			if !errors.As(err, &se) {
				t.Fatalf("Compile(%q) error %T %v, want *SyntaxError", src, err, err)
			}
			if se.Col < 1 || se.Col > utf8.RuneCountInString(src)+1 {
				t.Fatalf("Compile(%q) error column %d outside the source", src, se.Col)
			}
			return
		}
		if e.String() != src {
			t.Fatalf("String() = %q, want %q", e.String(), src)
		}
		c := e.Canonical()
		// Canonical spellings can be longer ("1h" → "1h0m0s"), so lift the limits.
		e2, err := parse(c, 1<<20, 1<<20)
		if err != nil {
			t.Fatalf("Compile(%q) ok, but its canonical form %q: %v", src, c, err)
		}
		if c2 := e2.Canonical(); c2 != c {
			t.Fatalf("canonical form of %q does not round-trip: %q → %q", src, c, c2)
		}
		if !slices.Equal(e.Sensors(), e2.Sensors()) || !slices.Equal(e.Keys(), e2.Keys()) {
			t.Fatalf("canonical form %q refers to %v %v, the source %q to %v %v", c, e2.Sensors(), e2.Keys(), src, e.Sensors(), e.Keys())
		}
	})
}

// byteEnv derives readings from fuzz bytes. With hide set, readings whose
// mask bit is set are missing.
type byteEnv struct {
	data []byte
	hide bool
}

func (b byteEnv) byteFor(s string) byte {
	if len(b.data) == 0 {
		return 0
	}
	var h byte
	for i := 0; i < len(s); i++ {
		h = h*31 + s[i]
	}
	return b.data[int(h)%len(b.data)]
}

func (b byteEnv) Value(key string) (float64, bool) {
	x := b.byteFor(key)
	return float64(int8(x)) / 4, !(b.hide && x&1 == 1)
}

func (b byteEnv) Delta(key string, window time.Duration) (float64, bool) {
	x := b.byteFor(key + window.String())
	return float64(int8(x)) / 8, !(b.hide && x&1 == 1)
}

func (b byteEnv) Stale(sensor string) time.Duration {
	return time.Duration(b.byteFor(sensor)) * time.Second
}

func (b byteEnv) Failed(sensor string) bool { return b.byteFor(sensor+"!")&1 == 1 }

// FuzzEval checks Kleene logic's defining property: a result that is known
// while some readings are missing stays the same whatever those readings are.
func FuzzEval(f *testing.F) {
	for i, s := range fuzzSeeds {
		f.Add(s, []byte{byte(i), 0x81, 0x7f, 3, 0xfe})
	}
	f.Fuzz(func(t *testing.T, src string, data []byte) {
		e, err := Compile(src)
		if err != nil {
			return
		}
		partial, full := byteEnv{data, true}, byteEnv{data, false}
		pv, pok := e.Eval(partial)
		fv, fok := e.Eval(full)
		if pok && (!fok || pv != fv) {
			t.Fatalf("Eval(%q) = %v with readings missing, but %v (ok %v) with them present", src, pv, fv, fok)
		}
		if !pok && pv {
			t.Fatalf("Eval(%q) = true with ok false", src)
		}
		_ = e.Describe(partial)
	})
}
