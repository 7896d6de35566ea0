package web

import (
	"math"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/vigil-iot/vigil/device"
	"github.com/vigil-iot/vigil/heartbeat"
)

// vertex is a point of a chart's line, in SVG units.
type vertex struct{ x, y float64 }

var vertexRE = regexp.MustCompile(`[MLh]([-\d.]+)(?: ([-\d.]+))?`)

// lineOf returns the vertices of the chart's line (a relative h segment as
// the point it ends at), or nil when the chart draws none.
func lineOf(t *testing.T, svg string) []vertex {
	t.Helper()
	m := regexp.MustCompile(`<path class="line" d="([^"]*)"`).FindStringSubmatch(svg)
	if m == nil {
		return nil
	}
	var out []vertex
	for _, v := range vertexRE.FindAllStringSubmatch(m[1], -1) {
		a, _ := strconv.ParseFloat(v[1], 64)
		if strings.HasPrefix(v[0], "h") {
			last := out[len(out)-1]
			out = append(out, vertex{last.x + a, last.y})
			continue
		}
		b, _ := strconv.ParseFloat(v[2], 64)
		out = append(out, vertex{a, b})
	}
	return out
}

func series(key string, from time.Time, step time.Duration, values ...float64) heartbeat.Series {
	s := heartbeat.Series{Key: key, Unit: device.Count}
	for i, v := range values {
		s.Points = append(s.Points, heartbeat.Point{Time: from.Add(time.Duration(i) * step), Value: v})
	}
	return s
}

func repeat(v float64, n int) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = v
	}
	return out
}

// TestChartFreshDeviceFillsWidth: with less than the chart's 24 hours of
// history (a device that just started), the time axis spans the data, so
// the line runs from the left edge of the plot to its right, with ticks
// labelled within it; with a full day it still spans the day.
func TestChartFreshDeviceFillsWidth(t *testing.T) {
	now := t0
	left, right := float64(padL), float64(chartW-padR)
	tests := []struct {
		name  string
		s     heartbeat.Series
		ticks []string
	}{
		{"half an hour", series("air.temperature", now.Add(-30*time.Minute), time.Minute, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 37, 38, 39, 40, 41, 42, 43, 44, 45, 46, 47, 48, 49, 50),
			[]string{"11:30", "11:40", "11:50", "12:00"}},
		{"twenty seconds at 1 s", series("board.load1", now.Add(-20*time.Second), time.Second, 0.1, 0.2, 0.3, 0.2, 0.1, 0.2, 0.3, 0.2, 0.1, 0.2, 0.3, 0.2, 0.1, 0.2, 0.3, 0.2, 0.1, 0.2, 0.3, 0.2, 0.1),
			[]string{"11:59:40", "12:00:00"}},
		{"two samples, the page a second later", series("board.mem_available", now.Add(-3*time.Second), 2*time.Second, 590, 591),
			[]string{"11:59:57", "12:00:00"}},
		{"a whole day", series("air.humidity", now.Add(-24*time.Hour), time.Hour, 50, 51, 52, 53, 54, 55, 56, 57, 58, 59, 60, 61, 62, 63, 64, 65, 66, 67, 68, 69, 70, 71, 72, 73, 74),
			[]string{"12:00", "18:00", "00:00", "06:00", "12:00"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			svg := Chart(tt.s, nil, nil, now.Add(-chartWindow), now, time.UTC)
			line := lineOf(t, svg)
			if len(line) < 2 {
				t.Fatalf("the chart draws %d vertices for %d readings:\n%s", len(line), len(tt.s.Points), svg)
			}
			if first, last := line[0].x, line[len(line)-1].x; first > left+1 || last < right-1 {
				t.Errorf("the line runs from x=%v to x=%v, want it to span the plot, %v to %v", first, last, left, right)
			}
			labels := regexp.MustCompile(`<text class="axis" x="[\d.]+" y="154" text-anchor="\w+">([\d:]+)</text>`).FindAllStringSubmatch(svg, -1)
			var got []string
			for _, l := range labels {
				got = append(got, l[1])
			}
			if tt.ticks != nil && strings.Join(got, " ") != strings.Join(tt.ticks, " ") {
				t.Errorf("time ticks %q, want %q", got, tt.ticks)
			}
			if len(got) > 6 {
				t.Errorf("%d time ticks, want at most 6: %q", len(got), got)
			}
		})
	}
}

// TestChartConstantSeries: a series that never changes (a flag such as
// board.throttled) draws a flat line across the plot at mid height, over a
// day and on a fresh device; a single reading still shows as a mark.
func TestChartConstantSeries(t *testing.T) {
	now := t0
	mid := float64(padT + (chartH-padT-padB)/2)
	for _, tt := range []struct {
		name string
		s    heartbeat.Series
	}{
		{"a day of zeros", series("board.throttled", now.Add(-24*time.Hour), time.Minute, repeat(0, 24*60)...)},
		{"three seconds of ones", series("board.clock_synced", now.Add(-3*time.Second), time.Second, 1, 1, 1, 1)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			svg := Chart(tt.s, nil, nil, now.Add(-chartWindow), now, time.UTC)
			line := lineOf(t, svg)
			if len(line) < 2 {
				t.Fatalf("a constant series draws %d vertices:\n%s", len(line), svg)
			}
			for _, v := range line {
				if v.y != line[0].y || v.y < mid-1 || v.y > mid+1 {
					t.Fatalf("vertex %v: want every vertex at y=%v (flat, mid height)", v, mid)
				}
			}
			if width := line[len(line)-1].x - line[0].x; width < float64(chartW-padL-padR)-2 {
				t.Errorf("the flat line is %v wide, want the plot's width %d", width, chartW-padL-padR)
			}
		})
	}
	one := Chart(series("board.clock_synced", now, time.Second, 1), nil, nil, now.Add(-chartWindow), now, time.UTC)
	if line := lineOf(t, one); len(line) < 2 || math.Abs(line[len(line)-1].x-line[0].x) < 2 {
		t.Errorf("a single reading draws %v, want a visible mark:\n%s", line, one)
	}
}
