package status

import (
	"math"
	"time"

	"github.com/vigil-iot/vigil/heartbeat"
)

// sparkRunes are the eight bar heights of a sparkline, lowest first.
var sparkRunes = []rune("▁▂▃▄▅▆▇█")

// Spark is a sparkline of one series over a window.
type Spark struct {
	Line     string  // width runes; a space where the window has no reading
	Min, Max float64 // of the readings in the window
	N        int     // readings in the window
}

// Sparkline draws pts between from and to as width bars: each bar is the
// mean of the readings in its slice of the window, scaled between the
// window's min and max (a flat series is drawn at mid height).
func Sparkline(pts []heartbeat.Point, from, to time.Time, width int) Spark {
	if width <= 0 || !to.After(from) {
		return Spark{}
	}
	sum := make([]float64, width)
	cnt := make([]int, width)
	sp := Spark{Min: math.Inf(1), Max: math.Inf(-1)}
	span := to.Sub(from)
	for _, p := range pts {
		if p.Time.Before(from) || p.Time.After(to) || math.IsNaN(p.Value) || math.IsInf(p.Value, 0) {
			continue
		}
		i := int(int64(p.Time.Sub(from)) * int64(width) / int64(span))
		i = min(i, width-1)
		sum[i] += p.Value
		cnt[i]++
		sp.Min, sp.Max = math.Min(sp.Min, p.Value), math.Max(sp.Max, p.Value)
		sp.N++
	}
	if sp.N == 0 {
		return Spark{}
	}
	line := make([]rune, width)
	for i := range line {
		switch {
		case cnt[i] == 0:
			line[i] = ' '
		case sp.Max == sp.Min:
			line[i] = sparkRunes[3]
		default:
			f := (sum[i]/float64(cnt[i]) - sp.Min) / (sp.Max - sp.Min)
			line[i] = sparkRunes[min(int(f*float64(len(sparkRunes))), len(sparkRunes)-1)]
		}
	}
	sp.Line = string(line)
	return sp
}
