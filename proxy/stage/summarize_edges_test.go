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
)

// dump renders sections as "title|body" lines, subsections indented.
func dump(secs []*section, indent string) string {
	var b strings.Builder
	for _, s := range secs {
		fmt.Fprintf(&b, "%s%s|%s\n", indent, s.title, s.body)
		b.WriteString(dump(s.subs, indent+"  "))
	}
	return b.String()
}

const summarizeDoc = "# Title line\n\n## A\na text\n### A1\na1 text\n### A2\na2 text\n## B\nb text\n"

// TestSplitSectionsWholeTree: sections at ## and, down to maxLevel, their
// subsections; a one-line preamble under 200 bytes is no section, a
// longer or multi-line one is; a single subsection is none.
func TestSplitSectionsWholeTree(t *testing.T) {
	want := "A|a text\n### A1\na1 text\n### A2\na2 text\n  A1|a1 text\n  A2|a2 text\nB|b text\n"
	if got := dump(splitSections(summarizeDoc, 2, 3), ""); got != want {
		t.Errorf("maxLevel 3:\n%s\nwant\n%s", got, want)
	}
	want = "A|a text\n### A1\na1 text\n### A2\na2 text\nB|b text\n"
	if got := dump(splitSections(summarizeDoc, 2, 1), ""); got != want {
		t.Errorf("maxLevel 1 (no subsections):\n%s\nwant\n%s", got, want)
	}
	for _, c := range []struct {
		preamble string
		kept     bool
	}{
		{strings.Repeat("p", 199), false},
		{strings.Repeat("p", 200), true},
		{"two\nlines", true},
	} {
		secs := splitSections(c.preamble+"\n## A\na\n## B\nb\n", 2, 3)
		if kept := secs[0].title == "(preamble)"; kept != c.kept || len(secs) != map[bool]int{true: 3, false: 2}[c.kept] {
			t.Errorf("preamble of %d bytes: %s", len(c.preamble), dump(secs, ""))
		}
	}
	if got := dump(splitSections("## only\nbody\n", 2, 3), ""); got != "only|body\n" {
		t.Errorf("one section: %q", got)
	}
}

// TestSummarizeTreeWholeShapeWithoutLLM: under MinBytes the text passes;
// at it, the tree of excerpts in groups, then the text; the detail counts
// every section and subsection.
func TestSummarizeTreeWholeShapeWithoutLLM(t *testing.T) {
	sh := &Shared{Knobs: testKnobs(), Cache: NewCache(10), Pages: NewPages(), Audit: &rows{}}
	st := &SummarizeTree{MinBytes: len(summarizeDoc), MaxDepth: 3, GroupSize: 1}
	short := summarizeDoc[:len(summarizeDoc)-1]
	if out := runOne(sh, st, time.Second, short); out.Text != short {
		t.Fatalf("under MinBytes: %q", out.Text)
	}
	out := runOne(sh, st, time.Second, summarizeDoc)
	want := "Summary tree (2 sections):\n" +
		"- Sections 1–1: A\n" +
		"  - A: a text\n" +
		"    - A1: a1 text\n" +
		"    - A2: a2 text\n" +
		"- Sections 2–2: B\n" +
		"  - B: b text\n" +
		"\n" + summarizeDoc
	if out.Text != want {
		t.Fatalf("summarised\n got %q\nwant %q", out.Text, want)
	}
	if out.Detail != "4 sections" || len(out.Degradations) != 0 {
		t.Fatalf("detail %q, degradations %+v; want 4 sections (A, A1, A2, B), none", out.Detail, out.Degradations)
	}
}

// TestSplitSectionsDeepestLevelAndBodies: at maxLevel a section still gets
// its subsections (one level below it); a blank line inside a body is kept;
// with no preamble the first section is the first heading's.
func TestSplitSectionsDeepestLevelAndBodies(t *testing.T) {
	doc := "## A\npara 1\n\npara 2\n### A1\na1\n#### X\nx\n#### Y\ny\n### A2\na2\n## B\nb\n"
	want := "A|para 1\n\npara 2\n### A1\na1\n#### X\nx\n#### Y\ny\n### A2\na2\n" +
		"  (preamble)|para 1\n\npara 2\n" +
		"  A1|a1\n#### X\nx\n#### Y\ny\n" +
		"    X|x\n    Y|y\n" + // a one-line preamble is no section

		"  A2|a2\n" +
		"B|b\n"
	if got := dump(splitSections(doc, 2, 3), ""); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	// A first section with a one-line body is a section, not a preamble.
	if got := dump(splitSections("## A\na\n## B\nb\n", 2, 3), ""); got != "A|a\nB|b\n" {
		t.Errorf("two one-line sections: %q", got)
	}
}

// TestPipelineRowIsDegradedOnlyWithDegradations: a pipeline whose stages
// degrade nothing writes an undegraded row.
func TestPipelineRowIsDegradedOnlyWithDegradations(t *testing.T) {
	sh, _, rec := fakeShared(t, llmtest.Answer{Text: "One\nTwo\nThree"})
	p, err := NewPipeline([]config.Stage{{Name: "paginate", Options: map[string]any{"thresholdBytes": 16, "pageBytes": 10}}}, sh)
	if err != nil {
		t.Fatal(err)
	}
	if _, ds := p.Run(context.Background(), audit.Row{}, "aaaa\n\nbbbb\n\ncccc!"); len(ds) != 0 {
		t.Fatalf("degradations %+v", ds)
	}
	for _, r := range rec.r {
		if r.Degraded || r.DegradedReason != "" {
			t.Errorf("row %s degraded: %+v", r.Kind, r)
		}
	}
	if len(rec.r) != 3 { // the stage's llm_attempt, the stage, the pipeline
		t.Errorf("%d rows: %+v", len(rec.r), rec.r)
	}
}
