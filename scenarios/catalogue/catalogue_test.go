package catalogue

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/mcpchaos/mcpchaos/scenarios/harness"
)

func TestScenarioNamesAreUniqueAndComplete(t *testing.T) {
	seen := map[string]bool{}
	for _, s := range All() {
		if seen[s.Name()] {
			t.Errorf("two scenarios are named %q", s.Name())
		}
		seen[s.Name()] = true
		if s.Expect == nil || s.Budget == nil || s.Operation.Do == nil || s.Promise == "" || len(s.Labels) == 0 {
			t.Errorf("%s: incomplete (every scenario needs an operation, a budget, an expectation, a promise and labels)", s.Name())
		}
	}
}

func TestJudgeFailsLateAndBrokenAnswers(t *testing.T) {
	s := All()[0]
	kv := harness.DefaultBounds()
	late := Observation{Latency: s.Budget(kv) + Tolerance + 1, Trace: "ABCDEFGH"}
	if r := s.Judge(kv, late); r.Pass {
		t.Error("an answer past budget + tolerance passed")
	}
	broken := Observation{Trace: "ABCDEFGH", Broken: []string{"notice missing"}}
	if r := s.Judge(kv, broken); r.Pass || r.Reason != "[mcp] "+s.Promise+": notice missing" {
		t.Errorf("a broken promise passed: %+v", r)
	}
	if r := s.Judge(kv, Observation{Trace: "ABCDEFGH"}); !r.Pass {
		t.Errorf("a good answer failed: %s", r.Reason)
	}
}

// The budget verdict takes out the time the machine did not run the client
// (Observation.Stalled), and only that: an answer late by more than the
// stalls explain still fails, and the breach says how much was load.
func TestJudgeTakesOutStallsAndOnlyThem(t *testing.T) {
	s := All()[0]
	kv := harness.DefaultBounds()
	over := s.Budget(kv) + Tolerance + 400*time.Millisecond
	if r := s.Judge(kv, Observation{Latency: over, Stalled: 500 * time.Millisecond, Trace: "ABCDEFGH"}); !r.Pass {
		t.Errorf("an answer late only by 400ms of a 500ms stall failed: %s", r.Reason)
	}
	r := s.Judge(kv, Observation{Latency: over, Stalled: 300 * time.Millisecond, Trace: "ABCDEFGH"})
	if r.Pass {
		t.Fatal("an answer 400ms late with 300ms of stalls passed")
	}
	if !strings.Contains(r.Reason, "(300ms of it the machine's load, not counted)") {
		t.Errorf("the breach does not say how much was load: %s", r.Reason)
	}
}

// bare is a target that claims no capability, as a foreign proxy's spec may.
type bare struct{ harness.Target }

func (bare) Name() string      { return "foreign:bare" }
func (bare) Has(c string) bool { return false }

func byName(t *testing.T, name string) Scenario {
	t.Helper()
	for _, s := range All() {
		if s.Name() == name {
			return s
		}
	}
	t.Fatalf("no scenario %q", name)
	return Scenario{}
}

// The verdict lists every promise broken, each with its tier; mcplocal's own
// promises bind only targets that claim them, so a foreign proxy's real
// finding is not hidden behind a missing trace code.
func TestJudgeListsEveryBreachByTier(t *testing.T) {
	kv := harness.DefaultBounds()
	s := byName(t, "blackhole × small tools/call")
	late := Observation{Latency: kv.D(harness.BoundRequest) + Tolerance + time.Second, Err: context.DeadlineExceeded}
	if r := s.JudgeOn(nil, kv, late); r.Pass || len(r.Breaches) != 1 || !strings.HasPrefix(r.Reason, "[mcp] answered: never answered") {
		t.Fatalf("one client timeout: want the one breach never answered, got %d: %s", len(r.Breaches), r.Reason)
	}
	// A late JSON-RPC error: late (generic), and not an isError result
	// (mcplocal's error shapes), two causes.
	lateRPC := Observation{Latency: kv.D(harness.BoundRequest) + Tolerance + time.Second, Err: rpcErr("upstream timed out")}
	r := s.JudgeOn(nil, kv, lateRPC)
	if len(r.Breaches) != 2 || r.Breaches[0].Promise != PromiseBudget || r.Breaches[1].Tier != Own || r.Breaches[1].Promise != PromiseIsError {
		t.Errorf("a late JSON-RPC error: want within budget and [mcplocal] tool failure as isError, got %s", r.Reason)
	}

	// A readable isError without a trace code: broken for mcplocal, held for
	// a proxy that does not claim traceCode.
	untraced := Observation{Latency: time.Millisecond, IsError: true, Text: "upstream unreachable"}
	if r := s.JudgeOn(nil, kv, untraced); r.Pass || len(r.Breaches) != 1 || r.Breaches[0].Tier != Own || r.Breaches[0].Promise != PromiseTraceCode {
		t.Errorf("mcplocal without a trace code: %+v", r.Breaches)
	}
	if r := s.JudgeOn(bare{}, kv, untraced); !r.Pass {
		t.Errorf("a proxy that does not claim traceCode was held to it: %s", r.Reason)
	}

	// A success without a trace code on the baseline, and an isError
	// instead of a result: both listed for mcplocal, only the generic one
	// for the bare proxy.
	base := byName(t, "none × small tools/call")
	both := Observation{Latency: time.Millisecond, IsError: true, Text: "boom"}
	if r := base.JudgeOn(nil, kv, both); len(r.Breaches) != 2 {
		t.Errorf("mcplocal: want 2 breaches, got %s", r.Reason)
	}
	if r := base.JudgeOn(bare{}, kv, both); len(r.Breaches) != 1 || r.Breaches[0].Tier != Generic || r.Breaches[0].Promise != PromiseSuccess {
		t.Errorf("bare: want only the generic breach, got %s", r.Reason)
	}
}

// Labels is the one list: every label a scenario carries is in it, and every
// entry of it selects at least one scenario.
func TestLabelsAreOneFrozenList(t *testing.T) {
	used := map[string]bool{}
	for _, s := range All() {
		for _, l := range s.Labels {
			if err := CheckLabel(l); err != nil {
				t.Errorf("%s: %v", s.Name(), err)
			}
			used[l] = true
		}
	}
	for _, l := range Labels {
		if !used[l] {
			t.Errorf("label %q selects no scenario: drop it from Labels", l)
		}
	}
	if CheckLabel("basline") == nil {
		t.Error("a misspelt label was accepted")
	}
}

// TestSurfaceAndSecurityOperationsAreJudgedThroughTheStallMeter: the
// verdict on every surface and security operation takes out the stalls its
// timed part saw, as the other operations' do (a loaded machine is not a
// late proxy). With every meter reporting an hour of stalls more than it
// saw, each operation, run once in process, must report at least that hour:
// one timed on the wall clock alone reports none (an operation with no timed
// part reports neither latency nor stalls). mcplocal keeps every one of
// these promises, so each row also passes: an operation that sees a promise
// broken where none is fails a proxy for nothing.
func TestSurfaceAndSecurityOperationsAreJudgedThroughTheStallMeter(t *testing.T) {
	const simulated = time.Hour
	restore := harness.SimulateStalls(simulated)
	defer restore()
	seen := map[string]bool{}
	for _, s := range All() {
		if !s.HasLabel("surface") && !s.HasLabel("security") {
			continue
		}
		if seen[s.Operation.Name] || s.NotApplicable(&harness.InProcess{}) != "" {
			continue
		}
		if _, ok := s.Fault.(harness.None); !ok && !s.HasLabel("security") {
			continue // the surface operations once each, on a healthy link
		}
		seen[s.Operation.Name] = true
		t.Run(s.Name(), func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			r := s.Run(ctx, &harness.InProcess{})
			if r.NotApplicable != "" {
				// The loop kept only scenarios applicable in process: one
				// that says otherwise once run is not judged at all.
				t.Fatalf("said applicable in process, then ran as not applicable: %s", r.NotApplicable)
			}
			if !r.Pass {
				t.Errorf("mcplocal in process failed the row: %s", r.Reason)
			}
			if r.Latency == 0 && r.Stalled == 0 {
				return // nothing of it is timed (a config check): no budget verdict to excuse
			}
			if r.Stalled < simulated {
				t.Errorf("%q is judged on the wall clock: it reported %v stalled, want its timed part metered (harness.MeterStalls)", s.Operation.Name, r.Stalled)
			}
		})
	}
	if len(seen) < 10 {
		t.Fatalf("only %d surface and security operations found", len(seen))
	}
}

// rpcErr is a JSON-RPC error as the go-sdk client returns one: wrapped.
func rpcErr(msg string) error {
	return fmt.Errorf("calling %q: %w", "tools/call", &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: msg})
}

// The ways a request ends are told apart: silence, an HTTP-level failure,
// a JSON-RPC error, an isError result, a result.
func TestEndingOfTellsTheWaysARequestEndsApart(t *testing.T) {
	for _, c := range []struct {
		o    Observation
		want Ending
	}{
		{Observation{Err: fmt.Errorf("calling: %w", context.DeadlineExceeded)}, EndNoAnswer},
		{Observation{Err: errors.New(`sending "tools/call": rejected by transport: connection refused`)}, EndHTTP},
		{Observation{Err: rpcErr("context deadline exceeded")}, EndRPCError},
		// The go-sdk client's own word for a request its transport could not
		// deliver or read the answer of (a reset connection): no JSON-RPC
		// error the proxy sent, though it is one in Go.
		{Observation{Err: fmt.Errorf("calling %q: %w", "tools/call", fmt.Errorf("sending %q: %w: %w", "tools/call",
			&jsonrpc.Error{Code: -32005, Message: "rejected by transport"}, errors.New("connection reset by peer")))}, EndHTTP},
		{Observation{Err: fmt.Errorf("calling %q: %w", "tools/call", &jsonrpc.Error{Code: -32005, Message: "the proxy's own words"})}, EndRPCError},
		{Observation{IsError: true}, EndIsError},
		{Observation{}, EndResult},
	} {
		if got := EndingOf(c.o); got != c.want {
			t.Errorf("%+v: ended %q, want %q", c.o, got, c.want)
		}
	}
}

// A JSON-RPC error relayed from the upstream is an answer: it is reported
// as a JSON-RPC error, never as "not answered"; that a down upstream is an
// isError result and not a JSON-RPC error is mcplocal's promise
// (errorShapes), not the generic tier's.
func TestARelayedJSONRPCErrorIsAnAnswer(t *testing.T) {
	kv := harness.DefaultBounds()
	relayed := Observation{Latency: time.Millisecond, Err: rpcErr("upstream: connection refused")}

	r := byName(t, "none × small tools/call").JudgeOn(bare{}, kv, relayed)
	if r.Pass || len(r.Breaches) != 1 || r.Breaches[0].Promise != PromiseSuccess || !strings.Contains(r.Reason, "JSON-RPC error") || strings.Contains(r.Reason, "not answered") {
		t.Errorf("a relayed JSON-RPC error on the baseline: want one [mcp] tool result delivered breach naming the JSON-RPC error, got %s", r.Reason)
	}
	down := byName(t, "down × small tools/call")
	if r := down.JudgeOn(bare{}, kv, relayed); !r.Pass {
		t.Errorf("a down upstream answered with a JSON-RPC error failed a proxy that does not claim errorShapes: %s", r.Reason)
	}
	if r := down.JudgeOn(nil, kv, relayed); r.Pass || r.Breaches[0].Tier != Own || r.Breaches[0].Promise != PromiseIsError {
		t.Errorf("mcplocal answering a down upstream with a JSON-RPC error: want [mcplocal] tool failure as isError, got %s", r.Reason)
	}
	r = byName(t, "tool-error × paginating tools/call").JudgeOn(bare{}, kv, relayed)
	if r.Pass || r.Breaches[0].Promise != PromisePassThrough {
		t.Errorf("an upstream isError turned into a JSON-RPC error: want upstream isError passed through, got %s", r.Reason)
	}
	// A fault that may end the call either way: a JSON-RPC error is an
	// answer there too.
	if r := byName(t, "limit-data × paginating tools/call").JudgeOn(bare{}, kv, relayed); !r.Pass {
		t.Errorf("a cut upstream answer relayed as a JSON-RPC error failed a proxy that does not claim errorShapes: %s", r.Reason)
	}
	// No MCP answer at all is the generic breach, whoever the target.
	cut := Observation{Latency: time.Millisecond, Err: errors.New("failed to read body: unexpected EOF")}
	if r := down.JudgeOn(bare{}, kv, cut); r.Pass || r.Breaches[0].Promise != PromiseAnswered || !strings.Contains(r.Reason, "HTTP-level failure") {
		t.Errorf("a cut answer: want [mcp] answered (HTTP-level failure), got %s", r.Reason)
	}
}

// On every method, a JSON-RPC error under a fault is an answer; that it
// carries a trace code in error.data is mcplocal's own promise.
func TestASurfaceRPCErrorIsAnAnswerItsTraceCodeMcplocals(t *testing.T) {
	kv := harness.DefaultBounds()
	s := byName(t, "blackhole × ping")
	plainErr := Observation{Latency: time.Millisecond, Err: rpcErr("upstream unreachable")}
	if r := s.JudgeOn(bare{}, kv, plainErr); !r.Pass {
		t.Errorf("a JSON-RPC error without a trace code failed a proxy that does not claim traceCode: %s", r.Reason)
	}
	if r := s.JudgeOn(nil, kv, plainErr); r.Pass || r.Breaches[0].Tier != Own || r.Breaches[0].Promise != PromiseTraceCode {
		t.Errorf("mcplocal's JSON-RPC error without a trace code: want [mcplocal] trace code, got %s", r.Reason)
	}
	cut := Observation{Latency: time.Millisecond, Err: errors.New("unexpected EOF")}
	if r := s.JudgeOn(bare{}, kv, cut); r.Pass || r.Breaches[0].Tier != Generic || r.Breaches[0].Promise != PromiseAnswered {
		t.Errorf("an HTTP-level failure on ping: want [mcp] answered, got %s", r.Reason)
	}
	healthy := byName(t, "none × ping")
	if r := healthy.JudgeOn(bare{}, kv, plainErr); r.Pass || r.Breaches[0].Tier != Generic || r.Breaches[0].Promise != PromiseSuccess {
		t.Errorf("a JSON-RPC error on a healthy ping: want [mcp] tool result delivered, got %s", r.Reason)
	}
}
