// Package stage post-processes tool results: each pipeline stage may use the
// LLM, and every LLM use is bounded twice over: by its own timeout and by the
// stage invocation's Budget, shared across all the calls the stage makes.
//
// A stage cannot fail. When the LLM is slow, broken or spent, it takes its
// deterministic path (numbered pages, first-line excerpts) and reports a
// degrade.Degradation, which becomes the ⚠ notice and the audit fields.
package stage

import (
	"context"
	"fmt"
	"time"

	"github.com/mcpchaos/mcpchaos/proxy/audit"
	"github.com/mcpchaos/mcpchaos/proxy/degrade"
	"github.com/mcpchaos/mcpchaos/proxy/knobs"
	"github.com/mcpchaos/mcpchaos/proxy/llm"
	"github.com/mcpchaos/mcpchaos/proxy/trace"
)

// Stage transforms a tool result's text.
type Stage interface {
	// Name is the config name: "paginate", "summarize-tree".
	Name() string
	// Run transforms in. It must return when env.Budget is spent, and never fails.
	Run(ctx context.Context, env *Env, in string) Output
}

// Output is what a stage made of its input.
type Output struct {
	Text         string
	Degradations []degrade.Degradation
	// Detail is a short account for the audit row ("14 kB in 4 pages").
	Detail string
}

// Shared is what every stage invocation of a project may use.
type Shared struct {
	LLM   *llm.Adapter // nil: no LLM configured
	Knobs knobs.Values
	Cache *Cache
	Pages *Pages
	Audit audit.Sink
}

// Env is one stage invocation's world: the shared parts, its Budget and the
// audit row template its LLM attempts are written with.
type Env struct {
	*Shared
	Budget *Budget
	row    audit.Row // template: correlation, session, user, project, tool, parent span
}

// Ask runs one LLM completion bounded by timeout and by what is left of the
// stage budget, writes an llm_attempt row per provider attempt under the
// stage's span, and never fails: the result carries the text or the reason.
func (e *Env) Ask(timeout time.Duration, req llm.Request) degrade.Result[string] {
	return degrade.Ask(e.Budget.Context(), e.LLM, min(timeout, e.Budget.Remaining()), req, func(start time.Time, as []llm.Attempt) {
		for _, r := range AttemptRows(e.row, start, as) {
			e.Audit.Record(r)
		}
	})
}

// AttemptRows turns provider attempts into llm_attempt rows under parent's
// span (parent is the stage or gate row they belong to).
func AttemptRows(parent audit.Row, start time.Time, attempts []llm.Attempt) []audit.Row {
	rows := make([]audit.Row, 0, len(attempts))
	at := start
	for _, a := range attempts {
		row := parent
		row.Kind, row.SpanID, row.ParentID = audit.KindLLMAttempt, trace.NewSpanID(), parent.SpanID
		row.Server, row.Stage = a.Provider, ""
		row.Start, row.Duration = at, a.Duration
		row.Degraded, row.DegradedReason = false, ""
		switch a.Outcome {
		case llm.OutcomeOK:
			row.Status = audit.StatusOK
		case llm.OutcomeTimeout, llm.OutcomeBudget:
			row.Status = audit.StatusTimeout
		case llm.OutcomeCanceled:
			row.Status = audit.StatusCancelled
		default:
			row.Status = audit.StatusError
		}
		row.Detail = a.String()
		rows = append(rows, row)
		at = at.Add(a.Duration)
	}
	return rows
}

// IntOption reads an integer stage option (YAML gives int; JSON float64).
func IntOption(opts map[string]any, name string, def int) (int, error) {
	v, ok := opts[name]
	if !ok {
		return def, nil
	}
	switch n := v.(type) {
	case int:
		if n > 0 {
			return n, nil
		}
	case float64:
		if n > 0 && n == float64(int(n)) {
			return int(n), nil
		}
	}
	return 0, fmt.Errorf("option %s: want a positive whole number, got %v", name, v)
}
