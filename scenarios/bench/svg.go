package bench

import (
	"fmt"
	"html"
	"io"
	"math"
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
}

var curveMetrics = []metric{
	{"p50", "ms", func(p CurvePoint) (float64, bool) { return p.P50Ms, p.Calls > 0 }},
	{"p99", "ms", func(p CurvePoint) (float64, bool) { return p.P99Ms, p.Calls > 0 }},
	{"throughput", "req/s", func(p CurvePoint) (float64, bool) { return p.ReqPerSec, p.Calls > 0 }},
	{"RSS", "MiB", func(p CurvePoint) (float64, bool) { return float64(p.RSSBytes) / (1 << 20), p.RSSBytes >= 0 }},
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
	top := 0.0
	for _, s := range series {
		for _, p := range s.Points {
			if v, ok := m.value(p); ok {
				top = math.Max(top, v)
			}
		}
	}
	top = niceCeil(top)
	pw, ph := panelW-padL-padR, panelH-padT-padB
	left, bottom := x0+padL, y0+padT+ph
	text(b, x0+padL, y0+16, "start", 12, fmt.Sprintf("%s (%s) by %s sessions", m.title, m.unit, sweep))
	fmt.Fprintf(b, `<rect x="%d" y="%d" width="%d" height="%d" fill="none" stroke="#999"/>`+"\n", left, y0+padT, pw, ph)
	for k := 0; k <= 4; k++ {
		y := float64(bottom) - float64(k)*float64(ph)/4
		fmt.Fprintf(b, `<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#eee"/>`+"\n", left+1, y, left+pw-1, y)
		text(b, left-4, int(y)+4, "end", 10, short(top*float64(k)/4))
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
			y := float64(bottom)
			if top > 0 {
				y -= v / top * float64(ph)
			}
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
