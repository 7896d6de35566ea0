package status

import (
	"testing"
	"time"

	"github.com/vigil-iot/vigil/heartbeat"
	"github.com/vigil-iot/vigil/internal/seriestest"
)

// t0 is when seriestest.KnownHistory starts.
var t0 = seriestest.T0

func TestSparkline(t *testing.T) {
	h := seriestest.KnownHistory()
	tests := []struct {
		name     string
		series   heartbeat.Series
		from, to time.Time
		width    int
		want     Spark
	}{
		{"rising", h[1], t0, t0.Add(time.Hour), 12, Spark{Line: "▁▁▂▃▃▄▅▆▆▇██", Min: 20, Max: 31.8, N: 60}},
		{"falling with a gap", h[0], t0, t0.Add(time.Hour), 12, Spark{Line: "██▇▆▆▅  ▃▂▁▁", Min: 30.5, Max: 60, N: 50}},
		{"last half only", h[1], t0.Add(30 * time.Minute), t0.Add(time.Hour), 6, Spark{Line: "▁▂▄▅▇█", Min: 26, Max: 31.8, N: 30}},
		{"flat", heartbeat.Series{Points: []heartbeat.Point{{Time: t0, Value: 5}, {Time: t0.Add(time.Minute), Value: 5}}}, t0, t0.Add(2 * time.Minute), 4, Spark{Line: "▄ ▄ ", Min: 5, Max: 5, N: 2}},
		{"nothing in the window", h[1], t0.Add(2 * time.Hour), t0.Add(3 * time.Hour), 8, Spark{}},
		{"no width", h[1], t0, t0.Add(time.Hour), 0, Spark{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Sparkline(tt.series.Points, tt.from, tt.to, tt.width)
			got.Min, got.Max = round(got.Min), round(got.Max)
			if got != tt.want {
				t.Errorf("Sparkline() = %+v, want %+v", got, tt.want)
			}
		})
	}
}

func round(f float64) float64 { return float64(int64(f*1000+0.5)) / 1000 }
