package waterfall

import (
	"strings"
	"testing"

	"github.com/mcpchaos/mcpchaos/proxy/audit"
)

// TestRenderAChildRecordedBeforeItsParentWholeShape: a child that starts
// with its parent and was recorded first (a lower ID, as a tool call's
// upstream call is, whose trace row is written when the call ends) sorts
// before its parent, yet is drawn under it, and it is the slowest span even
// though it comes first in the sorted rows and its root is longer.
func TestRenderAChildRecordedBeforeItsParentWholeShape(t *testing.T) {
	rows := []audit.Row{
		{ID: 1, Kind: audit.KindUpstreamCall, SpanID: "U", ParentID: "R", Tool: "search", Start: at(0), Duration: msec(50), Status: "ok"},
		{ID: 2, Kind: audit.KindToolCallTrace, SpanID: "R", Tool: "call", Start: at(0), Duration: msec(100), Status: "ok"},
	}
	want := `trace 7K3M9QXZ  total 100.0ms  2 spans
session -  user -  project -  started 2026-05-01T12:00:00.000000Z

SPAN             NAME    STATUS  DURATION  0ms                                100.0ms
tool_call_trace  call    ok       100.0ms  |████████████████████████████████████████|
  upstream_call  search  ok        50.0ms  |████████████████████░░░░░░░░░░░░░░░░░░░░| ← slowest
slowest: upstream_call search (50.0ms)
`
	if got := render(t, rows); got != want {
		t.Errorf("Render mismatch\n--- got\n%s\n--- want\n%s", got, want)
	}
}

// TestRenderSlowestOfRootsOnlyIsTheLongestEvenWhenFirst: with only roots,
// the longest root is the slowest, also when it is the first row.
func TestRenderSlowestOfRootsOnlyIsTheLongestEvenWhenFirst(t *testing.T) {
	rows := []audit.Row{
		{ID: 1, Kind: audit.KindSessionRecreated, SpanID: "S", Start: at(0), Duration: msec(80)},
		{ID: 2, Kind: audit.KindToolCallTrace, SpanID: "R", Tool: "call", Start: at(10), Duration: msec(20)},
		{ID: 3, Kind: audit.KindToolCallTrace, SpanID: "T", Tool: "other", Start: at(20), Duration: msec(30)},
	}
	out := render(t, rows)
	if !strings.HasSuffix(out, "\nslowest: session_recreated (80.0ms)\n") ||
		!strings.HasSuffix(spanLine(t, out, "session_recreated", "-"), "← slowest") {
		t.Errorf("the first, longest root is not the slowest:\n%s", out)
	}
}

// TestNamesAndDetailsAreCutOnlyPastTheirWidth: a name of exactly maxName
// runes and a detail of exactly maxDetail runes are shown whole (multi-byte
// runes count as one); one rune more and they end in "…" at that width.
func TestNamesAndDetailsAreCutOnlyPastTheirWidth(t *testing.T) {
	exact := strings.Repeat("é", maxName)
	longer := strings.Repeat("ü", maxName+1)
	detail := strings.Repeat("ß", maxDetail)
	detailLonger := strings.Repeat("ø", maxDetail+1)
	rows := []audit.Row{
		{ID: 1, Kind: audit.KindToolCallTrace, SpanID: "R", Tool: "call", Start: at(0), Duration: msec(10), Status: "ok"},
		{ID: 2, Kind: audit.KindStageExecution, SpanID: "A", ParentID: "R", Stage: exact, Start: at(1), Duration: msec(1), Status: "error", Detail: detail},
		{ID: 3, Kind: audit.KindStageExecution, SpanID: "B", ParentID: "R", Stage: longer, Start: at(2), Duration: msec(1), Status: "error", Detail: detailLonger},
	}
	out := render(t, rows)
	spanLine(t, out, "stage_execution", exact)
	spanLine(t, out, "stage_execution", strings.Repeat("ü", maxName-1)+"…")
	if !strings.Contains(out, "\n    ✗ "+detail+"\n") {
		t.Errorf("a detail of exactly %d runes is not shown whole:\n%s", maxDetail, out)
	}
	if !strings.Contains(out, "\n    ✗ "+strings.Repeat("ø", maxDetail-1)+"…\n") {
		t.Errorf("a detail of %d runes is not cut to %d:\n%s", maxDetail+1, maxDetail, out)
	}
}
