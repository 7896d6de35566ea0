package web

import (
	"math"
	"regexp"
	"slices"
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

var bandRE = regexp.MustCompile(`<path class="band" d="([^"]*)"`)

// bandsOf returns the vertices of each of the chart's band shapes.
func bandsOf(svg string) [][]vertex {
	var out [][]vertex
	for _, m := range bandRE.FindAllStringSubmatch(svg, -1) {
		var vs []vertex
		for _, v := range regexp.MustCompile(`[ML]([-\d.]+) ([-\d.]+)`).FindAllStringSubmatch(m[1], -1) {
			a, _ := strconv.ParseFloat(v[1], 64)
			b, _ := strconv.ParseFloat(v[2], 64)
			vs = append(vs, vertex{a, b})
		}
		out = append(out, vs)
	}
	return out
}

// TestChartUsualBand: the usual band of each hour is drawn behind the line
// as one shape per run of known hours, its edges at each hour's low and
// high, a step where the hour changes; an hour still warming up (left
// out) breaks it; a band wider than the readings stays inside the plot;
// a series without one draws none.
func TestChartUsualBand(t *testing.T) {
	now := t0
	from := now.Add(-6 * time.Hour)
	s := series("air.temperature", from, time.Minute, repeat(20, 6*60)...)
	// Hours 06–08 and 10–11 known; 09 warming up. 08's band reaches above
	// and below every reading, so the axis must grow to hold it.
	for h, b := range map[int][2]float64{6: {19, 21}, 7: {19.5, 21.5}, 8: {10, 30}, 10: {18, 22}, 11: {18.5, 22.5}} {
		s.Usual = append(s.Usual, heartbeat.UsualHour{Time: time.Date(2026, 3, 14, h, 0, 0, 0, time.UTC), Usual: (b[0] + b[1]) / 2, Low: b[0], High: b[1]})
	}
	slices.SortFunc(s.Usual, func(a, b heartbeat.UsualHour) int { return a.Time.Compare(b.Time) })
	svg := Chart(s, nil, nil, now.Add(-chartWindow), now, time.UTC)
	bands := bandsOf(svg)
	if len(bands) != 2 {
		t.Fatalf("%d band shapes, want 2 (06–09 and 10–12, broken at the hour warming up):\n%s", len(bands), svg)
	}
	if strings.Index(svg, `class="band"`) > strings.Index(svg, `class="line"`) {
		t.Error("the band is drawn after the line: it must be behind it")
	}
	hourX := func(h int) float64 {
		return padL + float64(h-6)/6*float64(chartW-padL-padR)
	}
	line := lineOf(t, svg)
	yOf20 := line[0].y
	for i, want := range []struct{ x0, x1 float64 }{{hourX(6), hourX(9)}, {hourX(10), hourX(12)}} {
		lo, hi := math.Inf(1), math.Inf(-1)
		top, bottom := math.Inf(1), math.Inf(-1)
		for _, v := range bands[i] {
			lo, hi = math.Min(lo, v.x), math.Max(hi, v.x)
			top, bottom = math.Min(top, v.y), math.Max(bottom, v.y)
		}
		if math.Abs(lo-want.x0) > 1 || math.Abs(hi-want.x1) > 1 {
			t.Errorf("band %d spans x %v–%v, want %v–%v", i, lo, hi, want.x0, want.x1)
		}
		if top >= yOf20 || bottom <= yOf20 {
			t.Errorf("band %d spans y %v–%v: want the readings' 20 (y=%v) inside it", i, top, bottom, yOf20)
		}
		if top < padT || bottom > chartH-padB {
			t.Errorf("band %d spans y %v–%v, outside the plot %d–%d", i, top, bottom, padT, chartH-padB)
		}
	}
	// 08's band (10–30) is the widest: its edges are the shape's extremes,
	// and hour 07's (19.5–21.5) top is a step below 08's.
	var ys []float64
	for _, v := range bands[0] {
		if v.x > hourX(8)+1 && v.x < hourX(9)-1 {
			t.Errorf("a vertex inside hour 08 at %v: want steps only at the hours", v)
		}
		ys = append(ys, v.y)
	}
	if got := slices.Max(ys) - slices.Min(ys); got < 0.8*float64(chartH-padT-padB) {
		t.Errorf("the 10–30 band spans %v units of the %d-unit plot: want it to set the axis", got, chartH-padT-padB)
	}
	if n := len(bandsOf(Chart(series("air.humidity", from, time.Minute, repeat(50, 60)...), nil, nil, now.Add(-chartWindow), now, time.UTC))); n != 0 {
		t.Errorf("a series with no usual band draws %d band shapes", n)
	}
}
