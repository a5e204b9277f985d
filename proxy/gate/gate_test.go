package gate

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpchaos/mcpchaos/proxy/audit"
	"github.com/mcpchaos/mcpchaos/proxy/config"
	"github.com/mcpchaos/mcpchaos/proxy/knobs"
	"github.com/mcpchaos/mcpchaos/proxy/llm"
	"github.com/mcpchaos/mcpchaos/proxy/llm/llmtest"
	"github.com/mcpchaos/mcpchaos/proxy/trace"
)

// prompts rank differently by each key of the fallback order: keyword hits
// (zulu 2, yankee 1), then priority (deploy 5 before alpha and bravo, 1
// each), then name (alpha before bravo).
var prompts = []config.Prompt{
	{Name: "bravo", Text: "B.", Priority: 1},
	{Name: "deploy", Text: "D.", Priority: 5, Keywords: []string{"deploy"}},
	{Name: "zulu", Text: "Z.", Priority: 0, Keywords: []string{"backup", "restore"}},
	{Name: "alpha", Text: "A.", Priority: 1},
	{Name: "yankee", Text: "Y.", Priority: 9, Keywords: []string{"Backup"}},
}

func names(ps []config.Prompt) string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = p.Name
	}
	return strings.Join(out, ",")
}

func TestFallbackOrdersByHitsThenPriorityThenName(t *testing.T) {
	for intent, want := range map[string]string{
		"restore last night's backup": "zulu,yankee,deploy,alpha,bravo",
		"":                            "yankee,deploy,alpha,bravo,zulu",
		"Deploy! then BACKUP.":        "yankee,deploy,zulu,alpha,bravo", // case and punctuation ignored; one hit each, so priority decides
	} {
		if got := names(Fallback(prompts, intent)); got != want {
			t.Errorf("Fallback(%q) = %s, want %s", intent, got, want)
		}
	}
	if names(prompts) != "bravo,deploy,zulu,alpha,yankee" {
		t.Fatal("Fallback reordered its input")
	}
}

func TestParseRankingKeepsKnownNamesThenTheRestInFallbackOrder(t *testing.T) {
	fallback := Fallback(prompts, "")
	got := parseRanking("1. zulu\n- alpha\nsomething else\n2) zulu\n", fallback)
	if names(got) != "zulu,alpha,yankee,deploy,bravo" {
		t.Fatalf("got %s", names(got))
	}
	if got := parseRanking("none of these\n", fallback); got != nil {
		t.Fatalf("a ranking naming no prompt gave %s, want nil", names(got))
	}
}

func TestRenderNumbersEveryPrompt(t *testing.T) {
	if got := Render(prompts[:2]); got != "1. bravo\nB.\n\n2. deploy\nD." {
		t.Fatalf("Render = %q", got)
	}
}

type rows struct {
	mu sync.Mutex
	r  []audit.Row
}

func (r *rows) Record(row audit.Row) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.r = append(r.r, row)
}

func (r *rows) of(kind audit.Kind) []audit.Row {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []audit.Row
	for _, row := range r.r {
		if row.Kind == kind {
			out = append(out, row)
		}
	}
	return out
}

// withLLM returns a gate over ps whose LLM is a stand-in provider answering a.
func withLLM(t *testing.T, ps []config.Prompt, a llmtest.Answer) (*Gate, *llmtest.Server, *rows) {
	t.Helper()
	f := llmtest.New(a)
	t.Cleanup(f.Close)
	ad, err := llm.New(llm.Config{Primary: "p", Providers: map[string]llm.ProviderConfig{
		"p": {Kind: llm.KindOpenAI, URL: f.BaseURL(), Model: "m"}}}, knobs.Defaults())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(ad.Close)
	rec := &rows{}
	return New(ps, ad, 5*time.Second, rec), f, rec
}

func begin(g *Gate, intent string) Decision {
	return g.Begin(trace.With(context.Background(), "ABCDEFGH"), intent, audit.Row{User: "alice"})
}

func TestBeginWithoutLLMIsTheFallbackAndNoDegradation(t *testing.T) {
	rec := &rows{}
	d := begin(New(prompts, nil, time.Second, rec), "restore last night's backup")
	if names(d.Order) != "zulu,yankee,deploy,alpha,bravo" || d.Degraded != nil {
		t.Fatalf("order %s, degraded %+v", names(d.Order), d.Degraded)
	}
	got := rec.of(audit.KindGateDecision)
	if len(got) != 1 || got[0].Degraded || got[0].Status != audit.StatusOK ||
		got[0].Detail != "order: zulu, yankee, deploy, alpha, bravo" || got[0].User != "alice" || got[0].CorrelationID != "ABCDEFGH" {
		t.Fatalf("gate_decision rows %+v", got)
	}
}

func TestBeginAsksTheLLMFromTwoPromptsOn(t *testing.T) {
	g, f, rec := withLLM(t, prompts[:2], llmtest.Answer{Text: "deploy\nbravo"})
	d := begin(g, "ship it")
	if names(d.Order) != "deploy,bravo" || d.Degraded != nil {
		t.Fatalf("order %s, degraded %+v", names(d.Order), d.Degraded)
	}
	reqs := f.Requests()
	if len(reqs) != 1 || !strings.Contains(reqs[0].Prompt, "Intent: ship it") {
		t.Fatalf("the LLM was not asked with the intent: %+v", reqs)
	}
	if reqs[0].MaxTokens != 40 {
		t.Fatalf("max_tokens %d, want 20 a prompt (40)", reqs[0].MaxTokens)
	}
	if len(rec.of(audit.KindLLMAttempt)) != 1 {
		t.Fatalf("llm_attempt rows: %+v", rec.r)
	}

	g, f, _ = withLLM(t, prompts[:1], llmtest.Answer{Text: "bravo"})
	if d := begin(g, "x"); names(d.Order) != "bravo" || d.Degraded != nil || len(f.Requests()) != 0 {
		t.Fatalf("one prompt: nothing to rank, nothing asked: %s %+v %d", names(d.Order), d.Degraded, len(f.Requests()))
	}
}

func TestBeginFallsBackAndSaysWhy(t *testing.T) {
	for _, c := range []struct {
		step   llmtest.Answer
		reason string
	}{
		{llmtest.Answer{Status: 500}, "HTTP 500"},
		{llmtest.Answer{Text: "none of these"}, "the LLM's ranking named no known prompt"},
	} {
		g, _, rec := withLLM(t, prompts, c.step)
		d := begin(g, "restore last night's backup")
		if names(d.Order) != "zulu,yankee,deploy,alpha,bravo" {
			t.Errorf("%v: order %s, want the fallback", c.step, names(d.Order))
		}
		if d.Degraded == nil || d.Degraded.Feature != Feature || !strings.Contains(d.Degraded.Reason, c.reason) {
			t.Fatalf("%v: degraded %+v, want %q", c.step, d.Degraded, c.reason)
		}
		row := rec.of(audit.KindGateDecision)
		if len(row) != 1 || !row[0].Degraded || row[0].DegradedReason != d.Degraded.AuditReason() {
			t.Fatalf("%v: gate_decision rows %+v", c.step, row)
		}
	}
}
