package rule

import (
	"testing"
	"time"
)

const benchExpr = "air.temperature > 35 and not error(air) or delta(air.temperature, 10m) > 3 and stale(air) < 5m"

func BenchmarkEval(b *testing.B) {
	e := MustCompile(benchExpr)
	env := benchEnv{"air.temperature": 30}
	b.ReportAllocs()
	for b.Loop() {
		e.Eval(env)
	}
}

// benchEnv is an allocation-free Env, so the benchmark measures Eval itself.
type benchEnv map[string]float64

func (e benchEnv) Value(key string) (float64, bool) { v, ok := e[key]; return v, ok }
func (e benchEnv) Delta(key string, _ time.Duration) (float64, bool) {
	v, ok := e[key]
	return v / 8, ok
}
func (e benchEnv) Stale(string) time.Duration { return time.Second }
func (e benchEnv) Failed(string) bool         { return false }

func BenchmarkCompile(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Compile(benchExpr); err != nil {
			b.Fatal(err)
		}
	}
}
