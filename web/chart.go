package web

import (
	"fmt"
	"html"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/vigil-iot/vigil/heartbeat"
	"github.com/vigil-iot/vigil/rule"
)

// Span is a period a rule was firing, shaded on the charts of the readings
// it watches. An open span (zero To) lasts until the chart's end.
type Span struct {
	Rule     string
	From, To time.Time
}

// RuleLine is a rule's threshold drawn on a chart.
type RuleLine struct {
	Rule string
	rule.Threshold
}

// Chart geometry, in SVG user units; the SVG scales to its box.
const (
	chartW, chartH = 480, 160
	padL, padR     = 52, 6
	padT, padB     = 8, 20
)

// tickSteps are the spacings of a chart's time ticks, finest first.
var tickSteps = []time.Duration{time.Minute, 2 * time.Minute, 5 * time.Minute, 10 * time.Minute, 15 * time.Minute,
	30 * time.Minute, time.Hour, 2 * time.Hour, 3 * time.Hour, 6 * time.Hour}

// maxTicks is the most intervals between time ticks a chart shows.
const maxTicks = 5

// Chart draws s between from and to as an SVG line chart with the rules'
// thresholds as dashed lines and the firing spans shaded. The time axis
// starts at the first reading when that is later than from (a device that
// started less than a window ago), so the readings fill the width; ticks
// are spaced to fit the span and labelled in loc. A gap of more than three
// times the usual spacing breaks the line; a reading alone between gaps
// (or the only one) is a short dash. The last reading is drawn on to the
// end of the chart while the next one is not overdue.
func Chart(s heartbeat.Series, lines []RuleLine, spans []Span, from, to time.Time, loc *time.Location) string {
	var b strings.Builder
	lo, hi := math.Inf(1), math.Inf(-1)
	n := 0
	first := to
	for _, p := range s.Points {
		if p.Time.Before(from) || p.Time.After(to) {
			continue
		}
		lo, hi = math.Min(lo, p.Value), math.Max(hi, p.Value)
		first = minTime(first, p.Time)
		n++
	}
	if n > 0 {
		from = first
	}
	if to.Sub(from) < time.Second { // one reading: a minute's axis ending at it
		from = to.Add(-time.Minute)
	}
	for _, l := range lines {
		lo, hi = math.Min(lo, l.Value), math.Max(hi, l.Value)
	}
	band := usualIn(s.Usual, from, to)
	for _, u := range band {
		lo, hi = math.Min(lo, u.Low), math.Max(hi, u.High)
	}
	if math.IsInf(lo, 0) {
		lo, hi = 0, 1
	}
	if hi == lo {
		lo, hi = lo-1, hi+1
	}
	pad := (hi - lo) * 0.08
	lo, hi = lo-pad, hi+pad
	span := float64(to.Sub(from))
	x := func(t time.Time) float64 {
		return padL + float64(t.Sub(from))/span*(chartW-padL-padR)
	}
	y := func(v float64) float64 { return padT + (hi-v)/(hi-lo)*(chartH-padT-padB) }
	f := func(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) }

	fmt.Fprintf(&b, `<svg class="chart" viewBox="0 0 %d %d" role="img" aria-label="%s over %s" data-key="%s">`,
		chartW, chartH, html.EscapeString(s.Key), spanText(to.Sub(from)), html.EscapeString(s.Key))
	drawBand(&b, band, x, y)
	for _, sp := range spans {
		a, z := sp.From, sp.To
		if z.IsZero() || z.After(to) {
			z = to
		}
		if a.Before(from) {
			a = from
		}
		if !z.After(a) {
			continue
		}
		fmt.Fprintf(&b, `<rect class="firing" x="%s" y="%d" width="%s" height="%d"><title>%s firing</title></rect>`,
			f(x(a)), padT, f(max(x(z)-x(a), 1)), chartH-padT-padB, html.EscapeString(sp.Rule))
	}
	// Frame, min/max labels and the time ticks in loc.
	fmt.Fprintf(&b, `<rect class="frame" x="%d" y="%d" width="%d" height="%d"/>`, padL, padT, chartW-padL-padR, chartH-padT-padB)
	for _, v := range []float64{hi - pad, lo + pad} {
		fmt.Fprintf(&b, `<text class="axis" x="%d" y="%s" text-anchor="end">%s</text>`, padL-4, f(y(v)+4), html.EscapeString(short(v)))
	}
	ts := ticks(from, to, loc)
	for _, tick := range ts {
		fmt.Fprintf(&b, `<line class="grid" x1="%s" x2="%s" y1="%d" y2="%d"/>`, f(x(tick)), f(x(tick)), padT, chartH-padB)
		if len(ts) >= 2 {
			fmt.Fprintf(&b, `<text class="axis" x="%s" y="%d" text-anchor="middle">%s</text>`, f(x(tick)), chartH-6, tick.In(loc).Format("15:04"))
		}
	}
	if len(ts) < 2 { // under two minutes: the ends are labelled, to the second
		fmt.Fprintf(&b, `<text class="axis" x="%d" y="%d" text-anchor="start">%s</text><text class="axis" x="%d" y="%d" text-anchor="end">%s</text>`,
			padL, chartH-6, from.In(loc).Format("15:04:05"), chartW-padR, chartH-6, to.In(loc).Format("15:04:05"))
	}
	for _, l := range lines {
		fmt.Fprintf(&b, `<line class="threshold" data-rule="%s" x1="%d" x2="%d" y1="%s" y2="%s"/><text class="thlabel" x="%d" y="%s" text-anchor="end">%s %s %s</text>`,
			html.EscapeString(l.Rule), padL, chartW-padR, f(y(l.Value)), f(y(l.Value)),
			chartW-padR-4, f(y(l.Value)-4), html.EscapeString(l.Rule), html.EscapeString(l.Op), html.EscapeString(short(l.Value)))
	}
	if n > 0 {
		gap := 3 * typicalStep(s.Points)
		b.WriteString(`<path class="line" d="`)
		// One vertex per SVG unit at most: 24 hours of one-minute samples
		// are 1440 points for 422 units of width; each vertex is the mean
		// of the readings in its column.
		var prev time.Time
		var held float64 // the last reading's value
		col, sum, cnt, brk := -1, 0.0, 0, true
		run, last := 0, 0 // vertices in the current run, and the last one's column
		dash := func() {  // a run of one vertex draws nothing: make it a dash
			if run == 1 {
				fmt.Fprintf(&b, "h%d", pick(last+2 <= chartW-padR, 2, -2))
			}
		}
		flush := func() {
			if cnt == 0 {
				return
			}
			cmd := "L"
			if brk {
				dash()
				cmd, run = "M", 0
			}
			fmt.Fprintf(&b, "%s%d %s", cmd, col, f(y(sum/float64(cnt))))
			sum, cnt, brk = 0, 0, false
			run, last = run+1, col
		}
		for _, p := range s.Points {
			if p.Time.Before(from) || p.Time.After(to) {
				continue
			}
			c := int(x(p.Time))
			gapped := !prev.IsZero() && p.Time.Sub(prev) > gap
			if c != col || gapped {
				flush()
				col = c
			}
			if gapped {
				brk = true
			}
			sum += p.Value
			cnt++
			prev, held = p.Time, p.Value
		}
		flush()
		// The last reading holds until the next is due: drawn on to the
		// chart's end unless readings stopped (a gap), so a fresh device's
		// few samples reach now.
		if end := int(x(to)); to.Sub(prev) <= gap && end > last {
			fmt.Fprintf(&b, "L%d %s", end, f(y(held)))
			run, last = run+1, end
		}
		dash()
		b.WriteString(`"/>`)
	} else {
		fmt.Fprintf(&b, `<text class="axis" x="%d" y="%d" text-anchor="middle">no readings in the last 24 hours</text>`, chartW/2, chartH/2)
	}
	b.WriteString(`</svg>`)
	return b.String()
}

// usualIn is the hours of u that overlap from–to, each cut to it.
func usualIn(u []heartbeat.UsualHour, from, to time.Time) []usualSpan {
	var out []usualSpan
	for _, h := range u {
		a, z := h.Time, h.Time.Add(time.Hour)
		if !z.After(from) || !a.Before(to) {
			continue
		}
		if a.Before(from) {
			a = from
		}
		if z.After(to) {
			z = to
		}
		out = append(out, usualSpan{From: a, To: z, Low: h.Low, High: h.High})
	}
	return out
}

// usualSpan is the usual band over From–To.
type usualSpan struct {
	From, To  time.Time
	Low, High float64
}

// drawBand draws the usual band behind the line: one shape for each run
// of consecutive hours, its top edge along each hour's high left to right
// and its bottom along the lows back, stepping where the hour changes. An
// hour left out (still warming up) breaks the run.
func drawBand(b *strings.Builder, band []usualSpan, x func(time.Time) float64, y func(float64) float64) {
	f := func(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) }
	for i := 0; i < len(band); {
		j := i + 1
		for j < len(band) && band[j].From.Equal(band[j-1].To) {
			j++
		}
		run := band[i:j]
		b.WriteString(`<path class="band" d="`)
		for k, u := range run {
			fmt.Fprintf(b, "%s%s %sL%s %s", pick(k == 0, "M", "L"), f(x(u.From)), f(y(u.High)), f(x(u.To)), f(y(u.High)))
		}
		for k := len(run) - 1; k >= 0; k-- {
			u := run[k]
			fmt.Fprintf(b, "L%s %sL%s %s", f(x(u.To)), f(y(u.Low)), f(x(u.From)), f(y(u.Low)))
		}
		b.WriteString(`Z"><title>usual for the hour</title></path>`)
		i = j
	}
}

// ticks are the times between from and to, in loc, at the finest of
// tickSteps that gives at most maxTicks intervals, on whole multiples of it
// from local midnight.
func ticks(from, to time.Time, loc *time.Location) []time.Time {
	span := to.Sub(from)
	step := tickSteps[len(tickSteps)-1]
	for _, st := range tickSteps {
		if span/st <= maxTicks {
			step = st
			break
		}
	}
	l := from.In(loc)
	y, m, d := l.Date()
	k := (l.Hour()*60 + l.Minute()) / int(step/time.Minute)
	var out []time.Time
	for ; ; k++ {
		t := time.Date(y, m, d, 0, k*int(step/time.Minute), 0, 0, loc)
		if t.After(to) {
			return out
		}
		if !t.Before(from) {
			out = append(out, t)
		}
	}
}

// spanText says how long a chart's axis is: "24 hours", "35 minutes".
func spanText(d time.Duration) string {
	switch {
	case d >= 2*time.Hour:
		return strconv.Itoa(int(d.Round(time.Hour)/time.Hour)) + " hours"
	case d >= 2*time.Minute:
		return strconv.Itoa(int(d.Round(time.Minute)/time.Minute)) + " minutes"
	}
	return strconv.Itoa(int(d.Round(time.Second)/time.Second)) + " seconds"
}

func minTime(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

// typicalStep is the median spacing of the points (1 minute when unknown).
func typicalStep(pts []heartbeat.Point) time.Duration {
	if len(pts) < 3 {
		return time.Minute
	}
	d := make([]time.Duration, 0, len(pts)-1)
	for i := 1; i < len(pts); i++ {
		d = append(d, pts[i].Time.Sub(pts[i-1].Time))
	}
	slices.Sort(d)
	return max(d[len(d)/2], time.Second)
}

// short formats a value for an axis label: at most one decimal.
func short(v float64) string {
	if v == math.Trunc(v) && math.Abs(v) < 1e9 {
		return strconv.FormatFloat(v, 'f', 0, 64)
	}
	return strconv.FormatFloat(v, 'f', 1, 64)
}
