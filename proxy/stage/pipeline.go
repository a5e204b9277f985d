package stage

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/mcpchaos/mcpchaos/proxy/audit"
	"github.com/mcpchaos/mcpchaos/proxy/config"
	"github.com/mcpchaos/mcpchaos/proxy/degrade"
	"github.com/mcpchaos/mcpchaos/proxy/trace"
)

// configured is one stage of a pipeline with its own budget.
type configured struct {
	stage  Stage
	budget time.Duration
}

// Pipeline is a project's ordered list of stages.
type Pipeline struct {
	shared *Shared
	stages []configured
}

// NewPipeline builds the stages named in a project's config. Each stage's
// budget is its budgetMs option, else MCPCTL_STAGE_LLM_BUDGET_MS.
func NewPipeline(cfg []config.Stage, shared *Shared) (*Pipeline, error) {
	p := &Pipeline{shared: shared}
	for i, c := range cfg {
		st, err := build(c)
		if err != nil {
			return nil, fmt.Errorf("pipeline[%d] %s: %w", i, c.Name, err)
		}
		ms, err := IntOption(c.Options, "budgetMs", int(shared.Knobs.StageLLMBudget.Milliseconds()))
		if err != nil {
			return nil, fmt.Errorf("pipeline[%d] %s: %w", i, c.Name, err)
		}
		p.stages = append(p.stages, configured{st, time.Duration(ms) * time.Millisecond})
	}
	return p, nil
}

func build(c config.Stage) (Stage, error) {
	switch c.Name {
	case "paginate":
		return NewPaginate(c.Options)
	case "summarize-tree":
		return NewSummarizeTree(c.Options)
	}
	return nil, fmt.Errorf("unknown stage %q", c.Name)
}

// Empty reports whether the pipeline has no stages.
func (p *Pipeline) Empty() bool { return p == nil || len(p.stages) == 0 }

// Has reports whether the pipeline includes the named stage.
func (p *Pipeline) Has(name string) bool {
	if p == nil {
		return false
	}
	for _, c := range p.stages {
		if c.stage.Name() == name {
			return true
		}
	}
	return false
}

// Run applies every stage in order to text, writing a pipeline_execution row
// and one stage_execution row per stage under the request's current span. row
// is the template (session, user, project, server, tool). It returns the text
// and every degradation, in order.
func (p *Pipeline) Run(ctx context.Context, row audit.Row, text string) (string, []degrade.Degradation) {
	if p.Empty() {
		return text, nil
	}
	ctx, span, parent := trace.StartSpan(ctx)
	prow := row
	prow.Kind, prow.CorrelationID, prow.SpanID, prow.ParentID = audit.KindPipelineExecution, trace.From(ctx), span, parent
	prow.Start = time.Now()
	var all []degrade.Degradation
	var names []string
	for _, c := range p.stages {
		out := p.runStage(ctx, c, prow, text)
		text = out.Text
		all = append(all, out.Degradations...)
		names = append(names, c.stage.Name())
	}
	prow.Duration, prow.Status, prow.Detail = time.Since(prow.Start), audit.StatusOK, strings.Join(names, " → ")
	if len(all) > 0 {
		prow.Degraded, prow.DegradedReason = true, reasons(all)
	}
	p.shared.Audit.Record(prow)
	return text, all
}

// runStage runs one stage under its own Budget, disposed when the stage ends.
func (p *Pipeline) runStage(ctx context.Context, c configured, prow audit.Row, in string) Output {
	ctx, span, _ := trace.StartSpan(ctx)
	b := NewBudget(ctx, c.budget)
	defer b.Dispose()
	srow := prow
	srow.Kind, srow.SpanID, srow.ParentID, srow.Stage = audit.KindStageExecution, span, prow.SpanID, c.stage.Name()
	srow.Start = time.Now()
	env := &Env{Shared: p.shared, Budget: b, row: srow}
	out := c.stage.Run(ctx, env, in)
	srow.Duration, srow.Status, srow.Detail = time.Since(srow.Start), audit.StatusOK, out.Detail
	if len(out.Degradations) > 0 {
		srow.Degraded, srow.DegradedReason = true, reasons(out.Degradations)
	}
	p.shared.Audit.Record(srow)
	return out
}

func reasons(ds []degrade.Degradation) string {
	parts := make([]string, len(ds))
	for i, d := range ds {
		parts[i] = d.AuditReason()
	}
	return strings.Join(parts, "; ")
}
