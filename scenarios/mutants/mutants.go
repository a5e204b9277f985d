// Package mutants holds every regression we know of as a mutant: a small
// patch to the production code that reintroduces one bug from the seed's
// incident notes, and the check of the suite that must kill it.
//
// The patches are unified diffs (patches/NN-name.patch, made with git diff
// against HEAD) embedded in the package. Run applies each one to a copy of
// the module and runs its check there: a check that fails kills the mutant;
// one that passes lets it survive, which means the suite no longer guards
// against that regression. A patch that no longer applies is an error of the
// run: the patches must be kept in step with the code they mutate (the unit
// test of this package catches that in `make test`).
package mutants

import (
	"embed"
	"fmt"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"
)

//go:embed patches/*.patch
var patchFS embed.FS

// Mutant is one known regression, as a patch, with the check that kills it.
type Mutant struct {
	Name string
	// PatchFile is the patch's file name under patches/.
	PatchFile string
	// Patch is the unified diff that reintroduces the bug.
	Patch string
	// Regression is the bug, in one sentence, as the seeds describe it.
	Regression string
	// Kill is how the suite kills the mutant.
	Kill Check
}

// CheckKind says which part of the suite a Check runs.
type CheckKind int

// The kinds of check.
const (
	// Catalogue: `go run ./cmd/mcpchaos run --label LABEL` must exit non-zero.
	Catalogue CheckKind = iota + 1
	// Ginkgo: the Ginkgo suite in ./scenarios, filtered by label (and
	// optionally focused on one spec), must fail.
	Ginkgo
	// GoTest: `go test -count=1 PKG -run RUN` must fail.
	GoTest
)

func (k CheckKind) String() string {
	switch k {
	case Catalogue:
		return "catalogue"
	case Ginkgo:
		return "ginkgo"
	case GoTest:
		return "go test"
	}
	return fmt.Sprintf("kind %d", int(k))
}

// Check is one way the suite kills a mutant.
type Check struct {
	Kind CheckKind
	// Label is the catalogue label (Catalogue) or the Ginkgo label filter (Ginkgo).
	Label string
	// Focus is a Ginkgo --focus regexp (Ginkgo only; optional).
	Focus string
	// Pkg is the package pattern of a GoTest check ("./proxy/llm").
	Pkg string
	// Run is the -run regexp of a GoTest check.
	Run string
	// SDKPath runs the check with the raw tools/call relay off in every
	// harness world that does not choose (MCPCHAOS_RELAY=0): for a mutant
	// that breaks what only the go-sdk path of a plain tools/call does,
	// which the relay, on by default, no longer exercises.
	SDKPath bool
}

// relayEnv is harness.RelayEnv, spelled out so this package does not link
// the harness (TestRelayEnvIsTheHarnesss keeps the two equal).
const relayEnv = "MCPCHAOS_RELAY"

// Env is what the check adds to the environment its command runs in.
func (c Check) Env() []string {
	if c.SDKPath {
		return []string{relayEnv + "=0"}
	}
	return nil
}

// GinkgoSuite is the package whose Ginkgo suite Ginkgo checks run.
const GinkgoSuite = "./scenarios"

// Args is the check's command line, from the module root.
func (c Check) Args() []string {
	switch c.Kind {
	case Catalogue:
		return []string{"go", "run", "./cmd/mcpchaos", "run", "--label", c.Label}
	case Ginkgo:
		// --fail-fast: one failing spec kills the mutant; the rest of the
		// label's specs would only cost time.
		args := []string{"go", "run", "github.com/onsi/ginkgo/v2/ginkgo", "--no-color", "--fail-fast", "--label-filter=" + c.Label}
		if c.Focus != "" {
			args = append(args, "--focus="+c.Focus)
		}
		return append(args, GinkgoSuite)
	case GoTest:
		return []string{"go", "test", "-count=1", "-failfast", c.Pkg, "-run", c.Run}
	}
	return nil
}

// linkFlags are the build flags of every binary a check builds: no DWARF
// (-w). The link is most of a mutant's build (the patched package and its
// importers compile in seconds; each binary links in whole), and DWARF is
// about a third of the link's CPU. Stack traces keep their function names
// and lines (the symbol table stays), so no check loses what it reads.
var linkFlags = []string{"-ldflags=-w"}

// testBuildFlags are added to linkFlags where a check builds a test binary:
// no vet. `go test -c` vets the package under test by default, about a
// second of CPU per mutant (1.3 s of 7.8 for the scenarios suite's test
// binary); make test vets the unpatched tree once, and a mutant is judged by
// its check, never by vet.
var testBuildFlags = []string{"-vet=off"}

// prepared is how judge runs the check in a copy whose scratch directory is
// tmp: the commands that build it (each must exit 0, or the mutant does not
// build), then the built binary's command line, the directory, relative to
// the module root, it runs in, and what it adds to the environment besides
// Env. It does what Args says with one link per binary: `go test` runs its
// test binary in the package's directory, and the Ginkgo CLI runs the
// suite's test binary with its flags prefixed.
func (c Check) prepared(tmp string) (build [][]string, run []string, dir string, env []string) {
	bin := filepath.Join(tmp, "bin")
	with := func(args ...string) []string { // go SUBCOMMAND linkFlags [testBuildFlags] args...
		flags := linkFlags
		if args[1] == "test" {
			flags = append(slices.Clip(linkFlags), testBuildFlags...)
		}
		return append(append(args[:2:2], flags...), args[2:]...)
	}
	switch c.Kind {
	case Catalogue:
		exe := filepath.Join(bin, "mcpchaos")
		return [][]string{with("go", "build", "-o", exe, "./cmd/mcpchaos")},
			append([]string{exe}, c.Args()[3:]...), ".", nil // the built `go run ./cmd/mcpchaos`
	case Ginkgo:
		exe := filepath.Join(bin, "scenarios.test")
		run := []string{exe, "--ginkgo.no-color", "--ginkgo.fail-fast", "--ginkgo.label-filter=" + c.Label}
		if c.Focus != "" {
			run = append(run, "--ginkgo.focus="+c.Focus)
		}
		// The suite runs mcplocal and mcpctl for its binary target. They
		// are built here, so a mutant that breaks them is an error, not a
		// kill by the suite's own build, and handed to the suite
		// (MCPCHAOS_MCPLOCAL, MCPCHAOS_MCPCTL) so it does not link them again.
		return [][]string{with("go", "build", "-o", bin+string(filepath.Separator), "./cmd/mcplocal", "./cmd/mcpctl"),
				with("go", "test", "-c", "-o", exe, GinkgoSuite)},
			run, GinkgoSuite,
			[]string{"MCPCHAOS_MCPLOCAL=" + filepath.Join(bin, "mcplocal"), "MCPCHAOS_MCPCTL=" + filepath.Join(bin, "mcpctl")}
	case GoTest:
		exe := filepath.Join(bin, "check.test")
		return [][]string{with("go", "test", "-c", "-o", exe, c.Pkg)},
			[]string{exe, "-test.count=1", "-test.failfast", "-test.run", c.Run}, c.Pkg, nil
	}
	return nil, nil, ".", nil
}

// String is the command line, quoted where a shell needs it, after the
// environment the check adds (Env).
func (c Check) String() string {
	args := c.Args()
	if args == nil {
		return fmt.Sprintf("invalid check (kind %d)", c.Kind)
	}
	args = append(c.Env(), args...)
	out := make([]string, len(args))
	for i, a := range args {
		if strings.ContainsAny(a, " |()^$*?[]&;'\"") {
			a = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
		out[i] = a
	}
	return strings.Join(out, " ")
}

// Validate reports a check that cannot run.
func (c Check) Validate() error {
	switch c.Kind {
	case Catalogue:
		if c.Label == "" {
			return fmt.Errorf("catalogue check without a label")
		}
	case Ginkgo:
		if c.Label == "" {
			return fmt.Errorf("ginkgo check without a label filter")
		}
	case GoTest:
		if !strings.HasPrefix(c.Pkg, "./") || c.Run == "" {
			return fmt.Errorf("go test check needs a ./package and a -run regexp, got %q %q", c.Pkg, c.Run)
		}
	default:
		return fmt.Errorf("check of unknown kind %d", c.Kind)
	}
	return nil
}

func inCatalogue(label string) Check { return Check{Kind: Catalogue, Label: label} }
func goTest(pkg, run string) Check   { return Check{Kind: GoTest, Pkg: pkg, Run: run} }

// table is every mutant, by patch file; All fills in the patches.
var table = []Mutant{
	{Name: "unbounded-paginate", PatchFile: "01-unbounded-paginate.patch",
		Regression: "paginate awaits the LLM's page titles with no timeout and no budget, so a provider that hangs hangs the paginating tool call (the seed's 1800 s docmost_search).",
		Kill:       inCatalogue("paginate")},
	{Name: "per-provider-timeouts", PatchFile: "02-per-provider-timeouts.patch",
		Regression: "the LLM adapter caps each provider attempt but has no budget for the whole failover chain, so the worst case is N × the provider timeout.",
		Kill:       goTest("./proxy/llm", "^(TestHangingChainIsBoundedByTheBudget|TestBudgetSpentAcrossSlowProviders)$")},
	{Name: "per-call-cap-no-stage-budget", PatchFile: "03-per-call-cap-no-stage-budget.patch",
		Regression: "summarize-tree's LLM calls ignore the stage budget and only get a per-call cap, which its recursion over sections multiplies instead of bounding.",
		Kill:       goTest("./proxy/stage", "^TestSummarizeTreeDegradesSectionBySection$")},
	{Name: "budget-gated-cache", PatchFile: "04-budget-gated-cache.patch",
		Regression: "the title cache is read only after the budget check, so a warm cache is not served once the budget is spent.",
		Kill:       goTest("./proxy/stage", "^TestWarmCacheIsServedWithTheBudgetSpent$")},
	{Name: "no-llm-is-degraded", PatchFile: "05-no-llm-is-degraded.patch",
		Regression: "\"no LLM configured\" is reported as a degradation, with a ⚠ notice, although it is a deliberate choice.",
		Kill:       goTest("./proxy/stage", "^TestNoLLMConfiguredIsNotADegradation$")},
	{Name: "stage-failure-discards-work", PatchFile: "06-stage-failure-discards-work.patch",
		Regression: "summarize-tree's single-block path has no degraded fallback: a failed LLM call makes it return the input untouched, discarding the stage's work without saying so.",
		Kill:       goTest("./proxy/stage", "^TestSummarizeSingleBlockDegradesInsteadOfDiscarding$")},
	{Name: "degradation-missing-from-audit", PatchFile: "07-degradation-missing-from-audit.patch",
		Regression: "the stage_execution audit row loses degraded/degradedReason, so a degradation is invisible in the trace.",
		Kill:       goTest("./proxy/stage", "^TestPipelineRunWholeShape$")},
	{Name: "bare-404", PatchFile: "08-bare-404.patch",
		Regression: "an unknown Mcp-Session-Id (after a restart) gets the SDK's bare 404 outside the JSON-RPC envelope instead of being recreated.",
		Kill:       goTest("./proxy/entry", "^TestASessionTheSDKForgotIsRecreated$")},
	{Name: "delete-empty-json-rejected", PatchFile: "09-delete-empty-json-rejected.patch",
		Regression: "DELETE with Content-Type: application/json and an empty body is rejected (FST_ERR_CTP_EMPTY_JSON_BODY), leaking the session it should close.",
		Kill:       goTest("./proxy/entry", "^TestDeleteReleasesTheUpstreamSession$")},
	{Name: "recreated-without-user", PatchFile: "10-recreated-without-user.patch",
		Regression: "a recreated session loses its user, so its audit rows no longer say who made the calls.",
		Kill:       goTest("./proxy/entry", "^TestRestartRecreatesTheOwnersSessionOnly$")},
	{Name: "silent-recreation", PatchFile: "11-silent-recreation.patch",
		Regression: "the first tools/call of a recreated session carries no ⚠ Session state unavailable notice, so the agent never calls begin_session again.",
		Kill:       goTest("./proxy/session", "^TestRecreatedSessionOwesOneNotice$")},
	{Name: "recreation-under-new-id", PatchFile: "12-recreation-under-new-id.patch",
		Regression: "a stale session is recreated under a new id instead of the client's own, which the client cannot follow.",
		Kill:       goTest("./proxy/entry", "^TestASessionTheSDKForgotIsRecreated$")},
	{Name: "correlation-id-dropped", PatchFile: "13-correlation-id-dropped.patch",
		Regression: "the tool_call_trace row is written without the correlationId (emitTrace dropped it), so the request's durable rows cannot be found by its trace code.",
		Kill:       goTest("./proxy/project", "^TestTheGateOpensOnBeginSession$")},
	{Name: "gated-calls-untraced", PatchFile: "14-gated-calls-untraced.patch",
		Regression: "tool calls a gated project refuses write no tool_call_trace row.",
		Kill:       goTest("./proxy/project", "^TestTheGateOpensOnBeginSession$")},
	{Name: "shared-trace-code", PatchFile: "15-shared-trace-code.patch",
		Regression: "one mutable trace code is kept per session and overwritten by each request, so two requests in flight on one session write rows under each other's code.",
		Kill:       Check{Kind: Ginkgo, Label: "trace", Focus: "gives two concurrent calls on one session their own codes"}},
	{Name: "panic-answers-nothing", PatchFile: "16-panic-answers-nothing.patch",
		Regression: "a panic in a request handler is not recovered into an answer (the seed's unhandled rejection on a hijacked socket).",
		Kill:       goTest("./proxy/deadline", "^TestEveryPathIsAnsweredByTheOneGuard$")},
	{Name: "cancel-does-not-stop-failover", PatchFile: "17-cancel-does-not-stop-failover.patch",
		Regression: "a caller's cancel does not stop the LLM failover chain: a cancelled attempt counts as a failed provider and the next one is tried.",
		Kill:       goTest("./proxy/llm", "^(TestCallerCancelStopsTheChain|TestAlreadyCancelledStartsNothing)$")},
	{Name: "version-string-sorting", PatchFile: "18-version-string-sorting.patch",
		Regression: "claude-<family>-latest auto-follow picks the model whose id sorts last as a string instead of the newest by created_at (claude-opus-4-5 above claude-opus-5).",
		Kill:       goTest("./proxy/llm", "^TestAutoFollowPicksNewestByCreatedAt$")},
	{Name: "silent-panic", PatchFile: "19-silent-panic.patch",
		Regression: "a handler panic is recovered but answers nothing, so the client waits out the whole deadline (the seed's throw that became silence).",
		Kill:       goTest("./proxy/deadline", "^TestEveryPathIsAnsweredByTheOneGuard$")},
	{Name: "no-request-deadline", PatchFile: "20-no-request-deadline.patch",
		Regression: "requests carry no outer deadline, so a handler that hangs past every inner bound is never answered.",
		Kill:       goTest("./proxy/deadline", "^TestEveryPathIsAnsweredByTheOneGuard$")},
	{Name: "liveness-is-healthy", PatchFile: "21-liveness-is-healthy.patch",
		Regression: "a server that only answers tools/list is reported healthy, the false green that showed eight healthy servers while UniFi never reached its controller.",
		Kill:       goTest("./proxy/health", "^TestAnsweringToolsListIsLiveNotHealthy$")},
	{Name: "session-hijack", PatchFile: "32-session-hijack.patch",
		Regression: "a user with a valid token of his own uses, and DELETEs, another user's session by presenting its Mcp-Session-Id.",
		Kill:       goTest("./proxy/entry", "^TestOnlyTheOwnerUsesOrClosesASession$")},
	{Name: "adopt-others-id", PatchFile: "33-adopt-others-id.patch",
		Regression: "after a restart, whoever presents an old session id first adopts it, another user included.",
		Kill:       goTest("./proxy/entry", "^TestRestartRecreatesTheOwnersSessionOnly$")},
	{Name: "tombstones-in-memory", PatchFile: "34-tombstones-in-memory.patch",
		Regression: "DELETEd ids are remembered in memory only, so after a restart a closed id is adopted again.",
		Kill:       goTest("./proxy/entry", "^TestRestartRecreatesTheOwnersSessionOnly$")},
	{Name: "session-ids-unvalidated", PatchFile: "35-session-ids-unvalidated.patch",
		Regression: "session ids are not validated: non-ASCII, spaced and megabyte ids are looked up, adopted and stored.",
		Kill:       goTest("./proxy/entry", "^TestInvalidSessionIDsAreRefusedBeforeAnyLookup$")},
	{Name: "sessions-uncapped", PatchFile: "36-sessions-uncapped.patch",
		Regression: "no cap on live sessions, per user or in total: a client can open sessions until the proxy runs out of memory.",
		Kill:       goTest("./proxy/session", "^TestAdmitNamesTheCapThatIsFull$")},
	{Name: "sessions-never-expire", PatchFile: "37-sessions-never-expire.patch",
		Regression: "idle sessions are never closed, so they and their upstream sessions accumulate forever.",
		Kill:       goTest("./proxy/session", "^TestIdleWholeShape$")},
	{Name: "refused-delete-tombstones", PatchFile: "38-refused-delete-tombstones.patch",
		Regression: "a DELETE of an id the caller does not own (or that was never issued) still tombstones it, so made-up DELETEs grow the store and kill other ids.",
		Kill:       goTest("./proxy/entry", "^TestRestartRecreatesTheOwnersSessionOnly$")},
	{Name: "bearer-case-sensitive", PatchFile: "39-bearer-case-sensitive.patch",
		Regression: "`bearer` in lower case is refused, though RFC 6750's scheme is case-insensitive.",
		// Judged by the package test that states it; the Ginkgo scenario
		// (label bearer: real clients sending the scheme in each case) and
		// the ownership scenario kill it too.
		Kill: goTest("./proxy/entry", "^TestBearerSchemeIsCaseInsensitive$")},
	{Name: "shared-token", PatchFile: "40-shared-token.patch",
		Regression: "two users configured with one token silently overwrite each other: one acts as the other.",
		Kill:       goTest("./proxy", "^TestTwoUsersWithOneTokenIsAConfigError$")},
	{Name: "audit-readable-by-all", PatchFile: "42-audit-readable-by-all.patch",
		Regression: "GET /api/v1/audit?trace= or ?session= shows any user every row, so one trace code handed over in an error reveals another user's session.",
		Kill:       goTest("./proxy", "^TestAuditAPIWholeShape$")},
	{Name: "no-origin-check", PatchFile: "43-no-origin-check.patch",
		Regression: "no Origin or Host validation: a page on evil.example (or rebound to 127.0.0.1) drives the MCP endpoints and /api/v1 (the MCP spec requires Origin validation).",
		Kill:       goTest("./proxy", "^TestProbesAndOriginRefusalsWholeShape$")},
	{Name: "unbounded-io", PatchFile: "44-unbounded-io.patch",
		Regression: "nothing bounds I/O: a body trickled byte by byte holds a connection forever, idle keep-alive connections never close, headers may be huge and an upstream's 150 MB answer is read whole.",
		Kill:       goTest("./proxy/upstream", "^TestLimitResponsesStopsAtTheKnob$")},
	{Name: "stamp-unguarded", PatchFile: "22-stamp-unguarded.patch",
		Regression: "stamping the trace code on the SDK's empty result (ping, logging/setLevel) panics outside any recover, and one keep-alive ping kills the proxy with every user's sessions.",
		Kill:       goTest("./proxy/deadline", "^TestWorkAfterTheHandlerNeverPanics$")},
	{Name: "prompt-get-not-forwarded", PatchFile: "23-prompt-get-not-forwarded.patch",
		Regression: "prompts/get is not forwarded: the proxy answers it from its own empty prompt set, so a listed prompt cannot be fetched (a method not forwarded).",
		Kill:       goTest("./proxy/project", "^TestTheNonToolSurfaceIsMergedAndRouted$")},
	{Name: "progress-dropped", PatchFile: "24-progress-dropped.patch",
		Regression: "the upstream's notifications/progress are dropped instead of relayed to the client request they belong to.",
		// The go-sdk client's progress handler is the SDK path's, which the
		// package test runs; the raw relay passes progress on itself (its
		// twin: 132).
		Kill: goTest("./proxy/project", "^TestUpstreamMessagesReachTheCallingClient$")},
	{Name: "request-to-wrong-session", PatchFile: "25-request-to-wrong-session.patch",
		Regression: "an upstream's sampling/createMessage is sent to another client session than the one whose call caused it.",
		// The go-sdk client's sampling handler is the SDK path's: the raw
		// relay, on by default, asks the client itself (its twin: 215).
		Kill: Check{Kind: Ginkgo, Label: "forward", Focus: "routes sampling, elicitation and roots", SDKPath: true}},
	{Name: "shared-upstream-sessions", PatchFile: "26-shared-upstream-sessions.patch",
		Regression: "one upstream session is shared by every client session, so one user's upstream state and server-to-client requests reach another's.",
		Kill:       goTest("./proxy/project", "^TestASessionInitializedAgainUnderItsIDClosesTheOldState$")},
	{Name: "release-keeps-upstream-sessions", PatchFile: "27-release-keeps-upstream-sessions.patch",
		Regression: "closing a client session leaves its upstream sessions open, so they pile up until the upstream or the knob gives out.",
		Kill:       goTest("./proxy/project", "^TestReleaseForgetsTheSession$")},
	{Name: "capabilities-overclaimed", PatchFile: "28-capabilities-overclaimed.patch",
		Regression: "initialize advertises every capability the proxy could handle (resources, prompts, completion, logging) whatever its upstreams offer.",
		Kill:       goTest("./proxy/project", "^TestInitializeAdvertisesTheUpstreamsUnion$")},
	{Name: "set-level-not-forwarded", PatchFile: "29-set-level-not-forwarded.patch",
		Regression: "logging/setLevel is answered by the proxy but not passed upstream, so the upstream never sends the log messages the client asked for.",
		Kill:       goTest("./proxy/project", "^TestSetLevelReachesEveryUpstreamSessionThatLogs$")},
	{Name: "oauth-token-as-api-key", PatchFile: "45-oauth-token-as-api-key.patch",
		Regression: "every Anthropic key goes out as x-api-key, so a Claude subscription OAuth token (sk-ant-oat…) never authenticates (it needs Authorization: Bearer with the oauth beta).",
		Kill:       goTest("./proxy/llm", "^(TestAnthropicKeyHeaders|TestOAuthGatedTokenIsExplained)$")},
	{Name: "oauth-gating-unexplained", PatchFile: "46-oauth-gating-unexplained.patch",
		Regression: "a subscription OAuth token that Anthropic gates to its own client fails as an unexplained 404/429, with nothing saying an API key is needed.",
		Kill:       goTest("./proxy/llm", "^TestOAuthGatedTokenIsExplained$")},
	{Name: "upstream-shape-unnamed", PatchFile: "47-upstream-shape-unnamed.patch",
		Regression: "an L7 proxy's bare plain-text `Access denied` 403 in front of an upstream surfaces as a generic transport error, hiding the tell (the error's shape) that something between mcplocal and the server answered.",
		Kill:       goTest("./proxy/upstream", "^TestPlainTextAnswerIsNamed$")},
	{Name: "llm-shape-unnamed", PatchFile: "48-llm-shape-unnamed.patch",
		Regression: "a plain-text or HTML answer where an LLM provider's JSON was expected is reported as an unrecognised error body or malformed JSON, not as something else answering.",
		Kill:       goTest("./proxy/llm", "^TestProviderAnswerOfAnotherShapeIsNamed$")},
	{Name: "pause-exempts-deadline", PatchFile: "49-pause-exempts-deadline.patch",
		Regression: "a request that waited on a paused project is exempted from the request deadline instead of having its clock suspended, so the exemption becomes a bypass: a handler that hangs after resume is never answered.",
		Kill:       goTest("./proxy", "^TestHangAfterResumeIsAnsweredAtTheRearmedDeadline$")},
	{Name: "pause-clock-keeps-running", PatchFile: "50-pause-clock-keeps-running.patch",
		Regression: "the deadline clock keeps running while a request waits on a paused project, so a pause longer than the deadline answers every queued request as timed out.",
		Kill:       goTest("./proxy", "^TestPausedRequestGetsItsFullDeadlineAfterResume$")},
	{Name: "pause-wait-unbounded", PatchFile: "51-pause-wait-unbounded.patch",
		Regression: "a request waits on a paused project for as long as the pause lasts: MCPCTL_PAUSE_MAX_WAIT_MS bounds nothing.",
		Kill:       goTest("./proxy", "^TestPauseMaxWaitAnswersARequestLeftWaiting$")},
	{Name: "pause-invisible", PatchFile: "52-pause-invisible.patch",
		Regression: "a paused project does not show as paused in /readyz or /api/v1/instances, so its held requests look like a hang.",
		Kill:       goTest("./proxy", "^TestPausedProjectShowsAsPaused$")},
	// 53-64: each class of slip the suite used to let through,
	// killed by the spec that states the whole promise.
	{Name: "notice-without-reason", PatchFile: "53-notice-without-reason.patch",
		Regression: "the gate's degradation loses its reason: the notice reads \"⚠ Smart prompt-selection unavailable ()\", which a prefix check passes.",
		Kill:       goTest("./proxy/gate", "^TestBeginFallsBackAndSaysWhy$")},
	{Name: "llm-attempt-without-user", PatchFile: "54-llm-attempt-without-user.patch",
		Regression: "llm_attempt rows are written without the user, though every other row of the request carries it.",
		Kill:       goTest("./proxy/audit/llmrows", "^TestAttemptsBecomeChildRowsInSequence$")},
	{Name: "unhealthy-one-late", PatchFile: "55-unhealthy-one-late.patch",
		Regression: "health turns unhealthy one failure after failureThreshold (> instead of >=): still \"eventually\" unhealthy.",
		Kill:       goTest("./proxy/health", "^TestUnhealthyAtTheThresholdNotAfter$")},
	{Name: "fallback-cached-as-answer", PatchFile: "56-fallback-cached-as-answer.patch",
		Regression: "paginate caches its numbered fallback as if the LLM had answered, so after the LLM recovers the same request stays degraded, silently.",
		Kill:       goTest("./proxy/stage", "^TestAFallbackIsNeverCachedAsTheLLMsAnswer$")},
	{Name: "no-session-notice-on-failure", PatchFile: "57-no-session-notice-on-failure.patch",
		Regression: "a recreated session whose first call fails gets no ⚠ Session state unavailable notice on it (the notice waits for a success).",
		Kill:       Check{Kind: Ginkgo, Label: "state", Focus: "recreated session so even when its first call"}},
	{Name: "fallback-names-reversed", PatchFile: "58-fallback-names-reversed.patch",
		Regression: "the gate's fallback order breaks ties by name backwards; only its first entry was ever checked.",
		Kill:       goTest("./proxy/gate", "^TestFallbackOrdersByHitsThenPriorityThenName$")},
	{Name: "error-data-loses-trace", PatchFile: "59-error-data-loses-trace.patch",
		Regression: "a JSON-RPC error of another method than tools/call that has data of its own (resources/read's uri) goes out without the trace code.",
		Kill:       goTest("./proxy/deadline", "^TestJSONRPCErrorsKeepTheirCodeAndGainTheTrace$")},
	{Name: "auth-on-initialize-only", PatchFile: "60-auth-on-initialize-only.patch",
		Regression: "the bearer token is checked on initialize only: a request carrying a session id, live or stale, passes without one.",
		Kill:       goTest("./proxy/entry", "^TestAWrongTokenIsRefusedOnAnOpenProject$")},
	{Name: "delete-of-unknown-id-forgotten", PatchFile: "61-delete-of-unknown-id-forgotten.patch",
		Regression: "a DELETE of an id the proxy no longer knows (after a restart) leaves no tombstone, so the closed id is adopted again.",
		Kill:       goTest("./proxy/entry", "^TestRestartRecreatesTheOwnersSessionOnly$")},
	{Name: "pagination-reads-gate-timeout", PatchFile: "62-pagination-reads-gate-timeout.patch",
		Regression: "paginate reads the gate's timeout knob instead of its own; the compressed test knobs give both 400 ms.",
		Kill:       goTest("./proxy/stage", "^TestPaginationTitlesWaitOnlyTheirOwnKnob$")},
	{Name: "stage-budget-capped-at-knob", PatchFile: "63-stage-budget-capped-at-knob.patch",
		Regression: "a stage's own budgetMs is capped at MCPCTL_STAGE_LLM_BUDGET_MS, so a budget above the default is silently cut.",
		Kill:       goTest("./proxy/stage", "^TestPipelineRunWholeShape$")},
	{Name: "drain-for-a-whole-deadline", PatchFile: "64-drain-for-a-whole-deadline.patch",
		Regression: "a stop drains requests in flight for the request deadline instead of MCPCTL_SHUTDOWN_GRACE_MS, so a restart behind a hanging request takes as long as that request.",
		Kill:       Check{Kind: Ginkgo, Label: "knobs", Focus: "MCPCTL_SHUTDOWN_GRACE_MS"}},
	{Name: "canary-ignores-new-failures", PatchFile: "65-canary-ignores-new-failures.patch",
		Regression: "the SDK-upgrade canary marks a scenario that passed on the baseline and fails on the candidate as changed but not as a regression, so it exits 0 on a broken SDK.",
		Kill:       goTest("./scenarios/canary", "^TestNewlyFailingIsARegression$")},
	{Name: "canary-candidate-not-switched", PatchFile: "66-canary-candidate-not-switched.patch",
		Regression: "the canary's copy never gets the replace for MODULE=DIR, so the candidate is the baseline built twice and every checkout reports no change.",
		Kill:       goTest("./scenarios/canary", "^TestApplyReplacesTheModuleInTheCopy$")},
	{Name: "audit-batch-drops-rows", PatchFile: "67-audit-batch-drops-rows.patch",
		Regression: "the audit writer stores only the first row of each batch and counts the rest as written: one row per request at idle, rows silently missing under load.",
		Kill:       goTest("./proxy/audit", "^TestRecorderWritesABurstInFewCommitsAndKeepsEveryRowInOrder$")},
	{Name: "pprof-on-every-interface", PatchFile: "68-pprof-on-every-interface.patch",
		Regression: "mcplocal serve --pprof :6060 serves the process's memory and stacks on every interface instead of refusing a non-loopback address.",
		Kill:       goTest("./proxy/profiling", "^TestCheckLoopbackRefusesEveryNonLoopbackHost$")},
	{Name: "batch-shares-one-row-timeout", PatchFile: "69-batch-shares-one-row-timeout.patch",
		Regression: "a batch of audit rows gets the write timeout of one row, so under load a slow commit loses the whole batch (seen: every row of 200 requests in flight, under race).",
		Kill:       goTest("./proxy/audit", "^TestRecorderBatchGetsTheWriteTimeoutOfEachOfItsRows$")},
	{Name: "judge-stops-at-first-breach", PatchFile: "70-judge-stops-at-first-breach.patch",
		Regression: "a verdict keeps only the first promise broken, so a foreign proxy's real finding hides behind the first (the trace code only mcplocal makes).",
		Kill:       goTest("./scenarios/catalogue", "^TestJudgeListsEveryBreachByTier$")},
	{Name: "own-promises-held-to-every-target", PatchFile: "71-own-promises-held-to-every-target.patch",
		Regression: "mcplocal's own promises (the trace code) are held to every target, so every row of a foreign proxy fails on a promise it never made.",
		Kill:       goTest("./scenarios/catalogue", "^TestJudgeListsEveryBreachByTier$")},
	{Name: "ready-on-any-answer", PatchFile: "72-ready-on-any-answer.patch",
		Regression: "the foreign target's default readiness counts any HTTP answer to initialize (a 404) as ready, starting scenarios against a proxy that does not serve MCP there.",
		Kill:       goTest("./scenarios/harness", "^TestForeignReadyDefaultsToInitialize$")},
	{Name: "tool-mapping-ignored", PatchFile: "73-tool-mapping-ignored.patch",
		Regression: "a target spec's tools: mapping is ignored, so the catalogue calls tools the proxy does not have (tool 'docmost_update_page' not found).",
		Kill:       goTest("./scenarios/harness", "^TestForeignSpecAdaptsNamesBudgetsReadinessAndHeaders$")},
	{Name: "table-shows-first-breach-only", PatchFile: "74-table-shows-first-breach-only.patch",
		Regression: "the run's table names only the first promise a row broke.",
		Kill:       goTest("./scenarios/report", "^TestReportsShowEveryPromiseBroken$")},
	{Name: "replaced-server-keeps-sessions", PatchFile: "75-replaced-server-keeps-sessions.patch",
		Regression: "a server replaced through mcpctl keeps its clients' upstream sessions, so their calls still go to the old URL.",
		Kill:       goTest("./proxy", "^TestServersRunningClientSeesListChanged$")},
	{Name: "server-change-not-notified", PatchFile: "76-server-change-not-notified.patch",
		Regression: "a server created or deleted through mcpctl reaches no connected client: no notifications/tools/list_changed, so they never see the new tools.",
		Kill:       goTest("./proxy", "^TestServersRunningClientSeesListChanged$")},
	{Name: "probe-tool-not-verified", PatchFile: "77-probe-tool-not-verified.patch",
		Regression: "mcpctl create server accepts a readiness probe on a tool the server does not expose, the false green (here: a probe that can never pass) the seed warns of.",
		Kill:       goTest("./proxy", "^TestServersRefuseBadSpecs$")},
	{Name: "server-changes-not-persisted", PatchFile: "78-server-changes-not-persisted.patch",
		Regression: "servers created with mcpctl are lost at the next restart: the change is applied but not written beside the config.",
		Kill:       goTest("./proxy", "^TestServersCreateDeleteApplyRestart$")},
	{Name: "prober-misses-server-changes", PatchFile: "79-prober-misses-server-changes.patch",
		Regression: "the health prober keeps probing the servers it had at start: a server added or re-probed with mcpctl is never probed.",
		Kill:       goTest("./proxy", "^TestServersRunningClientSeesListChanged$")},
	{Name: "upstream-call-waits-for-the-sdk", PatchFile: "80-upstream-call-waits-for-the-sdk.patch",
		Regression: "an upstream tools/call parked inside the go-sdk (its connection lock, a stuck write) holds the answer past the upstream call timeout instead of returning when its context ends (seen: answers 0.8 s late with 200 in flight).",
		Kill:       goTest("./proxy/upstream", "^TestDoReturnsAtTheCallTimeoutEvenIfTheCallIgnoresItsContext$")},
	{Name: "upstream-dials-every-call", PatchFile: "81-upstream-dials-every-call.patch",
		Regression: "the upstream transport keeps Go's default 2 idle connections per host, so with per-client upstream sessions under load almost every call dials a new connection (13% of the proxy's CPU at 64 sessions).",
		Kill:       goTest("./proxy/project", "^TestUpstreamTransportReusesConnectionsUnderConcurrency$")},
	{Name: "audit-commits-every-row", PatchFile: "82-audit-commits-every-row.patch",
		Regression: "the audit writer ignores MCPCTL_AUDIT_BATCH_WAIT_MS and commits every row that trickles in on its own: at 1 session one SQLite transaction per row, a fifth of the proxy's CPU.",
		Kill:       goTest("./proxy/audit", "^TestRecorderGathersATrickleOfRowsIntoFewCommits$")},
	{Name: "admin-flag-ignored", PatchFile: "85-admin-flag-ignored.patch",
		Regression: "the admin APIs (pause, servers) let any configured user in: bob, with his own token but no admin: true, pauses a project or replaces its servers.",
		Kill:       goTest("./proxy", "^TestAdminAPIsRefuseAUserWithoutAdmin$")},
	{Name: "canary-takes-any-runspecs-for-a-suite", PatchFile: "86-canary-takes-any-runspecs-for-a-suite.patch",
		Regression: "the canary takes every test file that mentions RunSpecs for a Ginkgo suite, so each side also runs scenarios/canary's own unit tests through Ginkgo (their fixtures mention it).",
		Kill:       goTest("./scenarios/canary", "^TestGinkgoSuitesFindsEverySuiteUnderScenarios$")},
	{Name: "canary-cache-ignores-file-content", PatchFile: "87-canary-cache-ignores-file-content.patch",
		Regression: "the canary's baseline cache keys the tree by file names alone, so after an edit it serves the verdicts of the code before it: a regression in the edit hides behind a stale baseline.",
		Kill:       goTest("./scenarios/canary", "^TestBaselineKeyFollowsTheTreeAndTheSuite$")},
	{Name: "never-struck-fault-passes", PatchFile: "96-never-struck-fault-passes.patch",
		Regression: "a Midway fault the operation never strikes (a restart injected into a call that ends first) lets its scenario pass, though it proved nothing about the fault.",
		Kill:       goTest("./scenarios/catalogue", "^TestMidwayFaultThatNeverStruckFails$")},
	{Name: "seed-ignores-the-run-seed", PatchFile: "97-seed-ignores-the-run-seed.patch",
		Regression: "the fakes' random plans ignore --seed, so every seed draws the same faults and no seed explores another.",
		Kill:       goTest("./cmd/mcpchaos", "^TestSeedAndLabelReplayExactly$")},
	{Name: "fault-params-ignored", PatchFile: "98-fault-params-ignored.patch",
		Regression: "--fault NAME:k=v builds the fault from its defaults, ignoring the parameters given.",
		Kill:       goTest("./scenarios/harness", "^TestParseFaultTakesItsParameters$")},
	{Name: "fault-needs-unchecked", PatchFile: "99-fault-needs-unchecked.patch",
		Regression: "a fault injected with --fault into a scenario whose world lacks what it requires (an LLM fault, no LLM) runs and fails instead of being not applicable with the reason.",
		Kill:       goTest("./scenarios/catalogue", "^TestInjectedFaultNeedsWhatItRequires$")},
	{Name: "audit-write-timeout-ignored", PatchFile: "100-audit-write-timeout-ignored.patch",
		Regression: "the audit writer is built without MCPCTL_AUDIT_WRITE_TIMEOUT_MS: a write to a stalled store is given the 1 s default whatever the operator set.",
		Kill:       Check{Kind: Ginkgo, Label: "knobs", Focus: "MCPCTL_AUDIT_WRITE_TIMEOUT_MS alone bounds a write"}},
	{Name: "audit-batch-max-ignored", PatchFile: "101-audit-batch-max-ignored.patch",
		Regression: "the audit writer is built without MCPCTL_AUDIT_BATCH_MAX: a backlog is committed 256 rows at a time whatever the operator set.",
		Kill:       Check{Kind: Ginkgo, Label: "knobs", Focus: "MCPCTL_AUDIT_BATCH_MAX alone decides"}},
	{Name: "audit-batch-wait-ignored", PatchFile: "102-audit-batch-wait-ignored.patch",
		Regression: "the audit writer is built without MCPCTL_AUDIT_BATCH_WAIT_MS: rows trickling in are committed one by one whatever the operator set.",
		Kill:       Check{Kind: Ginkgo, Label: "knobs", Focus: "MCPCTL_AUDIT_BATCH_WAIT_MS alone decides"}},
	{Name: "audit-query-timeout-is-the-write-timeout", PatchFile: "103-audit-query-timeout-is-the-write-timeout.patch",
		Regression: "GET /api/v1/audit is bounded by MCPCTL_AUDIT_WRITE_TIMEOUT_MS instead of its own MCPCTL_AUDIT_QUERY_TIMEOUT_MS (two sibling knobs swapped).",
		Kill:       Check{Kind: Ginkgo, Label: "knobs", Focus: "MCPCTL_AUDIT_QUERY_TIMEOUT_MS alone bounds"}},
	{Name: "session-record-timeout-ignored", PatchFile: "104-session-record-timeout-ignored.patch",
		Regression: "the entry records session owners without MCPCTL_AUDIT_WRITE_TIMEOUT_MS: over a stalled store an initialize waits the 1 s default whatever the operator set.",
		Kill:       Check{Kind: Ginkgo, Label: "knobs", Focus: "MCPCTL_AUDIT_WRITE_TIMEOUT_MS alone bounds recording a new session"}},
	// 88-95: the security defences (docs/security.md) that had no mutant yet.
	{Name: "secrets-in-error-texts", PatchFile: "88-secrets-in-error-texts.patch",
		Regression: "an upstream's error quoting its URL (?apikey=...) reaches the client's tools/call error text unredacted.",
		Kill:       goTest("./proxy/deadline", "^TestToolsCallFailuresWholeShape$")},
	{Name: "secrets-in-audit-rows", PatchFile: "89-secrets-in-audit-rows.patch",
		Regression: "the audit recorder stores detail and degradedReason as given, so a secret in any row's text (an error quoting a URL's key or a DSN) lands in the audit trail users read.",
		// Not the secrets scenario: its upstream errors are redacted at their
		// source too, so that mutant survives it; the recorder's own spec kills it.
		Kill: goTest("./proxy/audit", "^TestRecorderRedactsSecrets$")},
	{Name: "secrets-in-health-output", PatchFile: "90-secrets-in-health-output.patch",
		Regression: "/api/v1/instances shows a probe's lastError with the upstream URL's key in it.",
		Kill:       inCatalogue("secrets")},
	{Name: "secrets-in-logs", PatchFile: "91-secrets-in-logs.patch",
		Regression: "mcplocal's log is not redacted: the startup line prints the Postgres DSN with its password, errors print URL keys.",
		// The scenario: the real binary over a real PostgreSQL store, its
		// startup line read as the operator reads it (TestLogsCarryNoSecret
		// in cmd/mcplocal kills it too, faster).
		Kill: goTest("./cmd/mcplocal", "^TestLogsCarryNoSecret$")},
	{Name: "shutdown-answers-nothing", PatchFile: "92-shutdown-answers-nothing.patch",
		Regression: "a request still running when the shutdown grace ends gets an EOF, and its audit row says ok.",
		Kill:       goTest("./proxy", "^TestShutdownAnswersRequestsStillRunning$")},
	{Name: "header-credentials-dropped", PatchFile: "93-header-credentials-dropped.patch",
		Regression: "a server's headers: (credentials from valueEnv) are never sent upstream, which pushes operators to put keys in URLs.",
		Kill:       goTest("./proxy", "^TestUpstreamCredentialsComeFromHeadersWithValueEnv$")},
	{Name: "adopt-never-issued-ids", PatchFile: "94-adopt-never-issued-ids.patch",
		Regression: "a well-formed session id the proxy never issued (no record names its owner) is adopted by whoever presents it first.",
		Kill:       inCatalogue("ownership")},
	{Name: "ready-while-audit-down", PatchFile: "95-ready-while-audit-down.patch",
		Regression: "/readyz says ready while the audit store does not answer, so a load balancer sends users to a proxy that cannot record or check session owners.",
		Kill:       goTest("./proxy", "^TestNotReadyWhileTheAuditStoreIsDown$")},
	// 120-125: security defences whose specs were written with the
	// defence but had no mutant number left in 88-95.
	{Name: "panic-stack-unlogged", PatchFile: "120-panic-stack-unlogged.patch",
		Regression: "a handler panic is answered and audited but its stack is never logged, so the operator cannot find the bug.",
		Kill:       goTest("./proxy/project", "^TestAPanickingCallIsAnsweredLoggedAndAudited$")},
	{Name: "failpoints-always-armed", PatchFile: "121-failpoints-always-armed.patch",
		Regression: "the production binary honours MCPCHAOS failpoints without the explicit test-run switch, so an environment variable can make it hang or fail on purpose.",
		// Only a binary reads failpoints from its environment: the catalogue's
		// binary target in the Ginkgo suite (mcplocal built from the mutant).
		Kill: goTest("./cmd/mcplocal", "^TestFailpointsNeedExplicitEnable$")},
	{Name: "read-timeout-uncapped", PatchFile: "122-read-timeout-uncapped.patch",
		Regression: "reading a request is bounded only by MCPCTL_READ_TIMEOUT_MS, not by the request deadline, so a trickled body outlives the answer's own deadline.",
		Kill:       goTest("./proxy", "^TestRequestDeadlineCoversReadingTheBody$")},
	{Name: "sse-stream-ends-in-eof", PatchFile: "123-sse-stream-ends-in-eof.patch",
		Regression: "at shutdown a call whose SSE stream had begun gets no answer on it: the client reads EOF, \"request terminated without response\".",
		Kill:       goTest("./proxy", "^TestShutdownEndsABegunSSEStreamWithAnAnswer$")},
	{Name: "idle-keeps-upstream", PatchFile: "124-idle-keeps-upstream.patch",
		Regression: "an idle session expires but what it held upstream (its upstream sessions) is kept until shutdown.",
		Kill:       inCatalogue("idle")},
	{Name: "chat-without-token", PatchFile: "125-chat-without-token.patch",
		Regression: "POST /api/v1/chat answers without a token when users are configured, so anyone who reaches the proxy spends its LLM credit.",
		Kill:       goTest("./proxy", "^TestChatNeedsATokenOnlyWhenThereAreUsers$")},
	{Name: "preconnected-conn-closed", PatchFile: "105-preconnected-conn-closed.patch",
		Regression: "the HTTP server gets a connection at accept, so one a client dialled ahead of its first request is closed after the read-header timeout and a request sent as the close crosses it gets EOF (3 of the 100,000-request soak's requests).",
		Kill:       goTest("./proxy/lazyaccept", "^TestAcceptReturnsAConnectionWithItsFirstByteIntact$")},
	{Name: "log-drops-silently", PatchFile: "106-log-drops-silently.patch",
		Regression: "mcplocal's log writer drops lines when stderr falls behind and never says how many, so an operator reads a complete-looking log with holes in it.",
		Kill:       goTest("./cmd/mcplocal/asynclog", "^TestAFullBufferDropsCountsAndLogsTheCount$")},
	// 126: the project attack, a catalogue scenario (security_process.go).
	{Name: "session-of-any-project", PatchFile: "126-session-of-any-project.patch",
		Regression: "a session's record in one project counts as the caller's session in every project: its id presented on another project is adopted there, and a DELETE there tombstones it.",
		Kill:       inCatalogue("projects")},
	// 127: the cause of a connect-timeout spec that failed now and then.
	{Name: "connect-waits-for-sdk-cleanup", PatchFile: "127-connect-waits-for-sdk-cleanup.patch",
		Regression: "an upstream connect whose handshake stops after the upstream handed out a session id answers only when the SDK's clean-up DELETE gives up (its own 5 s), not at MCPCTL_UPSTREAM_CONNECT_TIMEOUT_MS.",
		Kill:       goTest("./proxy/upstream", "^TestConnectTimeoutBoundsAHandshakeThatStopsAfterTheSessionID$")},
	// 130-137: the raw tools/call relay (proxy/relay, project.RelayCall).
	{Name: "relay-drops-trace-code", PatchFile: "130-relay-drops-trace-code.patch",
		Regression: "the raw relay passes the upstream's result on without stamping the trace code into its _meta.",
		Kill:       goTest("./proxy/project", "^TestTheRelayAnswersAsTheSDKPathDoes$")},
	{Name: "relay-ignores-upstream-timeout", PatchFile: "131-relay-ignores-upstream-timeout.patch",
		Regression: "the raw relay waits for a hanging upstream until the request deadline instead of answering at MCPCTL_UPSTREAM_CALL_TIMEOUT_MS.",
		Kill:       goTest("./proxy/project", "^TestTheRelayAnswersAsTheSDKPathDoes$")},
	{Name: "relay-loses-progress", PatchFile: "132-relay-loses-progress.patch",
		Regression: "the raw relay drops the upstream's notifications/progress instead of passing them on the call's stream.",
		Kill:       goTest("./proxy/project", "^TestTheRelayAnswersAsTheSDKPathDoes$")},
	{Name: "relay-ignores-client-cancel", PatchFile: "133-relay-ignores-client-cancel.patch",
		Regression: "the raw relay swallows the client's notifications/cancelled: the call runs on upstream until its timeout.",
		Kill:       goTest("./proxy/project", "^TestCancelRelayedEndsTheCallItNames$")},
	{Name: "skips-pause", PatchFile: "134-skips-pause.patch",
		Regression: "the request guard never holds a request while an operator has the project paused: a tools/call (relayed, by default, or on the go-sdk path) runs at once.",
		Kill:       goTest("./proxy", "^TestPausedRequestGetsItsFullDeadlineAfterResume$")},
	{Name: "relay-skips-upstream-row", PatchFile: "135-relay-skips-upstream-row.patch",
		Regression: "a relayed tools/call writes no upstream_call audit row, so its waterfall lacks the upstream.",
		Kill:       goTest("./proxy/project", "^TestTheRelayAnswersAsTheSDKPathDoes$")},
	{Name: "relay-ignores-config", PatchFile: "136-relay-ignores-config.patch",
		Regression: "the raw relay runs whatever the config says: `relay: false` does not keep tools/calls on the SDK path.",
		Kill:       goTest("./proxy/project", "^TestTheRelayAnswersAJSONBodyWithoutTheAnswerAtOnce$")},
	{Name: "relay-skips-stages", PatchFile: "137-relay-skips-stages.patch",
		Regression: "a relayed tools/call of a project with stages passes the upstream's result on without running the pipeline: no pagination, no ⚠ notice.",
		Kill:       goTest("./proxy/project", "^TestTheRelayAnswersAsTheSDKPathDoesWithStagesAndDeadlines$")},
	// 150-159: bounds and redactions a review found without a mutant.
	{Name: "list-errors-unredacted", PatchFile: "150-list-errors-unredacted.patch",
		Regression: "resources/list, resources/templates/list and prompts/list over a down upstream answer a JSON-RPC error quoting the upstream's URL with its ?apikey=... (neither their source nor the answer redacts it).",
		// Both layers go: the source's (each) and the answer's (failure);
		// either alone keeps the key out of the client's error.
		Kill: goTest("./proxy/deadline", "^TestToolsCallFailuresWholeShape$")},
	{Name: "tombstone-timeout-ignored", PatchFile: "151-tombstone-timeout-ignored.patch",
		Regression: "a DELETEd session's tombstone is written with the 1 s default instead of MCPCTL_AUDIT_WRITE_TIMEOUT_MS: over a stalled store the DELETE's answer waits whatever the operator set.",
		Kill:       Check{Kind: Ginkgo, Label: "knobs", Focus: "tombstone of a DELETEd session"}},
	{Name: "adoption-claim-timeout-ignored", PatchFile: "152-adoption-claim-timeout-ignored.patch",
		Regression: "recreating a stale session claims its id with the 1 s default instead of MCPCTL_AUDIT_WRITE_TIMEOUT_MS: over a stalled store the recreating request waits whatever the operator set.",
		Kill:       Check{Kind: Ginkgo, Label: "knobs", Focus: "claiming a stale session's id"}},
	{Name: "ready-timeout-is-the-write-timeout", PatchFile: "153-ready-timeout-is-the-write-timeout.patch",
		Regression: "/readyz bounds its audit store check with MCPCTL_AUDIT_WRITE_TIMEOUT_MS instead of its own MCPCTL_READY_TIMEOUT_MS (the bound it borrowed before it had its own).",
		Kill:       Check{Kind: Ginkgo, Label: "knobs", Focus: "MCPCTL_READY_TIMEOUT_MS alone bounds"}},
	{Name: "recreated-without-capabilities", PatchFile: "154-recreated-without-capabilities.patch",
		Regression: "a session recreated after a restart replays initialize with empty capabilities, so its upstream sessions no longer offer sampling, elicitation or roots: the upstream's sampling/createMessage fails with 'client does not support CreateMessage'.",
		Kill:       Check{Kind: Ginkgo, Label: "capabilities", Focus: "still offers the client's sampling"}},
	{Name: "catalogue-clock-drops-stalls", PatchFile: "155-catalogue-clock-drops-stalls.patch",
		Regression: "the surface and security operations are judged on the wall clock again: their timed part's stalls are measured but never reach the verdict, so a loaded machine fails them as late.",
		// The verdict's own test: under load the catalogue would also kill
		// it, but only by chance; an idle machine shows no difference.
		Kill: goTest("./scenarios/catalogue", "^TestSurfaceAndSecurityOperationsAreJudgedThroughTheStallMeter$")},
	// 156: the last store call on the request path that
	// the write timeout bounds without a spec of its own.
	{Name: "owner-lookup-timeout-ignored", PatchFile: "156-owner-lookup-timeout-ignored.patch",
		Regression: "a stale session's owner is looked up with the 1 s default instead of MCPCTL_AUDIT_WRITE_TIMEOUT_MS: over a stalled store the request waits whatever the operator set before its 503.",
		Kill:       Check{Kind: Ginkgo, Label: "knobs", Focus: "who owns a stale session's id"}},
	// 140-143: memory per idle session and connection bounds.
	{Name: "upstream-stream-always", PatchFile: "140-upstream-stream-always.patch",
		Regression: "every upstream session opens the upstream's standalone SSE stream, even for a client that holds none of its own at the proxy, where nothing the upstream sends unprompted can go: three goroutines and a connection per idle session (docs/performance.md).",
		Kill:       goTest("./proxy/project", "^TestUpstreamStreamsFollowTheClientsOwn$")},
	{Name: "late-listener-unheard", PatchFile: "141-late-listener-unheard.patch",
		Regression: "a client that opens its standalone stream after its upstream sessions exist never gets their list_changed, resources/updated or log messages: the upstream sessions were connected without theirs and are never given one.",
		Kill:       goTest("./proxy/upstream", "^TestListenReplacesTheSessionWithoutFailingOrRepeatingARunningCall$")},
	{Name: "silent-conn-kept-at-cap", PatchFile: "142-silent-conn-kept-at-cap.patch",
		Regression: "at MCPCTL_CONNS_MAX, connections that never sent a byte keep their place for the whole idle timeout (120 s) and every new client is refused.",
		Kill:       goTest("./proxy/lazyaccept", "^TestAtMaxASilentConnectionPastEvictMakesRoom$")},
	{Name: "conns-unbounded", PatchFile: "143-conns-unbounded.patch",
		Regression: "nothing bounds open client connections: each holds a descriptor, a goroutine and buffers, so a client that opens connections grows the proxy without bound.",
		Kill:       goTest("./proxy/lazyaccept", "^TestAConnectionPastMaxGetsTheRefusalAndIsClosed$")},
	// 144-149: idle sessions of clients that hold their standalone
	// stream (docs/protocol.md). The bench's own promise (its "stream
	// held" sessions hold one) is guarded by its unit test, not a mutant:
	// mutants change production code only.
	{Name: "stream-for-every-listener", PatchFile: "144-stream-for-every-listener.patch",
		Regression: "a client holding its standalone stream makes every upstream session hold the upstream's, also in front of an upstream that advertises nothing it could send unprompted: three goroutines and a connection per session for nothing.",
		Kill:       goTest("./proxy/project", "^TestMayHearUnpromptedByEachCapability$")},
	{Name: "quiet-check-forgets-list-changed", PatchFile: "145-quiet-check-forgets-list-changed.patch",
		Regression: "an upstream that advertises tools, prompts or resources listChanged (and nothing else) is taken for quiet: its upstream sessions hold no standalone stream and its list_changed never reaches an idle client.",
		Kill:       goTest("./proxy/project", "^TestMayHearUnpromptedByEachCapability$")},
	{Name: "quiet-check-forgets-subscriptions", PatchFile: "146-quiet-check-forgets-subscriptions.patch",
		Regression: "an upstream that advertises resource subscriptions (and nothing else) is taken for quiet: a subscribed idle client never hears resources/updated.",
		Kill:       goTest("./proxy/project", "^TestMayHearUnpromptedByEachCapability$")},
	{Name: "quiet-check-forgets-logging", PatchFile: "147-quiet-check-forgets-logging.patch",
		Regression: "an upstream that advertises logging (and nothing else) is taken for quiet: an idle client that set a log level never hears its log messages.",
		Kill:       goTest("./proxy/project", "^TestMayHearUnpromptedByEachCapability$")},
	{Name: "quiet-check-forgets-client-requests", PatchFile: "148-quiet-check-forgets-client-requests.patch",
		Regression: "in front of a quiet upstream, a client offering roots, sampling or elicitation gets no upstream standalone stream: what the upstream asks it outside a request (roots/list after roots/list_changed) has nowhere to go.",
		Kill:       goTest("./proxy/project", "^TestMayHearUnpromptedByEachCapability$")},
	{Name: "stream-not-reasked-after-connect", PatchFile: "149-stream-not-reasked-after-connect.patch",
		Regression: "an upstream that restarts advertising logging or a listChanged it did not before is reconnected without its standalone stream (decided by its old capabilities) and keeps none: what it sends unprompted never reaches a listening client.",
		Kill:       goTest("./proxy/upstream", "^TestASessionThatLearnsTheUpstreamMaySendUnpromptedOpensTheStream$")},
	// 157: found by the relay specs (client capabilities of a recreated session).
	{Name: "recreated-session-gains-roots", PatchFile: "157-recreated-session-gains-roots.patch",
		Regression: "a session recreated after a restart offers roots upstream whether or not its client offered them (the record kept the SDK's V1 capabilities, whose roots struct is always written), so an upstream may ask a client roots/list it cannot answer.",
		Kill:       goTest("./proxy/entry", "^TestClientHelloOffersOnlyWhatTheClientOffered$")},
	{Name: "error-type-dangling-separator", PatchFile: "110-error-type-dangling-separator.patch",
		Regression: "an LLM provider's error envelope with a type and no message reads 'overloaded_error: ' in the attempt's detail, a dangling separator (found by generic mutation testing's whole-text spec).",
		Kill:       goTest("./proxy/llm", "^TestErrorSummaryReadsEveryEnvelope$")},
	// 190-209: generic mutation over the rest of proxy/: one per
	// class of missing spec its survivors showed.
	{Name: "chat-failover-unaudited", PatchFile: "190-chat-failover-unaudited.patch",
		Regression: "a chat turn answered by a fallback model is audited like one the primary answered: its row's detail no longer says \"(failed over)\" (proxy/chat had no spec of the handler's whole answer and rows).",
		Kill:       goTest("./proxy/chat", "^TestChatAnswerAndItsAuditRowsWholeShape$")},
	{Name: "pprof-cpu-profile-unrouted", PatchFile: "191-pprof-cpu-profile-unrouted.patch",
		Regression: "mcplocal serve --pprof serves the index but not /debug/pprof/profile: the CPU profile answers 404 Unknown profile (no spec asked for each endpoint the index cannot serve).",
		Kill:       goTest("./proxy/profiling", "^TestHandlerServesEveryProfileEndpoint$")},
	{Name: "failed-connect-keeps-its-slot", PatchFile: "192-failed-connect-keeps-its-slot.patch",
		Regression: "an upstream handshake the upstream refuses keeps the session slot it took (MCPCTL_UPSTREAM_SESSIONS_MAX): after as many refusals as slots, every connect fails on the limit.",
		Kill:       goTest("./proxy/upstream", "^TestAFailedConnectGivesItsSessionSlotBack$")},
	{Name: "readded-session-never-idles", PatchFile: "193-readded-session-never-idles.patch",
		Regression: "a session added again under its live id while a request is in flight never expires idle: the request's end is counted on the replaced record, so the new one stays busy forever (found by a generic mutation survivor's spec).",
		Kill:       goTest("./proxy/session", "^TestReAddingAnIDMovesItsCountAndKeepsItsRequests$")},
	{Name: "origin-with-userinfo-allowed", PatchFile: "194-origin-with-userinfo-allowed.patch",
		Regression: "an Origin with userinfo (http://user@localhost) counts as a loopback origin (proxy/origin had no spec of each Origin and Host edge).",
		Kill:       goTest("./proxy/origin", "^TestOriginAllowedEdges$")},
	{Name: "empty-user-password-kept", PatchFile: "195-empty-user-password-kept.patch",
		Regression: "a URL whose userinfo has a password and no user name (http://:secret@host) keeps its password in logs, errors and audit rows (no spec of URL's separators at index 0).",
		Kill:       goTest("./proxy/redact", "^TestURLEdges$")},
	{Name: "jsonrpc-error-data-dropped", PatchFile: "196-jsonrpc-error-data-dropped.patch",
		Regression: "a handler's JSON-RPC error reaches the client with its data replaced by the trace code alone: an upstream's structured error data is lost (no spec of the error answers' whole shape).",
		Kill:       goTest("./proxy/deadline", "^TestJSONRPCErrorsKeepTheirCodeAndGainTheTrace$")},
	{Name: "section-summaries-never-cached", PatchFile: "197-section-summaries-never-cached.patch",
		Regression: "summarize-tree never caches its section summaries: the same large result asks the LLM for every section again on every call (no spec of its LLM paths).",
		Kill:       goTest("./proxy/stage", "^TestSummarizeTreeWithTheLLMWholeShape$")},
	{Name: "chat-stream-buffered", PatchFile: "198-chat-stream-buffered.patch",
		Regression: "a streamed chat turn's chunks are not flushed as they come: the client sees the answer only when the stream ends.",
		Kill:       goTest("./proxy/chat", "^TestChatStreamReachesTheClientAsItComes$")},
	// 170-189: generic mutation of proxy/entry, proxy, proxy/audit
	// and proxy/project, one per class of missing spec it found.
	{Name: "client-forges-user-header", PatchFile: "170-client-forges-user-header.patch",
		Regression: "the entry keeps a client's own X-Mcplocal-User header, so an anonymous client names the user its session and audit rows belong to (found by generic mutation testing: only the header's overwrite for authenticated callers had a spec).",
		Kill:       goTest("./proxy/entry", "^TestClientCannotSetTheProxysOwnHeaders$")},
	{Name: "recreated-session-owes-no-notice", PatchFile: "171-recreated-session-owes-no-notice.patch",
		Regression: "a session recreated after a restart is not marked recreated, so its first tools/call carries no ⚠ notice that its state was lost (found by generic mutation testing: recreation had no spec in proxy/entry, only scenarios).",
		Kill:       goTest("./proxy/entry", "^TestRestartRecreatesTheOwnersSessionOnly$")},
	{Name: "sdk-refusal-answers-id-null", PatchFile: "172-sdk-refusal-answers-id-null.patch",
		Regression: "an SDK refusal converted to a JSON-RPC error answers id null even when the request had an id, so a client waiting on its id never matches the error (found by generic mutation testing: the entry's writers had no unit specs).",
		Kill:       goTest("./proxy/entry", "^TestSDKRefusalsAnswerTheRequestsID$")},
	{Name: "no-prune-before-serving", PatchFile: "173-no-prune-before-serving.patch",
		Regression: "Start serves before forgetting session records past MCPCTL_SESSION_RECORD_TTL_MS, so expired owners and tombstones last until the first hourly prune (found by generic mutation testing: pruning had no spec in proxy).",
		Kill:       goTest("./proxy", "^TestPruneForgetsExpiredRecordsAndSaysSo$")},
	{Name: "delete-keeps-upstream", PatchFile: "174-delete-keeps-upstream.patch",
		Regression: "a session its client DELETEs keeps its upstream sessions until shutdown (found by generic mutation testing: what a session holds upstream had no spec in proxy/entry).",
		Kill:       goTest("./proxy/entry", "^TestDeleteReleasesTheUpstreamSession$")},
	{Name: "upstream-without-client-capabilities", PatchFile: "175-upstream-without-client-capabilities.patch",
		Regression: "an upstream session is opened with no client capabilities instead of the client's own, so an upstream never asks for sampling, elicitation or roots the client offers (found by generic mutation testing: proxy/project had no spec of its upstream sessions).",
		Kill:       goTest("./proxy/project", "^TestUpstreamSessionMirrorsTheClientAndIsReleased$")},
	{Name: "upstream-log-dropped", PatchFile: "176-upstream-log-dropped.patch",
		Regression: "a log message an upstream sends while working on a call never reaches the client (found by generic mutation testing: the upstream-to-client relay had no spec in proxy/project).",
		Kill:       goTest("./proxy/project", "^TestUpstreamMessagesReachTheCallingClient$")},
	{Name: "server-spec-unknown-fields-ignored", PatchFile: "177-server-spec-unknown-fields-ignored.patch",
		Regression: "POST /api/v1/servers ignores a spec's unknown fields, so a misspelt healthCheck is silently dropped and the server runs without its probe (found by generic mutation testing: the servers API's answers had no whole-text spec).",
		Kill:       goTest("./proxy", "^TestServersAPIWholeShape$")},
	{Name: "progress-on-the-newest-call", PatchFile: "158-progress-on-the-newest-call.patch",
		Regression: "an upstream's progress goes on the newest call in flight to its server, not on the call whose progressToken it carries, so with two calls in flight one client call gets the other's progress and its own never (found by generic mutation testing: routing among several calls in flight had no spec).",
		Kill:       goTest("./proxy/project", "^TestRelatedFindsTheCallByItsStreamElseByItsToken$")},
	{Name: "reinitialized-session-keeps-old-upstream", PatchFile: "159-reinitialized-session-keeps-old-upstream.patch",
		Regression: "a session initialized again under its id (the entry recreating it) leaves the old state's upstream sessions open until shutdown (found by generic mutation testing: closing had no spec in proxy/project).",
		Kill:       goTest("./proxy/project", "^TestASessionInitializedAgainUnderItsIDClosesTheOldState$")},
	{Name: "close-keeps-idle-upstream-connections", PatchFile: "160-close-keeps-idle-upstream-connections.patch",
		Regression: "the project's Close leaves its idle keep-alive connections to the upstreams open (found by generic mutation testing).",
		Kill:       goTest("./proxy/project", "^TestCloseClosesTheSessionsAndTheUpstreamConnections$")},
	{Name: "upstream-stream-without-client-stream", PatchFile: "161-upstream-stream-without-client-stream.patch",
		Regression: "every upstream session that may speak unprompted opens its standalone stream although its client holds none, which costs three goroutines and a connection per idle session for messages no one can receive (found by generic mutation testing).",
		Kill:       goTest("./proxy/project", "^TestUpstreamStreamsFollowTheClientsOwn$")},
	{Name: "upstream-list-changed-dropped", PatchFile: "162-upstream-list-changed-dropped.patch",
		Regression: "an upstream's prompts and resources list_changed never reach the client (found by generic mutation testing: only tools list_changed had a spec).",
		Kill:       goTest("./proxy/project", "^TestUpstreamChangesReachTheClient$")},
	{Name: "elicitation-through-the-sdk-client", PatchFile: "163-elicitation-through-the-sdk-client.patch",
		Regression: "an upstream's elicitation goes through the go-sdk client's handler, which refuses schemas the client itself accepts (found by generic mutation testing: the relay of elicitation had no spec).",
		Kill:       goTest("./proxy/project", "^TestRootsAndElicitationAreTheClientsOwn$")},
	{Name: "relay-cancel-row-in-transport-words", PatchFile: "164-relay-cancel-row-in-transport-words.patch",
		Regression: "the raw relay's upstream_call row for a call the client cancelled says 'upstream s: calling \"tools/call\": Post \"<url>\": context canceled' where the SDK path's says 'context canceled' (found by the relay's differential unit spec, written for generic mutation testing).",
		Kill:       goTest("./proxy/project", "^TestTheRelayAnswersAsTheSDKPathDoes$")},
	{Name: "setlevel-to-upstreams-without-logging", PatchFile: "165-setlevel-to-upstreams-without-logging.patch",
		Regression: "a client's logging/setLevel is sent to every upstream session, also to servers that advertise no logging (found by generic mutation testing: setLevel's fan-out had no spec).",
		Kill:       goTest("./proxy/project", "^TestSetLevelReachesEveryUpstreamSessionThatLogs$")},
	// 178-189: generic mutation: proxy/audit judged whole and
	// the small packages' leftovers, one per class of missing spec.
	{Name: "waterfall-roots-in-sorted-order", PatchFile: "178-waterfall-roots-in-sorted-order.patch",
		Regression: "a trace whose child row sorts before its parent (it started with it and was recorded first, as an upstream call is) is drawn as a root above its parent, and the slowest mark goes to the wrong span (found by generic mutation testing: no waterfall spec had a child sorting first).",
		Kill:       goTest("./proxy/audit/waterfall", "^TestRenderAChildRecordedBeforeItsParentWholeShape$")},
	{Name: "audit-batch-one-past-its-size", PatchFile: "179-audit-batch-one-past-its-size.patch",
		Regression: "the audit writer commits batches one row larger than MCPCTL_AUDIT_BATCH_SIZE (found by generic mutation testing: no spec counted a batch's rows).",
		Kill:       goTest("./proxy/audit", "^TestRecorderBatchesHoldAtMostTheBatchSize$")},
	{Name: "audit-lone-row-waits-for-company", PatchFile: "180-audit-lone-row-waits-for-company.patch",
		Regression: "with a batch wait, a row no other row follows is never written until the next row, a Flush or Close: the batch wait's timer is never started (found by generic mutation testing: the batch wait had specs only with rows trickling in).",
		Kill:       goTest("./proxy/audit", "^TestRecorderWritesALoneRowWhenTheBatchWaitEnds$")},
	{Name: "audit-drop-reported-late", PatchFile: "181-audit-drop-reported-late.patch",
		Regression: "an audit row dropped on a full queue is not reported when it happens, only with the next write failure or at Close (found by generic mutation testing).",
		Kill:       goTest("./proxy/audit", "^TestRecorderLogsADropAtOnce$")},
	{Name: "failed-postgres-open-keeps-its-pool", PatchFile: "182-failed-postgres-open-keeps-its-pool.patch",
		Regression: "an audit store Open whose PostgreSQL schema cannot be created leaves its connection pool and its goroutines behind (found by generic mutation testing).",
		Kill:       goTest("./proxy/audit", "^TestOpenPostgresThatFailsLeavesNoGoroutine$")},
	{Name: "upstream-close-twice-hangs", PatchFile: "183-upstream-close-twice-hangs.patch",
		Regression: "an upstream Conn's Close keeps its lock: a second Close, or any call after it, hangs instead of answering ErrClosed (found by generic mutation testing: no spec called Close twice).",
		Kill:       goTest("./proxy/upstream", "^TestCloseTwiceAndCallsAfterClose$")},
	{Name: "upstream-close-leaves-connect-running", PatchFile: "184-upstream-close-leaves-connect-running.patch",
		Regression: "Close of an upstream Conn that is still connecting does not abort the handshake: the connect waits on a silent upstream until MCPCTL_UPSTREAM_CONNECT_TIMEOUT_MS (found by generic mutation testing).",
		Kill:       goTest("./proxy/upstream", "^TestCloseAbortsAConnectInFlight$")},
	{Name: "upstream-request-hooks-pile-up", PatchFile: "185-upstream-request-hooks-pile-up.patch",
		Regression: "each answered upstream request leaves its hook on the Conn's closing context until the Conn closes: a long-lived upstream session grows by one hook per call (found by generic mutation testing).",
		Kill:       goTest("./proxy/upstream", "^TestAbortableReleasesEachRequestsHooks$")},
	{Name: "replaced-server-still-probed", PatchFile: "186-replaced-server-still-probed.patch",
		Regression: "a health-checked server an operator replaces (same project and name) keeps its old probe loop and session: the old address is probed until shutdown (found by generic mutation testing).",
		Kill:       goTest("./proxy/health", "^TestPutReplacingAServerStopsItsOldProbes$")},
	{Name: "probe-timeout-unexplained", PatchFile: "187-probe-timeout-unexplained.patch",
		Regression: "a health probe the upstream does not answer in time shows a bare 'context deadline exceeded' as its lastError instead of 'no answer within <timeout>' (found by generic mutation testing).",
		Kill:       goTest("./proxy/health", "^TestAProbeWithoutAnAnswerSaysSo$")},
	{Name: "close-race-keeps-accept-lock", PatchFile: "188-close-race-keeps-accept-lock.patch",
		Regression: "a client connection that arrives while the listener closes leaves the listener's lock held: Open (and the connection cap's bookkeeping) hangs after Close (found by generic mutation testing: the race had no spec).",
		Kill:       goTest("./proxy/lazyaccept", "^TestAConnectionAcceptedAsCloseRunsIsClosed$")},
	{Name: "memory-sqlite-with-params-many-connections", PatchFile: "189-memory-sqlite-with-params-many-connections.patch",
		Regression: "an in-memory SQLite audit store given driver parameters (sqlite::memory:?_pragma=...) is taken for a file store and may open four connections, each a database of its own without the schema (found by generic mutation testing: no spec of the stores' connection pools).",
		Kill:       goTest("./proxy/audit", "^TestSQLiteConnectionPools$")},
	// 166-167: the named missing specs of proxy/llm.
	{Name: "resolution-waiters-list-again", PatchFile: "166-resolution-waiters-list-again.patch",
		Regression: "callers waiting on a claude-<family>-latest resolution that failed each list the provider's models again instead of sharing its failure: a failing /v1/models gets one request per waiting call (found by generic mutation testing: no spec of a shared resolution's failure).",
		Kill:       goTest("./proxy/llm", "^TestCallersWaitingOnAFailedResolutionShareItsFailure$")},
	{Name: "resolution-waiter-ignores-its-context", PatchFile: "167-resolution-waiter-ignores-its-context.patch",
		Regression: "a call waiting on another call's claude-<family>-latest resolution waits for it past its own context: a cancelled or timed-out call hangs on a slow /v1/models (found by generic mutation testing: no spec of a waiter's own context).",
		Kill:       goTest("./proxy/llm", "^TestAWaiterStopsOnItsOwnContext$")},
	// 168: found by a flake check (the relay differential spec).
	{Name: "late-progress-lost", PatchFile: "168-late-progress-lost.patch",
		Regression: "an upstream's progress notification that the go-sdk hands over just after its call's answer is written on the answered request's closed stream and lost, instead of going on the client's standalone stream as a log message does (the relay differential spec lost 'tok 1/2' on the SDK path 1 run in 20).",
		Kill:       goTest("./proxy/project", "^TestAProgressLateForItsRequestsStreamGoesOutOfBand$")},
	// 199-206: the raw relay answers upstream transport failures as the SDK path does.
	{Name: "relay-transport-error-own-words", PatchFile: "199-relay-transport-error-own-words.patch",
		Regression: "the raw relay words an upstream POST its HTTP client could not complete (connection closed before any answer, an answer the shape check refused) without the go-sdk client's 'sending \"tools/call\": rejected by transport:', so the two paths answer and audit it differently.",
		Kill:       goTest("./proxy/project", "^TestTheRelayAnswersTransportFailuresAsTheSDKPathDoes$")},
	{Name: "relay-status-own-words", PatchFile: "200-relay-status-own-words.patch",
		Regression: "the raw relay words an upstream's HTTP refusal (5xx, 4xx, a JSON-RPC error in its body) as 'upstream answered HTTP N: <body>' instead of the go-sdk client's words, and keeps the session where the go-sdk fails it.",
		Kill:       goTest("./proxy/project", "^TestTheRelayAnswersTransportFailuresAsTheSDKPathDoes$")},
	{Name: "relay-keeps-failed-session", PatchFile: "201-relay-keeps-failed-session.patch",
		Regression: "the raw relay keeps an upstream session the go-sdk client fails (a body it cannot read or decode, a refusal it cannot classify): the next call is sent on it instead of on a new session.",
		Kill:       goTest("./proxy/project", "^TestTheRelayAnswersTransportFailuresAsTheSDKPathDoes$")},
	{Name: "relay-stream-end-own-words", PatchFile: "202-relay-stream-end-own-words.patch",
		Regression: "the raw relay words an SSE answer that ends or breaks before the result as 'the upstream ended its answer without a result', not the go-sdk client's 'request terminated without response'.",
		Kill:       goTest("./proxy/project", "^TestTheRelayAnswersTransportFailuresAsTheSDKPathDoes$")},
	{Name: "relay-ignores-non-jsonrpc", PatchFile: "203-relay-ignores-non-jsonrpc.patch",
		Regression: "the raw relay skips an answer or SSE event that is not JSON-RPC instead of failing the call and the session with the go-sdk client's decoder words.",
		Kill:       goTest("./proxy/project", "^TestTheRelayAnswersTransportFailuresAsTheSDKPathDoes$")},
	{Name: "relay-404-refusal-reconnects", PatchFile: "204-relay-404-refusal-reconnects.patch",
		Regression: "the raw relay takes a 404 carrying a JSON-RPC error for a forgotten session: it reconnects and sends the call again, where the go-sdk client answers the refusal.",
		Kill:       goTest("./proxy/project", "^TestTheRelayAnswersTransportFailuresAsTheSDKPathDoes$")},
	{Name: "relay-resumable-stream-keeps-session", PatchFile: "205-relay-resumable-stream-keeps-session.patch",
		Regression: "the raw relay answers a resumable SSE stream (event ids) that ends before the result as a plain stream end and keeps the session, where the go-sdk client of a Conn (no retries) gives up resuming and fails it.",
		Kill:       goTest("./proxy/project", "^TestTheRelayAnswersTransportFailuresAsTheSDKPathDoes$")},
	{Name: "relay-reads-named-events", PatchFile: "206-relay-reads-named-events.patch",
		Regression: "the raw relay reads the data of SSE events named other than message, which the go-sdk client skips.",
		Kill:       goTest("./proxy/relay", "^TestStreamSkipsOtherEventsAndKeepsTheLastEventID$")},
	{Name: "close-leaves-requests-running", PatchFile: "207-close-leaves-requests-running.patch",
		Regression: "Project.Close leaves the requests still running to the shutdown grace instead of ending them first, so the go-sdk path's upstream calls are never given up and never cancelled upstream, and a client told to retry runs the tool twice.",
		Kill:       goTest("./proxy/project", "^TestCloseEndsABusySessionAtOnce$")},
	{Name: "stop-leaves-requests-running", PatchFile: "208-stop-leaves-requests-running.patch",
		Regression: "the request guard (deadline.Guard) ignores its Stop for requests already running: their handlers run on to the deadline after the project closed.",
		Kill:       goTest("./proxy/deadline", "^TestEveryPathIsAnsweredByTheOneGuard$")},
	{Name: "runs-requests-after-stop", PatchFile: "209-runs-requests-after-stop.patch",
		Regression: "a request that arrives once the project stopped is run (and may open upstream sessions that nothing will close) instead of being answered 'shutting down ... retry it'.",
		Kill:       goTest("./proxy/deadline", "^TestARequestArrivingAfterTheStopIsNeverRun$")},
	{Name: "close-tells-upstream-nothing", PatchFile: "210-close-tells-upstream-nothing.patch",
		Regression: "upstream.Conn's Close sends its DELETE without first cancelling the calls still running, which the go-sdk client no longer cancels once its session is closing: the upstream's tool runs on.",
		Kill:       goTest("./proxy/upstream", "^TestCloseTellsTheUpstreamOfACallStillRunning$")},
	{Name: "dropped-session-keeps-calls", PatchFile: "211-dropped-session-keeps-calls.patch",
		Regression: "a Conn that lets an upstream session go keeps that session's given-up calls on its list, so Close cancels them on a session that is gone.",
		Kill:       goTest("./proxy/upstream", "^TestADroppedSessionTakesItsCallsOffTheList$")},
	{Name: "told-call-stays-listed", PatchFile: "212-told-call-stays-listed.patch",
		Regression: "a given-up call stays on the Conn's list after its cancel went out, so the list grows with every timeout and Close cancels it a second time.",
		Kill:       goTest("./proxy/upstream", "^TestAGivenUpCallLeavesTheListWhenItsCancelGoes$")},
	{Name: "given-up-call-unlisted", PatchFile: "213-given-up-call-unlisted.patch",
		Regression: "a call the proxy gave up leaves the Conn's list at once, untold, so at shutdown (the go-sdk's own cancel not sent once its session closes) the upstream is never told.",
		Kill:       goTest("./proxy/upstream", "^TestADroppedSessionTakesItsCallsOffTheList$")},
	{Name: "panic-stackless", PatchFile: "214-panic-stackless.patch",
		Regression: "the request guard recovers a panic without its stack: the call is answered and audited but the stack never reaches the log (mutant 120's promise, one layer down; on both paths, judged by the guard's one outcome table).",
		Kill:       goTest("./proxy/deadline", "^TestEveryPathIsAnsweredByTheOneGuard$")},
	{Name: "relay-request-to-wrong-session", PatchFile: "215-relay-request-to-wrong-session.patch",
		Regression: "an upstream's sampling/createMessage during a relayed call is asked of another client session than the one whose call caused it (mutant 25's promise, on the relay).",
		Kill:       Check{Kind: Ginkgo, Label: "forward", Focus: "routes sampling, elicitation and roots"}},
	{Name: "relay-bodies-read", PatchFile: "216-relay-bodies-read.patch",
		Regression: "the Conn's transport decodes every relayed POST's body to learn ids the relay already knows: 3.4 % of mcplocal's CPU at 64 sessions (docs/performance.md, its CPU profile).",
		Kill:       goTest("./proxy/upstream", "^TestARelayedCallIsNotedByItsSender$")},
	{Name: "repro-sse-read-as-json", PatchFile: "260-repro-sse-read-as-json.patch",
		Regression: "mcpchaos repro reads the raw call's text/event-stream answer as one JSON message, so the fixed proxy's correlated answer is printed 'NOT a JSON-RPC message'.",
		Kill:       goTest("./cmd/mcpchaos", "^TestReproReadsTheAnswerOfEitherContentType$")},
	{Name: "oauth-refusal-unexplained", PatchFile: "261-oauth-refusal-unexplained.patch",
		Regression: "a subscription OAuth token that Anthropic refuses (401) or denies (403) shows only the provider's raw body: the token explanation comes for 404 and 429 only.",
		Kill:       goTest("./proxy/llm", "^TestOAuthTokenRefusalsAreExplained$")},
	{Name: "reading-keys-any-case", PatchFile: "220-reading-keys-any-case.patch",
		Regression: "the entry's reading of a request matches keys without regard to case, as encoding/json does: `\"ID\":7` beside `\"id\":1` reads another id than the go-sdk serves.",
		Kill:       goTest("./proxy/rpcread", "^FuzzReadingMatchesSDK$")},
	{Name: "initialize-read-loosely", PatchFile: "221-initialize-read-loosely.patch",
		Regression: "the entry decides whether a request is an initialize with encoding/json: an extra `\"METHOD\":\"x\"` key hides it, so it skips the session caps and the owner claim while the go-sdk opens the session.",
		Kill:       goTest("./proxy/entry", "^TestADisguisedInitializeMeetsTheCaps$")},
	{Name: "batch-past-its-version", PatchFile: "222-batch-past-its-version.patch",
		Regression: "a JSON-RPC batch is served on a session of protocol 2025-06-18 or later, where batches do not exist.",
		Kill:       goTest("./proxy/entry", "^TestBatchesAreRefusedOrBoundedByTheReading$")},
	{Name: "batch-with-initialize", PatchFile: "223-batch-with-initialize.patch",
		Regression: "an initialize inside a batch is served: it opens a session the entry neither counted against the caps nor claimed for its user.",
		Kill:       goTest("./proxy/entry", "^TestBatchesAreRefusedOrBoundedByTheReading$")},
	{Name: "batch-unbounded", PatchFile: "224-batch-unbounded.patch",
		Regression: "a batch of any size is served (MCPCTL_BATCH_MAX unchecked): 20,000 tools/calls in one POST build their answers in memory.",
		Kill:       goTest("./proxy/entry", "^TestBatchesAreRefusedOrBoundedByTheReading$")},
	{Name: "batch-version-from-header-only", PatchFile: "225-batch-version-from-header-only.patch",
		Regression: "a batch without an Mcp-Protocol-Version header is served on a session that negotiated 2025-11-25: the version is taken from the header alone.",
		Kill:       goTest("./proxy/entry", "^TestBatchesAreRefusedOrBoundedByTheReading$")},
	{Name: "tool-names-unchecked", PatchFile: "226-tool-names-unchecked.patch",
		Regression: "tool and prompt names are not held to the MCP spec's limits at the entry: a 7.8 MB tool name reaches the audit store.",
		Kill:       goTest("./proxy/entry", "^TestNamesAreHeldToTheSpecsLimits$")},
	{Name: "ids-as-the-sdk-writes-them", PatchFile: "227-ids-as-the-sdk-writes-them.patch",
		Regression: "on the go-sdk path a JSON-RPC id comes back as the SDK rewrites it: 123456789012345678901234567890 as -9223372036854775808, 1.5 as 1.",
		Kill:       goTest("./proxy/entry", "^TestIDsComeBackByteForByte$")},
	{Name: "wrong-token-anonymous", PatchFile: "228-wrong-token-anonymous.patch",
		Regression: "a token that is no user's, on a project with requireAuth: false, silently becomes an anonymous request instead of a 401.",
		Kill:       goTest("./proxy/entry", "^TestAWrongTokenIsRefusedOnAnOpenProject$")},
	{Name: "canned-refusal-plain-text", PatchFile: "229-canned-refusal-plain-text.patch",
		Regression: "net/http's own refusals (a 1 MB Mcp-Session-Id header: 431) reach the client as text/plain, not as a JSON-RPC error.",
		Kill:       goTest("./proxy/rawrefusal", "^TestHeadersTooLargeIsAJSONRPCError$")},
	{Name: "audit-strings-unbounded", PatchFile: "230-audit-strings-unbounded.patch",
		Regression: "audit rows keep strings whole (MCPCTL_MAX_STORED_STRING_BYTES unapplied): ten tools/calls with a 7.8 MB tool name grew the store by 158 MB.",
		Kill:       goTest("./proxy/audit", "^TestRecordedRowsKeepBoundedStrings$")},
	{Name: "log-strings-unbounded", PatchFile: "231-log-strings-unbounded.patch",
		Regression: "log lines keep the string values a request sent whole (MCPCTL_MAX_STORED_STRING_BYTES unapplied to attributes).",
		Kill:       goTest("./proxy/bound", "^TestHandlerCutsEveryStringOfALine$")},
	{Name: "conns-max-at-the-fd-limit", PatchFile: "232-conns-max-at-the-fd-limit.patch",
		Regression: "MCPCTL_CONNS_MAX may reach the process's open-file limit: silent connections exhaust the fds before the cap makes room, and /healthz and initialize go unanswered.",
		Kill:       goTest("./proxy", "^TestConnsMaxIsClampedBelowTheFDLimit$")},
	{Name: "anonymous-network-listen", PatchFile: "233-anonymous-network-listen.patch",
		Regression: "mcplocal serve --listen 0.0.0.0 with no users starts without a word: every project serves anyone on the network without a token.",
		Kill:       goTest("./cmd/mcplocal", "^TestAnonymousNetworkListenRefusesToStart$")},
	{Name: "readyz-quotes-last-error", PatchFile: "234-readyz-quotes-last-error.patch",
		Regression: "/readyz, open to anyone who reaches the proxy, names each server that is not ready with its lastError, which may quote an internal service's body.",
		Kill:       goTest("./proxy", "^TestReadyzNamesAnUnhealthyServerAndCloseClosesTheStore$")},
	{Name: "chat-chunks-masked-one-by-one", PatchFile: "235-chat-chunks-masked-one-by-one.patch",
		Regression: "a streamed chat answer is masked chunk by chunk: a held key the model echoes, cut across two chunks, reaches the client whole.",
		Kill:       inCatalogue("secrets")},
	{Name: "chat-plain-answer-unmasked", PatchFile: "236-chat-plain-answer-unmasked.patch",
		Regression: "a chat answer's text is sent as the model wrote it: a held key it echoes reaches the client.",
		Kill:       inCatalogue("secrets")},
	{Name: "cancel-misses-the-stand-in", PatchFile: "237-cancel-misses-the-stand-in.patch",
		Regression: "a client's notifications/cancelled naming a request served under a stand-in id (an id the go-sdk would rewrite) does not reach it: the SDK knows the stand-in, and the upstream call runs on.",
		Kill:       goTest("./proxy/entry", "^TestACancelReachesARequestServedUnderAStandIn$")},
	{Name: "batch-ids-as-the-sdk-writes-them", PatchFile: "238-batch-ids-as-the-sdk-writes-them.patch",
		Regression: "the calls of an admitted 2025-03-26 batch get no stand-in: 123456789012345678901234567890 comes back as -9223372036854775808, 1.5 as 1.",
		Kill:       goTest("./proxy/entry", "^TestABatchsIDsComeBackByteForByte$")},
	{Name: "readyz-quotes-the-store", PatchFile: "239-readyz-quotes-the-store.patch",
		Regression: "/readyz, open to anyone, quotes the audit store's error, which can name a database's host and user.",
		Kill:       goTest("./proxy", "^TestProbesAndOriginRefusalsWholeShape$")},
	{Name: "route-to-another-call", PatchFile: "240-route-to-another-call.patch",
		Regression: "what an upstream sends during one of several calls in flight on a session (a log message, a sampling request) is relayed on the stream of another call to that server, not on the stream of the call whose upstream stream carried it.",
		Kill:       goTest("./proxy/project", "^TestRelatedFindsTheCallByItsStreamElseByItsToken$")},
	{Name: "call-result-overtakes-its-notifications", PatchFile: "241-call-result-overtakes-its-notifications.patch",
		Regression: "the go-sdk client hands the proxy a call's result before the log messages that came before it on the call's stream, so they go out on the client's standalone stream instead of the call's.",
		Kill:       inCatalogue("routing")},
	{Name: "relay-ask-answer-dropped", PatchFile: "242-relay-ask-answer-dropped.patch",
		Regression: "the client's answer to a sampling request the relay asked on a call's stream never reaches the relay, so the upstream waits for it until the call times out.",
		Kill:       inCatalogue("routing")},
	{Name: "upstream-forges-a-call-tag", PatchFile: "243-upstream-forges-a-call-tag.patch",
		Regression: "a route tag an upstream wrote itself into a message on its standalone stream is kept, so it can steer the message onto any call's stream.",
		Kill:       goTest("./proxy/bycall", "^TestAnUpstreamCannotForgeATag$")},
	{Name: "held-values-unmasked", PatchFile: "244-held-values-unmasked.patch",
		Regression: "redaction knows secret shapes only: a token or key the proxy holds, echoed back by a service in a body, reaches answers, rows and logs as it is.",
		Kill:       goTest("./proxy/redact", "^TestHeldValuesAreMaskedEverywhere$")},
	{Name: "chat-answer-unmasked", PatchFile: "245-chat-answer-unmasked.patch",
		Regression: "a chat turn's failure quotes the provider's 401 body as it came, with the key it echoed.",
		Kill:       inCatalogue("secrets")},
	{Name: "llm-keys-not-held", PatchFile: "246-llm-keys-not-held.patch",
		Regression: "the LLM providers' API keys and OAuth tokens are not among the values the proxy masks, so a provider echoing one puts it in the chat answer and the llm_attempt rows.",
		Kill:       inCatalogue("secrets")},
	{Name: "last-error-for-everyone", PatchFile: "247-last-error-for-everyone.patch",
		Regression: "every token holder reads every upstream's lastError in /api/v1/instances, which may quote an internal service's body.",
		Kill:       inCatalogue("audit-api")},
	{Name: "credentials-follow-the-url", PatchFile: "248-credentials-follow-the-url.patch",
		Regression: "replacing a server's URL (mcpctl create server --force, the servers API) keeps its headers, so the old server's API key is sent to the new URL.",
		Kill:       inCatalogue("secrets")},
	{Name: "header-references-not-kept", PatchFile: "249-header-references-not-kept.patch",
		Regression: "a server's headers given through the servers API are not kept in the config nor the servers file, so the next replacement or restart drops them.",
		Kill:       goTest("./proxy", "^TestServerHeaderReferencesRoundTrip$")},
	{Name: "relay-answer-unmasked", PatchFile: "250-relay-answer-unmasked.patch",
		Regression: "a relayed tools/call result echoing a secret the proxy holds reaches the client as it came.",
		Kill:       goTest("./proxy/project", "^TestAnUpstreamEchoingAHeldSecretIsMasked$")},
	{Name: "sdk-answer-unmasked", PatchFile: "251-sdk-answer-unmasked.patch",
		Regression: "a tools/call result on the go-sdk path echoing a secret the proxy holds reaches the client as it came.",
		Kill:       goTest("./proxy/project", "^TestAnUpstreamEchoingAHeldSecretIsMasked$")},
	{Name: "guard-passes-no-result", PatchFile: "280-guard-passes-no-result.patch",
		Regression: "the request guard passes a handler's nil result on as its answer (go-sdk path and relay alike): the client gets an empty answer, not an isError saying the proxy produced none.",
		Kill:       goTest("./proxy/deadline", "^TestEveryPathIsAnsweredByTheOneGuard$")},
	{Name: "guard-stop-worded-as-failure", PatchFile: "281-guard-stop-worded-as-failure.patch",
		Regression: "the request guard words work ended by the proxy's stop as an ordinary failure (go-sdk path and relay alike): the client is not told the proxy is shutting down and to retry.",
		Kill:       goTest("./proxy/deadline", "^TestEveryPathIsAnsweredByTheOneGuard$")},
	{Name: "relay-shutdown-answers-nothing", PatchFile: "282-relay-shutdown-answers-nothing.patch",
		Regression: "a relayed tools/call still running at shutdown is never given the shutdown's answer: the client gets an empty 200 and no shutting_down audit row says why.",
		Kill:       goTest("./proxy", "^TestShutdownAnswersRequestsStillRunning$")},
	{Name: "shape-server-path-ignored", PatchFile: "320-shape-server-path-ignored.patch",
		Regression: "a foreign spec's endpoint with {{.Server}} is rendered for docmost whatever the server: on a proxy with one path per server, every surface row asks the everything fake's methods of docmost's path.",
		Kill:       goTest("./scenarios/harness", "^TestForeignShapeFieldsAreHonoured$")},
	{Name: "surface-rows-need-everything", PatchFile: "321-surface-rows-need-everything.patch",
		Regression: "every surface row needs the capability everything (mcplocal's naming on one endpoint) again: on a proxy that claims the methods under another shape, the generic rows are silently N/A.",
		Kill:       goTest("./scenarios/catalogue", "^TestEveryGenericRowAppliesToAProxyClaimingItsMethods$")},
	{Name: "restart-needs-adoption", PatchFile: "322-restart-needs-adoption.patch",
		Regression: "the proxy-restart fault requires session adoption and the audit API: the generic row about a new session after a restart is N/A on every proxy but mcplocal.",
		Kill:       goTest("./scenarios/catalogue", "^TestEveryGenericRowAppliesToAProxyClaimingItsMethods$")},
	{Name: "prompt-name-ignored", PatchFile: "323-prompt-name-ignored.patch",
		Regression: "a foreign spec's promptName is ignored: prompts are asked by the toolName template's name, which the proxy does not serve.",
		Kill:       goTest("./scenarios/harness", "^TestForeignShapeFieldsAreHonoured$")},
	{Name: "stateless-ignored", PatchFile: "324-stateless-ignored.patch",
		Regression: "a foreign spec's stateless: is ignored: a proxy that issues no Mcp-Session-Id is held to the session lifecycle rows (DELETE, malformed session ids).",
		Kill:       goTest("./scenarios/catalogue", "^TestAStatelessProxyIsSparedOnlySessionRows$")},
	{Name: "forwards-unchecked", PatchFile: "327-forwards-unchecked.patch",
		Regression: "a foreign spec's forwards: is not checked: a surface row about a method the proxy never claimed runs and fails instead of being N/A, by name.",
		Kill:       goTest("./scenarios/harness", "^TestForeignShapeFieldsAreHonoured$")},
	{Name: "unlisted-server-vanishes", PatchFile: "262-unlisted-server-vanishes.patch",
		Regression: "a server that cannot list its tools (an L7 proxy's 403 to everything) just disappears from a tools/list the other servers answered, with no notice to the client.",
		Kill:       goTest("./proxy/project", "^TestAServerThatCannotListIsNotedInToolsList$")},
	{Name: "unlisted-server-row-not-degraded", PatchFile: "263-unlisted-server-row-not-degraded.patch",
		Regression: "a tools/list missing a server's tools carries the ⚠ notice but its audit row is not degraded, so the trail says nothing was missing.",
		Kill:       goTest("./proxy/project", "^TestAServerThatCannotListIsNotedInToolsList$")},
	{Name: "create-server-unchecked", PatchFile: "264-create-server-unchecked.patch",
		Regression: "mcpctl create server with an unreachable URL prints 'created' and exits 0: nothing checks the server it configured.",
		Kill:       goTest("./cmd/mcpctl", "^TestCreateServerSaysWhatItFound$")},
	{Name: "create-server-wait-checks-once", PatchFile: "265-create-server-wait-checks-once.patch",
		Regression: "mcpctl create server --wait gives up after the first check instead of checking again until the server answers or the wait is over.",
		Kill:       goTest("./cmd/mcpctl", "^TestCreateServerWaitsBoundedUntilTheServerAnswers$")},
	{Name: "instances-error-cause-cut", PatchFile: "266-instances-error-cause-cut.patch",
		Regression: "mcpctl get instances cuts a long LAST ERROR before its cause ('connection refused'); only --json shows it.",
		Kill:       goTest("./cmd/mcpctl", "^TestGetInstancesShowsTheCauseOfALongError$")},
	{Name: "denial-advised-as-outage", PatchFile: "267-denial-advised-as-outage.patch",
		Regression: "an L7 proxy's 401/403 in front of an upstream ends 'retry, and if it keeps failing the upstream may be down', misleading for a policy denial.",
		Kill:       goTest("./proxy/project", "^TestAPolicyDenialIsNotAdvisedAsAnOutage$")},
	{Name: "chat-stream-error-blank-line", PatchFile: "268-chat-stream-error-blank-line.patch",
		Regression: "mcpctl chat --stream prints an empty line before its error when no chunk was printed.",
		Kill:       goTest("./cmd/mcpctl", "^TestChatStreamErrorPrintsNoBlankLine$")},
	{Name: "fake-help-omits-announce", PatchFile: "269-fake-help-omits-announce.patch",
		Regression: "mcpchaos fake upstream --help omits the announce tool, so a user never learns the fake can send list_changed outside any request.",
		Kill:       goTest("./cmd/mcpchaos", "^TestFakeUpstreamHelpNamesEveryTool$")},
	{Name: "trace-token-from-env-only", PatchFile: "270-trace-token-from-env-only.patch",
		Regression: "mcpctl trace reads its bearer token from $MCPCTL_TOKEN only, ignoring --token and --token-file, so with users configured it just gets 401.",
		Kill:       goTest("./cmd/mcpctl", "^TestEveryCommandTakesTheSameConnectionFlags$")},
	{Name: "pause-lets-initialize-through", PatchFile: "271-pause-lets-initialize-through.patch",
		Regression: "a paused project lets initialize through while the README and mcpctl help pause say a client connecting to it waits too.",
		Kill:       goTest("./proxy", "^TestPauseHoldsInitialize$")},
	{Name: "create-server-check-ignores-readiness", PatchFile: "272-create-server-check-ignores-readiness.patch",
		Regression: "mcpctl create server calls a server healthy once it lists its tools, though its readiness probe fails (the seed's false green: live is not healthy).",
		Kill:       goTest("./cmd/mcpctl", "^TestCreateServerSaysWhatItFound$")},
	{Name: "server-check-liveness-only", PatchFile: "273-server-check-liveness-only.patch",
		Regression: "the proxy's server check runs tools/list only, never the readiness probe's tools/call, so a server whose upstream is cut checks healthy.",
		Kill:       goTest("./proxy", "^TestServerCheckSaysWhatTheServerAnswered$")},
	{Name: "one-timeout-three-breaches", PatchFile: "300-one-timeout-three-breaches.patch",
		Regression: "a request the client gave up on is reported as three contradictory breaches (never answered, answered late, answered with a protocol error) instead of one.",
		Kill:       goTest("./scenarios/catalogue", "^TestJudgeListsEveryBreachByTier$")},
	{Name: "relayed-rpc-error-unanswered", PatchFile: "301-relayed-rpc-error-unanswered.patch",
		Regression: "a JSON-RPC error (the proxy's own or relayed from the upstream) is taken for an HTTP-level failure: reported as not answered.",
		Kill:       goTest("./scenarios/catalogue", "^TestEndingOfTellsTheWaysARequestEndsApart$")},
	{Name: "error-shapes-held-generically", PatchFile: "302-error-shapes-held-generically.patch",
		Regression: "a down upstream answered with a JSON-RPC error fails every proxy, though an isError result there is mcplocal's design (errorShapes), not an MCP promise.",
		Kill:       goTest("./scenarios/catalogue", "^TestARelayedJSONRPCErrorIsAnAnswer$")},
	{Name: "stateless-delete-judged-stateful", PatchFile: "303-stateless-delete-judged-stateful.patch",
		Regression: "a stateless proxy (no Mcp-Session-Id) is held to the session lifecycle: failed on the empty id it was asked to DELETE answering 200.",
		Kill:       goTest("./scenarios/catalogue", "^TestAStatelessProxyIsJudgedByStatelessPromises$")},
	{Name: "not-found-body-held-generically", PatchFile: "304-not-found-body-held-generically.patch",
		Regression: "a DELETEd id's 404 with a body that is no JSON-RPC error fails every proxy, though the MCP spec asks for the 404 only.",
		Kill:       goTest("./scenarios/catalogue", "^TestADeletedIDsNotFoundBodyIsMcplocalsShape$")},
	{Name: "undeclared-budget-silent", PatchFile: "305-undeclared-budget-silent.patch",
		Regression: "a foreign target without budgets: is judged on the harness's knobs in silence, and fails rows for not cutting a call at a budget it was never told.",
		Kill:       goTest("./scenarios/catalogue", "^TestAnUndeclaredBudgetIsAssumedAndSaysSo$")},
	{Name: "slow-tool-runs-on-undeclared-budget", PatchFile: "306-slow-tool-runs-on-undeclared-budget.patch",
		Regression: "tool-slow, a row that needs the proxy to cut the call at its budget, runs against a target that declared none.",
		Kill:       goTest("./scenarios/catalogue", "^TestAnUndeclaredBudgetIsAssumedAndSaysSo$")},
	{Name: "passes-mixed-with-failures", PatchFile: "307-passes-mixed-with-failures.patch",
		Regression: "the report lists passing rows among the failing ones instead of the failures first.",
		Kill:       goTest("./scenarios/report", "^TestTheTableShowsFailuresFirstAndFitsTheTerminal$")},
	{Name: "table-wider-than-the-terminal", PatchFile: "308-table-wider-than-the-terminal.patch",
		Regression: "the CLI table's lines are not cut to 120 columns.",
		Kill:       goTest("./scenarios/report", "^TestTheTableShowsFailuresFirstAndFitsTheTerminal$")},
	{Name: "failure-without-the-proxys-log", PatchFile: "309-failure-without-the-proxys-log.patch",
		Regression: "a failing row of the HTML report lacks the tail of the proxy's own output around it.",
		Kill:       goTest("./scenarios/report", "^TestTheHTMLPutsFailuresFirstWithReplayAndLog$")},
	{Name: "no-audit-rows-on-every-row", PatchFile: "310-no-audit-rows-on-every-row.patch",
		Regression: "every HTML row of a target without an audit API says no audit rows (no trace code).",
		Kill:       goTest("./scenarios/report", "^TestTheHTMLPutsFailuresFirstWithReplayAndLog$")},
	{Name: "na-reason-speaks-of-proxy-new", PatchFile: "311-na-reason-speaks-of-proxy-new.patch",
		Regression: "a foreign target's N/A reason speaks of an option the test passes to proxy.New.",
		Kill:       goTest("./scenarios/catalogue", "^TestNotApplicableReasonsSpeakOfTheTarget$")},
	{Name: "rpc-error-trace-code-held-generically", PatchFile: "312-rpc-error-trace-code-held-generically.patch",
		Regression: "a JSON-RPC error without a trace code in error.data fails every proxy on the surface rows, though the trace code is mcplocal's own promise.",
		Kill:       goTest("./scenarios/catalogue", "^TestASurfaceRPCErrorIsAnAnswerItsTraceCodeMcplocals$")},
	{Name: "bench-floor-ratio-against-direct", PatchFile: "340-bench-floor-ratio-against-direct.patch",
		Regression: "the bench's floor section compares each proxy with the upstream called directly instead of the floor, so a proxy is judged against a target no proxy can meet.",
		Kill:       goTest("./scenarios/bench", "^TestTheTableComparesEveryProxyWithTheFloor$")},
	{Name: "bench-stateless-refused", PatchFile: "341-bench-stateless-refused.patch",
		Regression: "mcpchaos bench refuses a target that issues no Mcp-Session-Id ('the server sent no Mcp-Session-Id'), though the MCP spec allows a stateless server.",
		Kill:       goTest("./scenarios/bench", "^TestRunMeasuresAStatelessTarget$")},
	{Name: "curve-idle-on-the-measured-process", PatchFile: "342-curve-idle-on-the-measured-process.patch",
		Regression: "the curve piles its idle sessions on the process the active sweep already grew instead of a fresh one, so the RSS the idle sessions cost is hidden in memory the runtime kept.",
		Kill:       goTest("./scenarios/bench", "^TestRunCurveMeasuresEachTargetAtEveryStepOfBothSweeps$")},
	{Name: "curve-overrides-the-users-bound", PatchFile: "343-curve-overrides-the-users-bound.patch",
		Regression: "the curve raises mcplocal's session bounds over a value the user set in the environment, so a bound chosen on purpose is not the one measured.",
		Kill:       goTest("./scenarios/bench", "^TestRaisedKnobsRaiseOnlyTheBoundsTheCurveWouldHitAndLeaveTheUsersAlone$")},
	{Name: "canary-reads-a-panicked-spec-as-passed", PatchFile: "380-canary-reads-a-panicked-spec-as-passed.patch",
		Regression: "the canary fails only a spec in Ginkgo's failed state, so a spec that panicked, timed out, was interrupted or aborted reads as passed on the candidate and a broken SDK exits 0.",
		Kill:       goTest("./scenarios/canary", "^TestGinkgoRecordsVerdictForEverySpecState$")},
	{Name: "canary-reads-an-interrupted-suite-as-passed", PatchFile: "381-canary-reads-an-interrupted-suite-as-passed.patch",
		Regression: "the canary adds a failed suite row only for a suite that ran no spec, so a suite interrupted or timed out between specs reads as passed: the specs before it pass and the rest are skipped.",
		Kill:       goTest("./scenarios/canary", "^TestGinkgoRecordsASuiteInterruptedBetweenSpecs$")},
	{Name: "sweep-without-the-minute-cap", PatchFile: "382-sweep-without-the-minute-cap.patch",
		Regression: "the janitor sweeps every quarter of MCPCTL_SESSION_IDLE_MS with no one-minute cap, so at the 30-minute default an idle session lives up to 7.5 minutes past the knob; compressed idle knobs never reach the cap.",
		Kill:       goTest("./proxy", "^TestDerivedValuesAtDefaultAndCompressedKnobs$")},
	{Name: "read-header-without-the-ten-second-cap", PatchFile: "383-read-header-without-the-ten-second-cap.patch",
		Regression: "reading a request's headers is bounded by the whole read (30 s at the default) instead of at most 10 s, so a client trickling its headers holds a connection three times longer.",
		Kill:       goTest("./proxy", "^TestDerivedValuesAtDefaultAndCompressedKnobs$")},
	{Name: "shutdown-margin-uncapped", PatchFile: "384-shutdown-margin-uncapped.patch",
		Regression: "requests still running at shutdown are answered a quarter of MCPCTL_SHUTDOWN_GRACE_MS before its end with no 250 ms cap, so at the 5 s default they are cut 1.25 s early.",
		Kill:       goTest("./proxy", "^TestDerivedValuesAtDefaultAndCompressedKnobs$")},
	{Name: "advertise-waits-the-whole-deadline", PatchFile: "386-advertise-waits-the-whole-deadline.patch",
		Regression: "initialize waits for unseen servers up to all that is left of the request's deadline instead of half of it, so under a deadline shorter than twice the connect knob it has no time left to answer.",
		Kill:       goTest("./proxy/project", "^TestAdvertiseWaitAtDefaultAndCompressedKnobs$")},
	{Name: "upstream-told-the-client-samples", PatchFile: "387-upstream-told-the-client-samples.patch",
		Regression: "the upstream client always gets a sampling handler, so the go-sdk tells every upstream the client samples, also a client that offers no sampling; the upstream then asks it and the call fails.",
		Kill:       goTest("./proxy/project", "^TestUpstreamIsToldExactlyWhatTheClientOffers$")},
	{Name: "upstream-told-the-client-elicits", PatchFile: "388-upstream-told-the-client-elicits.patch",
		Regression: "the upstream client always gets an elicitation handler, so every upstream is told the client elicits, also a client that offers no elicitation.",
		Kill:       goTest("./proxy/project", "^TestUpstreamIsToldExactlyWhatTheClientOffers$")},
	{Name: "relay-forgets-a-client-offering-roots", PatchFile: "389-relay-forgets-a-client-offering-roots.patch",
		Regression: "the relay takes the call of a client that offers roots (and neither sampling nor elicitation) but holds no standalone stream, so an upstream's roots/list during the call has no stream to reach the client.",
		Kill:       goTest("./proxy/project", "^TestUpstreamIsToldExactlyWhatTheClientOffers$")},
	{Name: "bundle-keeps-header-values", PatchFile: "360-bundle-keeps-header-values.patch",
		Regression: "a replay bundle carries the upstream servers' header values (Authorization: Bearer ...) as the config has them.",
		Kill:       goTest("./proxy/bundle", "^TestScrubRemovesEverySecret$")},
	{Name: "bundle-keeps-url-user", PatchFile: "361-bundle-keeps-url-user.patch",
		Regression: "a replay bundle keeps a URL's user name when it has no password (https://TOKEN@host), as the log redaction does.",
		Kill:       goTest("./proxy/bundle", "^TestTextRemovesURLCredentials$")},
	{Name: "bundle-not-admin-only", PatchFile: "362-bundle-not-admin-only.patch",
		Regression: "any user's token gets the proxy's replay context (the whole config's shape and knobs), not only an admin's.",
		Kill:       goTest("./cmd/mcpctl", "^TestBundleIsAdminOnly$")},
	{Name: "replay-notice-loss-unnamed", PatchFile: "363-replay-notice-loss-unnamed.patch",
		Regression: "a replay whose span lost its recorded ⚠ notice is printed without naming the loss, and --expect same passes on it.",
		Kill:       goTest("./scenarios/replay", "^TestEveryDifferenceIsNamed$")},
	{Name: "replay-open-attempt-answered", PatchFile: "364-replay-open-attempt-answered.patch",
		Regression: "a replay plays the LLM attempts a never-answered recording left open as answered, so the seed's hang replays as a fast answer on the very build that hung.",
		Kill:       goTest("./scenarios/replay", "^TestAnAttemptNeverClosedIsPlayedHung$")},
	{Name: "replay-429-as-500", PatchFile: "365-replay-429-as-500.patch",
		Regression: "a replay plays a recorded 429 (rate limited) back as a 500, another failure than the one the provider gave.",
		Kill:       goTest("./scenarios/replay", "^TestPlanPlaysEachRecordedAnswerBack$")},
	{Name: "replay-attempt-status-only", PatchFile: "366-replay-attempt-status-only.patch",
		Regression: "a replay judges an LLM attempt by its status alone, so a recorded 404 replayed as a malformed answer (both 'error') passes for the same.",
		Kill:       goTest("./scenarios/replay", "^TestAnAttemptsOutcomeIsCompared$")},
	{Name: "replay-skips-restart", PatchFile: "367-replay-skips-restart.patch",
		Regression: "a replay of a call that arrived on a recreated session sends it on a fresh session, so the recreation and its ⚠ notice are never replayed.",
		Kill:       goTest("./cmd/mcpchaos", "^TestARecreatedSessionReplaysFaithfully$")},
	{Name: "replay-upstream-failure-kind-ignored", PatchFile: "368-replay-upstream-failure-kind-ignored.patch",
		Regression: "a replay judges a failed upstream call by its status alone, so a recorded connection reset replayed as a tool's error result passes for the same.",
		Kill:       goTest("./scenarios/replay", "^TestAnUpstreamFailuresKindIsCompared$")},
	{Name: "replay-reset-as-error-result", PatchFile: "369-replay-reset-as-error-result.patch",
		Regression: "a replay plays an upstream call recorded as a network failure (reset, EOF) as the fake's error result instead of resetting the link.",
		Kill:       goTest("./cmd/mcpchaos", "^TestAnUpstreamResetReplaysFaithfully$")},
	{Name: "unsupported-protocol-version-served", PatchFile: "420-unsupported-protocol-version-served.patch",
		Regression: "a request whose MCP-Protocol-Version header names a version mcplocal does not serve is served instead of refused with 400, as the MCP spec says it MUST be.",
		Kill:       goTest("./proxy/entry", "^TestAnUnsupportedProtocolVersionHeaderIs400$")},
	{Name: "refused-name-answers-id-null", PatchFile: "421-refused-name-answers-id-null.patch",
		Regression: "a tools/call refused for its name is answered with id null, though its id could be read: the client cannot match the error to its request.",
		Kill:       goTest("./proxy/entry", "^TestNamesAreHeldToTheSpecsLimits$")},
	{Name: "wire-rows-silently-not-applicable", PatchFile: "422-wire-rows-silently-not-applicable.patch",
		Regression: "the wire rows, which need only tools/call on the everything fake, are taken to need mcplocal's capability everything: every foreign proxy finds them not applicable.",
		Kill:       goTest("./scenarios/catalogue", "^TestEveryGenericRowAppliesToAProxyClaimingItsMethods$")},
	{Name: "ids-compared-as-floats", PatchFile: "423-ids-compared-as-floats.patch",
		Regression: "the wire rows compare a numeric id through a float64, so a proxy that rounds a large id (9007199254740993 back as ...992) passes for one that returns it as sent.",
		Kill:       goTest("./scenarios/catalogue", "^TestSameIDHoldsTheValueSent$")},
	{Name: "notification-answered-anyhow", PatchFile: "424-notification-answered-anyhow.patch",
		Regression: "the wire row on notifications takes any 2xx for an accepted notification, so a proxy answering one with 200 and a body (MCP: 202, no body) passes.",
		Kill:       goTest("./scenarios/catalogue", "^TestWireOperationsFailAProxyThatBreaksThem$")},
	{Name: "surface-trace-code-unjudged", PatchFile: "425-surface-trace-code-unjudged.patch",
		Regression: "the check of the surface, wire and restart rows that succeed never reads the trace code the answer carries, so a malformed one passes.",
		Kill:       goTest("./scenarios/catalogue", "^TestEveryCheckerFailsOnABreakingObservation$")},
	{Name: "summaries-count-unchecked", PatchFile: "426-summaries-count-unchecked.patch",
		Regression: "the summarize-tree row takes any count of affected sections, so a stage whose one budget did not span its recursion (every section excerpted, or none) passes.",
		Kill:       goTest("./scenarios/catalogue", "^TestEveryCheckerFailsOnABreakingObservation$")},
	{Name: "gate-notice-takes-any-row", PatchFile: "427-gate-notice-takes-any-row.patch",
		Regression: "the gate's fallback rows take a degraded gate_decision row of another request for the one of the call they judge.",
		Kill:       goTest("./scenarios/catalogue", "^TestEveryCheckerFailsOnABreakingObservation$")},
	{Name: "surface-results-untraced", PatchFile: "428-surface-results-untraced.patch",
		Regression: "mcplocal stamps its trace code only on tools/call results, so a resources/read, prompts/get or completion answer carries none.",
		Kill:       inCatalogue("surface")},
	{Name: "surface-missing-trace-unjudged", PatchFile: "429-surface-missing-trace-unjudged.patch",
		Regression: "the surface rows take a result without its trace code for one that carries none (ping's), so an answer that lost it passes.",
		Kill:       goTest("./scenarios/catalogue", "^TestSurfaceResultsWithoutTheirTraceCodeBreakIt$")},
	{Name: "foreign-stage-budget-lands-elsewhere", PatchFile: "430-foreign-stage-budget-lands-elsewhere.patch",
		Regression: "a foreign spec's stage budget is written to the LLM call knob, so the stage rows of a foreign proxy are judged on the harness's own stage budget.",
		Kill:       goTest("./scenarios/catalogue", "^TestEveryDeclaredBudgetReachesTheVerdict$")},
	{Name: "gate-rows-judged-on-pagination-budget", PatchFile: "431-gate-rows-judged-on-pagination-budget.patch",
		Regression: "the gate rows read the pagination budget, equal to the gate's in the harness's knobs, so a gate budget declared otherwise never reaches their verdict.",
		Kill:       goTest("./scenarios/catalogue", "^TestEveryDeclaredBudgetReachesTheVerdict$")},
	{Name: "foreign-cluster-budgets-dropped", PatchFile: "432-foreign-cluster-budgets-dropped.patch",
		Regression: "a foreign proxy's cluster drops its spec's budgets:, so every row on it is judged on the harness's knobs.",
		Kill:       goTest("./scenarios/catalogue", "^TestEveryDeclaredBudgetReachesTheVerdict$")},
	{Name: "stop-drain-serves-on", PatchFile: "283-stop-drain-serves-on.patch",
		Regression: "a proxy told to stop with MCPCTL_STOP_DRAIN_MS set waits the drain but keeps serving and reporting ready, so its balancer keeps sending it requests until the listener closes under them.",
		Kill:       goTest("./proxy", "^TestAStoppingProxyDrainsBeforeItStopsListening$")},
	{Name: "haproxy-no-retry-on-a-503", PatchFile: "284-haproxy-no-retry-on-a-503.patch",
		Regression: "the shipped HAProxy config hands the client a stopping replica's 503 (a request it did not act on) instead of sending it to another replica, so a rolling restart refuses requests.",
		Kill:       Check{Kind: Ginkgo, Label: "cluster", Focus: "a rolling restart under load"}},
	{Name: "live-target-takes-faulted-reads", PatchFile: "290-live-target-takes-faulted-reads.patch",
		Regression: "a running proxy named by its URL (url:, read-only) is given the rows that read under a fault, as if the harness could inject one there: they run against a proxy no fault reaches and pass for proofs.",
		Kill:       goTest("./scenarios/catalogue", "^TestWhatAppliesIsFrozen$")},
	{Name: "instance-error-kept-whole", PatchFile: "291-instance-error-kept-whole.patch",
		Regression: "an upstream's health probe error is kept whole as its instance's lastError, however large the upstream made it, instead of cut to MCPCTL_MAX_STORED_STRING_BYTES.",
		Kill:       goTest("./proxy/health", "^TestLastErrorIsCutToTheStoredStringBound$")},
	{Name: "progress-counted-at-return", PatchFile: "292-progress-counted-at-return.patch",
		Regression: "the progress row counts the notifications handled when CallTool returns, so progress a proxy (or its load balancer) delivers in the same read as the result fails it: the go-sdk client runs notification handlers on another goroutine.",
		Kill:       goTest("./scenarios/catalogue", "^TestProgressArrivingWithTheResultIsCounted$")},
	{Name: "audit-read-from-one-replica", PatchFile: "293-audit-read-from-one-replica.patch",
		Regression: "the evidence adapter reads a cluster's audit rows from whichever replica the balancer picks, which flushes only its own queue: a row another replica wrote is missing and mcplocal's own promises fail on a cluster.",
		Kill:       goTest("./scenarios/evidence/mcplocal", "^TestTheAuditIsReadFromEveryReplica$")},
	{Name: "foreign-cluster-check-ignored", PatchFile: "285-foreign-cluster-check-ignored.patch",
		Regression: "a foreign proxy's cluster gives HAProxy no check of its own: HAProxy checks mcplocal's /readyz, which the proxy does not serve, and no replica ever comes UP (or one that is down stays in).",
		Kill:       goTest("./scenarios/harness", "^TestAForeignClusterChecksWhatItsSpecSays$")},
	{Name: "foreign-cluster-store-assumed", PatchFile: "286-foreign-cluster-store-assumed.patch",
		Regression: "a foreign cluster is taken to share a store whether or not its spec declares one, so the cluster scenarios that need one are run on replicas that each keep their own state, and fail them for a promise they never made.",
		Kill:       goTest("./scenarios/harness", "^TestUnsharedNamesAClusterWithoutAStore$")},
	{Name: "foreign-cluster-store-not-given", PatchFile: "287-foreign-cluster-store-not-given.patch",
		Regression: "a foreign cluster starts the PostgreSQL its spec declares but renders {{.StoreDSN}} empty: each replica falls back to a store of its own, and nothing is shared.",
		Kill:       goTest("./scenarios/harness", "^TestAForeignClusterSharesTheStoreItDeclares$")},
	{Name: "foreign-cluster-bypasses-haproxy", PatchFile: "288-foreign-cluster-bypasses-haproxy.patch",
		Regression: "a foreign cluster's endpoint is its first replica's, not HAProxy's: every scenario talks to one replica and the cluster's faults are never seen through the balancer.",
		Kill:       goTest("./scenarios/harness", "^TestAForeignClusterSharesTheStoreItDeclares$")},
	{Name: "foreign-cluster-held-to-mcplocal-notice", PatchFile: "289-foreign-cluster-held-to-mcplocal-notice.patch",
		Regression: "every cluster is held to mcplocal's adoption across replicas: a foreign proxy whose replicas keep their own sessions, and rightly answer a lost one 404, fails the SIGKILL and rolling-restart scenarios for lacking the ⚠ notice it never claimed.",
		Kill:       goTest("./scenarios/harness", "^TestAdoptionAcrossReplicasNeedsTheClaimAndTheStore$")},
	{Name: "cluster-held-to-one-process-bounds", PatchFile: "294-cluster-held-to-one-process-bounds.patch",
		Regression: "a cluster is held to the rows about one process's own bounds and stop (connections, header sizes, session caps), which HAProxy in front holds first and its replicas hold each: it fails them for HAProxy's own answers.",
		Kill:       goTest("./scenarios/catalogue", "^TestWhatAppliesIsFrozen$")},
	{Name: "slow-tool-within-declared-budget", PatchFile: "466-slow-tool-within-declared-budget.patch",
		Regression: "the slow tool of the tool-slow row answers after a fixed 5 s whatever budget the target declares: a proxy declaring 10 s rightly lets it answer, and fails the row for a cut it never had to make.",
		Kill:       goTest("./scenarios/catalogue", "^TestASlowToolOutlastsTheBudgetInForce$")},
	{Name: "late-success-two-breaches", PatchFile: "467-late-success-two-breaches.patch",
		Regression: "a call that needed a cut at the budget and was answered late with the tool's own result is reported twice, late and not an isError: one cause as two breaches.",
		Kill:       goTest("./scenarios/catalogue", "^TestALateAnswerToACallThatNeededACutIsOneBreach$")},
	{Name: "initialize-wait-untimed", PatchFile: "468-initialize-wait-untimed.patch",
		Regression: "a session whose initialize is never answered is reported as a call the client gave up on after 0s: the wait for the initialize is not timed, and the row does not say the call was never sent.",
		Kill:       goTest("./scenarios/catalogue", "^TestASessionThatNeverOpensIsTimedAndNamed$")},
	{Name: "generic-origin-row-asks-host", PatchFile: "469-generic-origin-row-asks-host.patch",
		Regression: "the generic Origin row also fails a proxy that serves a request naming a foreign Host with no Origin, which the MCP spec does not ask of it: every proxy that checks the Origin as the spec says fails for a promise it never made.",
		Kill:       goTest("./scenarios/catalogue", "^TestTheGenericOriginRowAsksWhatTheSpecAsks$")},
	{Name: "empty-batch-202-breach", PatchFile: "470-empty-batch-202-breach.patch",
		Regression: "the malformed-requests row fails a proxy that accepts an empty JSON array with 202 and no body, as the TypeScript SDK's server does: there is no request in it to answer, and the MCP transport accepts a body without one that way.",
		Kill:       goTest("./scenarios/catalogue", "^TestAnEmptyBatchAcceptedWith202IsAnswered$")},
	{Name: "slow-session-taken-for-dead", PatchFile: "473-slow-session-taken-for-dead.patch",
		Regression: "\"the proxy still serves\" gives a fresh initialize only the harness's own request knob: a proxy that opens each session slowly (a child process per session) is failed as dead on every row that asks whether it still serves.",
		Kill:       goTest("./scenarios/catalogue", "^TestAProxySlowToOpenASessionStillServes$")},
	{Name: "raw-rows-name-the-newest-version", PatchFile: "474-raw-rows-name-the-newest-version.patch",
		Regression: "the raw-HTTP rows name the newest protocol version in every request's header, the initialize included: a proxy on an older SDK refuses them all with 400, and fails the Origin row (400, not 403) and the malformed-requests row (no session) for the harness's header.",
		Kill:       goTest("./scenarios/catalogue", "^TestRawRowsSpeakTheVersionTheProxyChose$")},
	{Name: "second-signal-swallowed", PatchFile: "475-second-signal-swallowed.patch",
		Regression: "mcpchaos takes a second Ctrl-C or SIGTERM and does nothing: a run stuck in a step (a container that will not stop, an upstream that never closes) can only be ended with SIGKILL.",
		Kill:       goTest("./cmd/mcpchaos", "^TestASecondSignalQuitsNow$")},
	{Name: "interrupted-run-reports-nothing", PatchFile: "476-interrupted-run-reports-nothing.patch",
		Regression: "an interrupted mcpchaos run returns at once and prints nothing of the rows that ran: an hour of a catalogue run is lost to one Ctrl-C.",
		Kill:       goTest("./cmd/mcpchaos", "^TestAnInterruptedRunReportsWhatRan$")},
	{Name: "stall-clock-counts-whole-sleeps", PatchFile: "433-stall-clock-counts-whole-sleeps.patch",
		Regression: "the stall clock measures every sleep from the first one's start, so each reading counts nearly all the time since the clock started as the machine's load: the soak and the load specs excuse any lateness.",
		Kill:       goTest("./internal/stall", "^TestStallClockTimesAnIntervalByTwoReadings$")},
	{Name: "large-answer-trace-unjudged", PatchFile: "434-large-answer-trace-unjudged.patch",
		Regression: "the large-answer wire row reads the result's trace code and does not judge its absence: mcplocal answering a 256 KiB tools/call without its trace code passes.",
		Kill:       goTest("./scenarios/catalogue", "^TestSurfaceResultsWithoutTheirTraceCodeBreakIt$")},
	{Name: "stateless-requests-unforwardable", PatchFile: "448-stateless-requests-unforwardable.patch",
		Regression: "a stateless proxy is taken to be unable to carry an upstream's sampling, elicitation or roots request whatever its spec claims: their rows are N/A on it for a method it does claim, though such a request travels on the call's own stream and the client's answer is routed by its id.",
		Kill:       goTest("./scenarios/catalogue", "^TestAStatelessProxyIsSparedOnlySessionRows$")},
	{Name: "stateless-delete-any-status", PatchFile: "449-stateless-delete-any-status.patch",
		Regression: "a stateless proxy's DELETE passes whatever it is answered: a 500 is taken for the 2xx or 405 the MCP spec allows a server without sessions.",
		Kill:       goTest("./scenarios/catalogue", "^TestAStatelessProxysBrokenDeleteFails$")},
	{Name: "stateless-delete-spared", PatchFile: "450-stateless-delete-spared.patch",
		Regression: "the DELETE row is N/A on a proxy that declares itself stateless, though its DELETE has promises of its own (2xx or 405, nothing broken after): a stateless proxy answering it 500 is never failed.",
		Kill:       goTest("./scenarios/catalogue", "^TestAStatelessProxyIsSparedOnlySessionRows$")},
	{Name: "per-request-level-unchecked", PatchFile: "451-per-request-level-unchecked.patch",
		Regression: "the log row of MCP 2026-07-28 takes the call's answer for the log message its _meta asked for: a stateless proxy that drops the call's log level, so that no message comes, passes.",
		Kill:       goTest("./scenarios/catalogue", "^TestAStatelessProxyDroppingTheLevelOrTheUpdateFails$")},
	{Name: "per-request-levels-below-passed", PatchFile: "452-per-request-levels-below-passed.patch",
		Regression: "the log row of MCP 2026-07-28 takes every message for one at or above the level its call's _meta asked for: a stateless proxy that ignores the level and passes debug, info and warning too, passes.",
		Kill:       goTest("./scenarios/catalogue", "^TestAStatelessProxyDroppingTheLevelOrTheUpdateFails$")},
	{Name: "listen-update-unchecked", PatchFile: "453-listen-update-unchecked.patch",
		Regression: "the subscription row of MCP 2026-07-28 takes a listen stream's acknowledgement for its update: a stateless proxy that acknowledges the stream but never passes the resource's update down it, passes.",
		Kill:       goTest("./scenarios/catalogue", "^TestAStatelessProxyDroppingTheLevelOrTheUpdateFails$")},
	{Name: "per-request-ways-unasked", PatchFile: "454-per-request-ways-unasked.patch",
		Regression: "a stateless proxy declaring MCP 2026-07-28 is taken for one of the older revisions: its log and subscription rows are N/A for outliving their request, though that revision carries both within a request and it claims them.",
		Kill:       goTest("./scenarios/catalogue", "^TestAStatelessProxySpeakingThePerRequestRevisionIsAskedThatWay$")},
	{Name: "per-request-rows-speak-older", PatchFile: "455-per-request-rows-speak-older.patch",
		Regression: "the log and subscription rows speak logging/setLevel and resources/subscribe to a stateless proxy of MCP 2026-07-28, so a proxy carrying the level and the listen stream that revision's way fails them for what outlives a request.",
		Kill:       goTest("./scenarios/catalogue", "^TestAStatelessProxyDroppingTheLevelOrTheUpdateFails$")},
	{Name: "probe-answered-by-a-squatter", PatchFile: "295-probe-answered-by-a-squatter.patch",
		Regression: "a target's readiness probe answered by another process that took the port picked free counts as the proxy ready: the scenario talks to a stranger (a foreign row got another server's 'unknown tool').",
		Kill:       goTest("./scenarios/harness", "^TestAProbeAnsweredByAnotherProcessIsNotReadiness$")},
	{Name: "canary-specs-not-measured-again", PatchFile: "296-canary-specs-not-measured-again.patch",
		Regression: "a Ginkgo spec the canary flags slower keeps its flag without a second measurement: one stall of a machine busy beside the canary fails an SDK that changed nothing.",
		Kill:       goTest("./scenarios/canary", "^TestRecheckMeasuresSpecsAgainToo$")},
	{Name: "batch-unanswered-at-shutdown", PatchFile: "297-batch-unanswered-at-shutdown.patch",
		Regression: "a JSON-RPC batch still running when the proxy stops is not tracked: its blocked requests get a connection closed mid-stream, not the shutdown answer.",
		Kill:       goTest("./proxy/entry", "^TestTrackFollowsRequestsOnly$")},
	{Name: "batch-one-answer-for-all", PatchFile: "298-batch-one-answer-for-all.patch",
		Regression: "the first answer a batch's SSE stream carries is taken for the whole batch's: the requests not yet answered get nothing at shutdown.",
		Kill:       goTest("./proxy/entry", "^TestShutdownAnswersEveryRequestOfABatch$")},
	{Name: "canary-recheck-misses-other-suites", PatchFile: "373-canary-recheck-misses-other-suites.patch",
		Regression: "the canary's second measurement of a flagged spec focuses on the record's name, which for a suite besides the main one (the conformance suite) Ginkgo never matches: its flag stays on one stall.",
		Kill:       goTest("./scenarios/canary", "^TestSpecFocusMatchesWhatGinkgoMatches$")},
	{Name: "world-bounds-set-on-a-copy", PatchFile: "477-world-bounds-set-on-a-copy.patch",
		Regression: "a world sets the bounds a row gives by name on a copy of its knobs: every session-cap, batch, idle and TTL row runs its proxy at the compressed defaults and judges a bound the proxy was never given.",
		Kill:       goTest("./scenarios/harness", "^TestAWorldRunsUnderTheBoundsItIsGiven$")},
	{Name: "failpoints-armed-later-lost", PatchFile: "478-failpoints-armed-later-lost.patch",
		Regression: "a failpoint a fault arms while the in-process proxy runs never reaches it: the handler-panic and handler-hang specs call a tool that answers normally and judge a proxy that was never hurt.",
		Kill:       Check{Kind: Ginkgo, Label: "deadline", Focus: "keeps serving after a handler panic"}},
	{Name: "cluster-never-ready", PatchFile: "479-cluster-never-ready.patch",
		Regression: "a cluster is never ready between two rows of a warm run: every row on a cluster starts its own Postgres, replicas and HAProxy.",
		Kill:       Check{Kind: Ginkgo, Label: "cluster", Focus: "two catalogue rows of a warm run share one cluster"}},
	{Name: "cancel-seen-as-upstream-failure", PatchFile: "480-cancel-seen-as-upstream-failure.patch",
		Regression: "a handler that fails as the client gives its request up is recorded as an upstream failure whenever the guard sees the handler end first: a client's cancel reads as a down upstream in the audit trail.",
		Kill:       goTest("./proxy/deadline", "^TestAHandlerFailingAsTheClientGivesUpIsCancelled$")},
	{Name: "replay-turns-no-wait-into-a-wait", PatchFile: "481-replay-turns-no-wait-into-a-wait.patch",
		Regression: "a compressed replay plays a recorded millisecond knob of 0 (no wait: the stop drain off) as a 1 ms wait, so the replayed proxy does not run under the bounds the incident's proxy ran under.",
		Kill:       goTest("./scenarios/replay", "^TestPlanCompressesDurationsOnly$")},
	{Name: "transport-failure-judged-an-answer", PatchFile: "482-transport-failure-judged-an-answer.patch",
		Regression: "a request the client's transport could not deliver (a reset connection) is judged a JSON-RPC error the proxy answered, because the go-sdk client wraps it as one: a broken connection passes the answered promise.",
		Kill:       goTest("./scenarios/catalogue", "^TestEndingOfTellsTheWaysARequestEndsApart$")},
	{Name: "not-built-verdict-miscounts", PatchFile: "483-not-built-verdict-miscounts.patch",
		Regression: "the canary's verdict on a candidate that does not build counts the baseline's passed rows without the allowed ones: one allowed row of two passed reads 'passed 1 of its 2 rows'.",
		Kill:       goTest("./scenarios/canary", "^TestACandidateThatDoesNotBuildIsAResult$")},
	{Name: "soak-call-without-session", PatchFile: "484-soak-call-without-session.patch",
		Regression: "a soak worker that could not open its session still sends the tools/call, and the proxy's refusal of a call without a session counts as the answer: an initialize cut every time passes for answered.",
		Kill:       goTest("./scenarios/soak", "^(TestAnInitializeCutIsNotCountedAnswered|TestAWorkerGivesUpOpeningASessionAfterItsRetries)$")},
	{Name: "haproxy-not-sticky", PatchFile: "460-haproxy-not-sticky.patch",
		Regression: "the shipped HAProxy config learns session ids but never routes by them, so a session's requests spread over every replica and each one recreates it with a ⚠ notice.",
		Kill:       Check{Kind: Ginkgo, Label: "cluster", Focus: "the load balancer restarted"}},
	{Name: "haproxy-retries-received-requests", PatchFile: "461-haproxy-retries-received-requests.patch",
		Regression: "the shipped HAProxy config retries a request whose replica died after receiving it, so a tools/call in flight on a killed replica runs a second time on another one instead of failing at the client.",
		Kill:       Check{Kind: Ginkgo, Label: "cluster", Focus: "a replica SIGKILLed mid-call"}},
	{Name: "haproxy-moves-drained-sessions", PatchFile: "462-haproxy-moves-drained-sessions.patch",
		Regression: "the shipped HAProxy config sends a drained replica's sessions elsewhere, so while the store restarts every session lands on a replica that must check its owner in the unreachable store.",
		Kill:       Check{Kind: Ginkgo, Label: "cluster", Focus: "Postgres restarted"}},
	{Name: "haproxy-checks-liveness-only", PatchFile: "463-haproxy-checks-liveness-only.patch",
		Regression: "the shipped HAProxy config health-checks /healthz, so a replica cut off from its store is never drained.",
		Kill:       Check{Kind: Ginkgo, Label: "cluster", Focus: "one replica partitioned from Postgres"}},
	{Name: "cluster-never-kills", PatchFile: "464-cluster-never-kills.patch",
		Regression: "the cluster target's kill leaves the replica running, so the SIGKILL scenario proves nothing about calls in flight on a dead replica.",
		Kill:       Check{Kind: Ginkgo, Label: "cluster", Focus: "a replica SIGKILLed mid-call"}},
	{Name: "soak-counts-a-balancer-page-as-an-answer", PatchFile: "465-soak-counts-a-balancer-page-as-an-answer.patch",
		Regression: "the soak counts a load balancer's 502 page as an answer, so calls lost with a killed replica pass for answered ones in the cluster soak.",
		Kill:       goTest("./scenarios/soak", "^TestABalancersErrorPageIsNoAnswer$")},
	{Name: "report-reads-mcplocal-audit-types", PatchFile: "400-report-reads-mcplocal-audit-types.patch",
		Regression: "the report, part of the harness core, reads mcplocal's audit types again (its status constants) instead of the target-neutral evidence spans.",
		Kill:       goTest("./scenarios/harness", "^TestLayoutCoreImportsNothingOfTheProxy$")},
	{Name: "pause-holds-one-replica", PatchFile: "440-pause-holds-one-replica.patch",
		Regression: "a pause through one replica of a shared PostgreSQL store holds the project on that replica only: the load balancer's other replicas keep running its calls.",
		Kill:       goTest("./proxy/shared", "^TestAPauseThroughOneReplicaHoldsTheProjectOnAll$")},
	{Name: "owner-from-local-cache-only", PatchFile: "441-owner-from-local-cache-only.patch",
		Regression: "a replica reads a session's owner from its own table only, so a session whose request reaches another replica (or any after a restart) is refused instead of recreated for its owner.",
		Kill:       goTest("./proxy/shared", "^TestASessionOpenedOnOneReplicaIsRecreatedOnAnotherForItsOwnerOnly$")},
	{Name: "tombstone-kept-local", PatchFile: "442-tombstone-kept-local.patch",
		Regression: "a session DELETEd through one replica stays open on another that holds it live: the closed id keeps working there.",
		Kill:       goTest("./proxy/shared", "^TestASessionDeletedOnOneReplicaIsATombstoneOnAnother$")},
	{Name: "server-change-stays-on-one-replica", PatchFile: "443-server-change-stays-on-one-replica.patch",
		Regression: "a server created, replaced or deleted through mcpctl on one replica never reaches the others nor their clients' tools/list_changed.",
		Kill:       goTest("./proxy/shared", "^TestAServerChangedThroughOneReplicaReachesAll$")},
	{Name: "hot-path-reads-the-owner", PatchFile: "444-hot-path-reads-the-owner.patch",
		Regression: "every request on an open session reads its owner from the shared store: a store round trip on the hot path of each tools/call.",
		Kill:       goTest("./proxy/shared", "^TestAToolsCallOnAnOpenSessionReadsNoSessionRecord$")},
	{Name: "replica-applies-first-change-only", PatchFile: "445-replica-applies-first-change-only.patch",
		Regression: "a replica applies only the first change of each shared key, so a resume after a pause (or a server's second change) never reaches it.",
		Kill:       goTest("./proxy/shared", "^TestAPauseThroughOneReplicaHoldsTheProjectOnAll$")},
	{Name: "chunked-answer-taken-for-mcp", PatchFile: "392-chunked-answer-taken-for-mcp.patch",
		Regression: "a 2xx answer of another type than JSON or an event stream is named when it has a Content-Length, but the same answer chunked (no length) is taken for an empty MCP answer and reaches the SDK or the relay as an unsupported content type, the gateway in front of the upstream unnamed.",
		Kill:       goTest("./proxy/upstream", "^TestWellShapedIsExactlyWhatMCPAnswers$")},
	{Name: "client-title-not-cut", PatchFile: "390-client-title-not-cut.patch",
		Regression: "a session record cuts clientInfo's name and version at their bound but keeps its title whole, so a client can grow every record (and every recreated session's initialize) with a title of any size.",
		Kill:       goTest("./proxy/entry", "^TestEveryClientInfoFieldIsCut$")},
	{Name: "client-info-cut-mid-character", PatchFile: "391-client-info-cut-mid-character.patch",
		Regression: "clientInfo's fields are cut at their bound in the middle of a character, which the record then keeps as a replacement character past the bound.",
		Kill:       goTest("./proxy/entry", "^TestEveryClientInfoFieldIsCut$")},
	{Name: "row-degraded-reason-not-cut", PatchFile: "393-row-degraded-reason-not-cut.patch",
		Regression: "an audit row's detail and tool are cut at MCPCTL_MAX_STORED_STRING_BYTES but its degraded reason, which quotes a provider's or an upstream's error, is stored whole.",
		Kill:       goTest("./proxy/audit", "^TestEveryStringOfARowIsCut$")},
	{Name: "trace-json-with-bundle-ignored", PatchFile: "394-trace-json-with-bundle-ignored.patch",
		Regression: "mcpctl trace --json --bundle FILE writes the bundle and silently drops --json, though its help offers them as one or the other.",
		Kill:       goTest("./cmd/mcpctl", "^TestEveryPairOfFlagsIsHonouredOrRefused$")},
	{Name: "output-alias-last-wins", PatchFile: "395-output-alias-last-wins.patch",
		Regression: "mcpctl get servers -o yaml --output json prints JSON without a word: of two contradicting output flags the later silently wins.",
		Kill:       goTest("./cmd/mcpctl", "^TestEveryPairOfFlagsIsHonouredOrRefused$")},
	{Name: "probe-arguments-without-tool", PatchFile: "396-probe-arguments-without-tool.patch",
		Regression: "mcpctl create server --health-check-arguments JSON without --health-check-tool is accepted and sends a liveness probe (tools/list, no arguments): the arguments typed are silently dropped, and with --force the server's readiness tool too.",
		Kill:       goTest("./cmd/mcpctl", "^TestEveryPairOfFlagsIsHonouredOrRefused$")},
	{Name: "force-with-url-drops-the-probe", PatchFile: "397-force-with-url-drops-the-probe.patch",
		Regression: "mcpctl create server NAME --project P --server-url U --force with no --health-check-* flag replaces the server without its probe: the readiness probe silently falls back to liveness.",
		Kill:       goTest("./cmd/mcpctl", "^TestEveryPairOfFlagsIsHonouredOrRefused$")},
	{Name: "bench-sdk-path-dropped-without-mcplocal", PatchFile: "398-bench-sdk-path-dropped-without-mcplocal.patch",
		Regression: "mcpchaos bench --no-mcplocal --sdk-path runs without a word and measures no go-sdk path target: the flag asked for is silently dropped.",
		Kill:       goTest("./cmd/mcpchaos", "^TestEveryPairOfChaosFlagsIsAcceptedOrRefused$")},
	{Name: "log-value-of-any-type-not-cut", PatchFile: "399-log-value-of-any-type-not-cut.patch",
		Regression: "a log line cuts strings, errors, Stringers and bytes at MCPCTL_MAX_STORED_STRING_BYTES, but a value of another type (a struct or a slice holding what a client or an upstream sent) is logged whole.",
		Kill:       goTest("./proxy/bound", "^TestHandlerCutsEveryKindOfValue$")},
	{Name: "completion-prompt-name-unbounded", PatchFile: "385-completion-prompt-name-unbounded.patch",
		Regression: "a prompt's name is held to MCPCTL_MAX_NAME_BYTES in prompts/get but not in completion/complete's ref/prompt, so a request naming a prompt there carries a name of any length to the upstream, the rows and the logs.",
		Kill:       goTest("./proxy/entry", "^TestEveryNameARequestCarriesIsHeld$")},
	{Name: "kept-changed-verdict", PatchFile: "370-kept-changed-verdict.patch",
		Regression: "mcpchaos replay --as-scenario keeps a replay whose verdict is changed, pinning whatever the build of the day does.",
		Kill:       goTest("./scenarios/replay", "^TestAKeptScenarioRefusesWhatCannotBeKept$")},
	{Name: "kept-file-expect-ignored", PatchFile: "371-kept-file-expect-ignored.patch",
		Regression: "mcpchaos replay KEPT.json ignores the kept scenario's pinned verdict, so the seed hang replayed on the buggy build passes.",
		Kill:       goTest("./cmd/mcpchaos", "^TestAKeptFileIsJudgedByItsPinnedVerdict$")},
	{Name: "kept-row-unjudged", PatchFile: "372-kept-row-unjudged.patch",
		Regression: "a kept replay's catalogue row never compares the replay with its pinned verdict: it passes whenever the call is answered.",
		Kill:       goTest("./scenarios/catalogue", "^TestAKeptRowFailsWhenItsReplayShowsAnotherVerdict$")},
	{Name: "everything-not-standing-in", PatchFile: "471-everything-not-standing-in.patch",
		Regression: "a proxy of one server is given docmost in the worlds of the rows on the everything fake, then asked for that fake's tools under docmost's names: it fails the wire and surface rows for tools it was never given.",
		Kill:       goTest("./scenarios/harness", "^TestAProxyOfOneServerIsGivenTheEverythingFakeInItsPlace$")},
	{Name: "everything-named-as-itself", PatchFile: "472-everything-named-as-itself.patch",
		Regression: "the everything fake standing in for a proxy's one server is called by the name \"everything\" and reached at that server's path, which the proxy does not have: every wire and surface row fails on a proxy of one server.",
		Kill:       goTest("./scenarios/catalogue", "^TestTheEverythingFakeStandsInForAProxyOfOneServer$")},
	{Name: "warm-toxic-left", PatchFile: "401-warm-toxic-left.patch",
		Regression: "a warm run readies the kept world for the next scenario without removing the last one's toxics: a row after a latency row is judged late for a fault that is not its own.",
		Kill:       goTest("./scenarios/catalogue", "^TestWarmRowsJudgeAsColdOnes$")},
	{Name: "warm-fake-behaviour-left", PatchFile: "402-warm-fake-behaviour-left.patch",
		Regression: "a warm run keeps the fakes' tool behaviours of the last scenario: a row after a tool-error row sees the upstream's isError and fails for it.",
		Kill:       goTest("./scenarios/catalogue", "^TestWarmRowsJudgeAsColdOnes$")},
	{Name: "warm-cut-body-stays-warm", PatchFile: "403-warm-cut-body-stays-warm.patch",
		Regression: "a limit-data row runs on the warm proxy: a proxy whose upstream client closes its session on a body cut short (the plain proxy) fails every row after it on that proxy.",
		Kill:       goTest("./scenarios/catalogue", "^TestWhichRowsGoWarm$")},
	{Name: "warm-llm-stage-rows-share", PatchFile: "404-warm-llm-stage-rows-share.patch",
		Regression: "paginate rows share a warm mcplocal: it keeps the page titles an earlier row's LLM gave, so an LLM fault row after a good answer never reaches the LLM and fails for want of the notice.",
		Kill:       goTest("./scenarios/catalogue", "^TestWhichRowsGoWarm$")},
	{Name: "warm-knob-rows-share", PatchFile: "405-warm-knob-rows-share.patch",
		Regression: "rows with knobs of their own share a warm proxy: a session-cap row on a binary inherits the sessions the row before it opened and is refused under the cap.",
		Kill:       goTest("./scenarios/catalogue", "^TestWhichRowsGoWarm$")},
	{Name: "sqlite-shape-columns-not-added", PatchFile: "406-sqlite-shape-columns-not-added.patch",
		Regression: "a SQLite audit store made before rows kept an answer's shape opens without the answer columns, and every read and write of a row fails on it.",
		Kill:       goTest("./proxy/audit", "^TestSQLiteAddsTheShapeColumnsToAnOlderAuditTable$")},
	{Name: "postgres-shape-column-not-added", PatchFile: "407-postgres-shape-column-not-added.patch",
		Regression: "a PostgreSQL audit store made before rows kept an answer's shape is not given its content-kinds column, and every read and write of a row fails on it.",
		Kill:       goTest("./proxy/audit", "^TestPostgresAddsTheShapeColumnsToAnOlderAuditTable$")},
	{Name: "row-content-not-cut", PatchFile: "408-row-content-not-cut.patch",
		Regression: "an upstream_call row's content kinds, named from what the upstream sent, are stored whole past MCPCTL_MAX_STORED_STRING_BYTES.",
		Kill:       goTest("./proxy/audit", "^TestEveryStringOfARowIsCut$")},
	{Name: "row-keeps-upstream-type-names", PatchFile: "409-row-keeps-upstream-type-names.patch",
		Regression: "an upstream_call row keeps a content block's type as the upstream wrote it, any text at all, where a bundle promises kinds only.",
		Kill:       goTest("./proxy/audit", "^TestAShapeHoldsKindsNeverContent$")},
	{Name: "relay-row-without-shape", PatchFile: "410-relay-row-without-shape.patch",
		Regression: "the raw relay's upstream_call row says nothing of the answer (no size, no content kinds), so a bundle of a relayed call cannot carry its shape.",
		Kill:       goTest("./proxy/project", "^TestTheUpstreamRowKeepsTheAnswersShapeOnBothPaths$")},
	{Name: "sdk-row-without-shape", PatchFile: "411-sdk-row-without-shape.patch",
		Regression: "the go-sdk path's upstream_call row says nothing of the answer (no size, no content kinds), and marks no isError answer as failed.",
		Kill:       goTest("./proxy/project", "^TestTheUpstreamRowKeepsTheAnswersShapeOnBothPaths$")},
	{Name: "relay-measures-the-stamped-result", PatchFile: "412-relay-measures-the-stamped-result.patch",
		Regression: "the raw relay measures the result after stamping its trace code into _meta, so the same answer is recorded bigger on the relay than on the go-sdk path.",
		Kill:       goTest("./proxy/project", "^TestTheUpstreamRowKeepsTheAnswersShapeOnBothPaths$")},
	{Name: "bundle-drops-content-kinds", PatchFile: "413-bundle-drops-content-kinds.patch",
		Regression: "a bundle's answers leave out the upstream answer's content kinds its row recorded, so a replay answers with a body of another shape.",
		Kill:       goTest("./cmd/mcpctl", "^TestABundleHoldsTheAnswersShapeNotItsContent$")},
	{Name: "replay-answers-unshaped", PatchFile: "414-replay-answers-unshaped.patch",
		Regression: "a replay's fake answers the recorded tool with its own body, whatever size and content kinds the recorded answer had.",
		Kill:       goTest("./cmd/mcpchaos", "^TestAnAnswersShapeReplays$")},
	{Name: "replay-other-server-refused", PatchFile: "415-replay-other-server-refused.patch",
		Regression: "a replay refuses a bundle whose call went to any upstream but the docmost-like one, though the bundle's config names that server.",
		Kill:       goTest("./cmd/mcpchaos", "^TestACallThroughAnotherServerReplays$")},
	{Name: "replay-refusal-as-reset", PatchFile: "416-replay-refusal-as-reset.patch",
		Regression: "a replay plays an upstream call recorded as a refused connection as a reset of the link, another failure than the one recorded.",
		Kill:       goTest("./cmd/mcpchaos", "^TestAnUpstreamRefusalReplaysFaithfully$")},
	{Name: "replay-timeout-as-reset", PatchFile: "417-replay-timeout-as-reset.patch",
		Regression: "a replay plays an upstream call recorded as a network timeout as a reset of the link, not as a link that never answers.",
		Kill:       goTest("./scenarios/replay", "^TestEachNetworkFailureIsPlayedAsItself$")},
	{Name: "replay-refusal-not-its-own-outcome", PatchFile: "418-replay-refusal-not-its-own-outcome.patch",
		Regression: "a replay judges a refused connection and a reset as one network failure, so a refusal replayed as a reset passes for the same.",
		Kill:       goTest("./scenarios/replay", "^TestEachNetworkFailureIsItsOwnOutcome$")},
	{Name: "replay-answer-shape-not-compared", PatchFile: "419-replay-answer-shape-not-compared.patch",
		Regression: "a replay whose upstream answered with another size or other content kinds than recorded is judged the same.",
		Kill:       goTest("./scenarios/replay", "^TestAnAnswersShapeIsCompared$")},
	{Name: "own-change-unrecorded", PatchFile: "446-own-change-unrecorded.patch",
		Regression: "a replica does not record the version of its own shared change, so a poll that read the older value first applies it over the change (a pause undone by a stale resume).",
		Kill:       goTest("./proxy/shared", "^TestAPollNeverAppliesAValueOlderThanTheReplicasOwnChange$")},
	{Name: "pause-applied-without-the-store", PatchFile: "447-pause-applied-without-the-store.patch",
		Regression: "a pause through a replica that cannot write the shared store is applied there anyway: the project is held on one replica only, and the operator is told it worked.",
		Kill:       goTest("./proxy/shared", "^TestAReplicaCutFromTheSharedStoreIsNotReadyAndStillAnswers$")},
}

// All returns every mutant with its patch, in patch order.
func All() []Mutant {
	out := make([]Mutant, len(table))
	for i, m := range table {
		b, err := patchFS.ReadFile(path.Join("patches", m.PatchFile))
		if err != nil {
			panic(fmt.Sprintf("mutants: %s: %v", m.Name, err)) // the table names a patch that is not embedded: caught by the package's test
		}
		m.Patch = string(b)
		out[i] = m
	}
	return out
}

// ByName returns the named mutant.
func ByName(name string) (Mutant, bool) {
	for _, m := range All() {
		if m.Name == name {
			return m, true
		}
	}
	return Mutant{}, false
}

// Select returns the named mutants in table order, or all of them when
// names is empty. An unknown name is an error listing the known ones.
func Select(names []string) ([]Mutant, error) {
	all := All()
	if len(names) == 0 {
		return all, nil
	}
	want := map[string]bool{}
	for _, n := range names {
		want[n] = true
	}
	var out []Mutant
	for _, m := range all {
		if want[m.Name] {
			out = append(out, m)
			delete(want, m.Name)
		}
	}
	if len(want) > 0 {
		var unknown, known []string
		for n := range want {
			unknown = append(unknown, n)
		}
		sort.Strings(unknown)
		for _, m := range all {
			known = append(known, m.Name)
		}
		return nil, fmt.Errorf("unknown mutant(s) %s (known: %s)", strings.Join(unknown, ", "), strings.Join(known, ", "))
	}
	return out, nil
}

// PatchedFiles lists the files a patch changes (its "+++ b/" lines).
func PatchedFiles(patch string) []string {
	var out []string
	for _, line := range strings.Split(patch, "\n") {
		if f, ok := strings.CutPrefix(line, "+++ b/"); ok {
			out = append(out, strings.TrimSpace(f))
		}
	}
	return out
}

// QuickPlan is what `make quick` runs for the code a change touches: the
// check of every known mutant of that code. Tests maps a package to the
// -run regexp of its go test checks; Labels is a Ginkgo label filter that
// selects the specs of the Ginkgo checks (their label filters, focus
// dropped: a superset) and the catalogue checks (their scenarios' specs on
// the in-process target); empty if none.
type QuickPlan struct {
	Tests  map[string]string
	Labels string
}

// Quick is the QuickPlan for dirs, package directories relative to the
// module root ("proxy/entry").
func Quick(dirs []string) QuickPlan { return quickPlan(All(), dirs) }

func quickPlan(muts []Mutant, dirs []string) QuickPlan {
	touched := map[string]bool{}
	for _, d := range dirs {
		touched[path.Clean(strings.TrimPrefix(d, "./"))] = true
	}
	p := QuickPlan{Tests: map[string]string{}}
	var ginkgo, catalogue []string
	seen := map[string]bool{}
	for _, mu := range muts {
		hit := false
		for _, f := range PatchedFiles(mu.Patch) {
			hit = hit || touched[path.Dir(f)]
		}
		if !hit || seen[mu.Kill.String()] {
			continue
		}
		seen[mu.Kill.String()] = true
		switch c := mu.Kill; c.Kind {
		case GoTest:
			if p.Tests[c.Pkg] != "" {
				p.Tests[c.Pkg] += "|"
			}
			p.Tests[c.Pkg] += c.Run
		case Ginkgo:
			if !slices.Contains(ginkgo, "("+c.Label+")") {
				ginkgo = append(ginkgo, "("+c.Label+")")
			}
		case Catalogue:
			if !slices.Contains(catalogue, c.Label) {
				catalogue = append(catalogue, c.Label)
			}
		}
	}
	if len(catalogue) > 0 {
		ginkgo = append(ginkgo, "(catalogue && inprocess && ("+strings.Join(catalogue, " || ")+"))")
	}
	p.Labels = strings.Join(ginkgo, " || ")
	return p
}
