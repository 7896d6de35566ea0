package rule

import (
	"slices"
	"strings"
	"testing"
)

// bandEnv is a fakeEnv that knows what is usual: a key missing from usual
// is still warming up.
type bandEnv struct {
	fakeEnv
	usual, z map[string]float64
}

func (b bandEnv) Usual(key string) (float64, bool) {
	v, ok := b.usual[key]
	return v, ok
}

func (b bandEnv) Unusual(key string) (float64, bool) {
	v, ok := b.z[key]
	return v, ok
}

var _ Baselines = bandEnv{}

// TestUsualUnusual: usual() is the value expected now and unusual() its
// signed z-score; while warming up (or with an Env that knows no baseline)
// both are unknown, so a rule on them is not firing.
func TestUsualUnusual(t *testing.T) {
	warm := bandEnv{
		fakeEnv: vals("freezer.temperature", -5.0, "air.temperature", 28.0),
		usual:   map[string]float64{"freezer.temperature": -18, "air.temperature": 15},
		z:       map[string]float64{"freezer.temperature": 6.5, "air.temperature": -0.5},
	}
	cold := bandEnv{fakeEnv: warm.fakeEnv}
	tests := []struct {
		src    string
		env    Env
		want   bool
		wantOK bool
	}{
		{"unusual(freezer.temperature) > 4", warm, true, true},
		{"unusual(air.temperature) > 4", warm, false, true},
		{"abs(unusual(air.temperature)) < 1", warm, true, true},
		{"air.temperature - usual(air.temperature) > 10", warm, true, true},
		{"usual(freezer.temperature) < -15", warm, true, true},
		{"unusual(freezer.temperature) > 4", cold, false, false},
		{"unusual(freezer.temperature) > 4", warm.fakeEnv, false, false}, // no Baselines at all
		{"unusual(freezer.temperature) > 4 or error(freezer)", cold, false, false},
		{"unusual(freezer.temperature) > 4 and freezer.temperature > 0", cold, false, true},
	}
	for _, tc := range tests {
		got, ok := MustCompile(tc.src).Eval(tc.env)
		if got != tc.want || ok != tc.wantOK {
			t.Errorf("Eval(%q) = %v, %v, want %v, %v", tc.src, got, ok, tc.want, tc.wantOK)
		}
	}
}

func TestUsualCompile(t *testing.T) {
	e := MustCompile("unusual(freezer.temperature)>4 and usual( air.temperature ) < air.humidity")
	if got, want := e.Canonical(), "unusual(freezer.temperature) > 4 and usual(air.temperature) < air.humidity"; got != want {
		t.Errorf("Canonical() = %q, want %q", got, want)
	}
	if got, want := e.Keys(), []string{"air.humidity", "air.temperature", "freezer.temperature"}; !slices.Equal(got, want) {
		t.Errorf("Keys() = %v, want %v", got, want)
	}
	if got, want := e.Baselines(), []string{"air.temperature", "freezer.temperature"}; !slices.Equal(got, want) {
		t.Errorf("Baselines() = %v, want %v", got, want)
	}
	env := bandEnv{fakeEnv: vals("air.humidity", 50.0), usual: map[string]float64{"air.temperature": 15}}
	if got, want := e.Describe(env), "unusual(freezer.temperature)=? usual(air.temperature)=15 air.humidity=50"; got != want {
		t.Errorf("Describe() = %q, want %q", got, want)
	}
	for _, tc := range []struct{ src, err string }{
		{"unusual(freezer) > 4", "expected a sensor.quantity key, as in unusual(air.temperature)"},
		{"usual(1) > 4", "expected a sensor.quantity key, as in usual(air.temperature)"},
		{"unusual(a.b)", "expected a condition"},
		{"unusual(a.b) > 5m", "compare"},
	} {
		_, err := Compile(tc.src)
		if err == nil || !strings.Contains(err.Error(), tc.err) {
			t.Errorf("Compile(%q) = %v, want an error containing %q", tc.src, err, tc.err)
		}
	}
}
