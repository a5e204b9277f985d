// Package waterfall renders the audit rows of one request as a text waterfall:
// one line per span, indented by nesting, with a bar drawn to scale against the
// whole trace's time span, the slowest span marked, and degradations and
// errors spelled out under the span they belong to.
//
// Render is pure: the same rows always give the same bytes (times are shown in
// UTC, nothing depends on map order or the clock), so it can be held to golden
// strings in tests.
package waterfall

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/mcpchaos/mcpchaos/proxy/audit"
)

// BarWidth is the number of columns the whole trace's time span is drawn in.
const BarWidth = 40

const (
	barFull    = "█"
	barEmpty   = "░"
	indentStep = "  "
	// maxName caps the NAME column; longer names are cut with "…".
	maxName = 32
	// maxDetail caps an error detail excerpt.
	maxDetail = 160
	// slowestMark ends the line of the slowest span.
	slowestMark = "← slowest"
)

// Span is one row placed in the trace's tree.
type Span struct {
	Row      audit.Row
	Depth    int    // 0 for a root
	Root     bool   // no known parent (or caught in a parent cycle)
	OrphanOf string // the unknown ParentID this root claimed, if any
	children []int  // indices into the sorted rows, in start order
}

// Render writes the waterfall of the trace code's rows to w. Rows may come in
// any order; the input slice is not modified. With no rows it writes a single
// line saying so.
func Render(w io.Writer, code string, rows []audit.Row) error {
	if len(rows) == 0 {
		_, err := fmt.Fprintf(w, "trace %s: no audit rows\n", code)
		return err
	}
	spans, order := Tree(rows)

	t0, total := timeSpan(rows)
	slowest := findSlowest(spans, order)

	var b strings.Builder
	writeHeader(&b, code, spans, order, t0, total)

	// Column widths over every line, so the columns line up.
	kindW, nameW, statusW, durW := len("SPAN"), len("NAME"), len("STATUS"), len("DURATION")
	for _, i := range order {
		s := spans[i]
		kindW = max(kindW, len(indent(s.Depth))+runes(string(s.Row.Kind)))
		nameW = max(nameW, runes(name(s.Row)))
		statusW = max(statusW, runes(status(s.Row)))
		durW = max(durW, len(ms(dur(s.Row))))
	}

	// Column titles, with the scale over the bar: 0 at its left edge, the
	// trace's total at its right edge.
	left, right := "0ms", ms(total)
	scale := left + strings.Repeat(" ", max(1, BarWidth+2-len(left)-len(right))) + right
	fmt.Fprintf(&b, "%s  %s  %s  %s  %s\n",
		pad("SPAN", kindW), pad("NAME", nameW), pad("STATUS", statusW), padLeft("DURATION", durW), scale)

	for _, i := range order {
		s := spans[i]
		r := s.Row
		line := fmt.Sprintf("%s  %s  %s  %s  |%s|",
			pad(indent(s.Depth)+string(r.Kind), kindW),
			pad(name(r), nameW),
			pad(status(r), statusW),
			padLeft(ms(dur(r)), durW),
			bar(r.Start.Sub(t0), dur(r), total))
		if i == slowest {
			line += " " + slowestMark
		}
		if s.OrphanOf != "" {
			line += fmt.Sprintf(" (parent %s not in trace)", s.OrphanOf)
		}
		b.WriteString(line)
		b.WriteByte('\n')

		under := indent(s.Depth + 1)
		if r.Degraded {
			reason := oneLine(r.DegradedReason)
			if reason == "" {
				reason = "degraded (no reason recorded)"
			}
			fmt.Fprintf(&b, "%s⚠ %s\n", under, reason)
		}
		if isFailure(r) && strings.TrimSpace(r.Detail) != "" {
			fmt.Fprintf(&b, "%s✗ %s\n", under, excerpt(r.Detail, maxDetail))
		}
		if r.Bytes > 0 {
			fmt.Fprintf(&b, "%sanswer %d bytes: %s\n", under, r.Bytes, excerpt(r.Content, maxDetail))
		}
	}

	s := spans[slowest]
	fmt.Fprintf(&b, "slowest: %s (%s)\n", label(s.Row), ms(dur(s.Row)))
	_, err := io.WriteString(w, b.String())
	return err
}

// Tree sorts rows by start (then ID, then input order) and links them into a
// forest. It returns the spans and the render order (depth first, children by
// start). A row whose ParentID is empty, unknown, itself, or part of a cycle is
// a root; when two rows share a SpanID, children attach to the first.
func Tree(rows []audit.Row) ([]Span, []int) {
	sorted := slices.Clone(rows)
	slices.SortStableFunc(sorted, func(a, b audit.Row) int {
		if c := a.Start.Compare(b.Start); c != 0 {
			return c
		}
		return cmp.Compare(a.ID, b.ID)
	})
	spans := make([]Span, len(sorted))
	byID := make(map[string]int, len(sorted))
	for i, r := range sorted {
		spans[i].Row = r
		if _, dup := byID[r.SpanID]; !dup && r.SpanID != "" {
			byID[r.SpanID] = i
		}
	}
	for i, r := range sorted {
		p, ok := byID[r.ParentID]
		switch {
		case r.ParentID == "":
			spans[i].Root = true
		case !ok:
			spans[i].Root, spans[i].OrphanOf = true, r.ParentID
		case p == i:
			spans[i].Root = true
		default:
			spans[p].children = append(spans[p].children, i)
		}
	}

	order := make([]int, 0, len(spans))
	seen := make([]bool, len(spans))
	var walk func(i, depth int)
	walk = func(i, depth int) {
		seen[i] = true
		spans[i].Depth = depth
		order = append(order, i)
		for _, c := range spans[i].children {
			if !seen[c] {
				walk(c, depth+1)
			}
		}
	}
	for i := range spans {
		if spans[i].Root {
			walk(i, 0)
		}
	}
	// Rows caught in a parent cycle were reached from no root: the earliest
	// of each cycle becomes a root (shown after the other trees), so every
	// row is shown exactly once.
	for i := range spans {
		if !seen[i] {
			spans[i].Root = true
			walk(i, 0)
		}
	}
	return spans, order
}

// timeSpan returns the earliest start and the time from it to the latest end.
func timeSpan(rows []audit.Row) (time.Time, time.Duration) {
	t0, t1 := rows[0].Start, rows[0].Start.Add(dur(rows[0]))
	for _, r := range rows[1:] {
		if r.Start.Before(t0) {
			t0 = r.Start
		}
		if e := r.Start.Add(dur(r)); e.After(t1) {
			t1 = e
		}
	}
	return t0, t1.Sub(t0)
}

// findSlowest returns the longest non-root span (the first in render order on
// a tie); with only roots, the longest root.
func findSlowest(spans []Span, order []int) int {
	best := -1
	for _, nonRoot := range []bool{true, false} {
		for _, i := range order {
			if spans[i].Root == nonRoot {
				continue
			}
			if best < 0 || dur(spans[i].Row) > dur(spans[best].Row) {
				best = i
			}
		}
		if best >= 0 {
			return best
		}
	}
	return best
}

// bar draws a span at offset off lasting d against a trace lasting total:
// its start column is proportional to off, its width to d, and every span gets
// at least one column.
func bar(off, d, total time.Duration) string {
	start, width := 0, 1
	if total > 0 {
		start = int(int64(off) * BarWidth / int64(total))
		width = max(1, int((int64(d)*BarWidth+int64(total)/2)/int64(total)))
	}
	start = min(max(start, 0), BarWidth-1)
	width = min(width, BarWidth-start)
	return strings.Repeat(barEmpty, start) + strings.Repeat(barFull, width) +
		strings.Repeat(barEmpty, BarWidth-start-width)
}

func writeHeader(b *strings.Builder, code string, spans []Span, order []int, t0 time.Time, total time.Duration) {
	var session, user, project string
	// Prefer the request's own root row (tool_call_trace), then any row.
	for _, pass := range []func(audit.Row) bool{
		func(r audit.Row) bool { return r.Kind == audit.KindToolCallTrace },
		func(audit.Row) bool { return true },
	} {
		for _, i := range order {
			r := spans[i].Row
			if !pass(r) {
				continue
			}
			session = cmp.Or(session, r.SessionID)
			user = cmp.Or(user, r.User)
			project = cmp.Or(project, r.Project)
		}
	}
	var degraded, failed int
	for _, s := range spans {
		if s.Row.Degraded {
			degraded++
		}
		if isFailure(s.Row) {
			failed++
		}
	}
	fmt.Fprintf(b, "trace %s  total %s  %d %s", code, ms(total), len(spans), plural(len(spans), "span", "spans"))
	if degraded > 0 {
		fmt.Fprintf(b, ", %d degraded", degraded)
	}
	if failed > 0 {
		fmt.Fprintf(b, ", %d failed", failed)
	}
	b.WriteByte('\n')
	fmt.Fprintf(b, "session %s  user %s  project %s  started %s\n\n",
		orDash(session), orDash(user), orDash(project), t0.UTC().Format("2006-01-02T15:04:05.000000Z"))
}

// name is the most specific of stage, tool and server.
func name(r audit.Row) string {
	return truncate(oneLine(cmp.Or(r.Stage, r.Tool, r.Server, "-")), maxName)
}

// label names a span in prose: its kind and, if any, its name.
func label(r audit.Row) string {
	if n := name(r); n != "-" {
		return string(r.Kind) + " " + n
	}
	return string(r.Kind)
}

func status(r audit.Row) string { return orDash(oneLine(r.Status)) }

// isFailure reports whether the row did not end well.
func isFailure(r audit.Row) bool { return r.Status != "" && r.Status != audit.StatusOK }

// dur is the row's duration, never negative.
func dur(r audit.Row) time.Duration { return max(r.Duration, 0) }

// ms formats d in milliseconds with one decimal.
func ms(d time.Duration) string {
	return fmt.Sprintf("%.1fms", float64(d)/float64(time.Millisecond))
}

func indent(depth int) string { return strings.Repeat(indentStep, depth) }

func runes(s string) int { return utf8.RuneCountInString(s) }

func pad(s string, w int) string { return s + strings.Repeat(" ", max(0, w-runes(s))) }

func padLeft(s string, w int) string { return strings.Repeat(" ", max(0, w-runes(s))) + s }

func orDash(s string) string { return cmp.Or(s, "-") }

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// oneLine collapses all whitespace runs (newlines included) to single spaces.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// excerpt is s on one line, cut to n runes.
func excerpt(s string, n int) string { return truncate(oneLine(s), n) }

func truncate(s string, n int) string {
	if runes(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}
