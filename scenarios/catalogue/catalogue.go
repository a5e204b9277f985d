// Package catalogue holds every chaos scenario exactly once: a fault, an
// operation, the promise it holds the proxy to, and the check. The Ginkgo
// suite in scenarios/ turns each into a spec; `mcpchaos run` executes them
// directly and prints one row per scenario.
package catalogue

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpchaos/mcpchaos/scenarios/evidence"
	"github.com/mcpchaos/mcpchaos/scenarios/evidence/mcplocal"
	"github.com/mcpchaos/mcpchaos/scenarios/harness"
	"github.com/mcpchaos/mcpchaos/smoke"
)

// Tolerance is what a bounded answer may take beyond its budget: the
// harness's (harness.Tolerance, in its one timeouts table).
const Tolerance = harness.Tolerance

// Scenario is one fault × operation × promise, with its check.
type Scenario struct {
	Fault     harness.Fault
	Operation Operation
	// Promise is the promise held (docs/design.md, The promises), e.g. "1 every request answered".
	Promise string
	// Labels select scenarios (ginkgo --label-filter, mutant runs).
	Labels []string
	// Env shapes the world (users, strict sessions).
	Env harness.EnvOptions
	// Budget is the time the operation may take, from the bounds in force.
	Budget func(harness.Bounds) time.Duration
	// Expect checks what the operation observed; nil means the promise held.
	Expect func(Observation) error
	// Claims are capabilities of mcplocal's own that the scenario's checks
	// are about (adoption after a restart): a target must claim them.
	Claims []string
	// Needs, if set, says why a target cannot run this scenario ("" if it can).
	// Such a result is reported as not applicable, by name, never as passed.
	Needs func(harness.Target) string
	// replaced is the fault WithFault replaced, named in Name.
	replaced string
}

// Name is "fault × operation", plus the pipeline when there is one; unique
// in the catalogue.
func (s Scenario) Name() string {
	n := s.Fault.Name() + " × " + s.Operation.Name
	if len(s.Env.Pipeline) > 0 {
		var stages []string
		for _, st := range s.Env.Pipeline {
			stages = append(stages, st.Name)
		}
		n += " via " + strings.Join(stages, ", ")
	}
	if s.Env.Fallback {
		n += " (with a fallback LLM)"
	}
	if s.replaced != "" {
		n += " in place of " + s.replaced
	}
	return n
}

// Operation is what a client does while the fault is in place.
type Operation struct {
	Name string
	Do   func(ctx context.Context, env *harness.Env) Observation
	// Forwards lists the MCP methods beyond tools the operation needs the
	// proxy to forward (harness.ForwardableMethods), against the everything
	// fake: a generic scenario that applies to every proxy claiming them.
	Forwards []string
	// AnyShape: the operation needs of the everything fake only tools/call,
	// on the shape's own path and under its own names (a wire row), not
	// mcplocal's capability everything.
	AnyShape bool
}

// Observation is what an operation saw.
type Observation struct {
	Latency time.Duration // of the timed part, the request under the fault
	// Stalled is the part of Latency the machine did not run this process
	// (harness.StallMeter): the budget verdict judges Latency less Stalled,
	// so a loaded machine is not taken for a late proxy. Zero for an
	// operation that does not meter its timed part: judged on Latency alone.
	Stalled time.Duration
	Trace   string // the trace code the answer carried, if any
	IsError bool   // a tools/call answered with isError: true
	Text    string // the answer's text content
	Err     error  // a protocol or transport failure: the request was not answered well
	// Spans are the steps of the answer's trace code as the target's
	// evidence adapter tells them (mcplocal's: its audit rows): what the
	// report draws as a waterfall, and what checks of mcplocal's own read.
	Spans []evidence.Span
	// Broken lists promises a multi-step operation saw broken (a missing
	// notice, a leaked session); empty when all held.
	Broken []string
	// Breached lists breaches a multi-step operation saw, typed with their
	// tier and promise (Broken's are classified by the scenario).
	Breached []Breach
}

// Result is a scenario's verdict.
type Result struct {
	Scenario Scenario
	Budget   time.Duration
	Observation
	Pass bool
	// Breaches are the promises broken, every one (empty when Pass).
	Breaches []Breach
	// Reason lists the breaches as text.
	Reason string
	// NotApplicable says why the target could not run the scenario; such a
	// result is neither passed nor failed.
	NotApplicable string
	// Draws are what the world's random plans drew, in order (the fake
	// LLMs' steps): the same --seed gives the same draws.
	Draws []string
	// BudgetNote, when the verdict rests on a budget the target did not
	// declare, says so: "budget assumed: 1.5s, not declared (request)".
	BudgetNote string
	// Log is the tail of the proxy process's own output around the
	// scenario, kept for a failing row of a target whose log the harness
	// reads.
	Log string
	// Warm: the scenario ran on a proxy process that had served an earlier
	// one (Warm), not on one started for it.
	Warm bool `json:",omitempty"`
}

// Judge gives the verdict on one observation, holding the proxy to every
// promise (mcplocal's own included).
func (s Scenario) Judge(b harness.Bounds, o Observation) Result { return s.JudgeOn(nil, b, o) }

// JudgeOn gives the verdict on one observation made against target: every
// generic promise broken, and every one of mcplocal's own that target claims
// (see Breach). The Reason lists them all, not only the first.
func (s Scenario) JudgeOn(target harness.Target, b harness.Bounds, o Observation) Result {
	r := Result{Scenario: s, Budget: s.Budget(b), Observation: o}
	assumed := ""
	if target != nil {
		if kinds := harness.AssumedBudgets(target, b, s.Budget); len(kinds) > 0 {
			r.BudgetNote = fmt.Sprintf("budget assumed: %v, not declared (%s)", r.Budget, strings.Join(kinds, ", "))
			assumed = " (" + r.BudgetNote + ")"
		}
	}
	var bs []Breach
	if EndingOf(o) == EndNoAnswer {
		// One cause, one breach: a request the client gave up on was neither
		// late nor answered in the wrong shape, it was not answered.
		bs = append(bs, Breach{Tier: Generic, Promise: PromiseAnswered,
			Detail: fmt.Sprintf("never answered: the client gave up after %v (budget %v)%s", o.Latency.Round(time.Millisecond), r.Budget, unansweredStep(o.Err))})
	} else {
		if harness.Unstalled(o.Latency, o.Stalled) > r.Budget+Tolerance {
			load := ""
			if o.Stalled > 0 {
				load = fmt.Sprintf(" (%v of it the machine's load, not counted)", o.Stalled.Round(time.Millisecond))
			}
			bs = append(bs, Breach{Tier: Generic, Promise: PromiseBudget,
				Detail: fmt.Sprintf("answered after %v%s, budget %v + tolerance %v%s", o.Latency.Round(time.Millisecond), load, r.Budget, Tolerance, assumed)})
		}
		if late := len(bs) > 0; !late || !s.Cuts() || EndingOf(o) != EndResult {
			// A late success where only a cut at the budget could have
			// answered in time is one cause: the call was not cut. Its
			// shape (no isError) is that same cause, not a second breach.
			bs = append(bs, s.breaches(s.Expect(o))...)
		}
	}
	bs = append(bs, o.Breached...)
	for _, b := range o.Broken {
		bs = append(bs, s.untyped(b))
	}
	r.Breaches = held(target, bs)
	r.Pass = len(r.Breaches) == 0
	r.Reason = reasonOf(r.Breaches)
	return r
}

// Run builds the scenario's world with target, injects the fault, performs
// the operation and judges it. The world is torn down before Run returns.
// The world's random draws derive from the scenario's name alone (RunSeeded
// with seed 0).
func (s Scenario) Run(ctx context.Context, target harness.Target) Result {
	return s.RunSeeded(ctx, target, 0)
}

// RunSeeded is Run with the run's seed: every random draw of the world (the
// fakes' random plans) derives from seed and the scenario's name, so the same
// seed replays the same draws (Result.Draws) and the same verdict.
func (s Scenario) RunSeeded(ctx context.Context, target harness.Target, seed uint64) Result {
	o := s.Env
	o.Target = target
	if why := s.NotApplicable(target); why != "" {
		return Result{Scenario: s, NotApplicable: why}
	}
	// The env arms the fault as it strikes: before the proxy starts, before
	// the call, or when the operation strikes it midway.
	o.Fault, o.Seed = s.Fault, harness.SeedFor(seed, s.Name())
	env, err := harness.NewEnv(ctx, o)
	if err != nil {
		return Result{Scenario: s, Pass: false, Reason: "setup: " + err.Error(), Log: proxyLog(target)}
	}
	defer env.Close(context.Background())
	return s.runIn(ctx, env)
}

// runIn performs s's operation in env, a world armed with s's fault, and
// judges it.
func (s Scenario) runIn(ctx context.Context, env *harness.Env) Result {
	target := env.Target
	// The client gives up long after the budget, so a proxy that never
	// answers fails the scenario instead of hanging the run.
	kv := harness.BudgetsOf(target, env.Bounds())
	octx, cancel := context.WithTimeout(ctx, OperationLimit(s.Budget(kv)))
	defer cancel()
	obs := s.Operation.Do(octx, env)
	if obs.Spans == nil && obs.Trace != "" {
		// Kept for the report's waterfall; a failure to read them is not the
		// scenario's verdict unless its expectation needs them.
		obs.Spans, _ = evidenceOf(env).Spans(ctx, obs.Trace)
	}
	r := s.JudgeOn(target, kv, obs)
	r.Draws = env.Draws()
	if !env.Struck() && r.Pass {
		// The operation ended before the fault's strike point: whatever it
		// saw, the scenario proved nothing about the fault. (One that failed
		// before it is judged by that failure alone: one cause, one breach.)
		r.Breaches = append(r.Breaches, Breach{Tier: Harness, Promise: PromiseStruck,
			Detail: fmt.Sprintf("fault %s (strikes %s) never struck: the operation %q ended before its strike point", s.Fault.Name(), s.Fault.Strikes(), s.Operation.Name)})
		r.Pass = false
		r.Reason = reasonOf(r.Breaches)
	}
	if !r.Pass {
		// Read before the world (and a container with its log) is torn down.
		r.Log = proxyLog(target)
	}
	return r
}

// evidenceOf is the evidence adapter of env's proxy: mcplocal's, over its
// audit API, the one adapter there is (a proxy without that API answers
// its queries with an error: no spans).
func evidenceOf(env *harness.Env) evidence.Adapter { return mcplocal.Evidence{Of: env} }

// proxyLog is the end of the proxy's own output, for a failing row of a
// target whose log the harness keeps ("" otherwise).
func proxyLog(target harness.Target) string {
	if lr, ok := target.(harness.LogReader); ok {
		return lastBytes(lr.Logs(), keptLog)
	}
	return ""
}

// keptLog is how much of the proxy's output a failing result keeps.
const keptLog = 4 << 10

// lastBytes is the end of s, at most n bytes, from a line boundary.
func lastBytes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	// The byte before the cut too: a newline there is a line boundary;
	// without one, the last n bytes.
	s = s[len(s)-n-1:]
	i := max(strings.IndexByte(s, '\n'), 0)
	return s[i+1:]
}

// WithFault is s with its fault replaced by f (`mcpchaos run --fault`); its
// name says which fault f replaced, so names stay unique in the catalogue.
func (s Scenario) WithFault(f harness.Fault) Scenario {
	if s.replaced == "" {
		s.replaced = s.Fault.Name()
	}
	s.Fault = f
	return s
}

// Requires lists the capabilities a target must claim to run s (see
// harness.Capabilities): derived from the scenario's world, plus what its
// fault requires (capabilities and harness.Need* world features).
func (s Scenario) Requires() []string {
	var caps []string
	if len(s.Env.Pipeline) > 0 {
		caps = append(caps, harness.CapLLMStages, harness.CapAuditAPI)
	}
	if s.Env.Gate {
		caps = append(caps, harness.CapGate, harness.CapAuditAPI)
	}
	if s.Env.Everything && len(s.Operation.Forwards) == 0 && !s.Operation.AnyShape {
		// The everything fake for a check of mcplocal's own (its upstream
		// sessions), not for a method a proxy forwards.
		caps = append(caps, harness.CapEverything)
	}
	caps = append(caps, s.Claims...)
	for _, n := range s.Fault.Requires() {
		if slices.Contains(harness.AllCapabilities, n) {
			caps = append(caps, n)
		}
	}
	return caps
}

// NotApplicable says why target cannot run s ("" when it can): a missing
// capability, what its fault requires of the target or the world, or the
// scenario's own Needs.
func (s Scenario) NotApplicable(target harness.Target) string {
	if why := harness.Unforwarded(target, s.Operation.Forwards...); why != "" {
		return why
	}
	if ro, ok := target.(harness.ReadOnly); ok && !s.readOnly() {
		return ro.ReadOnly()
	}
	if why := harness.Lacks(target, s.Requires()...); why != "" {
		return why
	}
	if why := harness.Unmet(target, s.Env, s.Fault.Requires()...); why != "" {
		return "fault " + s.Fault.Name() + ": " + why
	}
	if s.Needs != nil {
		if why := s.Needs(target); why != "" {
			return why
		}
	}
	if s.Cuts() {
		if kinds := harness.AssumedBudgets(target, harness.DefaultBounds(), s.Budget); len(kinds) > 0 {
			return fmt.Sprintf("needs the proxy to cut the call at its %s budget, which target %s does not declare (budgets: in its spec)",
				strings.Join(kinds, ", "), target.Name())
		}
	}
	return ""
}

// Cuts reports whether s's verdict needs the proxy to cut a call at its
// budget: its fault leaves the call unanswered upstream (a blackholed or
// stalled link, a hung or too slow tool, a hung handler), so only the
// proxy's own budget can answer it in time.
func (s Scenario) Cuts() bool {
	switch f := s.Fault.(type) {
	case harness.Blackhole, harness.ToolHang, harness.ToolSlow, harness.HandlerHang:
		return true
	case harness.Bandwidth:
		return f.KBps == 0
	}
	return false
}

// readOnly reports whether s injects no fault and its operation only reads
// (lists tools, or opens and DELETEs a session): what a live target runs.
func (s Scenario) readOnly() bool {
	if s.Fault.Strikes() != harness.StrikeNever {
		return false
	}
	return s.Operation.Name == ListTools.Name || s.Operation.Name == DeleteEmptyJSON.Name
}

// OperationLimit is how long an operation may run in all (setup calls,
// restarts, the timed request) before the client gives up: far past the
// budget, so only a proxy that does not answer at all meets it.
func OperationLimit(budget time.Duration) time.Duration {
	return 5*(budget+Tolerance) + 10*time.Second
}

// HasLabel reports whether s carries label l.
func (s Scenario) HasLabel(l string) bool {
	for _, x := range s.Labels {
		if x == l {
			return true
		}
	}
	return false
}

// Budgets.
func requestDeadline(b harness.Bounds) time.Duration { return b.D(harness.BoundRequest) }

// withBounds is o with set's bounds (by name, in their units) over the
// world's: the catalogue shapes a world by the names of its bounds.
func withBounds(o harness.EnvOptions, set map[string]int64) harness.EnvOptions {
	merged := maps.Clone(o.Override)
	if merged == nil {
		merged = map[string]int64{}
	}
	maps.Copy(merged, set)
	o.Override = merged
	return o
}

// ms is d in the milliseconds a duration bound is held in.
func ms(d time.Duration) int64 { return d.Milliseconds() }

// Expectations.

// answeredOK: the call succeeded and carries a trace code.
func answeredOK(o Observation) error {
	if err := unanswered(o); err != nil {
		return err
	}
	if EndingOf(o) == EndRPCError {
		return broke(PromiseSuccess, "answered with a JSON-RPC error instead of the result: %s", rpcText(o.Err))
	}
	var errs []error
	if o.IsError {
		errs = append(errs, broke(PromiseSuccess, "isError result: %s", excerpt(o.Text)))
	}
	if !smoke.ValidTraceCode(o.Trace) {
		errs = append(errs, noTraceCode(o.Trace))
	}
	return errors.Join(errs...)
}

// answeredWithRecovery: the call failed, but was answered (generic): as a
// readable isError result, not a JSON-RPC error (mcplocal's error shapes),
// that quotes its trace code (mcplocal's own), the promise for tools/call
// failures.
func answeredWithRecovery(o Observation) error {
	if err := unanswered(o); err != nil {
		return err
	}
	if EndingOf(o) == EndRPCError {
		return brokeOwn(harness.CapErrorShapes, PromiseIsError, "answered with a JSON-RPC error instead of an isError result: %s", rpcText(o.Err))
	}
	if !o.IsError {
		return broke(PromiseIsError, "expected an isError result, got success")
	}
	if !smoke.ValidTraceCode(o.Trace) || !strings.Contains(o.Text, o.Trace) {
		return brokeOwn(harness.CapTraceCode, PromiseTraceCode, "isError text does not quote the trace code %q: %s", o.Trace, excerpt(o.Text))
	}
	return nil
}

func excerpt(s string) string {
	if len(s) > 160 {
		return s[:160] + "…"
	}
	return s
}

// textOf joins a result's text content.
func textOf(r *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range r.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			b.WriteString(t.Text)
		}
	}
	return b.String()
}

func traceOf(r *mcp.CallToolResult) string {
	s, _ := r.Meta[smoke.TraceMetaKey].(string)
	return s
}
