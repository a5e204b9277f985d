package soak

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/Shopify/toxiproxy/v2/stream"
	"github.com/Shopify/toxiproxy/v2/toxics"

	"github.com/mcpchaos/mcpchaos/proxy/audit"
	"github.com/mcpchaos/mcpchaos/scenarios/harness"
	"github.com/mcpchaos/mcpchaos/scenarios/load"
)

func TestProblemsNameEachFailureAndNothingElse(t *testing.T) {
	clean := Report{Budget: 500 * time.Millisecond, Tolerance: 300 * time.Millisecond, GoroutinesBefore: 4, GoroutinesAfter: 4,
		Counts:        Counts{Requests: 10, InBudget: 4, ToolErrors: 2, Refused: 3, CutByRestart: 2, LostToKill: 1},
		RowsLostToKil: 2, RSSWarm: 100, RSSEnd: 1000}
	if p := clean.Problems(); len(p) != 0 {
		t.Fatalf("a soak with every request accounted for has problems: %q", p)
	}
	cases := []struct {
		name   string
		change func(r *Report)
		want   string
	}{
		{"unanswered", func(r *Report) { r.InBudget--; r.Unanswered = 1 }, "1 requests never answered"},
		{"late", func(r *Report) { r.InBudget--; r.Late = 1 }, "1 requests answered after their budget 500ms + tolerance 300ms"},
		{"rows missing", func(r *Report) { r.RowsMissing = 1 }, "1 answered requests have no tool_call_trace audit row"},
		{"goroutines", func(r *Report) { r.GoroutinesAfter = 5 }, "goroutines did not return to baseline: 4 before, 5 after"},
		{"sum", func(r *Report) { r.Requests = 11 }, "the classes do not add up"},
	}
	for _, c := range cases {
		r := clean
		c.change(&r)
		p := r.Problems()
		if len(p) != 1 || !strings.Contains(p[0], c.want) {
			t.Errorf("%s: problems %q, want one saying %q", c.name, p, c.want)
		}
	}
}

func TestRSSGrowthIsPercentOfTheWarmRSS(t *testing.T) {
	for _, c := range []struct {
		warm, end int64
		want      float64
	}{
		{200, 250, 25}, {200, 150, -25}, {200, 200, 0},
		{0, 250, 0}, {-1, 250, 0}, {200, 0, 0}, {200, -1, 0}, // unknown
	} {
		r := Report{RSSWarm: c.warm, RSSEnd: c.end}
		if got := r.RSSGrowth(); math.Abs(got-c.want) > 1e-9 {
			t.Errorf("RSSGrowth(warm %d, end %d) = %v, want %v", c.warm, c.end, got, c.want)
		}
	}
}

// The soak's knobs compress the proxy's bounds so a request that waits out
// its budget costs half a second; none is switched off, none contradicts
// another, and every bound of a part of the request fits in it.
func TestKnobsCompressTheBoundsUnderHalfASecond(t *testing.T) {
	k := Knobs()
	if k.RequestDeadline != 500*time.Millisecond {
		t.Errorf("request deadline %v, want 500ms", k.RequestDeadline)
	}
	if err := k.Check(); err != nil {
		t.Error(err)
	}
	for name, d := range map[string]time.Duration{
		"upstream call timeout": k.UpstreamCallTimeout, "upstream connect": k.UpstreamConnect,
		"pagination LLM timeout": k.PaginationLLMTimeout, "LLM call budget": k.LLMCallBudget,
		"LLM provider timeout": k.LLMProviderTimeout, "stage LLM budget": k.StageLLMBudget,
	} {
		if d < 10*time.Millisecond || d >= k.RequestDeadline {
			t.Errorf("%s %v, want a bound of at least 10ms inside the request deadline %v", name, d, k.RequestDeadline)
		}
	}
	if k.PaginationLLMTimeout > k.StageLLMBudget || k.LLMProviderTimeout > k.LLMCallBudget {
		t.Errorf("an LLM bound exceeds the one it runs inside: %+v", k)
	}
}

func TestPickDrawsEachFaultByItsWeight(t *testing.T) {
	d := []draw{{harness.None{}, 1}, {harness.Blackhole{}, 3}}
	rng := rand.New(rand.NewPCG(1, 2))
	const n = 4000
	got := map[string]int{}
	for range n {
		got[pick(rng, d).Name()]++
	}
	// Weight 1 of 4: 1,000 expected, the standard deviation is 27.
	if got["none"] < 880 || got["none"] > 1120 || got["none"]+got["blackhole"] != n {
		t.Errorf("drew %v in %d, want none about 1 in 4 and blackhole the rest", got, n)
	}
}

// The catalogue is the faults docs/load.md lists; SIGKILL only on targets
// that can be killed.
func TestTheCatalogueKillsOnlyTargetsThatCanBeKilled(t *testing.T) {
	names := func(tg harness.Target) []string {
		var out []string
		for _, x := range faults(tg) {
			if x.weight <= 0 {
				t.Errorf("%s has weight %d: never drawn", x.fault.Name(), x.weight)
			}
			out = append(out, x.fault.Name())
		}
		slices.Sort(out)
		return out
	}
	want := []string{"blackhole", "down", "latency", "limit-data", "none", "proxy-restart", "reset-peer", "slicer",
		"tool-error", "tool-hang", "tool-slow", "upstream-restart"}
	if got := names(&harness.InProcess{}); !slices.Equal(got, want) {
		t.Errorf("in-process catalogue %q, want %q", got, want)
	}
	killable := append(slices.Clone(want), "proxy-kill")
	slices.Sort(killable)
	if got := names(&harness.Binary{}); !slices.Equal(got, killable) {
		t.Errorf("binary catalogue %q, want %q", got, killable)
	}
}

func TestClassifyKeepsAFewExamplesOfEachProblem(t *testing.T) {
	t0 := time.Unix(1_700_000_000, 0)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	var calls []call
	for range 5 {
		calls = append(calls, call{epoch: 2, start: at(0), end: at(900)})
	}
	for range 4 {
		calls = append(calls, call{epoch: 3, start: at(0), end: at(10), err: errors.New("connection reset")})
	}
	calls = append(calls, call{start: at(0), end: at(800)}) // exactly the limit: in budget
	var ex []string
	c := classify(calls, nil, 800*time.Millisecond, &ex)
	if c.Late != 5 || c.Unanswered != 4 || c.InBudget != 1 {
		t.Fatalf("classify = %+v, want 5 late, 4 unanswered, 1 in budget (the limit itself is in budget)", c)
	}
	var late, unanswered int
	for _, e := range ex {
		switch {
		case strings.HasPrefix(e, "late: epoch 2"):
			late++
			if strings.Contains(e, "machine's load") {
				t.Errorf("example %q speaks of a stall the call did not have", e)
			}
		case strings.HasPrefix(e, "unanswered: epoch 3") && strings.HasSuffix(e, ": connection reset"):
			unanswered++
		default:
			t.Errorf("unexpected example %q", e)
		}
	}
	if late != 3 || unanswered != 3 {
		t.Errorf("%d late and %d unanswered examples, want 3 of each: %q", late, unanswered, ex)
	}
}

func writeAuditRows(t *testing.T, path string, rows map[string]audit.Kind) {
	t.Helper()
	ctx := context.Background()
	st, err := audit.OpenSQLite(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	for trace, kind := range rows {
		if err := st.Write(ctx, audit.Row{Kind: kind, CorrelationID: trace, SpanID: "span-" + trace,
			Start: time.Now(), Status: "ok"}); err != nil {
			t.Fatal(err)
		}
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
}

func answeredCall(trace string, end time.Time) call {
	return call{start: end.Add(-10 * time.Millisecond), end: end, res: load.Result{Trace: trace}}
}

func TestCheckAuditLooksUpEveryAnsweredCallsRow(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.db")
	writeAuditRows(t, path, map[string]audit.Kind{"t1": audit.KindToolCallTrace, "t3": audit.KindToolCallTrace,
		"t2": audit.KindStageExecution}) // t2 has a row, but not the request's own
	now := time.Now()
	calls := []call{
		answeredCall("t1", now), answeredCall("t2", now), answeredCall("t3", now),
		{start: now, end: now, res: load.Result{IsError: true}},                         // no trace code: nothing to look up
		{start: now, end: now, err: errors.New("reset"), res: load.Result{Trace: "t9"}}, // not answered
	}
	rep := &Report{}
	checkAudit(rep, calls, nil, path)
	if !rep.AuditChecked || rep.AuditNote != "" {
		t.Fatalf("audit not checked: %q", rep.AuditNote)
	}
	if rep.RowsChecked != 3 || rep.RowsMissing != 1 || rep.RowsLostToKil != 0 {
		t.Errorf("checked %d, missing %d, lost %d; want 3, 1 (t2), 0", rep.RowsChecked, rep.RowsMissing, rep.RowsLostToKil)
	}
	if len(rep.Examples) != 1 || !strings.Contains(rep.Examples[0], "row missing: trace t2") ||
		!strings.Contains(rep.Examples[0], "none before the final stop") {
		t.Errorf("examples %q, want the missing t2 with no stop after it", rep.Examples)
	}
}

func TestCheckAuditSaysWhenItCouldNotLook(t *testing.T) {
	calls := []call{answeredCall("t1", time.Now())}
	rep := &Report{}
	checkAudit(rep, calls, nil, filepath.Join(t.TempDir(), "absent.db"))
	if rep.AuditChecked || !strings.Contains(rep.AuditNote, "no audit database") || rep.RowsChecked != 0 {
		t.Errorf("no database: checked %v, note %q, rows %d", rep.AuditChecked, rep.AuditNote, rep.RowsChecked)
	}

	// A database without the audit table.
	path := filepath.Join(t.TempDir(), "other.db")
	writeAuditRows(t, path, nil)
	db := openRW(t, path)
	if _, err := db.Exec(`DROP TABLE ` + audit.Table); err != nil {
		t.Fatal(err)
	}
	db.Close()
	rep = &Report{}
	checkAudit(rep, calls, nil, path)
	if rep.AuditChecked || !strings.HasPrefix(rep.AuditNote, "audit database: ") {
		t.Errorf("no table: checked %v, note %q", rep.AuditChecked, rep.AuditNote)
	}

	rep = &Report{}
	checkAuditRows(rep, calls, nil, func() (map[string]bool, error) { return nil, errors.New("store closed") })
	if rep.AuditChecked || rep.AuditNote != "audit store: store closed" || rep.RowsMissing != 0 {
		t.Errorf("store error: checked %v, note %q, missing %d", rep.AuditChecked, rep.AuditNote, rep.RowsMissing)
	}
}

// A row is owed by the process that answered: lost with it when the next
// stop of the proxy was a SIGKILL (also one under way as the answer left),
// missing when it was a graceful restart or the final stop.
func TestCheckAuditRowsForgivesOnlyRowsLostToAKill(t *testing.T) {
	t0 := time.Unix(1_700_000_000, 0)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	events := []Event{ // out of order: the check sorts them
		{Kind: "proxy-restart", Start: at(3000), End: at(3200)},
		{Kind: "proxy-kill", Start: at(1000), End: at(1100)},
	}
	calls := []call{
		answeredCall("kept", at(500)),
		answeredCall("before-kill", at(500)),     // next stop: the kill
		answeredCall("during-kill", at(1050)),    // left while the kill was under way
		answeredCall("before-restart", at(2000)), // next stop: the graceful restart
		answeredCall("after-all", at(4000)),      // next stop: the final one
	}
	have := map[string]bool{"kept": true}
	rep := &Report{}
	checkAuditRows(rep, calls, events, func() (map[string]bool, error) { return have, nil })
	if rep.RowsChecked != 5 || rep.RowsLostToKil != 2 || rep.RowsMissing != 2 {
		t.Fatalf("checked %d, lost to a kill %d, missing %d; want 5, 2, 2", rep.RowsChecked, rep.RowsLostToKil, rep.RowsMissing)
	}
	all := strings.Join(rep.Examples, "\n")
	if !strings.Contains(all, "trace before-restart") || !strings.Contains(all, "next stop of the proxy: proxy-restart at") ||
		!strings.Contains(all, "trace after-all") || strings.Contains(all, "kill") {
		t.Errorf("examples %q, want the two missing rows with the stop that followed each", rep.Examples)
	}
}

func TestCheckAuditRowsQuotesAtMostThreeMissingRows(t *testing.T) {
	var calls []call
	for i := range 5 {
		calls = append(calls, answeredCall(fmt.Sprintf("t%d", i), time.Now()))
	}
	rep := &Report{}
	checkAuditRows(rep, calls, nil, func() (map[string]bool, error) { return map[string]bool{}, nil })
	if rep.RowsMissing != 5 || len(rep.Examples) != 3 {
		t.Errorf("%d missing, %d examples; want 5 and 3", rep.RowsMissing, len(rep.Examples))
	}
}

func TestGoroutinesCountsTheProcesssOwnAndSetsToxiproxysApart(t *testing.T) {
	n0, h0, stacks := goroutines()
	if n0 < 1 || !strings.Contains(stacks, "TestGoroutinesCountsTheProcesssOwn") {
		t.Fatalf("goroutines() = %d, stacks without this test's own", n0)
	}
	in := make(chan *stream.StreamChunk)
	stub := toxics.NewToxicStub(in, make(chan *stream.StreamChunk))
	done := make(chan struct{})
	go func() {
		defer close(done)
		(&toxics.NoopToxic{}).Pipe(stub)
	}()
	defer func() { close(stub.Interrupt); <-done }()
	// The pipe counts once it is inside toxiproxy's code.
	for deadline := time.Now().Add(5 * time.Second); ; runtime.Gosched() {
		_, h, stacks := goroutines()
		if h > h0 {
			if strings.Contains(stacks, "NoopToxic") {
				t.Errorf("toxiproxy's goroutine is among the counted ones")
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("toxiproxy's goroutine not set apart: harness count %d, was %d", h, h0)
		}
	}
}

// goroutines reads every stack, however many there are.
func TestGoroutinesSeesThousandsOfThem(t *testing.T) {
	const n = 10_000
	stop := make(chan struct{})
	for range n {
		go func() { <-stop }()
	}
	defer close(stop)
	if got, _, _ := goroutines(); got < n {
		t.Errorf("goroutines() = %d with %d parked, want at least that many", got, n)
	}
}

func TestSettleReturnsOnceTheCountIsBackToItsBaseline(t *testing.T) {
	base, _, _ := goroutines()
	t0 := time.Now()
	n, _, stacks := settle(base)
	if n > base || stacks != "" {
		t.Errorf("settle at the baseline: %d (baseline %d), stacks %q", n, base, stacks)
	}
	if n, _, stacks := settle(base + 100); n > base+100 || stacks != "" {
		t.Errorf("settle below the baseline: %d, stacks %q", n, stacks)
	}
	// A goroutine that ends while settle waits.
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() { <-stop; close(done) }()
	timer := time.AfterFunc(100*time.Millisecond, func() { close(stop) })
	defer timer.Stop()
	n, _, stacks = settle(base)
	<-done
	if n > base || stacks != "" {
		t.Errorf("settle after a goroutine ended: %d (baseline %d), stacks %q", n, base, stacks)
	}
	if took := time.Since(t0); took >= LeakWait {
		t.Errorf("settle took %v, the whole LeakWait, for counts at the baseline", took)
	}
}

// Keep-alive connections of the process's default HTTP client are idle,
// not leaked: settle closes them before counting.
func TestSettleDoesNotCountIdleConnectionsOfTheDefaultClient(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "ok") }))
	defer srv.Close()
	base, _, _ := goroutines()
	resp, err := http.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if n, _, stacks := settle(base); n > base {
		t.Errorf("%d goroutines after an idle keep-alive connection, baseline %d:\n%s", n, base, stacks)
	}
}

func TestProcessRSSIsTheProxysProcess(t *testing.T) {
	if rss := processRSS(&harness.Env{Target: &harness.InProcess{}}); rss <= 0 {
		t.Errorf("in-process RSS %d, want this process's", rss)
	}
	if rss := processRSS(&harness.Env{Target: &harness.Binary{}}); rss != -1 {
		t.Errorf("RSS of a binary target that is not running: %d, want -1 (unknown)", rss)
	}
}

func openRW(t *testing.T, path string) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	return db
}
