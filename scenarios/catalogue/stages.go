package catalogue

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	fakellm "github.com/mcpchaos/mcpchaos/fakes/llm"
	"github.com/mcpchaos/mcpchaos/fakes/upstream"
	"github.com/mcpchaos/mcpchaos/scenarios/evidence"
	"github.com/mcpchaos/mcpchaos/scenarios/evidence/mcplocal"
	"github.com/mcpchaos/mcpchaos/scenarios/harness"
)

// FakeTitles is what the fake LLM answers when asked for page titles: more
// lines than any docmost search has pages.
const FakeTitles = harness.LLMTitles

// paginateEnv is the world of the pagination scenarios: an LLM that writes
// titles, and a docmost project whose results go through paginate.
func paginateEnv(withLLM bool) harness.EnvOptions {
	return harness.EnvOptions{LLM: withLLM, LLMDefault: fakellm.Step{Kind: fakellm.OK, Text: FakeTitles},
		Pipeline: []harness.Stage{{Name: "paginate"}}}
}

// withRows is op, then the evidence (mcplocal's audit rows, as spans) of its
// answer's trace code.
func withRows(op Operation) Operation {
	return Operation{Name: op.Name, Do: func(ctx context.Context, env *harness.Env) Observation {
		o := op.Do(ctx, env)
		if o.Err == nil && o.Trace != "" {
			spans, err := evidenceOf(env).Spans(ctx, o.Trace)
			if err != nil {
				o.Broken = append(o.Broken, "audit: "+err.Error())
			}
			o.Spans = spans
		}
		return o
	}}
}

// The operations of the stage scenarios.
var (
	PaginatedSearch = withRows(PaginatingCall)
	SmallCallStaged = withRows(SmallCall)
)

func paginationBudget(b harness.Bounds) time.Duration { return b.D(harness.BoundPagination) }

// stageRow finds the stage_execution row of a stage.
func stageRow(rows []evidence.Span, name string) (evidence.Span, bool) {
	for _, r := range rows {
		if r.Kind == mcplocal.KindStage && r.Attrs[mcplocal.AttrStage] == name {
			return r, true
		}
	}
	return evidence.Span{}, false
}

// degradedTitles: promise 4 when the LLM fails: numbered pages, the notice
// with its reason and trace code, and a degraded stage row with the same code.
func degradedTitles(o Observation) error {
	if err := answeredOK(o); err != nil {
		return err
	}
	notice := "⚠ " + mcplocal.TitlesFeature + " unavailable ("
	switch {
	case !strings.Contains(o.Text, notice):
		return fmt.Errorf("no %q notice in the result", notice)
	case !strings.Contains(o.Text, "[trace "+o.Trace+"]"):
		return errors.New("the notice does not quote the trace code")
	case !strings.Contains(o.Text, "1. Page 1\n"):
		return errors.New("the index is not numbered pages")
	}
	r, ok := stageRow(o.Spans, "paginate")
	switch {
	case !ok:
		return fmt.Errorf("no stage_execution row for paginate under trace %s", o.Trace)
	case !r.Degraded || !strings.HasPrefix(r.Reason, mcplocal.TitlesFeature+" unavailable ("):
		return fmt.Errorf("stage_execution row not degraded with the reason: degraded=%v reason=%q", r.Degraded, r.Reason)
	case r.Trace != o.Trace:
		return fmt.Errorf("stage row code %q, request %q", r.Trace, o.Trace)
	case !strings.Contains(o.Text, r.Reason):
		return fmt.Errorf("the notice and the audit row give different reasons: row %q", r.Reason)
	}
	return nil
}

// smartTitles: the LLM answered, so the index has its titles and nothing
// claims a degradation.
func smartTitles(o Observation) error {
	if err := answeredOK(o); err != nil {
		return err
	}
	if strings.Contains(o.Text, "⚠") {
		return fmt.Errorf("a notice on a healthy run: %s", excerpt(o.Text))
	}
	if !strings.Contains(o.Text, "1. Cluster notes\n") {
		return errors.New("the index does not carry the LLM's titles")
	}
	return notDegraded(o)
}

// numberedQuietly: no LLM configured is a choice: numbered pages, no notice,
// no degraded row.
func numberedQuietly(o Observation) error {
	if err := answeredOK(o); err != nil {
		return err
	}
	if strings.Contains(o.Text, "⚠") {
		return fmt.Errorf("a notice although no LLM is configured: %s", excerpt(o.Text))
	}
	if !strings.Contains(o.Text, "1. Page 1\n") {
		return errors.New("the index is not numbered pages")
	}
	if _, ok := stageRow(o.Spans, "paginate"); !ok {
		return errors.New("no stage_execution row for paginate")
	}
	return notDegraded(o)
}

func notDegraded(o Observation) error {
	for _, r := range o.Spans {
		if r.Degraded {
			return fmt.Errorf("%s row is degraded: %s", r.Kind, r.Reason)
		}
	}
	return nil
}

// untouched: a small result does not cross the threshold: it arrives as the
// upstream sent it, whatever the LLM is doing.
func untouched(o Observation) error {
	if err := answeredOK(o); err != nil {
		return err
	}
	if o.Text != "updated page p1 (4 bytes)" {
		return fmt.Errorf("the small result was changed: %s", excerpt(o.Text))
	}
	return notDegraded(o)
}

// summarizeEnv: a docmost project whose results go through summarize-tree,
// with an LLM that answers every call, but slowly.
func summarizeEnv() harness.EnvOptions {
	return harness.EnvOptions{LLM: true, LLMDefault: fakellm.Step{Kind: fakellm.Slow, Delay: 200 * time.Millisecond},
		Pipeline: []harness.Stage{{Name: "summarize-tree"}}}
}

func stageBudget(b harness.Bounds) time.Duration { return b.D(harness.BoundStage) }

// sectionsNotice matches the summarize-tree notice and its count.
var sectionsNotice = regexp.MustCompile(`⚠ ` + mcplocal.SummariesFeature + ` unavailable \(([^)]*)\); (\d+) sections affected`)

// excerptsForTheRest: promise 5 for a stage: one budget across the whole
// recursion, so a slow LLM costs the budget, not sections × call time; the
// sections it could not reach get excerpts, and the notice counts them.
func excerptsForTheRest(o Observation) error {
	if err := answeredOK(o); err != nil {
		return err
	}
	m := sectionsNotice.FindStringSubmatch(o.Text)
	if m == nil {
		return errors.New("no section-summaries notice counting the affected sections")
	}
	n, _ := strconv.Atoi(m[2])
	if n < 1 || n >= upstream.SearchSections {
		return fmt.Errorf("the notice counts %d affected sections; with a slow LLM some, not all, of %d should be", n, upstream.SearchSections)
	}
	if !strings.Contains(o.Text, "Summary tree (") {
		return errors.New("the summary tree is missing: the stage's work was discarded")
	}
	r, ok := stageRow(o.Spans, "summarize-tree")
	if !ok || !r.Degraded || !strings.Contains(r.Reason, m[2]+" sections affected") {
		return fmt.Errorf("stage_execution row does not record the degradation and its count: %+v", r)
	}
	return nil
}

// failoverEnv: paginate with a primary LLM and an Anthropic fallback whose
// model is configured as claude-sonnet-latest.
func failoverEnv() harness.EnvOptions {
	o := paginateEnv(true)
	o.Fallback = true
	return o
}

// answeredByFallback: the primary failed, the fallback (auto-followed to the
// newest sonnet by created_at) wrote the titles; the attempts are on record.
func answeredByFallback(o Observation) error {
	if err := smartTitles(o); err != nil {
		return err
	}
	var failed, answered bool
	for _, r := range o.Spans {
		if r.Kind != mcplocal.KindLLMAttempt {
			continue
		}
		switch {
		case r.Attrs[mcplocal.AttrServer] == "vllm-current" && r.Status == evidence.StatusError && strings.Contains(r.Detail, "404"):
			failed = true
		case r.Attrs[mcplocal.AttrServer] == "anthropic-fallback" && r.Status == evidence.StatusOK && strings.Contains(r.Detail, "claude-sonnet-5"):
			answered = true
		}
	}
	if !failed || !answered {
		return fmt.Errorf("llm_attempt rows do not show the 404 on the primary and the answer from claude-sonnet-5 (failed=%v answered=%v)", failed, answered)
	}
	return nil
}
