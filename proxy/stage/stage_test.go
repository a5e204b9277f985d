package stage

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/onsi/gomega"
	"github.com/onsi/gomega/gleak"

	"github.com/mcpchaos/mcpchaos/proxy/audit"
	"github.com/mcpchaos/mcpchaos/proxy/config"
	"github.com/mcpchaos/mcpchaos/proxy/knobs"
	"github.com/mcpchaos/mcpchaos/proxy/llm"
	"github.com/mcpchaos/mcpchaos/proxy/llm/llmtest"
	"github.com/mcpchaos/mcpchaos/proxy/trace"
)

// rows collects audit rows.
type rows struct {
	mu sync.Mutex
	r  []audit.Row
}

func (r *rows) Record(row audit.Row) { r.mu.Lock(); r.r = append(r.r, row); r.mu.Unlock() }

func testKnobs() knobs.Values {
	k := knobs.Defaults()
	k.LLMCallBudget, k.LLMProviderTimeout = 300*time.Millisecond, 300*time.Millisecond
	k.PaginationLLMTimeout, k.StageLLMBudget = 300*time.Millisecond, 300*time.Millisecond
	return k
}

// fakeShared starts a stand-in LLM answering ans and returns the stages'
// shared world pointed at it.
func fakeShared(t *testing.T, ans llmtest.Answer) (*Shared, *llmtest.Server, *rows) {
	t.Helper()
	f := llmtest.New(ans)
	t.Cleanup(f.Close)
	k := testKnobs()
	a, err := llm.New(llm.Config{Primary: "p", Providers: map[string]llm.ProviderConfig{
		"p": {Kind: llm.KindOpenAI, URL: f.BaseURL(), Model: "m"}}}, k)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(a.Close)
	rec := &rows{}
	return &Shared{LLM: a, Knobs: k, Cache: NewCache(CacheEntries), Pages: NewPages(), Audit: rec}, f, rec
}

// searchText is a search result of about 14 kB for query, in markdown
// sections of growing length: a document paginate splits into several pages.
// The same query gives the same text; another query, another text.
func searchText(query string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# Search results for %q\n\n", query)
	for i := 1; i <= 8; i++ {
		fmt.Fprintf(&b, "## Page %d: %s notes\n\n", i, query)
		for n := 0; b.Len() < i*1700; n++ {
			fmt.Fprintf(&b, "%s line %d of section %d. ", query, n, i)
		}
		b.WriteString("\n\n")
	}
	return b.String()
}

func runOne(sh *Shared, st Stage, budget time.Duration, in string) Output {
	ctx := trace.With(context.Background(), "ABCDEFGH")
	b := NewBudget(ctx, budget)
	defer b.Dispose()
	return st.Run(ctx, &Env{Shared: sh, Budget: b}, in)
}

func TestWarmCacheIsServedWithTheBudgetSpent(t *testing.T) {
	sh, f, _ := fakeShared(t, llmtest.Answer{Text: "One\nTwo\nThree\nFour\nFive"})
	p := &Paginate{ThresholdBytes: 8192, PageBytes: 4096}
	doc := searchText("warm")
	if out := runOne(sh, p, time.Second, doc); len(out.Degradations) > 0 || !strings.Contains(out.Text, "1. One\n") {
		t.Fatalf("cold run: %+v", out.Degradations)
	}
	calls := len(f.Requests())
	out := runOne(sh, p, 0, doc) // a budget that is spent before the stage starts
	if len(out.Degradations) > 0 {
		t.Fatalf("a warm cache was budget-gated: %+v", out.Degradations)
	}
	if !strings.Contains(out.Text, "1. One\n") {
		t.Fatalf("the warm run lost the cached titles: %s", out.Text[:200])
	}
	if len(f.Requests()) != calls {
		t.Fatal("the warm run called the LLM")
	}
}

func TestASpentBudgetWithAColdCacheDegradesWithoutCallingTheLLM(t *testing.T) {
	sh, f, _ := fakeShared(t, llmtest.Answer{Text: "One\nTwo\nThree\nFour"})
	out := runOne(sh, &Paginate{ThresholdBytes: 8192, PageBytes: 4096}, 0, searchText("cold"))
	if len(out.Degradations) != 1 || !strings.Contains(out.Degradations[0].Reason, "budget") {
		t.Fatalf("degradations = %+v", out.Degradations)
	}
	if len(f.Requests()) != 0 {
		t.Fatal("a spent budget still called the LLM")
	}
}

func TestNoLLMConfiguredIsNotADegradation(t *testing.T) {
	sh := &Shared{Knobs: testKnobs(), Cache: NewCache(10), Pages: NewPages(), Audit: &rows{}}
	for _, st := range []Stage{&Paginate{ThresholdBytes: 8192, PageBytes: 4096}, &SummarizeTree{MinBytes: 10, MaxDepth: 3, GroupSize: 5}} {
		out := runOne(sh, st, time.Second, searchText("nollm"))
		if len(out.Degradations) > 0 {
			t.Errorf("%s without an LLM reported %+v", st.Name(), out.Degradations)
		}
	}
}

func TestSummarizeSingleBlockDegradesInsteadOfDiscarding(t *testing.T) {
	sh, _, _ := fakeShared(t, llmtest.Answer{Status: 500})
	in := strings.Repeat("one long block without headings. ", 200)
	out := runOne(sh, &SummarizeTree{MinBytes: 10, MaxDepth: 3, GroupSize: 5}, time.Second, in)
	if len(out.Degradations) != 1 {
		t.Fatalf("degradations = %+v", out.Degradations)
	}
	if !strings.HasPrefix(out.Text, "Summary: one long block") || !strings.HasSuffix(out.Text, in) {
		t.Fatalf("the single-block path lost the stage's work: %.120s", out.Text)
	}
}

func TestPagesSplitAndReassemble(t *testing.T) {
	doc := searchText("pages")
	pages := SplitPages(doc, 4096)
	if len(pages) < 3 {
		t.Fatalf("%d pages for %d bytes", len(pages), len(doc))
	}
	for i, pg := range pages {
		if len(pg) > 4096 {
			t.Errorf("page %d is %d bytes", i+1, len(pg))
		}
	}
	if got := strings.Join(pages, "\n\n"); strings.Join(strings.Fields(got), " ") != strings.Join(strings.Fields(doc), " ") {
		t.Fatal("pages do not reassemble into the document")
	}
}

// TestAThousandInvocationsLeaveNothingBehind: every stage invocation's
// Budget is disposed, so a long-lived proxy accumulates no timers or
// goroutines.
func TestAThousandInvocationsLeaveNothingBehind(t *testing.T) {
	g := gomega.NewWithT(t)
	sh, f, _ := fakeShared(t, llmtest.Answer{Text: "A\nB\nC\nD\nE"})
	pipe, err := NewPipeline([]config.Stage{{Name: "paginate"}}, sh)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = pipe.Run(trace.With(context.Background(), "ABCDEFGH"), audit.Row{}, searchText("warm-up")) // fill the connection pool
	before := gleak.Goroutines()
	for i := 0; i < 1000; i++ {
		doc := searchText(fmt.Sprint("thousand ", i)) // a new document each time: an LLM call each time
		_, degs := pipe.Run(trace.With(context.Background(), trace.New()), audit.Row{}, doc)
		if len(degs) > 0 {
			t.Fatalf("invocation %d degraded: %+v", i, degs)
		}
	}
	if n := len(f.Requests()); n < 1000 {
		t.Fatalf("only %d LLM calls for 1000 new documents", n)
	}
	sh.LLM.Close()
	g.Eventually(gleak.Goroutines).WithTimeout(3 * time.Second).ShouldNot(gleak.HaveLeaked(before))
}

// spy is a stage that keeps the Budget it was given.
type spy struct{ b *Budget }

func (*spy) Name() string { return "spy" }
func (s *spy) Run(_ context.Context, env *Env, in string) Output {
	s.b = env.Budget
	return Output{Text: in}
}

func TestTheExecutorDisposesEachStageBudget(t *testing.T) {
	sp := &spy{}
	pipe := &Pipeline{shared: &Shared{Knobs: testKnobs(), Audit: &rows{}}, stages: []configured{{sp, time.Hour}}}
	pipe.Run(trace.With(context.Background(), "ABCDEFGH"), audit.Row{}, "x")
	if err := sp.b.Context().Err(); err != context.Canceled {
		t.Fatalf("after the stage, its budget's context is %v: the timer of an hour-long budget is still armed", err)
	}
}
