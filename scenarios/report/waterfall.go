package report

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/mcpchaos/mcpchaos/scenarios/evidence"
)

// The waterfall picture's geometry, in SVG user units (the picture scales
// to the page width through its viewBox).
const (
	svgWidth   = 1000.0
	labelX     = 8.0   // left edge of the span labels at depth 0
	indentStep = 16.0  // extra label indent per nesting level
	labelRight = 330.0 // labels are cut before they reach this
	durRight   = 405.0 // right edge of the duration column
	barX       = 420.0 // the trace's start
	barW       = 480.0 // the trace's whole extent
	offScaleX  = barX + barW + 40
	axisH      = 26.0 // the time axis above the rows
	rowH       = 22.0
	barH       = 14.0
	footH      = 46.0 // the budget label and the legend below the rows
	charW      = 7.3  // a 12px monospace glyph, for cutting labels
	minBarW    = 1.5  // a zero-length span is still drawn
	// stretchMax: a budget up to this many times the trace's extent is drawn
	// to scale, the axis running on to it; a later one is marked off scale
	// so the trace is not squashed to a sliver.
	stretchMax = 2
)

// Bar colours come from the stylesheet by status class.
var statusClasses = []struct{ status, class, legend string }{
	{evidence.StatusOK, "st-ok", "ok"},
	{evidence.StatusError, "st-error", "error"},
	{evidence.StatusTimeout, "st-timeout", "timeout"},
	{evidence.StatusRefused, "st-refused", "refused"},
	{evidence.StatusCancelled, "st-cancelled", "cancelled"},
}

func statusClass(status string) string {
	for _, s := range statusClasses {
		if s.status == status {
			return s.class
		}
	}
	return "st-other"
}

// waterfall is one request's picture, laid out and formatted for the template.
type waterfall struct {
	Trace   string
	Caption string
	Width   string
	Height  string
	ViewBox string
	Aria    string

	AxisX1, AxisX2, AxisY string
	GridTop, GridBottom   string
	Ticks                 []tick
	Rows                  []wfRow
	Budget                *budgetMark
	LegendY               string
	Legend                []legendItem
	// Notes spell out, under the picture, every degradation and failure.
	Notes []note
}

type tick struct{ X, Label, Anchor string }

type wfRow struct {
	Y, BandH, TextY, BarY, BarH string
	Stripe                      bool
	LabelX, Label               string
	DurX, Dur                   string
	BarX, BarW                  string
	Class                       string // bar classes: status, degraded
	Degraded                    bool
	Title                       string
	SpanID                      string
	// OffsetNs and DurationNs are the span's placement, for readers of the SVG.
	OffsetNs, DurationNs string
}

type budgetMark struct {
	X, Y1, Y2, LabelX, LabelY, Label, Anchor string
	OffScale                                 bool
	BreakX, BreakY                           string
}

type legendItem struct {
	X, Y, TextX, TextY, Class, Label string
}

type note struct {
	Degraded bool
	Text     string
}

// layoutWaterfall lays out the spans of one request (in the tree order its
// evidence adapter gives) against its budget; nil when there are none.
func layoutWaterfall(code string, spans []evidence.Span, budget time.Duration) *waterfall {
	if len(spans) == 0 {
		return nil
	}
	t0, total := extent(spans)
	// The axis runs over the trace, or on to its budget when that is near.
	scale := total
	if budget > total && budget <= stretchMax*total {
		scale = budget
	}

	n := float64(len(spans))
	rowsTop := axisH
	rowsBottom := rowsTop + n*rowH
	height := rowsBottom + footH
	wf := &waterfall{
		Trace:      code,
		Width:      num(svgWidth),
		Height:     num(height),
		ViewBox:    fmt.Sprintf("0 0 %s %s", num(svgWidth), num(height)),
		AxisX1:     num(barX),
		AxisX2:     num(barX + barW),
		AxisY:      num(axisH - 4),
		GridTop:    num(axisH - 4),
		GridBottom: num(rowsBottom),
	}

	// The time axis: 0, ¼, ½, ¾ and the whole trace.
	for i := 0; i <= 4; i++ {
		anchor := "middle"
		switch i {
		case 0:
			anchor = "start"
		case 4:
			anchor = "end"
		}
		wf.Ticks = append(wf.Ticks, tick{X: num(barX + barW*float64(i)/4), Label: ms(scale * time.Duration(i) / 4), Anchor: anchor})
	}

	var degraded, failed int
	for k, r := range spans {
		y := rowsTop + float64(k)*rowH
		off := r.Start.Sub(t0)
		d := max(r.Duration, 0)
		x, w := barX, barW
		if scale > 0 {
			x = barX + barW*float64(off)/float64(scale)
			w = barW * float64(d) / float64(scale)
		}
		w = max(w, minBarW)
		if x+w > barX+barW {
			w = max(barX+barW-x, minBarW)
		}
		lx := labelX + indentStep*float64(r.Depth)
		label := spanLabel(r)
		if r.Degraded {
			label = "⚠ " + label
		}
		label = truncate(label, int((labelRight-lx)/charW))
		class := "bar " + statusClass(r.Status)
		if r.Degraded {
			class += " degraded"
			degraded++
		}
		if r.Failed() {
			failed++
		}
		wf.Rows = append(wf.Rows, wfRow{
			Y: num(y), BandH: num(rowH), TextY: num(y + rowH/2 + 4), BarY: num(y + (rowH-barH)/2), BarH: num(barH),
			Stripe: k%2 == 1,
			LabelX: num(lx), Label: label,
			DurX: num(durRight), Dur: ms(d),
			BarX: num(x), BarW: num(w),
			Class: class, Degraded: r.Degraded,
			Title:  spanTitle(r, off),
			SpanID: r.ID, OffsetNs: strconv.FormatInt(int64(off), 10), DurationNs: strconv.FormatInt(int64(d), 10),
		})
		if r.Degraded {
			wf.Notes = append(wf.Notes, note{Degraded: true, Text: spanLabel(r) + ": " + cmp.Or(oneLine(r.Reason), "degraded (no reason recorded)")})
		}
		if r.Failed() && strings.TrimSpace(r.Detail) != "" {
			wf.Notes = append(wf.Notes, note{Text: spanLabel(r) + " " + r.Status + ": " + truncate(oneLine(r.Detail), 300)})
		}
	}

	// The budget, measured from the trace's start: a line where it falls on
	// the axis, or a marker past the right edge when the whole trace ended
	// long before it.
	if budget > 0 {
		b := &budgetMark{Y1: num(axisH - 4), Y2: num(rowsBottom + 4), LabelY: num(rowsBottom + 16), Label: "budget " + budget.String()}
		if budget <= scale {
			x := barX + barW*float64(budget)/float64(scale)
			b.X, b.LabelX = num(x), num(x)
			b.Anchor = "middle"
			if x > barX+barW-40 {
				b.Anchor = "end"
			}
		} else {
			b.OffScale = true
			b.X, b.LabelX, b.Anchor = num(offScaleX), num(svgWidth-4), "end"
			b.BreakX, b.BreakY = num((barX+barW+offScaleX)/2), num(axisH+8)
			b.Label += " ≫"
		}
		wf.Budget = b
	}

	// The legend: every status colour, and the degraded outline.
	ly := rowsBottom + 30
	wf.LegendY = num(ly)
	x := labelX
	items := make([]legendItem, 0, len(statusClasses)+2)
	for _, s := range statusClasses {
		items = append(items, legendItem{Class: "bar " + s.class, Label: s.legend})
	}
	items = append(items, legendItem{Class: "bar st-other", Label: "other"},
		legendItem{Class: "bar st-ok degraded", Label: "⚠ degraded (outlined)"})
	for _, it := range items {
		it.X, it.Y, it.TextX, it.TextY = num(x), num(ly), num(x+16), num(ly+10)
		wf.Legend = append(wf.Legend, it)
		x += 16 + float64(len([]rune(it.Label)))*charW + 18
	}

	// The caption: the trace against its budget, in words.
	var c strings.Builder
	fmt.Fprintf(&c, "trace %s · %d %s · %s", dash(code), len(spans), plural(len(spans), "span", "spans"), ms(total))
	if degraded > 0 {
		fmt.Fprintf(&c, " · %d degraded", degraded)
	}
	if failed > 0 {
		fmt.Fprintf(&c, " · %d not ok", failed)
	}
	switch {
	case budget > 0 && budget <= total:
		fmt.Fprintf(&c, " · %s of the %v budget: the budget falls inside the trace", pct(float64(total)/float64(budget)), budget)
	case budget > 0 && budget <= scale:
		fmt.Fprintf(&c, " · %s of the %v budget (axis drawn on to the budget)", pct(float64(total)/float64(budget)), budget)
	case budget > 0:
		fmt.Fprintf(&c, " · %s of the %v budget (budget marker off scale, right)", pct(float64(total)/float64(budget)), budget)
	default:
		fmt.Fprintf(&c, " · budget %v", budget)
	}
	wf.Caption = c.String()
	wf.Aria = fmt.Sprintf("waterfall of trace %s, %d %s over %s", dash(code), len(spans), plural(len(spans), "span", "spans"), ms(total))
	return wf
}

// extent returns the earliest start and the time from it to the latest end.
func extent(rows []evidence.Span) (time.Time, time.Duration) {
	t0, t1 := rows[0].Start, rows[0].Start.Add(max(rows[0].Duration, 0))
	for _, r := range rows[1:] {
		if r.Start.Before(t0) {
			t0 = r.Start
		}
		if e := r.Start.Add(max(r.Duration, 0)); e.After(t1) {
			t1 = e
		}
	}
	return t0, t1.Sub(t0)
}

// spanLabel is the span's kind and its most specific name.
func spanLabel(r evidence.Span) string {
	l := oneLine(r.Kind)
	if n := oneLine(r.Name); n != "" {
		l += " " + n
	}
	return cmp.Or(l, "span")
}

// spanTitle is the tooltip: everything the span says, one fact a line.
func spanTitle(r evidence.Span, off time.Duration) string {
	var b strings.Builder
	b.WriteString(spanLabel(r))
	fmt.Fprintf(&b, "\nstatus: %s · %s, starting at +%s", dash(r.Status), ms(max(r.Duration, 0)), ms(off))
	if r.Degraded {
		fmt.Fprintf(&b, "\n⚠ degraded: %s", cmp.Or(oneLine(r.Reason), "no reason recorded"))
	}
	if d := strings.TrimSpace(r.Detail); d != "" {
		fmt.Fprintf(&b, "\ndetail: %s", truncate(oneLine(d), 500))
	}
	for _, k := range slices.Sorted(maps.Keys(r.Attrs)) {
		if v := r.Attrs[k]; v != r.Name {
			fmt.Fprintf(&b, "\n%s: %s", oneLine(k), oneLine(v))
		}
	}
	fmt.Fprintf(&b, "\nspan %s", dash(r.ID))
	if r.Parent != "" {
		fmt.Fprintf(&b, " · parent %s", r.Parent)
		if r.Orphan {
			b.WriteString(" (not in this trace)")
		}
	}
	return b.String()
}

// num formats a coordinate with one decimal, without "-0.0".
func num(f float64) string {
	s := strconv.FormatFloat(f, 'f', 1, 64)
	if s == "-0.0" {
		return "0.0"
	}
	return s
}

func pct(f float64) string {
	switch {
	case f < 0.001:
		return "<0.1%"
	case f < 0.1:
		return strconv.FormatFloat(f*100, 'f', 1, 64) + "%"
	}
	return strconv.FormatFloat(f*100, 'f', 0, 64) + "%"
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
