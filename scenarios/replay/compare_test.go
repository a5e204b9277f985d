package replay

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/mcpchaos/mcpchaos/proxy/audit"
)

var t0 = time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)

func row(kind audit.Kind, name string, at, d time.Duration, status string) audit.Row {
	r := audit.Row{Kind: kind, SpanID: name + at.String(), Start: t0.Add(at), Duration: d, Status: status}
	switch kind {
	case audit.KindStageExecution:
		r.Stage = name
	default:
		r.Tool = name
	}
	if kind != audit.KindToolCallTrace {
		r.ParentID = "root"
	}
	return r
}

func degraded(r audit.Row, reason string) audit.Row {
	r.Degraded, r.DegradedReason = true, reason
	return r
}

// Every kind of difference is named, on the span it is about; nothing else
// is named.
func TestEveryDifferenceIsNamed(t *testing.T) {
	recorded := []audit.Row{
		row(audit.KindToolCallTrace, "docmost_search", 0, 2*time.Second, "ok"),
		row(audit.KindUpstreamCall, "search", 0, 100*time.Millisecond, "ok"),
		degraded(row(audit.KindStageExecution, "paginate", 100*time.Millisecond, time.Second, "ok"), "LLM timeout"),
		row(audit.KindLLMAttempt, "", 100*time.Millisecond, time.Second, "timeout"),
		row(audit.KindStageExecution, "summarize-tree", 1100*time.Millisecond, 10*time.Millisecond, "ok"),
	}
	replayed := []audit.Row{
		row(audit.KindToolCallTrace, "docmost_search", 0, 2*time.Second, "ok"),
		row(audit.KindUpstreamCall, "search", 0, 5*time.Second, "ok"),
		row(audit.KindStageExecution, "paginate", 100*time.Millisecond, time.Second, "ok"),
		row(audit.KindLLMAttempt, "", 100*time.Millisecond, time.Second, "ok"),
		row(audit.KindGateDecision, "docmost_search", 0, 0, "ok"),
	}
	diffs := Compare(recorded, replayed, 1, DefaultTolerance)
	want := []string{
		"slower: upstream_call search",
		"notice lost: stage_execution paginate",
		"different outcome: llm_attempt (recorded timeout, replayed ok)",
		"span missing: stage_execution summarize-tree",
		"span added: gate_decision docmost_search",
	}
	var got []string
	for _, d := range diffs {
		got = append(got, d.String())
	}
	all := strings.Join(got, "\n")
	for _, w := range want {
		if !strings.Contains(all, w) {
			t.Errorf("difference %q not named; named:\n%s", w, all)
		}
	}
	if len(diffs) != len(want) {
		t.Errorf("%d differences named, want %d:\n%s", len(diffs), len(want), all)
	}
	if v := Judge(recorded, replayed, diffs); v != Changed {
		t.Errorf("verdict %s, want changed", v)
	}
	var out bytes.Buffer
	PrintDifferences(&out, diffs)
	Beside(&out, recorded, replayed, 1)
	for _, w := range []string{"notice lost", "stage_execution summarize-tree", "ok 1s ⚠", "—"} {
		if !strings.Contains(out.String(), w) {
			t.Errorf("printout lacks %q:\n%s", w, out.String())
		}
	}
}

// A faithful replay, compressed, is the same; one within tolerance is too;
// a notice gained and a root answered where none was are a fix.
func TestVerdicts(t *testing.T) {
	recorded := []audit.Row{
		row(audit.KindToolCallTrace, "docmost_search", 0, 30*time.Second, "ok"),
		row(audit.KindUpstreamCall, "search", 0, 3*time.Second, "ok"),
	}
	replayed := []audit.Row{
		row(audit.KindToolCallTrace, "docmost_search", 0, 110*time.Millisecond, "ok"),
		row(audit.KindUpstreamCall, "search", 0, 20*time.Millisecond, "ok"),
	}
	if d := Compare(recorded, replayed, 300, DefaultTolerance); Judge(recorded, replayed, d) != Same {
		t.Errorf("a faithful replay 300× compressed: %v", d)
	}
	hung := []audit.Row{row(audit.KindUpstreamCall, "search", 0, 200*time.Millisecond, "ok")}
	fixed := append([]audit.Row{degraded(row(audit.KindToolCallTrace, "docmost_search", 0, time.Second, "ok"), "LLM timeout")}, hung...)
	d := Compare(hung, fixed, 1, DefaultTolerance)
	if Judge(hung, fixed, d) != Fixed || Judge(hung, hung, Compare(hung, hung, 1, DefaultTolerance)) != Same || Judge(fixed, hung, Compare(fixed, hung, 1, DefaultTolerance)) != Changed {
		t.Errorf("hung then answered: %v", d)
	}
}

// Two LLM attempts that both failed, one with the provider's 404 and one
// with a malformed answer, are different outcomes.
func TestAnAttemptsOutcomeIsCompared(t *testing.T) {
	at := func(detail string) []audit.Row {
		r := row(audit.KindLLMAttempt, "docmost_search", 0, time.Millisecond, "error")
		r.Server, r.Detail = "vllm-current", detail
		return []audit.Row{r}
	}
	rec := at("vllm-current (qwen3-32b): HTTP 404 after 1ms: POST /chat/completions: invalid_request_error: no such model")
	d := Compare(rec, at("vllm-current (qwen3-32b): invalid (HTTP 200) after 2ms: malformed JSON"), 1, DefaultTolerance)
	if len(d) != 1 || d[0].What != DifferentOutcome || !strings.Contains(d[0].Detail, "recorded HTTP 404, replayed invalid (HTTP 200)") {
		t.Errorf("differences: %v", d)
	}
	if d := Compare(rec, at("vllm-current (qwen3-32b): HTTP 404 after 3ms: other text"), 1, DefaultTolerance); len(d) != 0 {
		t.Errorf("the same outcome named a difference: %v", d)
	}
}

// An upstream call that failed in the network and one that returned an
// error result are different outcomes, though both rows say error.
func TestAnUpstreamFailuresKindIsCompared(t *testing.T) {
	up := func(detail string) []audit.Row {
		r := row(audit.KindUpstreamCall, "search", 0, time.Millisecond, "error")
		r.Server, r.Detail = "docmost", detail
		return []audit.Row{r}
	}
	reset := up(`upstream docmost: calling "tools/call": sending "tools/call": rejected by transport: Post "http://127.0.0.1:1/mcp": EOF`)
	d := Compare(reset, up("fake upstream docmost: search failed on purpose"), 1, DefaultTolerance)
	if len(d) != 1 || d[0].What != DifferentOutcome || !strings.Contains(d[0].Detail, "recorded a network failure, replayed an error result") {
		t.Errorf("differences: %v", d)
	}
	if d := Compare(reset, up("upstream docmost: read tcp: connection reset by peer"), 1, DefaultTolerance); len(d) != 0 {
		t.Errorf("two network failures named a difference: %v", d)
	}
}

// A refused connection, a reset and a network timeout are three outcomes:
// one replayed as another is a different outcome.
func TestEachNetworkFailureIsItsOwnOutcome(t *testing.T) {
	up := func(detail string) []audit.Row {
		r := row(audit.KindUpstreamCall, "search", 0, time.Millisecond, "error")
		r.Server, r.Detail = "docmost", detail
		return []audit.Row{r}
	}
	refused := up(`upstream docmost: rejected by transport: dial tcp 127.0.0.1:1: connect: connection refused`)
	reset := up(`upstream docmost: rejected by transport: Post "http://127.0.0.1:1/mcp": EOF`)
	timeout := up(`upstream docmost: dial tcp 127.0.0.1:1: i/o timeout`)
	for _, c := range []struct {
		rec, rep []audit.Row
		want     string
	}{
		{refused, reset, "recorded a refused connection, replayed a network failure"},
		{reset, refused, "recorded a network failure, replayed a refused connection"},
		{timeout, reset, "recorded a network timeout, replayed a network failure"},
	} {
		d := Compare(c.rec, c.rep, 1, DefaultTolerance)
		if len(d) != 1 || d[0].What != DifferentOutcome || d[0].Detail != c.want {
			t.Errorf("differences %v, want one: %s", d, c.want)
		}
	}
	if d := Compare(refused, up("upstream docmost: dial tcp [::1]:9: connect: connection refused"), 1, DefaultTolerance); len(d) != 0 {
		t.Errorf("two refusals named a difference: %v", d)
	}
}

// An upstream call's answer is compared by its shape when both rows say
// it: another size or other content kinds is a different answer.
func TestAnAnswersShapeIsCompared(t *testing.T) {
	up := func(n int64, content string) []audit.Row {
		r := row(audit.KindUpstreamCall, "search", 0, time.Millisecond, "ok")
		r.Server, r.Bytes, r.Content = "docmost", n, content
		return []audit.Row{r}
	}
	rec := up(14321, "text:1,image:1")
	for _, rep := range [][]audit.Row{up(900, "text:1,image:1"), up(14321, "text:1")} {
		d := Compare(rec, rep, 1, DefaultTolerance)
		if len(d) != 1 || d[0].What != DifferentAnswer {
			t.Errorf("recorded %d %s, replayed %d %s: differences %v, want a different answer", rec[0].Bytes, rec[0].Content, rep[0].Bytes, rep[0].Content, d)
		}
	}
	for _, rep := range [][]audit.Row{up(14321, "text:1,image:1"), up(0, "")} {
		if d := Compare(rec, rep, 1, DefaultTolerance); len(d) != 0 {
			t.Errorf("replayed %d %q: differences %v, want none (the same shape, or a build that does not say it)", rep[0].Bytes, rep[0].Content, d)
		}
	}
}
