package stage

import (
	"context"
	"fmt"
	"strings"

	"github.com/mcpchaos/mcpchaos/proxy/degrade"
	"github.com/mcpchaos/mcpchaos/proxy/llm"
)

// Paginate splits results over a size threshold into pages. The first page
// comes back with an index of page titles the LLM writes (bounded by
// MCPCTL_PAGINATION_LLM_TIMEOUT_MS and the stage budget); the other pages are
// fetched through the proxy's get_page tool. Without an LLM, or when it
// fails, the index has numbered pages.
type Paginate struct {
	ThresholdBytes int // results at most this long pass untouched
	PageBytes      int // target page size
}

// TitlesFeature names what degrades when titles fail.
const TitlesFeature = "Smart page titles"

// NewPaginate reads the stage's options: thresholdBytes (default 8192),
// pageBytes (default 4096).
func NewPaginate(opts map[string]any) (*Paginate, error) {
	t, err := IntOption(opts, "thresholdBytes", 8192)
	if err != nil {
		return nil, err
	}
	pb, err := IntOption(opts, "pageBytes", 4096)
	if err != nil {
		return nil, err
	}
	return &Paginate{ThresholdBytes: t, PageBytes: pb}, nil
}

// Name implements Stage.
func (*Paginate) Name() string { return "paginate" }

// Run implements Stage.
func (p *Paginate) Run(_ context.Context, env *Env, in string) Output {
	if len(in) <= p.ThresholdBytes {
		return Output{Text: in, Detail: fmt.Sprintf("%d bytes, under the %d-byte threshold", len(in), p.ThresholdBytes)}
	}
	pages := SplitPages(in, p.PageBytes)
	titles, deg := p.titles(env, pages)
	handle := env.Pages.Put(pages)
	var b strings.Builder
	fmt.Fprintf(&b, "This result is %d bytes in %d pages; page 1 follows. Fetch the others with get_page {\"handle\": %q, \"page\": N}.\n\nIndex:\n", len(in), len(pages), handle)
	for i, t := range titles {
		fmt.Fprintf(&b, "%d. %s\n", i+1, t)
	}
	fmt.Fprintf(&b, "\n--- Page 1 of %d: %s ---\n%s", len(pages), titles[0], pages[0])
	out := Output{Text: b.String(), Detail: fmt.Sprintf("%d bytes in %d pages", len(in), len(pages))}
	if deg != nil {
		out.Degradations = []degrade.Degradation{*deg}
	}
	return out
}

// titles returns one title per page: cached, from the LLM, or numbered. The
// cache is read before the budget is looked at: a warm entry costs nothing.
func (p *Paginate) titles(env *Env, pages []string) ([]string, *degrade.Degradation) {
	key := Key("titles", strings.Join(pages, "\x00"))
	if v, ok := env.Cache.Get(key); ok {
		return strings.Split(v, "\n"), nil
	}
	numbered := make([]string, len(pages))
	for i := range pages {
		numbered[i] = fmt.Sprintf("Page %d", i+1)
	}
	if env.LLM == nil {
		return numbered, nil // no LLM configured: a choice, not a degradation
	}
	if env.Budget.Spent() {
		return numbered, &degrade.Degradation{Feature: TitlesFeature, Reason: fmt.Sprintf("stage budget %v spent", env.Budget.Total())}
	}
	r := env.Ask(env.Knobs.PaginationLLMTimeout, llm.Request{
		System:    "You write short titles for pages of a document. Answer with exactly one title per line, nothing else.",
		Messages:  []llm.Message{{Role: "user", Content: titlesPrompt(pages)}},
		MaxTokens: 40 * len(pages),
	})
	switch {
	case r.Skipped:
		return numbered, nil
	case !r.OK:
		return numbered, &degrade.Degradation{Feature: TitlesFeature, Reason: r.Reason}
	}
	titles := ParseTitles(r.Value, len(pages))
	if titles == nil {
		return numbered, &degrade.Degradation{Feature: TitlesFeature, Reason: fmt.Sprintf("the LLM gave no usable title list for %d pages", len(pages))}
	}
	env.Cache.Set(key, strings.Join(titles, "\n"))
	return titles, nil
}

func titlesPrompt(pages []string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Write %d titles, one per line, for these %d pages:\n", len(pages), len(pages))
	for i, pg := range pages {
		fmt.Fprintf(&b, "\nPage %d begins: %s\n", i+1, firstBytes(pg, 240))
	}
	return b.String()
}

// ParseTitles reads n titles, one per non-empty line, dropping list markers
// ("1.", "-"). It returns nil unless there are at least n.
func ParseTitles(s string, n int) []string {
	var out []string
	for _, line := range strings.Split(s, "\n") {
		line = strings.TrimSpace(line)
		line = strings.TrimLeft(line, "-*•0123456789.) ")
		if line == "" {
			continue
		}
		if len(line) > 120 {
			line = line[:120]
		}
		out = append(out, line)
	}
	if len(out) < n {
		return nil
	}
	return out[:n]
}

// SplitPages cuts text into pages of about size bytes, at paragraph breaks
// where it can, and at line or byte boundaries where it must.
func SplitPages(text string, size int) []string {
	var pages []string
	for len(text) > size {
		cut := strings.LastIndex(text[:size], "\n\n")
		if cut <= size/4 {
			cut = strings.LastIndex(text[:size], "\n")
		}
		if cut <= size/4 {
			cut = size
		}
		pages = append(pages, text[:cut])
		text = strings.TrimLeft(text[cut:], "\n")
	}
	if text != "" || len(pages) == 0 {
		pages = append(pages, text)
	}
	return pages
}

func firstBytes(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}
