package stage

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestSplitPagesCutsAtParagraphsThenLinesThenBytes: a page ends at the
// last paragraph break past a quarter of the page size, else at the last
// line break past it, else at the size; text of exactly the size is one
// page, and empty text is one empty page.
func TestSplitPagesCutsAtParagraphsThenLinesThenBytes(t *testing.T) {
	for _, c := range []struct {
		text string
		size int
		want []string
	}{
		{"", 8, []string{""}},
		{"abcdefgh", 8, []string{"abcdefgh"}},
		{"aaaa\n\nbbbb\n\ncccc", 10, []string{"aaaa", "bbbb\n\ncccc"}},
		// The paragraph break at 2 is not past a quarter of 8: the line
		// break at 3 is.
		{"ab\n\ncdefghijkl", 8, []string{"ab\n", "cdefghij", "kl"}},
		// The only line break, at 2, is not past a quarter: cut at 8.
		{"ab\ncdefghijkl", 8, []string{"ab\ncdefg", "hijkl"}},
	} {
		got := SplitPages(c.text, c.size)
		if fmt.Sprintf("%q", got) != fmt.Sprintf("%q", c.want) {
			t.Errorf("SplitPages(%q, %d) = %q, want %q", c.text, c.size, got, c.want)
		}
	}
}

// TestParseTitlesTakesNCleanLines: list markers go, blank lines are
// skipped, a title is cut at 120 bytes, and fewer than n lines is no list.
func TestParseTitlesTakesNCleanLines(t *testing.T) {
	long := strings.Repeat("t", 121)
	for _, c := range []struct {
		in   string
		n    int
		want []string
	}{
		{"1. Alpha\n\n- Beta\n  3) Gamma\n", 3, []string{"Alpha", "Beta", "Gamma"}},
		{"1. Alpha\n- Beta\n3) Gamma\n", 2, []string{"Alpha", "Beta"}},
		{"1. Alpha\n- Beta\n", 3, nil},
		{long + "\n" + long[:120], 2, []string{long[:120], long[:120]}},
	} {
		got := ParseTitles(c.in, c.n)
		if fmt.Sprintf("%q", got) != fmt.Sprintf("%q", c.want) {
			t.Errorf("ParseTitles(%.30q, %d) = %q, want %q", c.in, c.n, got, c.want)
		}
	}
}

// TestTitlesPromptWholeShape: what the LLM is asked for titles.
func TestTitlesPromptWholeShape(t *testing.T) {
	got := titlesPrompt([]string{"first  page\ntext", strings.Repeat("x", 241)})
	want := "Write 2 titles, one per line, for these 2 pages:\n" +
		"\nPage 1 begins: first page text\n" +
		"\nPage 2 begins: " + strings.Repeat("x", 240) + "…\n"
	if got != want {
		t.Fatalf("titlesPrompt\n got %q\nwant %q", got, want)
	}
	if got := firstBytes(strings.Repeat("y", 240), 240); got != strings.Repeat("y", 240) {
		t.Fatalf("exactly 240 bytes got cut: %q", got)
	}
}

// TestPagesKeepsTheLastPagedDocuments: the oldest document goes when one
// more than PagedDocuments is stored; pages are numbered from 1.
func TestPagesKeepsTheLastPagedDocuments(t *testing.T) {
	p := NewPages()
	var handles []string
	for i := range PagedDocuments {
		handles = append(handles, p.Put([]string{fmt.Sprint("doc", i, "p1"), fmt.Sprint("doc", i, "p2")}))
	}
	if _, _, ok := p.Get(handles[0], 1); !ok {
		t.Fatalf("with exactly %d documents the first is gone", PagedDocuments)
	}
	p.Put([]string{"newest"})
	if _, _, ok := p.Get(handles[0], 1); ok {
		t.Fatalf("with %d documents the oldest is still kept", PagedDocuments+1)
	}
	for n, want := range map[int]bool{0: false, 1: true, 2: true, 3: false} {
		page, total, ok := p.Get(handles[1], n)
		if ok != want || total != 2 || (ok && page != fmt.Sprint("doc1p", n)) {
			t.Errorf("Get(page %d) = %q, %d, %v; want ok %v of 2", n, page, total, ok, want)
		}
	}
	if _, _, ok := p.Get("no-such-handle", 1); ok {
		t.Error("an unknown handle has pages")
	}
}

// TestPaginateWholeShape: at the threshold the text passes as it is; past
// it the answer is the index with numbered titles and page 1 with its
// header, exactly.
func TestPaginateWholeShape(t *testing.T) {
	sh := &Shared{Knobs: testKnobs(), Cache: NewCache(10), Pages: NewPages(), Audit: &rows{}}
	st := &Paginate{ThresholdBytes: 16, PageBytes: 10}
	at := strings.Repeat("z", 16)
	if out := runOne(sh, st, time.Second, at); out.Text != at {
		t.Fatalf("exactly the threshold: %q", out.Text)
	}
	in := "aaaa\n\nbbbb\n\ncccc!"
	out := runOne(sh, st, time.Second, in)
	h := regexp.MustCompile(`"handle": "([A-Z2-7]+)"`).FindStringSubmatch(out.Text)
	if h == nil {
		t.Fatalf("no handle in %q", out.Text)
	}
	want := fmt.Sprintf("This result is 17 bytes in 3 pages; page 1 follows. Fetch the others with get_page {\"handle\": %q, \"page\": N}.\n\n", h[1]) +
		"Index:\n1. Page 1\n2. Page 2\n3. Page 3\n\n--- Page 1 of 3: Page 1 ---\naaaa"
	if out.Text != want {
		t.Fatalf("paginated\n got %q\nwant %q", out.Text, want)
	}
}
