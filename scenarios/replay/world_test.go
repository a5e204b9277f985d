package replay

import (
	"context"
	"testing"
	"time"

	fakellm "github.com/mcpchaos/mcpchaos/fakes/llm"
	"github.com/mcpchaos/mcpchaos/fakes/upstream"
	"github.com/mcpchaos/mcpchaos/proxy/audit"
	"github.com/mcpchaos/mcpchaos/proxy/bundle"
	"github.com/mcpchaos/mcpchaos/proxy/config"
	"github.com/mcpchaos/mcpchaos/proxy/knobs"
	"github.com/mcpchaos/mcpchaos/proxy/llm"
)

func planBundle(t *testing.T, rows []audit.Row) bundle.Bundle {
	t.Helper()
	cfg := &config.Config{Listen: "127.0.0.1:0", Audit: "memory",
		LLM: &llm.Config{Primary: "vllm", Providers: map[string]llm.ProviderConfig{
			"vllm":   {Kind: "openai", URL: "http://127.0.0.1:1/v1", Model: "qwen3-32b", Fallbacks: []string{"claude"}},
			"claude": {Kind: "anthropic", URL: "http://127.0.0.1:1", Model: "claude-sonnet-latest"},
		}},
		Projects: map[string]*config.Project{"docmost": {Servers: map[string]*config.Server{"docmost": {URL: "http://127.0.0.1:1/mcp"}},
			Pipeline: []config.Stage{{Name: "paginate"}}}},
	}
	ctx, err := bundle.NewContext(cfg, knobs.Defaults(), bundle.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return bundle.New("7K3M9QXZ", rows, ctx, t0)
}

// Each recorded answer is played back as it was: the upstream after its
// latency, each LLM attempt as its outcome (answered after N ms, hung,
// 404, 429, reset, stream cut) on the provider that made it; the knobs
// and latencies compressed alike; the pipeline as configured.
func TestPlanPlaysEachRecordedAnswerBack(t *testing.T) {
	root := row(audit.KindToolCallTrace, "docmost_search", 0, 3*time.Second, "ok")
	root.ParentID, root.Project = "", "docmost"
	up := row(audit.KindUpstreamCall, "search", 0, 300*time.Millisecond, "ok")
	up.Server = "docmost"
	attempt := func(d time.Duration, status, detail string) audit.Row {
		r := row(audit.KindLLMAttempt, "docmost_search", time.Second, d, status)
		r.Detail = detail
		return r
	}
	b := planBundle(t, []audit.Row{root, up,
		attempt(time.Second, "timeout", "vllm (qwen3-32b): timeout after 1s"),
		attempt(0, "error", "claude (claude-sonnet-latest): HTTP 404 after 3ms: POST /v1/messages: invalid_request_error: model not found"),
		attempt(0, "error", "vllm (qwen3-32b): HTTP 429 after 2ms"),
		attempt(0, "error", "vllm (qwen3-32b): transport after 1ms: read: connection reset by peer"),
		attempt(0, "error", "provider=claude model=claude-sonnet-latest; error: stream ended without message_stop"),
		attempt(600*time.Millisecond, "ok", "claude (claude-sonnet-latest): ok after 600ms"),
	})
	p, err := PlanOf(b, 10)
	if err != nil {
		t.Fatal(err)
	}
	if p.Tool != "docmost_search" || p.UpstreamTool != "search" || !p.Answered || !p.Env.LLM || !p.Env.Fallback || len(p.Env.Pipeline) != 1 {
		t.Errorf("plan: %+v", p)
	}
	if got := p.Upstream["search"]; got != (upstream.Behavior{Kind: upstream.Slow, Delay: 30 * time.Millisecond}) {
		t.Errorf("upstream search: %+v, want slow 30ms", got)
	}
	wantLLM := []fakellm.Kind{fakellm.HangBeforeHeaders, fakellm.RateLimited, fakellm.Reset}
	wantFallback := []fakellm.Kind{fakellm.NotFound, fakellm.TruncatedStream, fakellm.Slow}
	check := func(name string, got []fakellm.Step, want []fakellm.Kind) {
		if len(got) != len(want) {
			t.Fatalf("%s: %v, want %v", name, got, want)
		}
		for i := range want {
			if got[i].Kind != want[i] {
				t.Errorf("%s attempt %d: %v, want %v", name, i, got[i], want[i])
			}
		}
	}
	check("primary", p.LLM, wantLLM)
	check("fallback", p.Fallback, wantFallback)
	if p.Fallback[2].Delay != 60*time.Millisecond {
		t.Errorf("the answered attempt plays after %v, want 60ms", p.Fallback[2].Delay)
	}
	if p.Knobs.LLMCallBudget != 2*time.Second || p.Env.LLMDefault.Kind != fakellm.OK {
		t.Errorf("knobs: LLM call budget %v, want 20s/10; default step %v", p.Knobs.LLMCallBudget, p.Env.LLMDefault)
	}
}

// A request the recording never saw answered leaves its open attempts
// unrecorded: the replay plays them as hung, not as answered.
func TestAnAttemptNeverClosedIsPlayedHung(t *testing.T) {
	root := row(audit.KindToolCallTrace, "docmost_search", 0, 6*time.Second, "cancelled")
	root.ParentID, root.Project = "", "docmost"
	up := row(audit.KindUpstreamCall, "search", 0, 5*time.Millisecond, "ok")
	up.Server = "docmost"
	p, err := PlanOf(planBundle(t, []audit.Row{root, up}), 1)
	if err != nil {
		t.Fatal(err)
	}
	if p.Answered || p.Env.LLMDefault.Kind != fakellm.HangBeforeHeaders {
		t.Errorf("answered %v, LLM default %v: want unanswered, hang", p.Answered, p.Env.LLMDefault)
	}
	other := up
	other.Server = "unifi"
	if _, err := PlanOf(planBundle(t, []audit.Row{root, other}), 1); err == nil {
		t.Errorf("a recorded upstream the world has no fake for was planned")
	}
}

// An answered call's rows are read once they settle: a span written after
// the answer (an LLM attempt cut as the fallback goes out) is not missed.
func TestAnAnsweredCallsRowsAreReadOnceSettled(t *testing.T) {
	root := row(audit.KindToolCallTrace, "docmost_search", 0, time.Second, "ok")
	root.ParentID = ""
	late := row(audit.KindLLMAttempt, "docmost_search", 0, time.Second, "timeout")
	reads := 0
	rows, err := settledRows(context.Background(), func() ([]audit.Row, error) {
		reads++
		if reads < 3 {
			return []audit.Row{root}, nil
		}
		return []audit.Row{root, late}, nil
	})
	if err != nil || len(rows) != 2 {
		t.Errorf("after %d reads: %d rows (%v), want the late attempt too", reads, len(rows), err)
	}
}
