// Package gate opens a gated project's tools with begin_session: the LLM
// ranks the project's prompts against the agent's stated intent (bounded by
// MCPCTL_GATE_LLM_TIMEOUT_MS); when it cannot, priority and keyword order
// stands in and the answer says so. read_prompts lists them without any LLM.
package gate

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/mcpchaos/mcpchaos/proxy/audit"
	"github.com/mcpchaos/mcpchaos/proxy/audit/llmrows"
	"github.com/mcpchaos/mcpchaos/proxy/config"
	"github.com/mcpchaos/mcpchaos/proxy/degrade"
	"github.com/mcpchaos/mcpchaos/proxy/llm"
	"github.com/mcpchaos/mcpchaos/proxy/trace"
)

// Tool names the gate adds to a gated project.
const (
	BeginSession = "begin_session"
	ReadPrompts  = "read_prompts"
)

// Feature names what degrades when ranking fails.
const Feature = "Smart prompt-selection"

// Gate ranks one project's prompts.
type Gate struct {
	prompts []config.Prompt
	llm     *llm.Adapter // nil: no LLM configured
	timeout time.Duration
	audit   audit.Sink
}

// New returns the gate of a project.
func New(prompts []config.Prompt, a *llm.Adapter, timeout time.Duration, rec audit.Sink) *Gate {
	return &Gate{prompts: prompts, llm: a, timeout: timeout, audit: rec}
}

// Prompts are the project's prompts, as configured.
func (g *Gate) Prompts() []config.Prompt { return g.prompts }

// Decision is what begin_session answers.
type Decision struct {
	Order    []config.Prompt
	Degraded *degrade.Degradation
}

// Begin ranks the prompts for intent and writes the gate_decision row (and
// llm_attempt rows under it). row is the template: session, user, project.
func (g *Gate) Begin(ctx context.Context, intent string, row audit.Row) Decision {
	ctx, span, parent := trace.StartSpan(ctx)
	row.Kind, row.CorrelationID, row.SpanID, row.ParentID = audit.KindGateDecision, trace.From(ctx), span, parent
	row.Tool, row.Start, row.Status = BeginSession, time.Now(), audit.StatusOK
	d := g.rank(ctx, intent, row)
	names := make([]string, len(d.Order))
	for i, p := range d.Order {
		names[i] = p.Name
	}
	row.Duration, row.Detail = time.Since(row.Start), "order: "+strings.Join(names, ", ")
	if d.Degraded != nil {
		row.Degraded, row.DegradedReason = true, d.Degraded.AuditReason()
	}
	g.audit.Record(row)
	return d
}

func (g *Gate) rank(ctx context.Context, intent string, row audit.Row) Decision {
	fallback := Fallback(g.prompts, intent)
	if g.llm == nil || len(g.prompts) < 2 {
		return Decision{Order: fallback} // nothing to ask, or no LLM configured: not a degradation
	}
	r := degrade.Ask(ctx, g.llm, g.timeout, llm.Request{
		System:    "Rank the prompts by how useful they are for the user's intent. Answer with the prompt names, most useful first, one per line, nothing else.",
		Messages:  []llm.Message{{Role: "user", Content: rankPrompt(g.prompts, intent)}},
		MaxTokens: 20 * len(g.prompts),
	}, func(start time.Time, as []llm.Attempt) {
		for _, r := range llmrows.FromAttempts(row, start, as) {
			g.audit.Record(r)
		}
	})
	switch {
	case r.Skipped:
		return Decision{Order: fallback}
	case !r.OK:
		return Decision{Order: fallback, Degraded: &degrade.Degradation{Feature: Feature, Reason: r.Reason}}
	}
	order := parseRanking(r.Value, fallback)
	if order == nil {
		return Decision{Order: fallback, Degraded: &degrade.Degradation{Feature: Feature, Reason: "the LLM's ranking named no known prompt"}}
	}
	return Decision{Order: order}
}

func rankPrompt(prompts []config.Prompt, intent string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Intent: %s\n\nPrompts:\n", intent)
	for _, p := range prompts {
		fmt.Fprintf(&b, "- %s: %s\n", p.Name, strings.Join(strings.Fields(p.Text), " "))
	}
	return b.String()
}

// parseRanking reads prompt names, one per line, keeping known names in the
// LLM's order and appending the rest in fallback order; nil if none is known.
func parseRanking(s string, fallback []config.Prompt) []config.Prompt {
	byName := map[string]config.Prompt{}
	for _, p := range fallback {
		byName[p.Name] = p
	}
	var out []config.Prompt
	used := map[string]bool{}
	for _, line := range strings.Split(s, "\n") {
		name := strings.TrimSpace(strings.TrimLeft(strings.TrimSpace(line), "-*•0123456789.) "))
		if p, ok := byName[name]; ok && !used[name] {
			out = append(out, p)
			used[name] = true
		}
	}
	if len(out) == 0 {
		return nil
	}
	for _, p := range fallback {
		if !used[p.Name] {
			out = append(out, p)
		}
	}
	return out
}

// Fallback orders prompts deterministically: more keywords found in the
// intent first, then higher priority, then by name.
func Fallback(prompts []config.Prompt, intent string) []config.Prompt {
	words := map[string]bool{}
	for _, w := range strings.Fields(strings.ToLower(intent)) {
		words[strings.Trim(w, ".,;:!?\"'")] = true
	}
	hits := func(p config.Prompt) int {
		n := 0
		for _, k := range p.Keywords {
			if words[strings.ToLower(k)] {
				n++
			}
		}
		return n
	}
	out := append([]config.Prompt(nil), prompts...)
	sort.SliceStable(out, func(i, j int) bool {
		hi, hj := hits(out[i]), hits(out[j])
		if hi != hj {
			return hi > hj
		}
		if out[i].Priority != out[j].Priority {
			return out[i].Priority > out[j].Priority
		}
		return out[i].Name < out[j].Name
	})
	return out
}

// Render is the text begin_session and read_prompts answer with.
func Render(order []config.Prompt) string {
	var b strings.Builder
	for i, p := range order {
		fmt.Fprintf(&b, "%d. %s\n%s\n\n", i+1, p.Name, p.Text)
	}
	return strings.TrimRight(b.String(), "\n")
}
