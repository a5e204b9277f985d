package stage

import (
	"fmt"
	"testing"
	"time"

	"github.com/mcpchaos/mcpchaos/proxy/degrade"
	"github.com/mcpchaos/mcpchaos/proxy/llm/llmtest"
)

// treeOf is summarizeDoc's tree with every summary s and group summaries g1, g2.
func treeOf(s, g1, g2, a1, a2 string) string {
	return "Summary tree (2 sections):\n" +
		"- Sections 1–1: " + g1 + "\n" +
		"  - A: " + s + "\n" +
		"    - A1: " + a1 + "\n" +
		"    - A2: " + a2 + "\n" +
		"- Sections 2–2: " + g2 + "\n" +
		"  - B: " + s + "\n" +
		"\n" + summarizeDoc
}

// TestSummarizeTreeWithTheLLMWholeShape: with an answering LLM every section
// and group gets the LLM's summary, spaces folded; a second run is served
// from the cache without asking again; a one-block result gets one summary.
func TestSummarizeTreeWithTheLLMWholeShape(t *testing.T) {
	sh, f, _ := fakeShared(t, llmtest.Answer{Text: "  One \n sentence. "})
	st := &SummarizeTree{MinBytes: 10, MaxDepth: 3, GroupSize: 1}
	want := treeOf("One sentence.", "One sentence.", "One sentence.", "One sentence.", "One sentence.")
	for run := 1; run <= 2; run++ {
		out := runOne(sh, st, 5*time.Second, summarizeDoc)
		if out.Text != want || out.Detail != "4 sections" || len(out.Degradations) != 0 {
			t.Fatalf("run %d:\n got %q %q %+v\nwant %q", run, out.Text, out.Detail, out.Degradations, want)
		}
		// 4 sections and 1 group: the second group's summaries are the first's,
		// so its summary is the cached one.
		if n := len(f.Requests()); n != 5 {
			t.Fatalf("run %d: %d LLM requests, want 5 (the second run all from the cache)", run, n)
		}
	}
	one := "no headings here\nsecond line\n"
	if out := runOne(sh, st, 5*time.Second, one); out.Text != "Summary: One sentence.\n\n"+one || out.Detail != "1 sections" {
		t.Fatalf("one block: %q %q", out.Text, out.Detail)
	}
}

// TestSummarizeTreeDegradesSectionBySection: a failing LLM, a blank
// summary and a spent stage budget each give every section its first line,
// the groups their titles, and one degradation naming the first reason and
// the sections affected.
func TestSummarizeTreeDegradesSectionBySection(t *testing.T) {
	excerpts := treeOf("", "A", "B", "a1 text", "a2 text")
	for _, c := range []struct {
		name   string
		answer llmtest.Answer
		budget time.Duration
		reason string
	}{
		{"failing LLM", llmtest.Answer{Status: 500}, 5 * time.Second, "all 1 LLM provider(s) failed; last: p (m) HTTP 500"},
		// A blank answer is the adapter's failure (OutcomeEmpty), so the
		// stage's own "empty summary" reason is never the one reported.
		{"blank summary", llmtest.Answer{Text: " \n "}, 5 * time.Second, "all 1 LLM provider(s) failed; last: p (m) HTTP 200"},
		{"budget spent", llmtest.Answer{Text: "x"}, time.Nanosecond, "stage budget 1ns spent"},
	} {
		sh, _, _ := fakeShared(t, c.answer)
		st := &SummarizeTree{MinBytes: 10, MaxDepth: 3, GroupSize: 1}
		out := runOne(sh, st, c.budget, summarizeDoc)
		wantText := replaceSummaries(excerpts)
		if out.Text != wantText || out.Detail != "4 sections, 4 summarised by excerpt" || len(out.Degradations) != 1 {
			t.Errorf("%s:\n got %q %q %+v\nwant %q", c.name, out.Text, out.Detail, out.Degradations, wantText)
			continue
		}
		d := out.Degradations[0]
		if want := (degrade.Degradation{Feature: SummariesFeature, Reason: c.reason, Affected: 4, Unit: "sections"}); fmt.Sprint(d) != fmt.Sprint(want) {
			t.Errorf("%s: %+v, want %+v", c.name, d, want)
		}
	}
}

// replaceSummaries puts each section's first line where treeOf left s empty.
func replaceSummaries(s string) string {
	s = replaceOnce(s, "  - A: \n", "  - A: a text\n")
	return replaceOnce(s, "  - B: \n", "  - B: b text\n")
}

func replaceOnce(s, old, new string) string {
	for i := 0; i+len(old) <= len(s); i++ {
		if s[i:i+len(old)] == old {
			return s[:i] + new + s[i+len(old):]
		}
	}
	return s
}

// TestLLMRequestsAskForBoundedAnswers: the titles request asks for at most
// 40 tokens a page, each summary and group summary for 80.
func TestLLMRequestsAskForBoundedAnswers(t *testing.T) {
	sh, f, _ := fakeShared(t, llmtest.Answer{Text: "One\nTwo\nThree"})
	runOne(sh, &Paginate{ThresholdBytes: 16, PageBytes: 10}, 5*time.Second, "aaaa\n\nbbbb\n\ncccc!")
	reqs := f.Requests()
	if len(reqs) != 1 || reqs[0].MaxTokens != 120 {
		t.Fatalf("titles requests %+v, want one with max_tokens 120 (3 pages)", reqs)
	}
	runOne(sh, &SummarizeTree{MinBytes: 10, MaxDepth: 1, GroupSize: 2}, 5*time.Second, summarizeDoc)
	reqs = f.Requests()[1:]
	if len(reqs) != 3 {
		t.Fatalf("%d summary requests, want 3 (A, B and their group)", len(reqs))
	}
	for _, r := range reqs {
		if r.MaxTokens != 80 {
			t.Errorf("a summary request with max_tokens %d, want 80", r.MaxTokens)
		}
	}
}
