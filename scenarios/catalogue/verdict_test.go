package catalogue

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	fakellm "github.com/mcpchaos/mcpchaos/fakes/llm"
	"github.com/mcpchaos/mcpchaos/scenarios/evidence"
	"github.com/mcpchaos/mcpchaos/scenarios/evidence/mcplocal"
	"github.com/mcpchaos/mcpchaos/scenarios/harness"
)

// Tolerance is what a bounded answer may take beyond its budget: an answer
// that takes exactly its budget and the tolerance is in time, one a
// nanosecond later is late.
func TestAnAnswerAtItsBudgetAndToleranceIsInTime(t *testing.T) {
	s := byName(t, "none × small tools/call")
	kv := harness.DefaultBounds()
	edge := s.Budget(kv) + Tolerance
	if r := s.Judge(kv, Observation{Latency: edge, Trace: tc}); !r.Pass {
		t.Errorf("an answer after exactly budget + tolerance (%v) failed: %s", edge, r.Reason)
	}
	if r := s.Judge(kv, Observation{Latency: edge + 1, Trace: tc}); r.Pass || !hasBreach(r, Generic, PromiseBudget) {
		t.Errorf("an answer a nanosecond past budget + tolerance must break %q: %s", PromiseBudget, r.Reason)
	}
}

// A late answer the machine's load did not stall is the proxy's own
// lateness: its breach blames no load.
func TestALateAnswerWithoutStallsBlamesNoLoad(t *testing.T) {
	s := byName(t, "none × small tools/call")
	kv := harness.DefaultBounds()
	r := s.Judge(kv, Observation{Latency: s.Budget(kv) + Tolerance + time.Second, Trace: tc})
	if r.Pass || !hasBreach(r, Generic, PromiseBudget) {
		t.Fatalf("an answer a second late passed: %s", r.Reason)
	}
	if strings.Contains(r.Reason, "load") {
		t.Errorf("a late answer with no stall blames the machine's load: %s", r.Reason)
	}
}

// logged is a target whose own output the harness reads.
type logged struct {
	bare
	logs string
}

func (l logged) Logs() string { return l.logs }

// withObservation is s whose operation observes o, whatever the world.
func withObservation(s Scenario, o Observation) Scenario {
	s.Operation = Operation{Name: s.Operation.Name, Do: func(context.Context, *harness.Env) Observation { return o }}
	return s
}

// A failing row keeps the end of the proxy's own output, for the report; a
// passing one keeps none.
func TestAFailingRowKeepsTheProxysLog(t *testing.T) {
	s := byName(t, "none × small tools/call")
	target := logged{logs: "starting\nserving on :8080\n"}
	env := harness.JudgedOn(target, harness.DefaultBounds())
	// Spans read already: the verdict asks no evidence adapter.
	ok := Observation{Trace: tc, Text: "updated", Spans: []evidence.Span{}}
	if r := withObservation(s, ok).runIn(context.Background(), env); !r.Pass || r.Log != "" {
		t.Errorf("a passing row: pass=%v, log %q; want a pass keeping no log (%s)", r.Pass, r.Log, r.Reason)
	}
	bad := Observation{Trace: tc, IsError: true, Text: "boom", Spans: []evidence.Span{}}
	if r := withObservation(s, bad).runIn(context.Background(), env); r.Pass || r.Log != target.logs {
		t.Errorf("a failing row: pass=%v, log %q; want a failure keeping the proxy's log %q", r.Pass, r.Log, target.logs)
	}
	if r := withObservation(s, bad).runIn(context.Background(), harness.JudgedOn(bare{}, harness.DefaultBounds())); r.Log != "" {
		t.Errorf("a failing row on a target whose log is not read kept %q", r.Log)
	}
}

// The proxy's log a failing row keeps is its end, at most keptLog bytes,
// from the start of a line; a shorter log is kept whole.
func TestLastBytesIsTheEndFromALineBoundary(t *testing.T) {
	for _, c := range []struct {
		name, s string
		n       int
		want    string
	}{
		{"shorter than the bound", "a\nb\n", 10, "a\nb\n"},
		{"exactly the bound", "ab\ncd\n", 6, "ab\ncd\n"},
		{"cut inside a line", "first line\nsecond\nthird\n", 10, "third\n"},
		{"cut just before a newline", "0123\n5678\nabc\n", 10, "5678\nabc\n"},
		{"cut at the start of a line", "0123\n5678\n", 5, "5678\n"},
		{"cut inside the one line", "a long line without a break", 6, " break"},
	} {
		got := lastBytes(c.s, c.n)
		if got != c.want {
			t.Errorf("%s: lastBytes(%q, %d) = %q, want %q", c.name, c.s, c.n, got, c.want)
		}
		if len(got) > c.n || !strings.HasSuffix(c.s, got) {
			t.Errorf("%s: %q is not the end of %q within %d bytes", c.name, got, c.s, c.n)
		}
	}
	long := strings.Repeat("a log line of the proxy\n", 1000)
	if got := proxyLog(logged{logs: long}); len(got) > keptLog || len(got) == 0 || !strings.HasSuffix(long, got) || !strings.HasPrefix(got, "a log line") {
		t.Errorf("a long log kept %d bytes from %q, want its end, whole lines, within %d", len(got), excerpt(got), keptLog)
	}
}

// WithFault names the fault the catalogue row had, however often it is
// replaced: the name stays the catalogue's.
func TestWithFaultNamesTheCataloguesFault(t *testing.T) {
	s := byName(t, "none × small tools/call")
	once := s.WithFault(harness.LinkDown{})
	if want := "down × small tools/call in place of none"; once.Name() != want {
		t.Errorf("replaced once: %q, want %q", once.Name(), want)
	}
	twice := once.WithFault(harness.Blackhole{})
	if want := "blackhole × small tools/call in place of none"; twice.Name() != want {
		t.Errorf("replaced twice: %q, want %q", twice.Name(), want)
	}
}

// OperationLimit is far past the budget: several times the budget and its
// tolerance, and ten seconds more, so only a proxy that does not answer at
// all meets it.
func TestOperationLimitIsFarPastTheBudget(t *testing.T) {
	for _, budget := range []time.Duration{0, 100 * time.Millisecond, 1500 * time.Millisecond, time.Minute, 10 * time.Minute} {
		limit := OperationLimit(budget)
		if limit < 2*(budget+Tolerance) || limit < budget+Tolerance+10*time.Second {
			t.Errorf("budget %v: the client gives up after %v, not far past budget + tolerance", budget, limit)
		}
	}
}

// auditRow is one row as an audit API serves it: the fields the report's
// spans are read from.
type auditRow struct {
	ID            int64  `json:"id"`
	Kind          string `json:"kind"`
	CorrelationID string `json:"correlationId"`
	SpanID        string `json:"spanId"`
	Tool          string `json:"tool,omitempty"`
}

// auditServer serves an audit API with rows for one trace code, counting
// what it is asked.
func auditServer(t *testing.T, code string, rows []auditRow) (string, *atomic.Int32) {
	t.Helper()
	var asked atomic.Int32
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		asked.Add(1)
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Path != "/api/v1/audit" || r.URL.Query().Get("trace") != code {
			w.WriteHeader(http.StatusNotFound)
			_ = json.NewEncoder(w).Encode(map[string]string{"error": "no such trace"})
			return
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"rows": rows})
	}))
	t.Cleanup(ts.Close)
	return ts.URL, &asked
}

// The spans of an answer's trace code are read from the proxy's evidence
// for the report when the operation did not read them; an answer with no
// trace code asks nothing, and spans the operation read are kept as read.
func TestRunReadsTheSpansOfTheAnswersTraceCode(t *testing.T) {
	s := byName(t, "none × small tools/call")
	url, asked := auditServer(t, tc, []auditRow{{ID: 1, Kind: "tool_call_trace", CorrelationID: tc, SpanID: "root", Tool: "docmost_update_page"}})
	env := harness.JudgedOn(served{url: url}, harness.DefaultBounds())

	r := withObservation(s, Observation{Trace: tc, Text: "updated"}).runIn(context.Background(), env)
	if !r.Pass || len(r.Spans) != 1 || r.Spans[0].ID != "root" || r.Spans[0].Trace != tc {
		t.Errorf("an answer with trace code %s: spans %+v (pass=%v %s), want its one audit row", tc, r.Spans, r.Pass, r.Reason)
	}
	asked.Store(0)
	r = withObservation(s, Observation{Text: "updated"}).runIn(context.Background(), env)
	if n := asked.Load(); n != 0 || len(r.Spans) != 0 {
		t.Errorf("an answer without a trace code asked the evidence %d times, spans %+v", n, r.Spans)
	}
	own := []evidence.Span{{ID: "own", Trace: tc}}
	r = withObservation(s, Observation{Trace: tc, Text: "updated", Spans: own}).runIn(context.Background(), env)
	if n := asked.Load(); n != 0 || len(r.Spans) != 1 || r.Spans[0].ID != "own" {
		t.Errorf("spans the operation read were read again (%d times): %+v", n, r.Spans)
	}
}

// A text a breach quotes is quoted whole up to 160 bytes; a longer one is
// cut there, and says it was.
func TestExcerptQuotesShortTextsWhole(t *testing.T) {
	short := strings.Repeat("x", 160)
	if got := excerpt(short); got != short {
		t.Errorf("a 160-byte text was quoted as %q", got)
	}
	long := short + "y"
	if got := excerpt(long); got != short+"…" {
		t.Errorf("a 161-byte text was quoted as %q, want its first 160 bytes and …", got)
	}
}

// The slow LLM of the degraded-titles rows answers after the pagination
// budget of the bounds a world runs under, too late for its titles to be
// used: it is a fault the row can only survive by falling back.
func TestTheSlowLLMOfTheFallbackRowsOutlastsThePaginationBudget(t *testing.T) {
	rows := 0
	for _, s := range All() {
		f, ok := s.Fault.(harness.LLMFault)
		if !ok || f.Step.Kind != fakellm.Slow || checkerName(s.Expect) != "degradedTitles" {
			continue
		}
		rows++
		if budget := s.Budget(harness.CompressedBounds()); f.Step.Delay <= budget+Tolerance {
			t.Errorf("%s: the LLM answers after %v, within the budget %v + tolerance: its titles could arrive in time", s.Name(), f.Step.Delay, budget)
		}
	}
	if rows == 0 {
		t.Fatal("no degraded-titles row has a slow LLM")
	}
}

// withRows reads the audit rows of an answer's trace code as its spans;
// an operation that failed, or whose answer has no code, asks nothing,
// and rows that cannot be read are a promise the row sees broken.
func TestWithRowsReadsTheAnswersRows(t *testing.T) {
	url, asked := auditServer(t, tc, []auditRow{{ID: 1, Kind: "tool_call_trace", CorrelationID: tc, SpanID: "root"}})
	env := harness.JudgedOn(served{url: url}, harness.DefaultBounds())
	observing := func(o Observation) Operation {
		return withRows(Operation{Name: "op", Do: func(context.Context, *harness.Env) Observation { return o }})
	}
	ctx := context.Background()
	if o := observing(Observation{Trace: tc}).Do(ctx, env); len(o.Spans) != 1 || o.Spans[0].ID != "root" || len(o.Broken) != 0 {
		t.Errorf("an answer with its code: spans %+v, broken %v", o.Spans, o.Broken)
	}
	asked.Store(0)
	for name, o := range map[string]Observation{"a failed operation": {Trace: tc, Err: context.DeadlineExceeded}, "an answer without a code": {}} {
		if got := observing(o).Do(ctx, env); asked.Load() != 0 || len(got.Spans) != 0 || len(got.Broken) != 0 {
			t.Errorf("%s: asked %d times, spans %+v, broken %v", name, asked.Load(), got.Spans, got.Broken)
		}
	}
	if o := observing(Observation{Trace: "HGFEDCBA"}).Do(ctx, env); len(o.Broken) != 1 || !strings.HasPrefix(o.Broken[0], "audit: ") {
		t.Errorf("rows that cannot be read: broken %v, want the audit's error", o.Broken)
	}
}

// The rows a check looks for are found by kind and status (hasRow), by
// kind (gateRow), by kind and stage (stageRow), and by nothing less.
func TestRowsAreFoundByWhatNamesThem(t *testing.T) {
	rows := []evidence.Span{
		{ID: "a", Kind: mcplocal.KindToolCall, Status: evidence.StatusOK},
		{ID: "b", Kind: mcplocal.KindUpstreamCall, Status: evidence.StatusRefused},
		{ID: "c", Kind: mcplocal.KindStage, Attrs: map[string]string{mcplocal.AttrStage: "summarize-tree"}},
		{ID: "d", Kind: mcplocal.KindGateDecision},
		{ID: "e", Kind: mcplocal.KindStage, Attrs: map[string]string{mcplocal.AttrStage: "paginate"}},
	}
	if hasRow(rows, mcplocal.KindToolCall, evidence.StatusRefused) || !hasRow(rows, mcplocal.KindToolCall, evidence.StatusOK) || !hasRow(rows, mcplocal.KindUpstreamCall, evidence.StatusRefused) {
		t.Error("hasRow does not find rows by kind and status together")
	}
	if r, ok := gateRow(rows); !ok || r.ID != "d" {
		t.Errorf("gateRow: %+v %v", r, ok)
	}
	if _, ok := gateRow(rows[:3]); ok {
		t.Error("gateRow found a row where there is none")
	}
	if r, ok := stageRow(rows, "paginate"); !ok || r.ID != "e" {
		t.Errorf("stageRow(paginate): %+v %v", r, ok)
	}
	if _, ok := stageRow(rows, "gate"); ok {
		t.Error("stageRow found a stage that has no row")
	}
}
