// Package replay compares the waterfall a replay produced with the one a
// bundle recorded, naming every difference: a span missing or added, a span
// slower or faster, a different outcome, a ⚠ notice lost or gained.
package replay

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/mcpchaos/mcpchaos/proxy/audit"
)

// What names one kind of difference.
type What string

// The differences a comparison names.
const (
	SpanMissing      What = "span missing"
	SpanAdded        What = "span added"
	Slower           What = "slower"
	Faster           What = "faster"
	DifferentOutcome What = "different outcome"
	NoticeLost       What = "notice lost"
	NoticeGained     What = "notice gained"
	DifferentAnswer  What = "different answer"
)

// Difference is one way the replay differs from the recording, on one span.
type Difference struct {
	What What
	// Span names the span: kind, then the most specific of
	// server/tool/stage, then #N when several spans share that name.
	Span   string
	Detail string
}

func (d Difference) String() string { return fmt.Sprintf("%s: %s (%s)", d.What, d.Span, d.Detail) }

// Tolerance is how far a span's duration may move before it is named
// slower or faster: Ratio of the recorded duration, and at least Abs.
type Tolerance struct {
	Ratio float64
	Abs   time.Duration
}

// DefaultTolerance absorbs a loaded machine's scheduling, not a hang.
var DefaultTolerance = Tolerance{Ratio: 0.5, Abs: 250 * time.Millisecond}

// span is one row under its comparison key.
type span struct {
	key string
	row audit.Row
}

// keyed names every row, numbering the rows that share a name in start
// order.
func keyed(rows []audit.Row) []span {
	rs := append([]audit.Row(nil), rows...)
	sort.SliceStable(rs, func(i, j int) bool { return rs[i].Start.Before(rs[j].Start) })
	seen := map[string]int{}
	out := make([]span, 0, len(rs))
	for _, r := range rs {
		name := string(r.Kind)
		for _, part := range []string{r.Server, r.Tool, r.Stage} {
			if part != "" {
				name += " " + part
			}
		}
		seen[name]++
		if n := seen[name]; n > 1 {
			name += fmt.Sprintf(" #%d", n)
		}
		out = append(out, span{key: name, row: r})
	}
	return out
}

// Compare names every difference between the recorded rows and the
// replayed ones. scale divides the recorded durations first (a replay
// compressed N× expects every span N× shorter); 0 or 1 compares as is.
func Compare(recorded, replayed []audit.Row, scale int, tol Tolerance) []Difference {
	if scale < 1 {
		scale = 1
	}
	rec, rep := keyed(recorded), keyed(replayed)
	got := map[string]audit.Row{}
	for _, s := range rep {
		got[s.key] = s.row
	}
	var out []Difference
	matched := map[string]bool{}
	for _, s := range rec {
		r := s.row
		n, ok := got[s.key]
		if !ok {
			out = append(out, Difference{SpanMissing, s.key, fmt.Sprintf("recorded %s in %v, not in the replay", r.Status, r.Duration/time.Duration(scale))})
			continue
		}
		matched[s.key] = true
		ro, no := AttemptOutcome(r.Detail), AttemptOutcome(n.Detail)
		switch {
		case r.Status != n.Status:
			out = append(out, Difference{DifferentOutcome, s.key, fmt.Sprintf("recorded %s, replayed %s", r.Status, n.Status)})
		case r.Kind == audit.KindLLMAttempt && ro != no:
			out = append(out, Difference{DifferentOutcome, s.key, fmt.Sprintf("recorded %s, replayed %s", ro, no)})
		case r.Kind == audit.KindUpstreamCall && r.Status != audit.StatusOK && UpstreamFailure(r.Detail) != UpstreamFailure(n.Detail):
			out = append(out, Difference{DifferentOutcome, s.key, fmt.Sprintf("recorded %s, replayed %s", UpstreamFailure(r.Detail), UpstreamFailure(n.Detail))})
		}
		if r.Kind == audit.KindUpstreamCall && r.Bytes > 0 && n.Bytes > 0 && (r.Bytes != n.Bytes || r.Content != n.Content) {
			out = append(out, Difference{DifferentAnswer, s.key, fmt.Sprintf("recorded %d bytes %s, replayed %d bytes %s", r.Bytes, shapeText(r.Content), n.Bytes, shapeText(n.Content))})
		}
		switch {
		case r.Degraded && !n.Degraded:
			out = append(out, Difference{NoticeLost, s.key, fmt.Sprintf("recorded ⚠ %s, replayed without", r.DegradedReason)})
		case !r.Degraded && n.Degraded:
			out = append(out, Difference{NoticeGained, s.key, fmt.Sprintf("replayed ⚠ %s", n.DegradedReason)})
		}
		want := r.Duration / time.Duration(scale)
		slack := max(time.Duration(float64(want)*tol.Ratio), tol.Abs)
		switch {
		case n.Duration > want+slack:
			out = append(out, Difference{Slower, s.key, fmt.Sprintf("recorded %v, replayed %v", want, n.Duration)})
		case n.Duration < want-slack:
			out = append(out, Difference{Faster, s.key, fmt.Sprintf("recorded %v, replayed %v", want, n.Duration)})
		}
	}
	for _, s := range rep {
		if !matched[s.key] {
			out = append(out, Difference{SpanAdded, s.key, fmt.Sprintf("replayed %s in %v, not recorded", s.row.Status, s.row.Duration)})
		}
	}
	return out
}

// shapeText is an answer's content kinds as a difference names them.
func shapeText(content string) string {
	if content == "" {
		return "(no content)"
	}
	return content
}

// The ways an upstream call fails, as its row's text tells.
const (
	// FailureRefused: the connection was refused (nothing listened).
	FailureRefused = "a refused connection"
	// FailureNetTimeout: the network gave no answer in time (a dial or
	// read that timed out).
	FailureNetTimeout = "a network timeout"
	// FailureNetwork: the connection failed otherwise (reset, EOF, broken
	// pipe).
	FailureNetwork = "a network failure"
	// FailureResult: the tool answered with an error.
	FailureResult = "an error result"
)

// failureWords are what the proxy's text of an upstream call says when the
// connection failed rather than the tool, by kind, the narrower kinds
// first.
var failureWords = []struct {
	kind  string
	words []string
}{
	{FailureRefused, []string{"connection refused"}},
	{FailureNetTimeout, []string{"i/o timeout", "tls handshake timeout"}},
	{FailureNetwork, []string{"rejected by transport", ": eof", "connection reset", "broken pipe", "unexpected eof"}},
}

// UpstreamFailure classifies an upstream call's failure text.
func UpstreamFailure(detail string) string {
	d := strings.ToLower(detail)
	for _, k := range failureWords {
		for _, w := range k.words {
			if strings.Contains(d, w) {
				return k.kind
			}
		}
	}
	return FailureResult
}

// Answered reports whether the rows hold the request's root row (a
// tool_call_trace or mcp_request) that ended ok: the client got an answer.
// A request that hung past its client has no root row at all.
func Answered(rows []audit.Row) bool {
	for _, r := range rows {
		if (r.Kind == audit.KindToolCallTrace || r.Kind == audit.KindMCPRequest) && r.ParentID == "" {
			return r.Status == audit.StatusOK
		}
	}
	return false
}

// Verdict is what a replay showed.
type Verdict string

// The verdicts.
const (
	// Same: the replay has the recording's shape: no span missing or
	// added, no outcome or notice changed, no span slower or faster.
	Same Verdict = "same"
	// Fixed: the recorded request was not answered (or not ok) and the
	// replayed one was.
	Fixed Verdict = "fixed"
	// Changed: neither.
	Changed Verdict = "changed"
)

// Judge says which verdict the rows and their differences give.
func Judge(recorded, replayed []audit.Row, diffs []Difference) Verdict {
	switch {
	case len(diffs) == 0:
		return Same
	case !Answered(recorded) && Answered(replayed):
		return Fixed
	default:
		return Changed
	}
}

// PrintDifferences writes one line per difference, or that there is none.
func PrintDifferences(w io.Writer, diffs []Difference) {
	if len(diffs) == 0 {
		fmt.Fprintln(w, "no difference: the replay has the recording's shape")
		return
	}
	width := 0
	for _, d := range diffs {
		width = max(width, len(d.What))
	}
	for _, d := range diffs {
		fmt.Fprintf(w, "  %-*s  %s: %s\n", width, d.What, d.Span, d.Detail)
	}
}

// Beside writes the recorded and replayed spans in two columns, by span.
func Beside(w io.Writer, recorded, replayed []audit.Row, scale int) {
	if scale < 1 {
		scale = 1
	}
	rec, rep := keyed(recorded), keyed(replayed)
	byKey := map[string]audit.Row{}
	for _, s := range rep {
		byKey[s.key] = s.row
	}
	cell := func(r audit.Row, d time.Duration) string {
		c := fmt.Sprintf("%s %v", r.Status, d.Round(time.Millisecond))
		if r.Degraded {
			c += " ⚠"
		}
		return c
	}
	width := len("SPAN")
	for _, s := range append(append([]span(nil), rec...), rep...) {
		width = max(width, len(s.key))
	}
	fmt.Fprintf(w, "  %-*s  %-26s %s\n", width, "SPAN", "RECORDED", "REPLAYED")
	seen := map[string]bool{}
	for _, s := range rec {
		seen[s.key] = true
		now := "—"
		if n, ok := byKey[s.key]; ok {
			now = cell(n, n.Duration)
		}
		fmt.Fprintf(w, "  %-*s  %-26s %s\n", width, s.key, cell(s.row, s.row.Duration/time.Duration(scale)), now)
	}
	for _, s := range rep {
		if !seen[s.key] {
			fmt.Fprintf(w, "  %-*s  %-26s %s\n", width, s.key, "—", cell(s.row, s.row.Duration))
		}
	}
}
