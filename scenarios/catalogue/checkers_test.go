package catalogue

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"runtime"
	"sort"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/mcpchaos/mcpchaos/fakes/upstream"
	"github.com/mcpchaos/mcpchaos/scenarios/evidence"
	"github.com/mcpchaos/mcpchaos/scenarios/evidence/mcplocal"
	"github.com/mcpchaos/mcpchaos/scenarios/harness"
	"github.com/mcpchaos/mcpchaos/smoke"
)

// Every promise checker the catalogue uses is fed, by hand, observations
// that must break it and observations that must pass it; a checker that
// cannot fail is a defect. The table is keyed by the checker's function
// name, and TestEveryRowsCheckerCanFail holds every row of the catalogue to
// it: a row whose checker is not in the table fails that test.

// tc is a valid trace code.
const tc = "ABCDEFGH"

// untyped, as a breaking case's tier, says the checker answers with an
// error that is no Breach: the row classifies it (Scenario.untyped).
const untyped Tier = "untyped"

// breaking is an observation that must break a checker, with the breach it
// must give: its tier (untyped for an error that is no Breach) and, for a
// typed breach, its promise.
type breaking struct {
	name    string
	o       Observation
	tier    Tier
	promise string
}

// checkerCases are a checker's passing and breaking observations.
type checkerCases struct {
	check  func(Observation) error
	passes map[string]Observation
	breaks []breaking
}

// Observations the cases share.
var (
	noAnswer  = Observation{Err: fmt.Errorf("calling %q: %w", "tools/call", context.DeadlineExceeded)}
	httpLevel = Observation{Err: errors.New(`sending "tools/call": Post "http://127.0.0.1:1/mcp": connection refused`)}
	rpcPlain  = Observation{Trace: tc, Err: rpcErr("upstream timed out")}
)

// tracedRPC is a JSON-RPC error with data as its error.data and msg its message.
func tracedRPC(msg string, data map[string]string) Observation {
	b, _ := json.Marshal(data)
	return Observation{Err: fmt.Errorf("calling %q: %w", "resources/read", &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: msg, Data: b})}
}

// with returns o with edit applied to a copy (its slices copied too).
func with(o Observation, edit func(*Observation)) Observation {
	o.Spans = append([]evidence.Span(nil), o.Spans...)
	for i := range o.Spans {
		attrs := map[string]string{}
		for k, v := range o.Spans[i].Attrs {
			attrs[k] = v
		}
		o.Spans[i].Attrs = attrs
	}
	edit(&o)
	return o
}

// The three ways a request goes unanswered or answered with an error, as
// breaking cases of a checker that wants a result.
func unansweredCases() []breaking {
	return []breaking{
		{"no answer", noAnswer, Generic, PromiseAnswered},
		{"an HTTP-level failure", httpLevel, Generic, PromiseAnswered},
	}
}

// Passing observations of the LLM and gate checkers.
var (
	titlesReason = mcplocal.TitlesFeature + " unavailable (timeout)"
	paginateRow  = evidence.Span{Kind: mcplocal.KindStage, Trace: tc, Attrs: map[string]string{mcplocal.AttrStage: "paginate"}}
	smart        = Observation{Trace: tc, Text: "Results, by page:\n1. Cluster notes\n2. Runbooks\n", Spans: []evidence.Span{paginateRow}}
	numbered     = Observation{Trace: tc, Text: "Results, by page:\n1. Page 1\n2. Page 2\n", Spans: []evidence.Span{paginateRow}}
	degraded     = Observation{Trace: tc, Text: "⚠ " + titlesReason + " [trace " + tc + "]\nResults, by page:\n1. Page 1\n2. Page 2\n",
		Spans: []evidence.Span{{Kind: mcplocal.KindStage, Trace: tc, Attrs: map[string]string{mcplocal.AttrStage: "paginate"}, Degraded: true, Reason: titlesReason}}}
	failedOver = with(smart, func(o *Observation) {
		o.Spans = append(o.Spans,
			evidence.Span{Kind: mcplocal.KindLLMAttempt, Trace: tc, Attrs: map[string]string{mcplocal.AttrServer: "vllm-current"}, Status: evidence.StatusError, Detail: "404 model not found"},
			evidence.Span{Kind: mcplocal.KindLLMAttempt, Trace: tc, Attrs: map[string]string{mcplocal.AttrServer: "anthropic-fallback"}, Status: evidence.StatusOK, Detail: "model claude-sonnet-5"})
	})
	summariesReason = mcplocal.SummariesFeature + " unavailable (budget spent)"
	summarized      = Observation{Trace: tc, Text: "⚠ " + summariesReason + "; 7 sections affected [trace " + tc + "]\nSummary tree (20 sections)\n",
		Spans: []evidence.Span{{Kind: mcplocal.KindStage, Trace: tc, Attrs: map[string]string{mcplocal.AttrStage: "summarize-tree"}, Degraded: true, Reason: summariesReason + "; 7 sections affected"}}}
	gateRowOK     = evidence.Span{Kind: mcplocal.KindGateDecision, Trace: tc}
	rankedLLM     = Observation{Trace: tc, Text: "Prompts for your task:\n" + llmOrder + "2. deploy\n3. backup\n", Spans: []evidence.Span{gateRowOK}}
	rankedQuietly = Observation{Trace: tc, Text: "Prompts for your task:\n" + fallbackOrder + "2. deploy\n3. notes\n", Spans: []evidence.Span{gateRowOK}}
	gateReason    = mcplocal.GateFeature + " unavailable (timeout)"
	rankedNotice  = Observation{Trace: tc, Text: "⚠ " + gateReason + " [trace " + tc + "]\nPrompts for your task:\n" + fallbackOrder + "2. deploy\n",
		Spans: []evidence.Span{{Kind: mcplocal.KindGateDecision, Trace: tc, Degraded: true, Reason: gateReason}}}
	hairpin = Observation{IsError: true, Trace: tc, Text: "docmost: " + hairpinShape + " [trace " + tc + "]",
		Spans: []evidence.Span{{Kind: mcplocal.KindToolCall, Trace: tc, Detail: hairpinShape}, {Kind: mcplocal.KindUpstreamCall, Trace: tc, Detail: hairpinShape}}}
	recovered = Observation{IsError: true, Trace: tc, Text: "docmost is unreachable [trace " + tc + "]"}
)

// sectionsAffected is summarized with n sections affected, in the notice
// and the row alike.
func sectionsAffected(n int) Observation {
	return with(summarized, func(o *Observation) {
		count := fmt.Sprintf("; %d sections affected", n)
		o.Text = strings.Replace(o.Text, "; 7 sections affected", count, 1)
		o.Spans[0].Reason = summariesReason + count
	})
}

// checkers is every checker the catalogue uses, with its cases.
var checkers = map[string]checkerCases{
	"answeredOK": {check: answeredOK,
		passes: map[string]Observation{"a result with its trace code": {Trace: tc, Text: "updated"}},
		breaks: append(unansweredCases(),
			breaking{"a JSON-RPC error", rpcPlain, Generic, PromiseSuccess},
			breaking{"an isError result", Observation{Trace: tc, IsError: true, Text: "boom"}, Generic, PromiseSuccess},
			breaking{"no trace code", Observation{Text: "updated"}, Own, PromiseTraceCode},
			breaking{"a malformed trace code", Observation{Trace: "abc", Text: "updated"}, Own, PromiseTraceCode}),
	},
	"answeredWithRecovery": {check: answeredWithRecovery,
		passes: map[string]Observation{"an isError result quoting its trace code": recovered},
		breaks: append(unansweredCases(),
			breaking{"a JSON-RPC error", rpcPlain, Own, PromiseIsError},
			breaking{"a success", Observation{Trace: tc, Text: "updated"}, Generic, PromiseIsError},
			breaking{"an isError result not quoting its code", Observation{Trace: tc, IsError: true, Text: "unreachable"}, Own, PromiseTraceCode},
			breaking{"an isError result without a code", Observation{IsError: true, Text: "unreachable [trace ]"}, Own, PromiseTraceCode}),
	},
	"answeredEitherWay": {check: answeredEitherWay,
		passes: map[string]Observation{"a result": {Trace: tc, Text: "updated"}, "an isError result quoting its code": recovered},
		breaks: append(unansweredCases(),
			breaking{"a JSON-RPC error", rpcPlain, Own, PromiseIsError},
			breaking{"a result without a trace code", Observation{Text: "updated"}, Own, PromiseTraceCode},
			breaking{"an isError result not quoting its code", Observation{Trace: tc, IsError: true, Text: "unreachable"}, Own, PromiseTraceCode}),
	},
	"isErrorPassedThrough": {check: isErrorPassedThrough,
		passes: map[string]Observation{"the upstream's isError with the proxy's code": {IsError: true, Trace: tc, Text: "search failed"}},
		breaks: append(unansweredCases(),
			breaking{"a JSON-RPC error", rpcPlain, Generic, PromisePassThrough},
			breaking{"a success", Observation{Trace: tc, Text: "results"}, Generic, PromisePassThrough},
			breaking{"no trace code", Observation{IsError: true, Text: "search failed"}, Own, PromiseTraceCode}),
	},
	"shapeNamed": {check: shapeNamed,
		passes: map[string]Observation{"the shape named in the text and both rows": hairpin},
		breaks: append(unansweredCases(),
			breaking{"a success", Observation{Trace: tc, Text: "updated"}, Generic, PromiseIsError},
			breaking{"the shape not named", with(hairpin, func(o *Observation) { o.Text = "docmost failed [trace " + tc + "]" }), untyped, ""},
			breaking{"no upstream_call row naming it", with(hairpin, func(o *Observation) { o.Spans[1].Detail = "403" }), untyped, ""},
			breaking{"no tool_call row naming it", with(hairpin, func(o *Observation) { o.Spans = o.Spans[1:] }), untyped, ""},
			breaking{"a row of another kind naming it, not the upstream_call", with(hairpin, func(o *Observation) { o.Spans[1].Kind = mcplocal.KindStage }), untyped, ""}),
	},
	"sessionAnswered": {check: sessionAnswered,
		passes: map[string]Observation{"answered": {}, "answered with a result": {Trace: tc, Text: "ok"}},
		breaks: append(unansweredCases(),
			breaking{"a JSON-RPC error", rpcPlain, untyped, ""}),
	},
	"keptAnswered": {check: keptAnswered,
		passes: map[string]Observation{"answered": {Trace: tc}},
		breaks: unansweredCases(),
	},
	"answeredOrRPCError": {check: answeredOrRPCError,
		passes: map[string]Observation{
			"a result":                           {Trace: tc, Text: "ok"},
			"an isError result quoting its code": recovered,
			"a JSON-RPC error with its code":     tracedRPC("upstream unreachable [trace "+tc+"]", map[string]string{smoke.TraceMetaKey: tc}),
		},
		breaks: append(unansweredCases(),
			breaking{"a JSON-RPC error without data", rpcPlain, Own, PromiseTraceCode},
			breaking{"a JSON-RPC error with a bad code", tracedRPC("unreachable [trace xyz]", map[string]string{smoke.TraceMetaKey: "xyz"}), Own, PromiseTraceCode},
			breaking{"a JSON-RPC error not quoting its code", tracedRPC("unreachable", map[string]string{smoke.TraceMetaKey: tc}), Own, PromiseTraceCode},
			breaking{"an isError result not quoting its code", Observation{Trace: tc, IsError: true, Text: "unreachable"}, Own, PromiseTraceCode}),
	},
	"answeredWithTrace": {check: answeredWithTrace,
		passes: map[string]Observation{"a result with its code": {Trace: tc}, "a result that carries no _meta (ping)": {}},
		breaks: append(unansweredCases(),
			breaking{"a JSON-RPC error", rpcPlain, Generic, PromiseSuccess},
			breaking{"an isError result", Observation{Trace: tc, IsError: true, Text: "boom"}, Generic, PromiseSuccess},
			breaking{"a malformed trace code", Observation{Trace: "not-a-code"}, Own, PromiseTraceCode}),
	},
	"untouched": {check: untouched,
		passes: map[string]Observation{"the upstream's text": {Trace: tc, Text: "updated page p1 (4 bytes)"}},
		breaks: append(unansweredCases(),
			breaking{"no trace code", Observation{Text: "updated page p1 (4 bytes)"}, Own, PromiseTraceCode},
			breaking{"the text changed", Observation{Trace: tc, Text: "⚠ summaries unavailable\nupdated page p1 (4 bytes)"}, untyped, ""},
			breaking{"a degraded row", Observation{Trace: tc, Text: "updated page p1 (4 bytes)", Spans: []evidence.Span{{Kind: mcplocal.KindStage, Degraded: true}}}, untyped, ""}),
	},
	"smartTitles": {check: smartTitles,
		passes: map[string]Observation{"the LLM's titles": smart},
		breaks: append(unansweredCases(),
			breaking{"no trace code", with(smart, func(o *Observation) { o.Trace = "" }), Own, PromiseTraceCode},
			breaking{"a notice", with(smart, func(o *Observation) { o.Text = "⚠ " + titlesReason + "\n" + o.Text }), untyped, ""},
			breaking{"numbered pages", numbered, untyped, ""},
			breaking{"a degraded row", with(smart, func(o *Observation) { o.Spans[0].Degraded = true }), untyped, ""}),
	},
	"numberedQuietly": {check: numberedQuietly,
		passes: map[string]Observation{"numbered pages": numbered},
		breaks: append(unansweredCases(),
			breaking{"a notice", with(numbered, func(o *Observation) { o.Text = "⚠ " + titlesReason + "\n" + o.Text }), untyped, ""},
			breaking{"the LLM's titles", smart, untyped, ""},
			breaking{"no stage row", with(numbered, func(o *Observation) { o.Spans = nil }), untyped, ""},
			breaking{"a degraded row", with(numbered, func(o *Observation) { o.Spans[0].Degraded = true }), untyped, ""}),
	},
	"degradedTitles": {check: degradedTitles,
		passes: map[string]Observation{"numbered pages, the notice, the degraded row": degraded},
		breaks: append(unansweredCases(),
			breaking{"no notice", numbered, untyped, ""},
			breaking{"the notice without the trace code", with(degraded, func(o *Observation) { o.Text = strings.Replace(o.Text, "[trace "+tc+"]", "", 1) }), untyped, ""},
			breaking{"not numbered pages", with(degraded, func(o *Observation) { o.Text = strings.Replace(o.Text, "1. Page 1", "1. Cluster notes", 1) }), untyped, ""},
			breaking{"no stage row", with(degraded, func(o *Observation) { o.Spans = nil }), untyped, ""},
			breaking{"the row not degraded", with(degraded, func(o *Observation) { o.Spans[0].Degraded = false }), untyped, ""},
			breaking{"the row of another request", with(degraded, func(o *Observation) { o.Spans[0].Trace = "HGFEDCBA" }), untyped, ""},
			breaking{"the row gives another reason", with(degraded, func(o *Observation) { o.Spans[0].Reason = mcplocal.TitlesFeature + " unavailable (503)" }), untyped, ""}),
	},
	"titlesEitherWay": {check: titlesEitherWay,
		passes: map[string]Observation{"the LLM's titles": smart, "numbered pages with the notice": degraded},
		breaks: append(unansweredCases(),
			breaking{"numbered pages in silence", numbered, untyped, ""},
			breaking{"a notice without its row", with(degraded, func(o *Observation) { o.Spans = nil }), untyped, ""}),
	},
	"excerptsForTheRest": {check: excerptsForTheRest,
		passes: map[string]Observation{"some sections excerpted, counted in the notice and the row": summarized,
			"one section excerpted": sectionsAffected(1), "all sections but one excerpted": sectionsAffected(upstream.SearchSections - 1)},
		breaks: append(unansweredCases(),
			breaking{"no notice", with(summarized, func(o *Observation) { o.Text = "Summary tree (20 sections)\n" }), untyped, ""},
			breaking{"no section affected", sectionsAffected(0), untyped, ""},
			breaking{"every section affected", sectionsAffected(upstream.SearchSections), untyped, ""},
			breaking{"the tree discarded", with(summarized, func(o *Observation) { o.Text = strings.Replace(o.Text, "Summary tree", "Excerpts", 1) }), untyped, ""},
			breaking{"the row not degraded", with(summarized, func(o *Observation) { o.Spans[0].Degraded = false }), untyped, ""},
			breaking{"the row counts otherwise", with(summarized, func(o *Observation) { o.Spans[0].Reason = summariesReason + "; 3 sections affected" }), untyped, ""}),
	},
	"answeredByFallback": {check: answeredByFallback,
		passes: map[string]Observation{"the fallback's titles, both attempts on record": failedOver},
		breaks: append(unansweredCases(),
			breaking{"numbered pages", numbered, untyped, ""},
			breaking{"no failed attempt on the primary", with(failedOver, func(o *Observation) { o.Spans[1].Status = evidence.StatusOK }), untyped, ""},
			breaking{"another model answered", with(failedOver, func(o *Observation) { o.Spans[2].Detail = "model claude-sonnet-4" }), untyped, ""},
			breaking{"the fallback's attempt failed too", with(failedOver, func(o *Observation) { o.Spans[2].Status = evidence.StatusError }), untyped, ""}),
	},
	"rankedByLLM": {check: rankedByLLM,
		passes: map[string]Observation{"the LLM's order": rankedLLM},
		breaks: append(unansweredCases(),
			breaking{"the fallback order", rankedQuietly, untyped, ""},
			breaking{"a notice", with(rankedLLM, func(o *Observation) { o.Text = "⚠ " + gateReason + "\n" + o.Text }), untyped, ""},
			breaking{"no gate row", with(rankedLLM, func(o *Observation) { o.Spans = nil }), untyped, ""},
			breaking{"a degraded gate row", with(rankedLLM, func(o *Observation) { o.Spans[0].Degraded = true }), untyped, ""}),
	},
	"fallbackQuietly": {check: fallbackQuietly,
		passes: map[string]Observation{"the fallback order": rankedQuietly},
		breaks: append(unansweredCases(),
			breaking{"the LLM's order", rankedLLM, untyped, ""},
			breaking{"a notice", rankedNotice, untyped, ""},
			breaking{"no gate row", with(rankedQuietly, func(o *Observation) { o.Spans = nil }), untyped, ""},
			breaking{"a degraded gate row", with(rankedQuietly, func(o *Observation) { o.Spans[0].Degraded = true }), untyped, ""}),
	},
	"fallbackWithNotice": {check: fallbackWithNotice,
		passes: map[string]Observation{"the fallback order, the notice, the degraded row": rankedNotice},
		breaks: append(unansweredCases(),
			breaking{"the LLM's order", with(rankedNotice, func(o *Observation) { o.Text = strings.Replace(o.Text, fallbackOrder, llmOrder, 1) }), untyped, ""},
			breaking{"no notice", rankedQuietly, untyped, ""},
			breaking{"the notice without the trace code", with(rankedNotice, func(o *Observation) { o.Text = strings.Replace(o.Text, "[trace "+tc+"]", "", 1) }), untyped, ""},
			breaking{"no gate row", with(rankedNotice, func(o *Observation) { o.Spans = nil }), untyped, ""},
			breaking{"the row not degraded", with(rankedNotice, func(o *Observation) { o.Spans[0].Degraded = false }), untyped, ""},
			breaking{"the row of another request", with(rankedNotice, func(o *Observation) { o.Spans[0].Trace = "HGFEDCBA" }), untyped, ""}),
	},
}

// sharedCheckers are the checks the catalogue's checkers are built from,
// held the same way.
var sharedCheckers = map[string]checkerCases{
	"unanswered": {check: unanswered,
		passes: map[string]Observation{"a result": {}, "an isError result": {IsError: true}, "a JSON-RPC error": rpcPlain},
		breaks: unansweredCases(),
	},
	"notDegraded": {check: notDegraded,
		passes: map[string]Observation{"no rows": {}, "clean rows": smart},
		breaks: []breaking{{"a degraded row", degraded, untyped, ""}},
	},
}

// checkerName is the name of f, a checker: its function's name within the
// package ("answeredOK"; a closure's "wireScenarios.func3").
func checkerName(f func(Observation) error) string {
	if f == nil {
		return "<nil>"
	}
	n := runtime.FuncForPC(reflect.ValueOf(f).Pointer()).Name()
	if i := strings.Index(n, "/catalogue."); i >= 0 {
		return n[i+len("/catalogue."):]
	}
	return n
}

// holdsItsCases checks c against every case: each passing observation
// passes, each breaking one breaks it with the breach it names.
func holdsItsCases(t *testing.T, name string, c checkerCases) {
	t.Helper()
	if got := checkerName(c.check); got != name {
		t.Errorf("%s: the table's entry checks %s", name, got)
	}
	if len(c.passes) == 0 || len(c.breaks) == 0 {
		t.Errorf("%s: want at least one passing and one breaking observation", name)
	}
	for what, o := range c.passes {
		if err := c.check(o); err != nil {
			t.Errorf("%s, %s: must pass, broke: %v", name, what, err)
		}
	}
	for _, b := range c.breaks {
		err := c.check(b.o)
		if err == nil {
			t.Errorf("%s, %s: must break, passed", name, b.name)
			continue
		}
		var br *Breach
		typed := errors.As(err, &br)
		switch {
		case b.tier == untyped && typed:
			t.Errorf("%s, %s: want an untyped breach (the row's), got %v", name, b.name, err)
		case b.tier != untyped && !typed:
			t.Errorf("%s, %s: want [%s] %s, got an untyped %v", name, b.name, b.tier, b.promise, err)
		case b.tier != untyped && (br.Tier != b.tier || br.Promise != b.promise):
			t.Errorf("%s, %s: want [%s] %s, got %v", name, b.name, b.tier, b.promise, err)
		}
	}
}

// Every checker in the table fails on each of its breaking observations,
// with the breach it names, and passes on each of its passing ones.
func TestEveryCheckerFailsOnABreakingObservation(t *testing.T) {
	for _, table := range []map[string]checkerCases{checkers, sharedCheckers} {
		for name, c := range table {
			t.Run(name, func(t *testing.T) { holdsItsCases(t, name, c) })
		}
	}
}

// Every row of the catalogue is judged by a checker of the table (a new
// checker without breaking cases fails here), and its verdict, not only its
// checker, fails on every breaking observation of its checker, and on one
// past its budget, and passes on every passing one. No entry of the table
// is left over from a checker no row uses.
func TestEveryRowsCheckerCanFail(t *testing.T) {
	kv := harness.DefaultBounds()
	used := map[string]bool{}
	for _, s := range All() {
		name := checkerName(s.Expect)
		used[name] = true
		c, ok := checkers[name]
		if !ok {
			t.Errorf("%s: its checker %s has no breaking observation in checkers_test.go's table", s.Name(), name)
			continue
		}
		for what, o := range c.passes {
			if r := s.Judge(kv, o); !r.Pass {
				t.Errorf("%s: %s must pass, failed: %s", s.Name(), what, r.Reason)
			}
			o.Latency = s.Budget(kv) + Tolerance + 1
			if r := s.Judge(kv, o); r.Pass || !hasBreach(r, Generic, PromiseBudget) {
				t.Errorf("%s: %s, past budget + tolerance, must break %q: %s", s.Name(), what, PromiseBudget, r.Reason)
			}
		}
		for _, b := range c.breaks {
			// On mcplocal (nil), and on each of mcplocal's own targets
			// that runs the row: a breach of a capability they do not
			// claim would never fail there.
			for _, target := range mcplocalTargets() {
				if target != nil && s.NotApplicable(target) != "" {
					continue
				}
				r := s.JudgeOn(target, kv, b.o)
				on := "mcplocal"
				if target != nil {
					on = target.Name()
				}
				switch {
				case r.Pass:
					t.Errorf("%s on %s: %s must fail, passed", s.Name(), on, b.name)
				case b.tier == untyped && !hasBreach(r, s.untyped("").Tier, s.Promise):
					t.Errorf("%s on %s: %s must break the row's promise %q: %s", s.Name(), on, b.name, s.Promise, r.Reason)
				case b.tier != untyped && !hasBreach(r, b.tier, b.promise):
					t.Errorf("%s on %s: %s must break [%s] %s: %s", s.Name(), on, b.name, b.tier, b.promise, r.Reason)
				}
			}
		}
	}
	var stale []string
	for name := range checkers {
		if !used[name] {
			stale = append(stale, name)
		}
	}
	sort.Strings(stale)
	if len(stale) > 0 {
		t.Errorf("checkers no row uses are in the table: %v", stale)
	}
}

// mcplocalTargets are nil (mcplocal, held to every promise) and mcplocal's
// own kinds of target, never started.
func mcplocalTargets() []harness.Target {
	return []harness.Target{nil, &harness.InProcess{}, &harness.Binary{Path: "bin/mcplocal"},
		&harness.Container{Image: "mcplocal:test"}, &harness.Cluster{Path: "bin/mcplocal", Replicas: 2}}
}

// hasBreach reports whether r lists a breach of promise with tier.
func hasBreach(r Result, tier Tier, promise string) bool {
	for _, b := range r.Breaches {
		if b.Tier == tier && b.Promise == promise {
			return true
		}
	}
	return false
}

// What a multi-step operation saw broken reaches the verdict: its untyped
// Broken as the row's own promise, its typed Breached as they are, on every
// row whichever its checker.
func TestEveryRowFailsOnWhatItsOperationSawBroken(t *testing.T) {
	kv := harness.DefaultBounds()
	typed := Breach{Tier: Generic, Promise: PromiseDelete, Detail: "the DELETEd id still served"}
	for _, s := range All() {
		c, ok := checkers[checkerName(s.Expect)]
		if !ok {
			continue // TestEveryRowsCheckerCanFail names it
		}
		for what, o := range c.passes {
			o.Broken = []string{"a step broke"}
			if r := s.Judge(kv, o); r.Pass || !hasBreach(r, s.untyped("").Tier, s.Promise) {
				t.Errorf("%s: %s with a step broken must break %q: %s", s.Name(), what, s.Promise, r.Reason)
			}
			o.Broken, o.Breached = nil, []Breach{typed}
			if r := s.Judge(kv, o); r.Pass || !hasBreach(r, Generic, PromiseDelete) {
				t.Errorf("%s: %s with a typed breach must break %q: %s", s.Name(), what, PromiseDelete, r.Reason)
			}
			break
		}
	}
}

// Every row that runs on a stateless proxy claiming every method it can
// forward fails there on each breaking observation of its checker that
// breaks a generic promise, and on what its operation saw broken: a row
// newly applying to such a proxy is judged there, not only on mcplocal.
func TestEveryRowOnAStatelessProxyCanFailThere(t *testing.T) {
	var forwards []string
	for _, m := range harness.ForwardableMethods {
		if m != harness.MethodSubscribe && m != harness.MethodSetLevel {
			forwards = append(forwards, m)
		}
	}
	target := shape(t, "stateless: true\nendpoint: \"/{{.Server}}/mcp\"\ntoolName: \"{{.Tool}}\"\nforwards: ["+strings.Join(forwards, ", ")+"]\n")
	kv := harness.DefaultBounds()
	ran := 0
	for _, s := range All() {
		if s.NotApplicable(target) != "" {
			continue
		}
		ran++
		c, ok := checkers[checkerName(s.Expect)]
		if !ok {
			continue // TestEveryRowsCheckerCanFail names it
		}
		for _, b := range c.breaks {
			if b.tier != Generic {
				continue
			}
			if r := s.JudgeOn(target, kv, b.o); r.Pass || !hasBreach(r, Generic, b.promise) {
				t.Errorf("%s on a stateless proxy: %s must break [%s] %s: %s", s.Name(), b.name, b.tier, b.promise, r.Reason)
			}
		}
		for what, o := range c.passes {
			o.Broken = []string{"a step broke"}
			if r := s.JudgeOn(target, kv, o); r.Pass {
				t.Errorf("%s on a stateless proxy: %s with a step broken must fail, passed", s.Name(), what)
			}
			break
		}
	}
	if ran == 0 {
		t.Fatal("no row runs on the stateless proxy")
	}
}
