package stage

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/mcpchaos/mcpchaos/proxy/llm"
	"github.com/mcpchaos/mcpchaos/proxy/llm/llmtest"
)

// TestPaginationTitlesWaitOnlyTheirOwnKnob: paginate's page titles wait for
// a hanging LLM as long as MCPCTL_PAGINATION_LLM_TIMEOUT_MS says, not as long
// as any other knob (the gate's timeout, the call budget, the stage budget,
// all far longer here), then degrade to numbered pages and say so.
func TestPaginationTitlesWaitOnlyTheirOwnKnob(t *testing.T) {
	released := make(chan struct{})
	hang := httptest.NewServer(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-released:
		}
	}))
	defer hang.Close()
	defer close(released) // before Close: the handler lets go first

	const own, others = 200 * time.Millisecond, 5 * time.Second
	k := testKnobs()
	k.PaginationLLMTimeout = own
	k.GateLLMTimeout, k.LLMCallBudget, k.LLMProviderTimeout, k.StageLLMBudget = others, others, others, others
	a, err := llm.New(llm.Config{Primary: "p", Providers: map[string]llm.ProviderConfig{
		"p": {Kind: llm.KindOpenAI, URL: hang.URL + "/v1", Model: "m"}}}, k)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	sh := &Shared{LLM: a, Knobs: k, Cache: NewCache(CacheEntries), Pages: NewPages(), Audit: &rows{}}

	start := time.Now()
	out := runOne(sh, &Paginate{ThresholdBytes: 8192, PageBytes: 4096}, others, searchText("knob"))
	took := time.Since(start)
	// The margin is for a loaded machine; the other knobs are 25 times own.
	if limit := own + 2*time.Second; took > limit {
		t.Errorf("paginate waited %v for a hanging LLM; MCPCTL_PAGINATION_LLM_TIMEOUT_MS=%v alone should bound its titles (the other knobs are %v)", took, own, others)
	}
	if len(out.Degradations) != 1 || out.Degradations[0].Feature != TitlesFeature {
		t.Errorf("degradations %+v; want the titles' one", out.Degradations)
	}
}

// TestAFallbackIsNeverCachedAsTheLLMsAnswer: titles the LLM failed to give
// degrade to numbered pages, and that fallback is not cached: once the LLM
// answers again, the same document gets its titles, not the numbers.
func TestAFallbackIsNeverCachedAsTheLLMsAnswer(t *testing.T) {
	sh, f, _ := fakeShared(t, llmtest.Answer{Status: 500})
	p := &Paginate{ThresholdBytes: 8192, PageBytes: 4096}
	doc := searchText("recovers")
	if out := runOne(sh, p, time.Second, doc); len(out.Degradations) != 1 {
		t.Fatalf("a failing LLM: degradations %+v; want the titles' one", out.Degradations)
	}
	f.Set(llmtest.Answer{Text: "One\nTwo\nThree\nFour\nFive"})
	calls := len(f.Requests())
	out := runOne(sh, p, time.Second, doc)
	if len(out.Degradations) > 0 || !strings.Contains(out.Text, "1. One\n") {
		t.Errorf("after the LLM recovered: degradations %+v, text %q…; want its titles", out.Degradations, out.Text[:min(200, len(out.Text))])
	}
	if len(f.Requests()) == calls {
		t.Error("the recovered LLM was not asked: the fallback was served from the cache")
	}
}
