package catalogue

import (
	"strings"
	"time"

	fakellm "github.com/mcpchaos/mcpchaos/fakes/llm"
	"github.com/mcpchaos/mcpchaos/scenarios/harness"
	"github.com/mcpchaos/mcpchaos/smoke"
)

// All returns the catalogue, in a stable order.
func All() []Scenario {
	var out []Scenario
	// The baseline: every operation answers, with a trace code.
	for _, op := range []Operation{ListTools, SmallCall, PaginatingCall} {
		out = append(out, Scenario{Fault: harness.None{}, Operation: op, Promise: "1 answered, 6 trace code",
			Labels: []string{"baseline"}, Budget: requestDeadline, Expect: answeredOK})
	}
	// Slow but healthy links still answer.
	for _, op := range []Operation{SmallCall, PaginatingCall} {
		out = append(out, Scenario{Fault: harness.Latency{Ms: 100}, Operation: op, Promise: "1 answered",
			Labels: []string{"network"}, Budget: requestDeadline, Expect: answeredOK})
	}
	// A link that fragments, or cuts answers off: every call is answered
	// within its deadline, with the result or a readable isError result.
	for _, f := range []harness.Fault{harness.Slicer{AvgBytes: 64, DelayUs: 200}, harness.LimitData{Bytes: 2048}} {
		for _, op := range []Operation{SmallCall, PaginatingCall} {
			out = append(out, Scenario{Fault: f, Operation: op, Promise: "1 answered within budget",
				Labels: []string{"network", "deadline"}, Budget: requestDeadline, Expect: answeredEitherWay})
		}
	}
	// An upstream that never answers, stalls, resets or is gone: answered
	// within the deadline with a readable isError result quoting the code.
	for _, f := range []harness.Fault{harness.Blackhole{}, harness.LinkDown{}, harness.Bandwidth{KBps: 0}, harness.ResetPeer{TimeoutMs: 1}} {
		for _, op := range []Operation{SmallCall, PaginatingCall} {
			out = append(out, Scenario{Fault: f, Operation: op, Promise: "1 answered within budget",
				Labels: []string{"network", "deadline"}, Budget: requestDeadline, Expect: answeredWithRecovery})
		}
	}
	out = append(out,
		Scenario{Fault: harness.ToolSlow{Tool: "search", Delay: 5 * time.Second, PastBudget: true}, Operation: PaginatingCall, Promise: "1 answered within budget",
			Labels: []string{"upstream", "deadline"}, Budget: requestDeadline, Expect: answeredWithRecovery},
		Scenario{Fault: harness.ToolHang{Tool: "search"}, Operation: PaginatingCall, Promise: "1 answered within budget",
			Labels: []string{"upstream", "deadline"}, Budget: requestDeadline, Expect: answeredWithRecovery},
		Scenario{Fault: harness.ToolHang{Tool: "update_page"}, Operation: SmallCall, Promise: "1 answered within budget",
			Labels: []string{"upstream", "deadline"}, Budget: requestDeadline, Expect: answeredWithRecovery},
		Scenario{Fault: harness.UpstreamRestart{}, Operation: CallAcrossFault, Promise: "1 the proxy reconnects to a restarted upstream",
			Labels: []string{"upstream", "restart"}, Budget: requestDeadline, Expect: answeredEitherWay},
		Scenario{Fault: harness.ToolError{Tool: "search"}, Operation: PaginatingCall, Promise: "1 answered",
			Labels: []string{"upstream"}, Budget: requestDeadline, Expect: isErrorPassedThrough},
		Scenario{Fault: harness.IngressHairpin{}, Operation: SmallCall, Promise: "1 answered, the error's shape named",
			Labels: []string{"upstream", "shape"}, Budget: requestDeadline, Expect: shapeNamed},
		Scenario{Fault: harness.HandlerPanic{Tool: "docmost_update_page"}, Operation: SmallCall, Promise: "1 a panic still answers",
			Labels: []string{"proxy", "panic"}, Budget: requestDeadline, Expect: answeredWithRecovery},
		Scenario{Fault: harness.HandlerHang{Tool: "docmost_update_page"}, Operation: SmallCall, Promise: "1 the outer deadline answers a hung handler",
			Labels: []string{"proxy", "deadline", "hang"}, Budget: requestDeadline, Expect: answeredWithRecovery},
	)
	// Sessions: a restart loses every session; the client's next call still
	// works on its old id, says so once, and the audit trail keeps the user.
	users := harness.EnvOptions{Users: map[string]string{"alice": "alice-token"}}
	out = append(out,
		Scenario{Fault: harness.ProxyRestart{}, Operation: Reconnect, Promise: "2 stale session recreated",
			Labels: []string{"sessions", "restart"}, Env: users, Budget: requestDeadline, Expect: sessionAnswered,
			Claims: []string{harness.CapSessionAdoption, harness.CapAuditAPI}},
		Scenario{Fault: harness.ProxyKill{}, Operation: Reconnect, Promise: "2 stale session recreated",
			Labels: []string{"sessions", "restart", "kill"}, Env: users, Budget: requestDeadline, Expect: sessionAnswered,
			Claims: []string{harness.CapSessionAdoption, harness.CapAuditAPI}},
		Scenario{Fault: harness.None{}, Operation: DeleteEmptyJSON, Promise: "3 DELETE closes, 2 deleted id not adopted",
			Labels: []string{"sessions", "delete"}, Env: users, Budget: requestDeadline, Expect: sessionAnswered},
	)
	out = append(out, securityScenarios()...)
	out = append(out, routingScenarios()...)
	out = append(out, heldSecretScenarios()...)
	out = append(out, instancesScenarios()...)
	out = append(out, credentialScenarios()...)
	out = append(out, processScenarios()...)
	out = append(out, listenScenarios()...)
	out = append(out, readingScenarios()...)
	// Promise 4: LLM-optional pagination is bounded, falls back to numbered
	// pages and says so, whatever the LLM does; small results are untouched.
	out = append(out, Scenario{Fault: harness.None{}, Operation: PaginatedSearch, Promise: "4 smart titles when the LLM answers",
		Labels: []string{"stages", "paginate"}, Env: paginateEnv(true), Budget: paginationBudget, Expect: smartTitles})
	out = append(out, Scenario{Fault: harness.NoLLM{}, Operation: PaginatedSearch, Promise: "4 no LLM is a choice, not a degradation",
		Labels: []string{"stages", "paginate", "no-llm"}, Env: paginateEnv(false), Budget: paginationBudget, Expect: numberedQuietly})
	for _, f := range llmFaults() {
		out = append(out, Scenario{Fault: f, Operation: PaginatedSearch, Promise: "4 bounded, falls back, says so",
			Labels: []string{"stages", "paginate", "llm"}, Env: paginateEnv(true), Budget: paginationBudget, Expect: degradedTitles})
	}
	// An LLM that fails at random, drawn from the run's seed: whatever it
	// draws, the index is bounded and either the LLM's or numbered pages with
	// the notice; `--seed S --label seeded` replays the same draws.
	out = append(out, Scenario{Fault: seededLLM(), Operation: PaginatedSearch, Promise: "4 bounded, falls back, says so",
		Labels: []string{"stages", "paginate", "llm", "seeded"}, Env: paginateEnv(true), Budget: paginationBudget, Expect: titlesEitherWay})
	// The LLM link itself failing: the same bound and fallback.
	for _, f := range []harness.Fault{harness.Blackhole{Link: harness.LinkLLM}, harness.LinkDown{Link: harness.LinkLLM}, harness.ResetPeer{Link: harness.LinkLLM, TimeoutMs: 1}} {
		out = append(out, Scenario{Fault: f, Operation: PaginatedSearch, Promise: "4 bounded, falls back, says so",
			Labels: []string{"stages", "paginate", "llm", "network"}, Env: paginateEnv(true), Budget: paginationBudget, Expect: degradedTitles})
	}
	out = append(out, Scenario{Fault: harness.LLMFault{Step: fakellm.Step{Kind: fakellm.HangBeforeHeaders}}, Operation: SmallCallStaged,
		Promise: "4 small results untouched", Labels: []string{"stages", "paginate", "llm"}, Env: paginateEnv(true),
		Budget: func(harness.Bounds) time.Duration { return 0 }, Expect: untouched})
	out = append(out, Scenario{Fault: harness.LLMFault{Step: fakellm.Step{Kind: fakellm.NotFound}}, Operation: PaginatedSearch,
		Promise: "5 the failover chain answers within one budget", Labels: []string{"stages", "llm", "failover"},
		Env: failoverEnv(), Budget: paginationBudget, Expect: answeredByFallback})
	out = append(out, Scenario{Fault: harness.LLMFault{Step: fakellm.Step{Kind: fakellm.Slow, Delay: 200 * time.Millisecond}},
		Operation: PaginatedSearch, Promise: "5 one budget spans the stage's recursion",
		Labels: []string{"stages", "summarize", "llm"}, Env: summarizeEnv(), Budget: stageBudget, Expect: excerptsForTheRest})
	// The gate: begin_session ranks prompts with the LLM, bounded, and falls
	// back to priority/keyword order, saying so.
	out = append(out,
		Scenario{Fault: harness.None{}, Operation: BeginSession, Promise: "4 LLM ranking when it answers",
			Labels: []string{"gate"}, Env: gateEnv(true), Budget: gateBudget, Expect: rankedByLLM},
		Scenario{Fault: harness.NoLLM{}, Operation: BeginSession, Promise: "4 no LLM is a choice, not a degradation",
			Labels: []string{"gate", "no-llm"}, Env: gateEnv(false), Budget: gateBudget, Expect: fallbackQuietly},
	)
	for _, k := range []fakellm.Kind{fakellm.HangBeforeHeaders, fakellm.NotFound, fakellm.Overloaded} {
		out = append(out, Scenario{Fault: harness.LLMFault{Step: fakellm.Step{Kind: k}}, Operation: BeginSession,
			Promise: "4 bounded, falls back, says so", Labels: []string{"gate", "llm"}, Env: gateEnv(true),
			Budget: gateBudget, Expect: fallbackWithNotice})
	}
	// Promise 7: every method family, healthy and under network faults.
	out = append(out, surfaceScenarios()...)
	out = append(out, genericSecurityScenarios()...)
	out = append(out, genericScenarios()...)
	out = append(out, wireScenarios()...)
	// Incidents replayed from their own rows and kept (mcpchaos replay
	// --as-scenario).
	out = append(out, Kept()...)
	return out
}

// llmFaults are the fake LLM behaviours every LLM-optional operation must
// survive: each ends in numbered pages within the pagination timeout.
func llmFaults() []harness.Fault {
	var out []harness.Fault
	for _, k := range []fakellm.Kind{fakellm.HangBeforeHeaders, fakellm.HangAfterHeaders, fakellm.NotFound,
		fakellm.ServerError, fakellm.Overloaded, fakellm.StallMidStream, fakellm.Empty, fakellm.Malformed, fakellm.Reset} {
		out = append(out, harness.LLMFault{Step: fakellm.Step{Kind: k}})
	}
	// Slower than the pagination timeout: the answer would come too late.
	out = append(out, harness.LLMFault{Step: fakellm.Step{Kind: fakellm.Slow, Delay: 5 * time.Second}})
	return out
}

// seededLLM is the registry's llm-random with its default choices.
func seededLLM() harness.Fault {
	f, err := harness.ParseFault("llm-random")
	if err != nil {
		panic(err) // the registry's defaults build: its test holds it
	}
	return f
}

// titlesEitherWay: the LLM's titles when its draw answered, else numbered
// pages with the notice.
func titlesEitherWay(o Observation) error {
	if strings.Contains(o.Text, "⚠") {
		return degradedTitles(o)
	}
	return smartTitles(o)
}

// answeredEitherWay: the call got its result, or a failure as an isError
// result that quotes its trace code (a JSON-RPC error there breaks only
// mcplocal's error shapes); never an HTTP-level failure or silence.
func answeredEitherWay(o Observation) error {
	if o.IsError || EndingOf(o) == EndRPCError {
		return answeredWithRecovery(o)
	}
	return answeredOK(o)
}

// isErrorPassedThrough: the upstream's own isError result reaches the client
// with the proxy's trace code in _meta.
func isErrorPassedThrough(o Observation) error {
	if err := unanswered(o); err != nil {
		return err
	}
	switch {
	case o.Err != nil:
		return broke(PromisePassThrough, "the upstream's isError result arrived as a JSON-RPC error: %s", rpcText(o.Err))
	case !o.IsError:
		return broke(PromisePassThrough, "the upstream's isError result arrived as a success")
	case !smoke.ValidTraceCode(o.Trace):
		return noTraceCode(o.Trace)
	}
	return nil
}
