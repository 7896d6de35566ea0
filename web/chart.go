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

// Chart draws s between from and to as an SVG line chart with the rules'
// thresholds as dashed lines and the firing spans shaded. Hour ticks are
// labelled in loc. A gap of more than three times the usual spacing breaks
// the line.
func Chart(s heartbeat.Series, lines []RuleLine, spans []Span, from, to time.Time, loc *time.Location) string {
	var b strings.Builder
	lo, hi := math.Inf(1), math.Inf(-1)
	n := 0
	for _, p := range s.Points {
		if p.Time.Before(from) || p.Time.After(to) {
			continue
		}
		lo, hi = math.Min(lo, p.Value), math.Max(hi, p.Value)
		n++
	}
	for _, l := range lines {
		lo, hi = math.Min(lo, l.Value), math.Max(hi, l.Value)
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

	fmt.Fprintf(&b, `<svg class="chart" viewBox="0 0 %d %d" role="img" aria-label="%s over 24 hours" data-key="%s">`,
		chartW, chartH, html.EscapeString(s.Key), html.EscapeString(s.Key))
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
	// Frame, min/max labels and hour ticks every 6 hours in loc.
	fmt.Fprintf(&b, `<rect class="frame" x="%d" y="%d" width="%d" height="%d"/>`, padL, padT, chartW-padL-padR, chartH-padT-padB)
	for _, v := range []float64{hi - pad, lo + pad} {
		fmt.Fprintf(&b, `<text class="axis" x="%d" y="%s" text-anchor="end">%s</text>`, padL-4, f(y(v)+4), html.EscapeString(short(v)))
	}
	tick := from.In(loc).Truncate(time.Hour)
	for tick.Before(from) || tick.Hour()%6 != 0 {
		tick = tick.Add(time.Hour)
	}
	for ; !tick.After(to); tick = tick.Add(6 * time.Hour) {
		fmt.Fprintf(&b, `<line class="grid" x1="%s" x2="%s" y1="%d" y2="%d"/><text class="axis" x="%s" y="%d" text-anchor="middle">%s</text>`,
			f(x(tick)), f(x(tick)), padT, chartH-padB, f(x(tick)), chartH-6, tick.In(loc).Format("15:04"))
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
		col, sum, cnt, brk := -1, 0.0, 0, true
		flush := func() {
			if cnt == 0 {
				return
			}
			cmd := "L"
			if brk {
				cmd = "M"
			}
			fmt.Fprintf(&b, "%s%d %s", cmd, col, f(y(sum/float64(cnt))))
			sum, cnt, brk = 0, 0, false
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
			prev = p.Time
		}
		flush()
		b.WriteString(`"/>`)
	} else {
		fmt.Fprintf(&b, `<text class="axis" x="%d" y="%d" text-anchor="middle">no readings in the last 24 hours</text>`, chartW/2, chartH/2)
	}
	b.WriteString(`</svg>`)
	return b.String()
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
