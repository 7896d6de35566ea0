package rule_test

import (
	"fmt"
	"time"

	"github.com/vigil-iot/vigil/rule"
)

// readings is a minimal rule.Env over a map of current values.
type readings map[string]float64

func (r readings) Value(key string) (float64, bool)            { v, ok := r[key]; return v, ok }
func (r readings) Delta(string, time.Duration) (float64, bool) { return 0, false }
func (r readings) Stale(string) time.Duration                  { return 0 }
func (r readings) Failed(string) bool                          { return false }

func Example() {
	spec := &rule.Spec{
		Name:  "too_hot",
		When:  rule.MustCompile("air.temperature > 35"),
		Clear: rule.MustCompile("air.temperature < 33"),
		For:   time.Minute,
	}
	var st rule.State
	t0 := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
	for i, temp := range []float64{30, 36, 36, 36, 34, 32} {
		env := readings{"air.temperature": temp}
		ev := rule.Step(spec, &st, env, t0.Add(time.Duration(i)*30*time.Second))
		msg := rule.Render("greenhouse at {air.temperature} °C", func(key string) (string, bool) {
			v, ok := env[key]
			return fmt.Sprint(v), ok
		})
		fmt.Printf("%s: %s, firing=%v\n", msg, ev, st.Firing)
	}
	// Output:
	// greenhouse at 30 °C: none, firing=false
	// greenhouse at 36 °C: none, firing=false
	// greenhouse at 36 °C: none, firing=false
	// greenhouse at 36 °C: fire, firing=true
	// greenhouse at 34 °C: none, firing=true
	// greenhouse at 32 °C: resolve, firing=false
}

func ExampleCompile() {
	_, err := rule.Compile("stale(air) > 5")
	fmt.Println(err)
	e, _ := rule.Compile("air.temperature > 35 && !error(air) || stale(soil) > 10m")
	fmt.Println(e.Canonical())
	fmt.Println(e.Sensors())
	// Output:
	// column 12: cannot compare a duration with a number; give 5 a unit, as in 5s or 5m
	// air.temperature > 35 and not error(air) or stale(soil) > 10m0s
	// [air soil]
}
