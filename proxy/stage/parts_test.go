package stage

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/mcpchaos/mcpchaos/proxy/audit"
	"github.com/mcpchaos/mcpchaos/proxy/config"
	"github.com/mcpchaos/mcpchaos/proxy/llm/llmtest"
	"github.com/mcpchaos/mcpchaos/proxy/trace"
)

// TestCacheEvictsTheLeastRecentlyUsed: at its bound the cache drops the
// entry used longest ago (a Get or a Set counts as a use), never more.
func TestCacheEvictsTheLeastRecentlyUsed(t *testing.T) {
	c := NewCache(2)
	c.Set("a", "1")
	c.Set("b", "2")
	if v, ok := c.Get("a"); !ok || v != "1" {
		t.Fatalf("Get(a) = %q %v", v, ok)
	}
	c.Set("c", "3") // b is the least recently used
	if _, ok := c.Get("b"); ok || c.Len() != 2 {
		t.Fatalf("b kept (len %d)", c.Len())
	}
	c.Set("a", "1'") // an update is a use and no new entry
	c.Set("d", "4")  // so c goes
	got := map[string]string{}
	for _, k := range []string{"a", "c", "d"} {
		if v, ok := c.Get(k); ok {
			got[k] = v
		}
	}
	if fmt.Sprint(got) != "map[a:1' d:4]" || c.Len() != 2 {
		t.Fatalf("cache holds %v (len %d), want a:1' and d:4", got, c.Len())
	}
}

// TestIntOptionWholeShape: a missing option takes the default; positive
// whole numbers pass as int or float64; anything else is refused by name.
func TestIntOptionWholeShape(t *testing.T) {
	opts := map[string]any{"int": 3, "float": 4.0, "zero": 0, "negf": -1.0, "frac": 2.5, "zerof": 0.0, "str": "5"}
	for _, c := range []struct {
		name string
		want int
		err  string
	}{
		{"missing", 9, ""},
		{"int", 3, ""},
		{"float", 4, ""},
		{"zero", 0, "option zero: want a positive whole number, got 0"},
		{"zerof", 0, "option zerof: want a positive whole number, got 0"},
		{"negf", 0, "option negf: want a positive whole number, got -1"},
		{"frac", 0, "option frac: want a positive whole number, got 2.5"},
		{"str", 0, "option str: want a positive whole number, got 5"},
	} {
		n, err := IntOption(opts, c.name, 9)
		if n != c.want || (err == nil) != (c.err == "") || (err != nil && err.Error() != c.err) {
			t.Errorf("%s: %d %v, want %d %q", c.name, n, err, c.want, c.err)
		}
	}
}

// TestNewPipelineRefusalsWholeText: an unknown stage and a bad option are
// named with the stage's place and name.
func TestNewPipelineRefusalsWholeText(t *testing.T) {
	sh := &Shared{Knobs: testKnobs(), Cache: NewCache(10), Pages: NewPages(), Audit: &rows{}}
	for _, c := range []struct {
		cfg  []config.Stage
		want string
	}{
		{[]config.Stage{{Name: "paginate"}, {Name: "translate"}}, `pipeline[1] translate: unknown stage "translate"`},
		{[]config.Stage{{Name: "summarize-tree", Options: map[string]any{"budgetMs": -5}}}, "pipeline[0] summarize-tree: option budgetMs: want a positive whole number, got -5"},
		{[]config.Stage{{Name: "paginate", Options: map[string]any{"pageBytes": "x"}}}, "pipeline[0] paginate: option pageBytes: want a positive whole number, got x"},
	} {
		if _, err := NewPipeline(c.cfg, sh); err == nil || err.Error() != c.want {
			t.Errorf("NewPipeline: %v, want %q", err, c.want)
		}
	}
}

// TestPipelineRunWholeShape: stages run in order, each under its own row
// (with its budget, its detail, its degradations) below the pipeline's row,
// which names the stages in order and every degradation.
func TestPipelineRunWholeShape(t *testing.T) {
	sh, _, rec := fakeShared(t, llmtest.Answer{Status: 500})
	var nilP *Pipeline
	if !nilP.Empty() || nilP.Has("paginate") {
		t.Fatal("a nil pipeline has stages")
	}
	empty, err := NewPipeline(nil, sh)
	if err != nil || !empty.Empty() {
		t.Fatalf("empty pipeline: %v", err)
	}
	if out, ds := empty.Run(context.Background(), audit.Row{}, "x"); out != "x" || ds != nil || len(rec.r) != 0 {
		t.Fatalf("an empty pipeline ran: %q %v %v", out, ds, rec.r)
	}
	p, err := NewPipeline([]config.Stage{
		{Name: "summarize-tree", Options: map[string]any{"minBytes": 10, "budgetMs": 2000}},
		{Name: "paginate", Options: map[string]any{"thresholdBytes": 1 << 20}},
	}, sh)
	if err != nil {
		t.Fatal(err)
	}
	if p.Empty() || !p.Has("paginate") || !p.Has("summarize-tree") || p.Has("translate") {
		t.Fatal("Has/Empty")
	}
	if p.stages[0].budget != 2*time.Second || p.stages[1].budget != sh.Knobs.StageLLMBudget {
		t.Fatalf("budgets %v %v", p.stages[0].budget, p.stages[1].budget)
	}
	ctx := trace.With(context.Background(), "ABCDEFGH")
	out, ds := p.Run(ctx, audit.Row{Tool: "t", User: "ann"}, summarizeDoc)
	if len(ds) != 1 || ds[0].Feature != SummariesFeature || !strings.HasPrefix(out, "Summary tree (2 sections):\n") {
		t.Fatalf("out %q, degradations %+v", out, ds)
	}
	var stages []audit.Row
	var pipe audit.Row
	for _, r := range rec.r {
		switch r.Kind {
		case audit.KindStageExecution:
			stages = append(stages, r)
		case audit.KindPipelineExecution:
			pipe = r
		}
	}
	if pipe.Detail != "summarize-tree → paginate" || !pipe.Degraded || pipe.DegradedReason != ds[0].AuditReason() ||
		pipe.CorrelationID != "ABCDEFGH" || pipe.User != "ann" || pipe.Status != audit.StatusOK || pipe.SpanID == "" {
		t.Errorf("pipeline row %+v", pipe)
	}
	if len(stages) != 2 || stages[0].Stage != "summarize-tree" || stages[1].Stage != "paginate" ||
		!stages[0].Degraded || stages[0].DegradedReason != ds[0].AuditReason() || stages[1].Degraded ||
		stages[0].ParentID != pipe.SpanID || stages[1].ParentID != pipe.SpanID || stages[0].Detail != "4 sections, 4 summarised by excerpt" {
		t.Errorf("stage rows %+v", stages)
	}
}
