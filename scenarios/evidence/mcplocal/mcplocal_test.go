package mcplocal

import (
	"context"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/mcpchaos/mcpchaos/proxy/audit"
	"github.com/mcpchaos/mcpchaos/scenarios/evidence"
)

var t0 = time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)

func at(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }

// TestSpansAreTheWaterfallInTreeOrder: the rows of one request, in any order,
// become the same spans, parents before children, with depth, names and
// facts taken from the row.
func TestSpansAreTheWaterfallInTreeOrder(t *testing.T) {
	rows := []audit.Row{
		{ID: 1, Kind: audit.KindToolCallTrace, CorrelationID: "7K3M9QXA", SpanID: "root", Tool: "docmost_search", Start: at(0), Duration: 100 * time.Millisecond, Status: audit.StatusOK},
		{ID: 2, Kind: audit.KindUpstreamCall, SpanID: "up", ParentID: "root", Server: "docmost", Tool: "search", Start: at(5), Duration: 40 * time.Millisecond, Status: audit.StatusOK},
		{ID: 3, Kind: audit.KindPipelineExecution, SpanID: "pipe", ParentID: "root", Start: at(48), Duration: 50 * time.Millisecond, Status: audit.StatusOK},
		{ID: 4, Kind: audit.KindStageExecution, SpanID: "stage", ParentID: "pipe", Stage: "paginate", Tool: "docmost_search", Start: at(50), Duration: 40 * time.Millisecond,
			Status: audit.StatusOK, Degraded: true, DegradedReason: "LLM timeout"},
		{ID: 5, Kind: audit.KindLLMAttempt, SpanID: "llm", ParentID: "stage", Start: at(51), Duration: 30 * time.Millisecond, Status: audit.StatusTimeout, Detail: "deadline exceeded"},
	}
	want := []evidence.Span{
		{ID: "root", Trace: "7K3M9QXA", Kind: "tool_call_trace", Name: "docmost_search", Attrs: map[string]string{"tool": "docmost_search"}, Start: at(0), Duration: 100 * time.Millisecond, Status: "ok"},
		{ID: "up", Parent: "root", Depth: 1, Kind: "upstream_call", Name: "search", Attrs: map[string]string{"server": "docmost", "tool": "search"}, Start: at(5), Duration: 40 * time.Millisecond, Status: "ok"},
		{ID: "pipe", Parent: "root", Depth: 1, Kind: "pipeline_execution", Start: at(48), Duration: 50 * time.Millisecond, Status: "ok"},
		{ID: "stage", Parent: "pipe", Depth: 2, Kind: "stage_execution", Name: "paginate", Attrs: map[string]string{"stage": "paginate", "tool": "docmost_search"}, Start: at(50), Duration: 40 * time.Millisecond,
			Status: "ok", Degraded: true, Reason: "LLM timeout"},
		{ID: "llm", Parent: "stage", Depth: 3, Kind: "llm_attempt", Start: at(51), Duration: 30 * time.Millisecond, Status: "timeout", Detail: "deadline exceeded"},
	}
	if got := Spans(rows); !reflect.DeepEqual(got, want) {
		t.Errorf("spans\n got %+v\nwant %+v", got, want)
	}
	rev := slices.Clone(rows)
	slices.Reverse(rev)
	if got := Spans(rev); !reflect.DeepEqual(got, want) {
		t.Errorf("the order rows arrive in changed the spans\n got %+v\nwant %+v", got, want)
	}
}

// TestSpansShowEveryRowOnce: a self-parent, a parent cycle and an unknown
// parent still give one span per row; only the unknown parent is an orphan.
func TestSpansShowEveryRowOnce(t *testing.T) {
	rows := []audit.Row{{SpanID: "a", Start: t0}, {SpanID: "b", ParentID: "a", Start: t0}, {SpanID: "c", ParentID: "c", Start: t0},
		{SpanID: "d", ParentID: "e", Start: t0}, {SpanID: "e", ParentID: "d", Start: t0}, {SpanID: "f", ParentID: "gone", Start: t0}}
	got := Spans(rows)
	var ids []string
	for _, s := range got {
		ids = append(ids, s.ID)
		if s.Orphan != (s.ID == "f") {
			t.Errorf("span %s: orphan %v", s.ID, s.Orphan)
		}
	}
	slices.Sort(ids)
	if !slices.Equal(ids, []string{"a", "b", "c", "d", "e", "f"}) {
		t.Errorf("spans %v, want each row once", ids)
	}
	if Spans(nil) != nil {
		t.Error("no rows gave spans")
	}
}

// eachGetter records which read the audit query used.
type eachGetter struct{ once, each int }

func (g *eachGetter) GetJSON(context.Context, string, any, *string) error { g.once++; return nil }
func (g *eachGetter) GetJSONFromEach(context.Context, string, any, *string) error {
	g.each++
	return nil
}

// TestTheAuditIsReadFromEveryReplica: on a target that can ask each of its
// processes (a cluster), the audit rows are read after every replica
// flushed its own, not from whichever replica the balancer picks.
func TestTheAuditIsReadFromEveryReplica(t *testing.T) {
	g := &eachGetter{}
	if _, err := Audit(context.Background(), g, "ABCDEFGH"); err != nil {
		t.Fatal(err)
	}
	if _, err := AuditSession(context.Background(), g, "S"); err != nil {
		t.Fatal(err)
	}
	if g.each != 2 || g.once != 0 {
		t.Fatalf("read from each replica %d times, from one %d times: want every read from each", g.each, g.once)
	}
}
