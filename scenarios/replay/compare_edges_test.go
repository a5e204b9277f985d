package replay

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/mcpchaos/mcpchaos/proxy/audit"
	"github.com/mcpchaos/mcpchaos/proxy/config"
)

// A span missing from a compressed replay is named with the duration the
// replay expected of it: the recorded one divided by the compression.
func TestAMissingSpanIsNamedWithItsCompressedDuration(t *testing.T) {
	rec := []audit.Row{row(audit.KindStageExecution, "paginate", 0, time.Second, "ok")}
	d := Compare(rec, nil, 10, DefaultTolerance)
	if len(d) != 1 || d[0].What != SpanMissing || d[0].Detail != "recorded ok in 100ms, not in the replay" {
		t.Errorf("differences %v, want the stage missing, recorded in 100ms", d)
	}
}

// How a call failed and the size of its answer are compared on upstream
// calls only: two stages that both failed, with other texts and sizes,
// are the same outcome; a recorded upstream call whose row does not say its
// size is not a different answer.
func TestOnlyAnUpstreamCallsFailureAndAnswerAreCompared(t *testing.T) {
	stage := func(detail string, n int64) []audit.Row {
		r := row(audit.KindStageExecution, "paginate", 0, time.Millisecond, "error")
		r.Detail, r.Bytes, r.Content = detail, n, "text:1"
		return []audit.Row{r}
	}
	if d := Compare(stage("llm: connection refused", 100), stage("stage failed", 900), 1, DefaultTolerance); len(d) != 0 {
		t.Errorf("two failed stages named differences: %v", d)
	}
	up := func(n int64, content string) []audit.Row {
		r := row(audit.KindUpstreamCall, "search", 0, time.Millisecond, "ok")
		r.Server, r.Bytes, r.Content = "docmost", n, content
		return []audit.Row{r}
	}
	if d := Compare(up(0, ""), up(900, "text:1"), 1, DefaultTolerance); len(d) != 0 {
		t.Errorf("a recorded row without a size against a replayed one with: %v, want none", d)
	}
	d := Compare(up(100, ""), up(200, "text:1"), 1, DefaultTolerance)
	if len(d) != 1 || d[0].What != DifferentAnswer || d[0].Detail != "recorded 100 bytes (no content), replayed 200 bytes text:1" {
		t.Errorf("differences %v, want a different answer naming a recording without content kinds", d)
	}
}

// A ⚠ notice the replay shows and the recording did not is named, with the
// replay's reason.
func TestANoticeGainedIsNamed(t *testing.T) {
	rec := []audit.Row{row(audit.KindStageExecution, "paginate", 0, time.Second, "ok")}
	rep := []audit.Row{degraded(rec[0], "LLM timeout")}
	d := Compare(rec, rep, 1, DefaultTolerance)
	if len(d) != 1 || d[0].What != NoticeGained || d[0].Detail != "replayed ⚠ LLM timeout" {
		t.Errorf("differences %v, want the notice gained", d)
	}
	if d := Compare(rep, rep, 1, DefaultTolerance); len(d) != 0 {
		t.Errorf("a notice kept named a difference: %v", d)
	}
}

// A span is slower or faster only when it moved by more than the
// tolerance: its ratio of the recorded duration, at least its absolute
// part; a move of exactly the tolerance is within it.
func TestADurationMovesOnlyBeyondTheTolerance(t *testing.T) {
	at := func(d time.Duration) []audit.Row {
		return []audit.Row{row(audit.KindUpstreamCall, "search", 0, d, "ok")}
	}
	half := Tolerance{Ratio: 0.5, Abs: 250 * time.Millisecond}
	for _, c := range []struct {
		rec, rep time.Duration
		tol      Tolerance
		want     What
	}{
		{2 * time.Second, 3500 * time.Millisecond, half, Slower},   // +1.5s > half of 2s
		{2 * time.Second, 2900 * time.Millisecond, half, ""},       // +0.9s within it
		{2 * time.Second, 900 * time.Millisecond, half, Faster},    // -1.1s
		{100 * time.Millisecond, 340 * time.Millisecond, half, ""}, // within the absolute 250ms
		{time.Second, 1100 * time.Millisecond, Tolerance{Abs: 100 * time.Millisecond}, ""},
		{time.Second, 900 * time.Millisecond, Tolerance{Abs: 100 * time.Millisecond}, ""},
		{time.Second, 1100*time.Millisecond + time.Nanosecond, Tolerance{Abs: 100 * time.Millisecond}, Slower},
		{time.Second, 900*time.Millisecond - time.Nanosecond, Tolerance{Abs: 100 * time.Millisecond}, Faster},
	} {
		d := Compare(at(c.rec), at(c.rep), 1, c.tol)
		var got What
		if len(d) == 1 {
			got = d[0].What
		}
		if len(d) > 1 || got != c.want {
			t.Errorf("recorded %v, replayed %v, tolerance %+v: %v, want %q", c.rec, c.rep, c.tol, d, c.want)
		}
	}
}

// A request is answered when its root row, a tool_call_trace or an
// mcp_request without a parent, ended ok; a nested trace row is not the
// root, and neither is a span without a parent of another kind.
func TestAnsweredReadsTheRootRowOnly(t *testing.T) {
	req := row(audit.KindMCPRequest, "tools/call", 0, time.Millisecond, "ok")
	req.ParentID = ""
	if !Answered([]audit.Row{req}) {
		t.Error("a root mcp_request that ended ok: not answered")
	}
	nested := row(audit.KindToolCallTrace, "docmost_search", 0, time.Millisecond, "cancelled")
	nested.ParentID = "outer"
	root := row(audit.KindToolCallTrace, "docmost_search", 0, time.Millisecond, "ok")
	if !Answered([]audit.Row{nested, root}) {
		t.Error("a cancelled nested trace row taken for the root")
	}
	orphan := row(audit.KindUpstreamCall, "search", 0, time.Millisecond, "ok")
	orphan.ParentID = ""
	if Answered([]audit.Row{orphan}) {
		t.Error("an upstream call without a parent taken for an answered root")
	}
}

// The side-by-side view has a header, shows each recorded span at its
// compressed duration next to the replayed one, and a span the replay
// added with a dash where the recording has none.
func TestBesideShowsEverySpanInItsColumns(t *testing.T) {
	rec := []audit.Row{row(audit.KindUpstreamCall, "search", 0, 3*time.Second, "ok")}
	rep := []audit.Row{
		row(audit.KindUpstreamCall, "search", 0, 310*time.Millisecond, "ok"),
		row(audit.KindGateDecision, "docmost_search", 0, 2*time.Millisecond, "ok"),
	}
	var out bytes.Buffer
	Beside(&out, rec, rep, 10)
	lines := strings.Split(strings.TrimRight(out.String(), "\n"), "\n")
	field := func(line string) []string { return strings.Fields(line) }
	if len(lines) != 3 {
		t.Fatalf("%d lines, want a header and two spans:\n%s", len(lines), out.String())
	}
	if got := strings.Join(field(lines[0]), " "); got != "SPAN RECORDED REPLAYED" {
		t.Errorf("header %q", got)
	}
	if got := strings.Join(field(lines[1]), " "); got != "upstream_call search ok 300ms ok 310ms" {
		t.Errorf("the recorded span, 10× compressed, beside its replay: %q", got)
	}
	if got := strings.Join(field(lines[2]), " "); got != "gate_decision docmost_search — ok 2ms" {
		t.Errorf("the added span: %q", got)
	}
}

// No difference is said in so many words.
func TestPrintDifferencesSaysWhenThereIsNone(t *testing.T) {
	var out bytes.Buffer
	PrintDifferences(&out, nil)
	if !strings.Contains(out.String(), "no difference") {
		t.Errorf("printout %q, want it to say there is no difference", out.String())
	}
}

// A kept scenario's client timeout is at least 1ms (1ms is kept), and a
// bundle with a trace but no rows is refused.
func TestAKeptScenarioChecksItsBounds(t *testing.T) {
	b := planBundle(t, keptRows())
	p, err := PlanOf(b, 1)
	if err != nil {
		t.Fatal(err)
	}
	p.ClientTimeout = time.Millisecond
	if _, err := Keep("one-ms", b, p, Same); err != nil {
		t.Errorf("a client timeout of 1ms: %v", err)
	}
	p.ClientTimeout = 0
	if _, err := Keep("zero", b, p, Same); err == nil || !strings.Contains(err.Error(), "clientTimeoutMs 0") {
		t.Errorf("a client timeout of 0: %v", err)
	}
	p.ClientTimeout = time.Second
	empty := b
	empty.Rows = nil
	if _, err := Keep("empty", empty, p, Same); err == nil || !strings.Contains(err.Error(), "holds no recorded rows") {
		t.Errorf("a bundle without rows: %v", err)
	}
}

// Uncompressed, every knob is played as recorded, a millisecond knob of 0
// (no wait) included; a config without an LLM plays none.
func TestPlanUncompressedKeepsEveryKnobAndNoLLMIsNone(t *testing.T) {
	root, up := rootAndUp(10 * time.Millisecond)
	b := planBundle(t, []audit.Row{root, up})
	b.Knobs["MCPCTL_STOP_DRAIN_MS"] = 0
	p, err := PlanOf(b, 1)
	if err != nil {
		t.Fatal(err)
	}
	if p.Knobs.StopDrain != 0 {
		t.Errorf("a recorded stop drain of 0 played as %v", p.Knobs.StopDrain)
	}
	b = withConfig(t, b, func(cfg *config.Config) { cfg.LLM = nil })
	p, err = PlanOf(b, 1)
	if err != nil {
		t.Fatal(err)
	}
	if p.Env.LLM || p.Env.Fallback {
		t.Errorf("a config without an LLM: LLM %v, fallback %v", p.Env.LLM, p.Env.Fallback)
	}
}
