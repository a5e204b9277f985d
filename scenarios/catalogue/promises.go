package catalogue

import (
	"errors"
	"fmt"
	"strings"

	"github.com/mcpchaos/mcpchaos/scenarios/harness"
)

// Tier says who must keep a promise.
type Tier string

const (
	// Generic promises hold for any MCP proxy: answered within its budget, a
	// tool failure as an isError result rather than a protocol error, a
	// DELETEd session id answered 404, the session surviving an upstream
	// restart.
	Generic Tier = "mcp"
	// Own promises are mcplocal's own (trace codes in _meta, ⚠ notices, audit
	// rows, session adoption). A foreign target is held to one only when it
	// claims the promise's capability.
	Own Tier = "mcplocal"
	// Harness findings are about the run, not the proxy: a fault that never
	// struck makes its scenario prove nothing, so it fails.
	Harness Tier = "harness"
)

// The generic promises' short names, as the report's BROKEN column gives them.
const (
	PromiseAnswered     = "answered"
	PromiseBudget       = "within budget"
	PromiseIsError      = "tool failure as isError"
	PromisePassThrough  = "upstream isError passed through"
	PromiseSuccess      = "tool result delivered"
	PromiseUpstreamBack = "survives an upstream restart"
	PromiseDelete       = "DELETE ends the session"
	PromiseTraceCode    = "trace code"
	PromiseStruck       = "the fault struck"
)

// Breach is one promise a scenario saw broken. A scenario's verdict lists
// every breach, not only the first, so a foreign proxy's real finding is not
// hidden behind a promise only mcplocal makes.
type Breach struct {
	Tier Tier
	// Promise is the promise's short name (PromiseBudget, ...), or the
	// scenario's Promise for checks that name none.
	Promise string
	// Capability, for an Own breach, is the capability a target claims to be
	// held to it (harness.CapTraceCode); "" when the scenario's own
	// requirements already decide.
	Capability string
	Detail     string
}

// Error implements error: "[tier] promise: detail".
func (b *Breach) Error() string { return fmt.Sprintf("[%s] %s: %s", b.Tier, b.Promise, b.Detail) }

// broke returns a generic breach of promise.
func broke(promise, format string, a ...any) error {
	return &Breach{Tier: Generic, Promise: promise, Detail: fmt.Sprintf(format, a...)}
}

// brokeOwn returns a breach of mcplocal's own promise, held only to targets
// claiming capability.
func brokeOwn(capability, promise, format string, a ...any) error {
	return &Breach{Tier: Own, Promise: promise, Capability: capability, Detail: fmt.Sprintf(format, a...)}
}

// noTraceCode is the breach of a result without a valid trace code.
func noTraceCode(got string) error {
	return brokeOwn(harness.CapTraceCode, PromiseTraceCode, "result carries no trace code in _meta (got %q)", got)
}

// breaches flattens err (an Expect's answer, perhaps errors.Join'ed) into
// breaches. An error that is no Breach is classified by the scenario: Own when
// the scenario needs one of mcplocal's capabilities (its checks are about
// them), Generic otherwise.
func (s Scenario) breaches(err error) []Breach {
	if err == nil {
		return nil
	}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		var out []Breach
		for _, e := range j.Unwrap() {
			out = append(out, s.breaches(e)...)
		}
		return out
	}
	var b *Breach
	if errors.As(err, &b) {
		return []Breach{*b}
	}
	return []Breach{s.untyped(err.Error())}
}

// untyped classifies a breach its check did not type (see breaches).
func (s Scenario) untyped(detail string) Breach {
	tier := Generic
	if len(s.Requires()) > 0 {
		tier = Own
	}
	return Breach{Tier: tier, Promise: s.Promise, Detail: detail}
}

// held keeps the breaches target is held to: every generic one, and the own
// ones whose capability it claims (nil target: mcplocal, held to all).
func held(target harness.Target, bs []Breach) []Breach {
	var out []Breach
	for _, b := range bs {
		if b.Capability != "" && target != nil && harness.Lacks(target, b.Capability) != "" {
			continue
		}
		out = append(out, b)
	}
	return out
}

// reasonOf joins breaches for Result.Reason, one after another.
func reasonOf(bs []Breach) string {
	parts := make([]string, len(bs))
	for i := range bs {
		parts[i] = bs[i].Error()
	}
	return strings.Join(parts, "; ")
}
