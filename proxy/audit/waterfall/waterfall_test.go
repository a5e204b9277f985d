package waterfall

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcpchaos/mcpchaos/proxy/audit"
)

var t0 = time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)

func at(ms int) time.Time       { return t0.Add(time.Duration(ms) * time.Millisecond) }
func msec(ms int) time.Duration { return time.Duration(ms) * time.Millisecond }

// fixture is one request lasting exactly 1000ms, so one bar column is 25ms.
func fixture() []audit.Row {
	return []audit.Row{
		{ID: 1, Kind: audit.KindToolCallTrace, CorrelationID: "7K3M9QXZ", SpanID: "R", SessionID: "s-1", User: "alice",
			Project: "docmost", Server: "docmost", Tool: "docmost_search", Start: at(0), Duration: msec(1000), Status: "ok",
			Degraded: true, DegradedReason: "summary unavailable (llm budget spent)"},
		{ID: 2, Kind: audit.KindGateDecision, SpanID: "G", ParentID: "R", Start: at(0), Duration: 0, Status: "ok"},
		{ID: 3, Kind: audit.KindUpstreamCall, SpanID: "U", ParentID: "R", Server: "docmost", Tool: "search",
			Start: at(25), Duration: msec(475), Status: "ok"},
		{ID: 4, Kind: audit.KindPipelineExecution, SpanID: "P", ParentID: "R", Start: at(500), Duration: msec(500), Status: "ok"},
		{ID: 5, Kind: audit.KindStageExecution, SpanID: "S", ParentID: "P", Stage: "summarize-tree", Start: at(500),
			Duration: msec(450), Status: "ok", Degraded: true, DegradedReason: "summary unavailable (llm budget spent)"},
		{ID: 6, Kind: audit.KindLLMAttempt, SpanID: "L", ParentID: "S", Start: at(500), Duration: msec(250),
			Status: "timeout", Detail: "vllm-current/qwen3-32b:\n   context deadline exceeded"},
		{ID: 7, Kind: audit.KindUpstreamCall, SpanID: "O", ParentID: "ZZZZ", Server: "unifi", Start: at(750),
			Duration: msec(100), Status: "error", Detail: "boom"},
	}
}

const golden = `trace 7K3M9QXZ  total 1000.0ms  7 spans, 2 degraded, 2 failed
session s-1  user alice  project docmost  started 2026-05-01T12:00:00.000000Z

SPAN                  NAME            STATUS   DURATION  0ms                               1000.0ms
tool_call_trace       docmost_search  ok       1000.0ms  |████████████████████████████████████████|
  ⚠ summary unavailable (llm budget spent)
  gate_decision       -               ok          0.0ms  |█░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░|
  upstream_call       search          ok        475.0ms  |░███████████████████░░░░░░░░░░░░░░░░░░░░|
  pipeline_execution  -               ok        500.0ms  |░░░░░░░░░░░░░░░░░░░░████████████████████| ← slowest
    stage_execution   summarize-tree  ok        450.0ms  |░░░░░░░░░░░░░░░░░░░░██████████████████░░|
      ⚠ summary unavailable (llm budget spent)
      llm_attempt     -               timeout   250.0ms  |░░░░░░░░░░░░░░░░░░░░██████████░░░░░░░░░░|
        ✗ vllm-current/qwen3-32b: context deadline exceeded
upstream_call         unifi           error     100.0ms  |░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░████░░░░░░| (parent ZZZZ not in trace)
  ✗ boom
slowest: pipeline_execution (500.0ms)
`

func render(t *testing.T, rows []audit.Row) string {
	t.Helper()
	var b strings.Builder
	if err := Render(&b, "7K3M9QXZ", rows); err != nil {
		t.Fatalf("Render: %v", err)
	}
	return b.String()
}

func TestRenderGolden(t *testing.T) {
	if got := render(t, fixture()); got != golden {
		t.Errorf("Render mismatch\n--- got\n%s\n--- want\n%s", got, golden)
	}
}

// TestRenderDeterministic: any input order gives the same bytes, and the
// caller's slice is left alone.
func TestRenderDeterministic(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range 20 {
		rows := fixture()
		rng.Shuffle(len(rows), func(a, b int) { rows[a], rows[b] = rows[b], rows[a] })
		before := slices.Clone(rows)
		if got := render(t, rows); got != golden {
			t.Fatalf("shuffle %d: output differs from golden:\n%s", i, got)
		}
		if !slices.EqualFunc(rows, before, func(a, b audit.Row) bool { return a.SpanID == b.SpanID }) {
			t.Fatalf("shuffle %d: Render reordered the caller's slice", i)
		}
	}
}

// spanLine returns the line of the span whose kind and name start it (after
// indentation), failing if there is not exactly one.
func spanLine(t *testing.T, out, kind, name string) string {
	t.Helper()
	var found []string
	for _, l := range strings.Split(out, "\n") {
		f := strings.Fields(l)
		if len(f) >= 2 && f[0] == kind && f[1] == name {
			found = append(found, l)
		}
	}
	if len(found) != 1 {
		t.Fatalf("want one line for %s %s, got %d in:\n%s", kind, name, len(found), out)
	}
	return found[0]
}

func indentOf(l string) int { return len(l) - len(strings.TrimLeft(l, " ")) }

// barOf returns the bar of a span line as runes, without its frame.
func barOf(t *testing.T, l string) []rune {
	t.Helper()
	i, j := strings.Index(l, "|"), strings.LastIndex(l, "|")
	if i < 0 || j <= i {
		t.Fatalf("no bar in %q", l)
	}
	b := []rune(l[i+1 : j])
	if len(b) != BarWidth {
		t.Fatalf("bar is %d columns, want %d: %q", len(b), BarWidth, l)
	}
	return b
}

// extent returns the first filled column and the number of filled columns,
// checking the fill is one contiguous run.
func extent(t *testing.T, b []rune) (start, width int) {
	t.Helper()
	start = slices.Index(b, '█')
	if start < 0 {
		t.Fatalf("empty bar %q", string(b))
	}
	for width = 0; start+width < len(b) && b[start+width] == '█'; width++ {
	}
	if slices.Contains(b[start+width:], '█') {
		t.Fatalf("bar %q is not one run", string(b))
	}
	return start, width
}

func TestRenderNesting(t *testing.T) {
	out := render(t, fixture())
	for _, c := range []struct {
		kind, name string
		depth      int
	}{
		{"tool_call_trace", "docmost_search", 0},
		{"gate_decision", "-", 1},
		{"upstream_call", "search", 1},
		{"pipeline_execution", "-", 1},
		{"stage_execution", "summarize-tree", 2},
		{"llm_attempt", "-", 3},
		{"upstream_call", "unifi", 0}, // unknown parent: a root
	} {
		if got := indentOf(spanLine(t, out, c.kind, c.name)); got != 2*c.depth {
			t.Errorf("%s %s indented %d, want %d", c.kind, c.name, got, 2*c.depth)
		}
	}
}

func TestRenderChildrenOrderedByStart(t *testing.T) {
	rows := []audit.Row{
		{Kind: audit.KindToolCallTrace, SpanID: "R", Start: at(0), Duration: msec(100), Status: "ok"},
		{Kind: audit.KindStageExecution, SpanID: "C", ParentID: "R", Stage: "third", Start: at(60), Duration: msec(10)},
		{Kind: audit.KindStageExecution, SpanID: "A", ParentID: "R", Stage: "first", Start: at(10), Duration: msec(10)},
		{Kind: audit.KindStageExecution, SpanID: "B", ParentID: "R", Stage: "second", Start: at(30), Duration: msec(10)},
	}
	out := render(t, rows)
	first, second, third := strings.Index(out, "first"), strings.Index(out, "second"), strings.Index(out, "third")
	if first < 0 || !(first < second && second < third) {
		t.Errorf("children not in start order:\n%s", out)
	}
}

func TestRenderBarsProportional(t *testing.T) {
	rows := []audit.Row{
		{Kind: audit.KindToolCallTrace, SpanID: "R", Tool: "root", Start: at(0), Duration: msec(1000)},
		{Kind: audit.KindStageExecution, SpanID: "H", ParentID: "R", Stage: "half", Start: at(500), Duration: msec(250)},
		{Kind: audit.KindStageExecution, SpanID: "Q", ParentID: "R", Stage: "quarter", Start: at(250), Duration: msec(100)},
		{Kind: audit.KindStageExecution, SpanID: "Z", ParentID: "R", Stage: "instant", Start: at(1000), Duration: 0},
		{Kind: audit.KindStageExecution, SpanID: "F", ParentID: "R", Stage: "first", Start: at(0), Duration: msec(1)},
	}
	out := render(t, rows)
	for _, c := range []struct {
		name         string
		start, width int
	}{
		{"root", 0, BarWidth},
		{"half", BarWidth / 2, BarWidth / 4},     // starts at half the trace: at half the width
		{"quarter", BarWidth / 4, BarWidth / 10}, // 250ms of 1000 → col 10; 100ms → 4 cols
		{"instant", BarWidth - 1, 1},             // zero duration at the very end: one mark, inside the frame
		{"first", 0, 1},                          // shorter than a column: still one mark
	} {
		kind := "stage_execution"
		if c.name == "root" {
			kind = "tool_call_trace"
		}
		start, width := extent(t, barOf(t, spanLine(t, out, kind, c.name)))
		if start != c.start || width != c.width {
			t.Errorf("%s: bar at col %d width %d, want col %d width %d", c.name, start, width, c.start, c.width)
		}
	}
}

// TestRenderBarsOffsetFromEarliestStart: the time axis starts at the earliest
// row, not at the root, and ends at the latest end.
func TestRenderBarsOffsetFromEarliestStart(t *testing.T) {
	rows := []audit.Row{
		{Kind: audit.KindSessionRecreated, SpanID: "S", Start: at(0), Duration: msec(200)},
		{Kind: audit.KindToolCallTrace, SpanID: "R", Tool: "call", Start: at(200), Duration: msec(600)},
		{Kind: audit.KindUpstreamCall, SpanID: "U", ParentID: "R", Tool: "late", Start: at(600), Duration: msec(400)},
	}
	out := render(t, rows)
	if !strings.Contains(out, "total 1000.0ms") {
		t.Errorf("total should span earliest start to latest end:\n%s", out)
	}
	for _, c := range []struct {
		kind, name   string
		start, width int
	}{
		{"session_recreated", "-", 0, 8},
		{"tool_call_trace", "call", 8, 24},
		{"upstream_call", "late", 24, 16},
	} {
		start, width := extent(t, barOf(t, spanLine(t, out, c.kind, c.name)))
		if start != c.start || width != c.width {
			t.Errorf("%s: bar at col %d width %d, want col %d width %d", c.name, start, width, c.start, c.width)
		}
	}
}

func TestRenderZeroLengthTrace(t *testing.T) {
	rows := []audit.Row{
		{Kind: audit.KindToolCallTrace, SpanID: "R", Tool: "a", Start: at(0)},
		{Kind: audit.KindGateDecision, SpanID: "G", ParentID: "R", Tool: "b", Start: at(0)},
	}
	out := render(t, rows)
	for _, l := range []string{spanLine(t, out, "tool_call_trace", "a"), spanLine(t, out, "gate_decision", "b")} {
		if start, width := extent(t, barOf(t, l)); start != 0 || width != 1 {
			t.Errorf("zero-length trace: bar at %d width %d, want 0 and 1: %q", start, width, l)
		}
	}
}

func TestRenderSlowest(t *testing.T) {
	t.Run("non-root even when the root is longer", func(t *testing.T) {
		out := render(t, fixture())
		marked := 0
		for _, l := range strings.Split(out, "\n") {
			if strings.Contains(l, "← slowest") {
				marked++
				if f := strings.Fields(l); f[0] != "pipeline_execution" {
					t.Errorf("slowest marked on %q", l)
				}
			}
		}
		if marked != 1 {
			t.Errorf("want exactly one slowest mark, got %d:\n%s", marked, out)
		}
		if !strings.HasSuffix(out, "slowest: pipeline_execution (500.0ms)\n") {
			t.Errorf("footer missing:\n%s", out)
		}
	})
	t.Run("a deep leaf", func(t *testing.T) {
		rows := []audit.Row{
			{Kind: audit.KindToolCallTrace, SpanID: "R", Tool: "call", Start: at(0), Duration: msec(900)},
			{Kind: audit.KindPipelineExecution, SpanID: "P", ParentID: "R", Start: at(0), Duration: msec(10)},
			{Kind: audit.KindUpstreamCall, SpanID: "U", ParentID: "R", Server: "docmost", Tool: "search", Start: at(10), Duration: msec(880)},
		}
		out := render(t, rows)
		if l := spanLine(t, out, "upstream_call", "search"); !strings.HasSuffix(l, "← slowest") {
			t.Errorf("upstream call not marked: %q", l)
		}
		if !strings.HasSuffix(out, "slowest: upstream_call search (880.0ms)\n") {
			t.Errorf("footer wrong:\n%s", out)
		}
	})
	t.Run("tie goes to the first shown", func(t *testing.T) {
		rows := []audit.Row{
			{Kind: audit.KindToolCallTrace, SpanID: "R", Tool: "call", Start: at(0), Duration: msec(100)},
			{Kind: audit.KindStageExecution, SpanID: "B", ParentID: "R", Stage: "second", Start: at(50), Duration: msec(40)},
			{Kind: audit.KindStageExecution, SpanID: "A", ParentID: "R", Stage: "first", Start: at(0), Duration: msec(40)},
		}
		out := render(t, rows)
		if !strings.HasSuffix(spanLine(t, out, "stage_execution", "first"), "← slowest") ||
			strings.Contains(spanLine(t, out, "stage_execution", "second"), "slowest") {
			t.Errorf("tie not broken by order:\n%s", out)
		}
	})
	t.Run("only roots", func(t *testing.T) {
		rows := []audit.Row{{Kind: audit.KindToolCallTrace, SpanID: "R", Tool: "call", Start: at(0), Duration: msec(3)}}
		out := render(t, rows)
		if !strings.HasSuffix(out, "slowest: tool_call_trace call (3.0ms)\n") {
			t.Errorf("footer wrong:\n%s", out)
		}
	})
}

func TestRenderDegraded(t *testing.T) {
	out := render(t, fixture())
	lines := strings.Split(out, "\n")
	for i, l := range lines {
		if f := strings.Fields(l); len(f) > 1 && f[0] == "stage_execution" {
			if want := "      ⚠ summary unavailable (llm budget spent)"; lines[i+1] != want {
				t.Errorf("line under degraded stage = %q, want %q", lines[i+1], want)
			}
			return
		}
	}
	t.Fatalf("no stage line:\n%s", out)
}

func TestRenderDegradedWithoutReason(t *testing.T) {
	rows := []audit.Row{{Kind: audit.KindToolCallTrace, SpanID: "R", Start: at(0), Status: "ok", Degraded: true}}
	if out := render(t, rows); !strings.Contains(out, "\n  ⚠ degraded (no reason recorded)\n") {
		t.Errorf("degraded row without reason not flagged:\n%s", out)
	}
}

func TestRenderErrorDetail(t *testing.T) {
	long := "upstream said: " + strings.Repeat("x", 400)
	rows := []audit.Row{
		{Kind: audit.KindToolCallTrace, SpanID: "R", Tool: "call", Start: at(0), Duration: msec(10), Status: "error",
			Detail: "docmost: connection refused\nretry later"},
		{Kind: audit.KindUpstreamCall, SpanID: "U", ParentID: "R", Tool: "long", Start: at(0), Duration: msec(5), Status: "timeout", Detail: long},
		{Kind: audit.KindLLMAttempt, SpanID: "L", ParentID: "R", Tool: "fine", Start: at(1), Duration: msec(1), Status: "ok", Detail: "vllm-current/qwen3-32b"},
	}
	out := render(t, rows)
	if !strings.Contains(out, "\n  ✗ docmost: connection refused retry later\n") {
		t.Errorf("error detail missing or not on one line:\n%s", out)
	}
	var excerpt string
	for _, l := range strings.Split(out, "\n") {
		if strings.Contains(l, "upstream said") {
			excerpt = l
		}
	}
	if n := len([]rune(strings.TrimSpace(excerpt))); n > maxDetail+2 || !strings.HasSuffix(excerpt, "…") {
		t.Errorf("long detail not cut to an excerpt (%d runes): %q", n, excerpt)
	}
	if strings.Contains(out, "✗ vllm-current") {
		t.Errorf("detail of an ok row shown as an error:\n%s", out)
	}
	if !strings.Contains(out, "2 failed") {
		t.Errorf("header does not count failures:\n%s", out)
	}
}

func TestRenderUnknownParentIsRoot(t *testing.T) {
	rows := []audit.Row{
		{Kind: audit.KindToolCallTrace, SpanID: "R", Tool: "call", Start: at(0), Duration: msec(10)},
		{Kind: audit.KindUpstreamCall, SpanID: "U", ParentID: "GONE", Tool: "orphan", Start: at(1), Duration: msec(50)},
		{Kind: audit.KindStageExecution, SpanID: "C", ParentID: "U", Stage: "child-of-orphan", Start: at(2), Duration: msec(1)},
	}
	out := render(t, rows)
	l := spanLine(t, out, "upstream_call", "orphan")
	if indentOf(l) != 0 || !strings.Contains(l, "(parent GONE not in trace)") {
		t.Errorf("orphan not shown as a flagged root: %q", l)
	}
	if indentOf(spanLine(t, out, "stage_execution", "child-of-orphan")) != 2 {
		t.Errorf("orphan's own child not nested under it:\n%s", out)
	}
	// A root is never "slowest": the marked span is a non-root one.
	if !strings.HasSuffix(out, "slowest: stage_execution child-of-orphan (1.0ms)\n") {
		t.Errorf("orphan root counted as non-root for slowest:\n%s", out)
	}
}

// TestRenderBrokenLinks: self-parents, parent cycles and duplicate span ids
// still show every row exactly once.
func TestRenderBrokenLinks(t *testing.T) {
	rows := []audit.Row{
		{Kind: audit.KindToolCallTrace, SpanID: "R", Tool: "root", Start: at(0), Duration: msec(10)},
		{Kind: audit.KindStageExecution, SpanID: "S", ParentID: "S", Stage: "self", Start: at(1)},
		{Kind: audit.KindStageExecution, SpanID: "A", ParentID: "B", Stage: "cycle-a", Start: at(2)},
		{Kind: audit.KindStageExecution, SpanID: "B", ParentID: "A", Stage: "cycle-b", Start: at(3)},
		{Kind: audit.KindUpstreamCall, SpanID: "R", ParentID: "R", Tool: "dup-id", Start: at(4)},
		{Kind: audit.KindUpstreamCall, SpanID: "", Tool: "no-id", Start: at(5)},
	}
	out := render(t, rows)
	for _, r := range rows {
		spanLine(t, out, string(r.Kind), name(r)) // exactly one line each
	}
	if got := strings.Count(out, "|\n") + strings.Count(out, "| "); got != len(rows) {
		t.Errorf("%d span lines for %d rows:\n%s", got, len(rows), out)
	}
	if indentOf(spanLine(t, out, "stage_execution", "self")) != 0 {
		t.Errorf("self-parented span should be a root:\n%s", out)
	}
	if indentOf(spanLine(t, out, "upstream_call", "dup-id")) != 2 {
		t.Errorf("a duplicate span id nests under the first row with that id:\n%s", out)
	}
	a, b := spanLine(t, out, "stage_execution", "cycle-a"), spanLine(t, out, "stage_execution", "cycle-b")
	if indentOf(a) != 0 || indentOf(b) != 2 {
		t.Errorf("cycle should be broken at its earliest row:\n%s", out)
	}
}

func TestRenderEmpty(t *testing.T) {
	if got := render(t, nil); got != "trace 7K3M9QXZ: no audit rows\n" {
		t.Errorf("got %q", got)
	}
}

func TestRenderHeader(t *testing.T) {
	rows := []audit.Row{
		// An earlier row without the request's identity, and one that disagrees.
		{Kind: audit.KindSessionRecreated, SpanID: "X", SessionID: "sess-9", Start: at(0), Duration: msec(1)},
		{Kind: audit.KindToolCallTrace, SpanID: "R", SessionID: "sess-9", User: "bob", Project: "unifi", Start: at(1), Duration: msec(3)},
		{Kind: audit.KindUpstreamCall, SpanID: "U", ParentID: "R", User: "mallory", Start: at(2), Duration: msec(1)},
	}
	out := render(t, rows)
	want := "trace 7K3M9QXZ  total 4.0ms  3 spans\nsession sess-9  user bob  project unifi  started 2026-05-01T12:00:00.000000Z\n"
	if !strings.HasPrefix(out, want) {
		t.Errorf("header:\n%s\nwant prefix:\n%s", out, want)
	}
	rows = []audit.Row{{Kind: audit.KindGateDecision, SpanID: "G", Start: at(0).In(time.FixedZone("X", 3600))}}
	if out := render(t, rows); !strings.Contains(out, "1 span\nsession -  user -  project -  started 2026-05-01T12:00:00.000000Z\n") {
		t.Errorf("missing identity should show dashes, time in UTC:\n%s", out)
	}
}

// An upstream call's answer shows its shape under the call: size and
// content kinds, as its row keeps them.
func TestRenderAnswerShape(t *testing.T) {
	rows := []audit.Row{
		{Kind: audit.KindToolCallTrace, SpanID: "R", Start: at(0), Duration: 5 * time.Millisecond, Status: "ok"},
		{Kind: audit.KindUpstreamCall, SpanID: "U", ParentID: "R", Server: "wiki", Tool: "get_page", Start: at(1), Duration: 3 * time.Millisecond,
			Status: "ok", Bytes: 6000, Content: "text:1,image:1,structured"},
	}
	if out := render(t, rows); !strings.Contains(out, "\n    answer 6000 bytes: text:1,image:1,structured\n") {
		t.Errorf("no answer shape under the upstream call:\n%s", out)
	}
}
