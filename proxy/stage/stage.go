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
	"github.com/mcpchaos/mcpchaos/proxy/audit/llmrows"
	"github.com/mcpchaos/mcpchaos/proxy/degrade"
	"github.com/mcpchaos/mcpchaos/proxy/knobs"
	"github.com/mcpchaos/mcpchaos/proxy/llm"
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
		for _, r := range llmrows.FromAttempts(e.row, start, as) {
			e.Audit.Record(r)
		}
	})
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
