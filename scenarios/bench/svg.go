package bench

import (
	"fmt"
	"html"
	"io"
	"math"
	"slices"
	"strings"
)

// The SVG's geometry, in pixels.
const (
	panelW, panelH = 250, 190
	padL, padR     = 52, 12
	padT, padB     = 28, 40
	headH          = 86
)

// metric is one quantity a panel draws.
type metric struct {
	title string
	unit  string
	value func(CurvePoint) (float64, bool)
	// log draws the axis in powers of ten: latencies span 0.5 ms at one
	// session to seconds at 256, and both ends must be readable.
	log bool
}

var curveMetrics = []metric{
	{"p50", "ms", func(p CurvePoint) (float64, bool) { return p.P50Ms, p.Calls > 0 && p.P50Ms > 0 }, true},
	{"p99", "ms", func(p CurvePoint) (float64, bool) { return p.P99Ms, p.Calls > 0 && p.P99Ms > 0 }, true},
	{"throughput", "req/s", func(p CurvePoint) (float64, bool) { return p.ReqPerSec, p.Calls > 0 }, false},
	{"RSS", "MiB", func(p CurvePoint) (float64, bool) { return float64(p.RSSBytes) / (1 << 20), p.RSSBytes >= 0 }, false},
}

// seriesColors are given to targets in the order they first appear.
var seriesColors = []string{"#d62728", "#1f77b4", "#2ca02c", "#9467bd", "#ff7f0e"}

// WriteCurveSVG draws c: one row of panels per sweep (p50, p99, req/s and
// RSS against the sweep's steps, spaced evenly), one line per target.
func WriteCurveSVG(w io.Writer, c *Curve) error {
	sweeps := []string{}
	colors := map[string]string{}
	var names []string
	for _, s := range c.Series {
		if !contains(sweeps, s.Sweep) {
			sweeps = append(sweeps, s.Sweep)
		}
		if _, ok := colors[s.Target]; !ok {
			colors[s.Target] = seriesColors[len(colors)%len(seriesColors)]
			names = append(names, s.Target)
		}
	}
	width := len(curveMetrics) * panelW
	height := headH + len(sweeps)*panelH
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="11">`+"\n", width, height, width, height)
	fmt.Fprintf(&b, `<rect width="%d" height="%d" fill="white"/>`+"\n", width, height)
	text(&b, 10, 18, "start", 14, "How cost grows: "+strings.Join(names, " and "))
	text(&b, 10, 36, "start", 11, "machine: "+c.Machine+"; load at the end "+c.LoadAtEnd+" (not a quiet machine unless the load says so)")
	stream := "no stream of their own"
	if c.Stream {
		stream = "each holding its standalone stream"
	}
	text(&b, 10, 52, "start", 11, fmt.Sprintf("one %v turn per target per step; idle sweep: %d sessions calling beside the idle ones (%s); RSS read at the end of each turn", c.Duration, c.IdleActive, stream))
	for i, n := range names {
		x := 10 + i*150
		fmt.Fprintf(&b, `<line x1="%d" y1="70" x2="%d" y2="70" stroke="%s" stroke-width="2"/>`+"\n", x, x+24, colors[n])
		text(&b, x+30, 74, "start", 11, n)
	}
	for row, sweep := range sweeps {
		var series []CurveSeries
		for _, s := range c.Series {
			if s.Sweep == sweep {
				series = append(series, s)
			}
		}
		for col, m := range curveMetrics {
			panel(&b, col*panelW, headH+row*panelH, sweep, m, series, colors)
		}
	}
	b.WriteString("</svg>\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// panel draws one metric along one sweep at (x0, y0).
func panel(b *strings.Builder, x0, y0 int, sweep string, m metric, series []CurveSeries, colors map[string]string) {
	// The x steps: the union of the series' steps, in order of appearance.
	var steps []int
	for _, s := range series {
		for _, p := range s.Points {
			if x := stepOf(sweep, p); index(steps, x) < 0 {
				steps = append(steps, x)
			}
		}
	}
	var values []float64
	for _, s := range series {
		for _, p := range s.Points {
			if v, ok := m.value(p); ok {
				values = append(values, v)
			}
		}
	}
	ax := newAxis(values, m.log)
	pw, ph := panelW-padL-padR, panelH-padT-padB
	left, bottom := x0+padL, y0+padT+ph
	title := fmt.Sprintf("%s (%s) by %s sessions", m.title, m.unit, sweep)
	if m.log {
		title += ", log"
	}
	text(b, x0+padL, y0+16, "start", 12, title)
	fmt.Fprintf(b, `<rect x="%d" y="%d" width="%d" height="%d" fill="none" stroke="#999"/>`+"\n", left, y0+padT, pw, ph)
	for _, t := range ax.ticks {
		y := float64(bottom) - ax.frac(t)*float64(ph)
		fmt.Fprintf(b, `<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#eee"/>`+"\n", left+1, y, left+pw-1, y)
		text(b, left-4, int(y)+4, "end", 10, short(t))
	}
	xAt := func(i int) float64 {
		if len(steps) <= 1 {
			return float64(left) + float64(pw)/2
		}
		return float64(left) + 10 + float64(i)*float64(pw-20)/float64(len(steps)-1)
	}
	for i, s := range steps {
		text(b, int(xAt(i)), bottom+14, "middle", 10, fmt.Sprint(s))
	}
	text(b, left+pw/2, bottom+30, "middle", 10, sweep+" sessions")
	for _, s := range series {
		var pts []string
		for _, p := range s.Points {
			v, ok := m.value(p)
			if !ok {
				continue
			}
			i := index(steps, stepOf(sweep, p))
			y := float64(bottom) - ax.frac(v)*float64(ph)
			pts = append(pts, fmt.Sprintf("%.1f,%.1f", xAt(i), y))
			fmt.Fprintf(b, `<circle cx="%.1f" cy="%.1f" r="2.5" fill="%s"><title>%s: %s</title></circle>`+"\n", xAt(i), y, colors[s.Target],
				html.EscapeString(s.Target), short(v))
		}
		if len(pts) > 1 {
			fmt.Fprintf(b, `<polyline points="%s" fill="none" stroke="%s" stroke-width="1.5"/>`+"\n", strings.Join(pts, " "), colors[s.Target])
		}
	}
}

func stepOf(sweep string, p CurvePoint) int {
	if sweep == SweepIdle {
		return p.Idle
	}
	return p.Active
}

func text(b *strings.Builder, x, y int, anchor string, size int, s string) {
	fmt.Fprintf(b, `<text x="%d" y="%d" text-anchor="%s" font-size="%d">%s</text>`+"\n", x, y, anchor, size, html.EscapeString(s))
}

// axis maps values to a fraction of a panel's height.
type axis struct {
	log    bool
	lo, hi float64 // the bottom and the top
	ticks  []float64
}

// newAxis is a linear axis from 0 to a round top above every value, or a
// log axis from the power of ten at or below the least value to the one at
// or above the greatest, with a tick at each power.
func newAxis(values []float64, log bool) axis {
	if !log {
		top := niceCeil(slices.Max(append([]float64{0}, values...)))
		return axis{lo: 0, hi: top, ticks: []float64{0, top / 4, top / 2, 3 * top / 4, top}}
	}
	lo, hi := math.Inf(1), 0.0
	for _, v := range values {
		if v > 0 {
			lo, hi = math.Min(lo, v), math.Max(hi, v)
		}
	}
	if hi == 0 {
		lo, hi = 1, 10
	}
	a := axis{log: true, lo: math.Pow(10, math.Floor(math.Log10(lo))), hi: math.Pow(10, math.Ceil(math.Log10(hi)))}
	if a.hi <= a.lo {
		a.hi = a.lo * 10
	}
	for t := a.lo; t <= a.hi*1.0001; t *= 10 {
		a.ticks = append(a.ticks, t)
	}
	return a
}

// frac is where v lies between the bottom (0) and the top (1), clamped.
func (a axis) frac(v float64) float64 {
	var f float64
	switch {
	case a.hi <= a.lo:
		return 0
	case a.log && v <= 0:
		return 0
	case a.log:
		f = (math.Log10(v) - math.Log10(a.lo)) / (math.Log10(a.hi) - math.Log10(a.lo))
	default:
		f = (v - a.lo) / (a.hi - a.lo)
	}
	return math.Min(math.Max(f, 0), 1)
}

// niceCeil is the smallest of 1, 2, 2.5, 5 × a power of ten at or above v
// (1 for v <= 0), so the axis's ticks are round.
func niceCeil(v float64) float64 {
	if v <= 0 {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(v)))
	for _, f := range []float64{1, 2, 2.5, 5, 10} {
		if f*p >= v {
			return f * p
		}
	}
	return 10 * p
}

func short(v float64) string {
	switch {
	case v > 0 && v < 0.01:
		return fmt.Sprintf("%.3g", v)
	case v >= 100:
		return fmt.Sprintf("%.0f", v)
	case v >= 10:
		return fmt.Sprintf("%.1f", v)
	default:
		return fmt.Sprintf("%.2f", v)
	}
}

func contains[T comparable](s []T, v T) bool { return index(s, v) >= 0 }

func index[T comparable](s []T, v T) int {
	for i, x := range s {
		if x == v {
			return i
		}
	}
	return -1
}
