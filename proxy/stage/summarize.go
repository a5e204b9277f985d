package stage

import (
	"context"
	"fmt"
	"strings"

	"github.com/mcpchaos/mcpchaos/proxy/degrade"
	"github.com/mcpchaos/mcpchaos/proxy/llm"
)

// SummarizeTree puts a tree of summaries in front of a large result: it splits
// the result into sections by markdown headings, summarises each (recursing
// into sub-headings down to MaxDepth), and summarises groups of sections.
// Every LLM call of one invocation shares the stage Budget: once it is spent,
// the remaining sections get first-line excerpts, and the notice says how many
// sections that affected. The whole result follows the tree, so nothing is lost.
type SummarizeTree struct {
	MinBytes  int // results shorter than this pass untouched
	MaxDepth  int // how deep the recursion goes into sub-headings
	GroupSize int // sections per group summary
}

// SummariesFeature names what degrades when summaries fail.
const SummariesFeature = "Section summaries"

// NewSummarizeTree reads the stage's options: minBytes (default 4096),
// maxDepth (default 3), groupSize (default 5).
func NewSummarizeTree(opts map[string]any) (*SummarizeTree, error) {
	s := &SummarizeTree{}
	var err error
	if s.MinBytes, err = IntOption(opts, "minBytes", 4096); err != nil {
		return nil, err
	}
	if s.MaxDepth, err = IntOption(opts, "maxDepth", 3); err != nil {
		return nil, err
	}
	if s.GroupSize, err = IntOption(opts, "groupSize", 5); err != nil {
		return nil, err
	}
	return s, nil
}

// Name implements Stage.
func (*SummarizeTree) Name() string { return "summarize-tree" }

// section is one heading and its body, with sub-sections below it.
type section struct {
	title   string
	body    string
	summary string
	subs    []*section
}

// run carries one invocation's account of what degraded.
type run struct {
	env      *Env
	affected int    // sections that got an excerpt instead of a summary
	reason   string // the first reason, reported once
}

// Run implements Stage.
func (s *SummarizeTree) Run(_ context.Context, env *Env, in string) Output {
	if len(in) < s.MinBytes {
		return Output{Text: in, Detail: fmt.Sprintf("%d bytes, under the %d-byte minimum", len(in), s.MinBytes)}
	}
	r := &run{env: env}
	secs := splitSections(in, 2, s.MaxDepth)
	var b strings.Builder
	if len(secs) <= 1 {
		// The single-block path degrades like the others: its failure must
		// not escape the stage and discard the result.
		sum := r.summarize("", in)
		fmt.Fprintf(&b, "Summary: %s\n\n%s", sum, in)
	} else {
		for _, sec := range secs {
			r.tree(sec, 1, s.MaxDepth)
		}
		fmt.Fprintf(&b, "Summary tree (%d sections):\n", len(secs))
		for g := 0; g < len(secs); g += s.GroupSize {
			grp := secs[g:min(g+s.GroupSize, len(secs))]
			fmt.Fprintf(&b, "- Sections %d–%d: %s\n", g+1, g+len(grp), r.group(grp))
			for _, sec := range grp {
				writeTree(&b, sec, "  ")
			}
		}
		b.WriteString("\n")
		b.WriteString(in)
	}
	out := Output{Text: b.String(), Detail: fmt.Sprintf("%d sections", countSections(secs))}
	if r.affected > 0 || r.reason != "" {
		out.Degradations = []degrade.Degradation{{Feature: SummariesFeature, Reason: r.reason, Affected: r.affected, Unit: "sections"}}
		out.Detail += fmt.Sprintf(", %d summarised by excerpt", r.affected)
	}
	return out
}

// tree summarises sec and, below MaxDepth, its sub-sections.
func (r *run) tree(sec *section, depth, maxDepth int) {
	sec.summary = r.summarize(sec.title, sec.body)
	if depth >= maxDepth {
		return
	}
	for _, sub := range sec.subs {
		r.tree(sub, depth+1, maxDepth)
	}
}

// summarize returns a summary of body: cached, from the LLM, or its first line.
func (r *run) summarize(title, body string) string {
	key := Key("summary", title+"\x00"+body)
	if v, ok := r.env.Cache.Get(key); ok {
		return v // a warm cache is served even when the budget is spent
	}
	if r.env.LLM == nil {
		return excerpt(body) // no LLM configured: a choice, not a degradation
	}
	if r.env.Budget.Spent() {
		r.fallback(fmt.Sprintf("stage budget %v spent", r.env.Budget.Total()))
		return excerpt(body)
	}
	res := r.env.Ask(r.env.Knobs.LLMCallBudget, llm.Request{
		System:    "Summarise the text in one sentence.",
		Messages:  []llm.Message{{Role: "user", Content: firstBytes(title+"\n"+body, 4000)}},
		MaxTokens: 80,
	})
	switch {
	case res.Skipped:
		return excerpt(body)
	case !res.OK || strings.TrimSpace(res.Value) == "":
		why := res.Reason
		if why == "" {
			why = "the LLM returned an empty summary"
		}
		r.fallback(why)
		return excerpt(body)
	}
	sum := strings.Join(strings.Fields(res.Value), " ")
	r.env.Cache.Set(key, sum)
	return sum
}

// group summarises a group of sections from their summaries; without the
// LLM it lists their titles.
func (r *run) group(grp []*section) string {
	var titles, sums []string
	for _, s := range grp {
		titles = append(titles, s.title)
		sums = append(sums, s.summary)
	}
	joined := strings.Join(sums, "\n")
	key := Key("group", joined)
	if v, ok := r.env.Cache.Get(key); ok {
		return v
	}
	if r.env.LLM == nil || r.env.Budget.Spent() || r.affected > 0 {
		return strings.Join(titles, "; ")
	}
	res := r.env.Ask(r.env.Knobs.LLMCallBudget, llm.Request{
		System:    "Summarise these section summaries in one sentence.",
		Messages:  []llm.Message{{Role: "user", Content: joined}},
		MaxTokens: 80,
	})
	if !res.OK || strings.TrimSpace(res.Value) == "" {
		return strings.Join(titles, "; ")
	}
	sum := strings.Join(strings.Fields(res.Value), " ")
	r.env.Cache.Set(key, sum)
	return sum
}

func (r *run) fallback(reason string) {
	r.affected++
	if r.reason == "" {
		r.reason = reason
	}
}

func writeTree(b *strings.Builder, s *section, indent string) {
	fmt.Fprintf(b, "%s- %s: %s\n", indent, s.title, s.summary)
	for _, sub := range s.subs {
		if sub.summary != "" {
			writeTree(b, sub, indent+"  ")
		}
	}
}

// splitSections splits text at headings of the given level ("## " for 2),
// and each section's body at the next level, down to maxLevel+1.
func splitSections(text string, level, maxLevel int) []*section {
	marker := strings.Repeat("#", level) + " "
	var out []*section
	var cur *section
	var body strings.Builder
	flush := func() {
		if cur != nil {
			cur.body = strings.TrimSpace(body.String())
			if level <= maxLevel {
				cur.subs = splitSections(cur.body, level+1, maxLevel)
				if len(cur.subs) == 1 {
					cur.subs = nil
				}
			}
			out = append(out, cur)
		}
		body.Reset()
	}
	for _, line := range strings.SplitAfter(text, "\n") {
		if strings.HasPrefix(line, marker) {
			flush()
			cur = &section{title: strings.TrimSpace(strings.TrimPrefix(line, marker))}
			continue
		}
		if cur == nil && strings.TrimSpace(line) == "" {
			continue
		}
		if cur == nil {
			cur = &section{title: "(preamble)"}
		}
		body.WriteString(line)
	}
	flush()
	// A preamble before the first heading is not a section of its own when
	// it is only a title line.
	if len(out) > 1 && out[0].title == "(preamble)" && !strings.Contains(out[0].body, "\n") && len(out[0].body) < 200 {
		out = out[1:]
	}
	return out
}

func countSections(secs []*section) int {
	n := 0
	for _, s := range secs {
		n += 1 + countSections(s.subs)
	}
	return n
}

// excerpt is the deterministic stand-in for a summary: the first line.
func excerpt(body string) string {
	for _, line := range strings.Split(body, "\n") {
		if line = strings.TrimSpace(line); line != "" {
			return firstBytes(line, 160)
		}
	}
	return "(empty)"
}
