package replay

import (
	"context"
	"reflect"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

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

// The fake answers the recorded tool with the recorded answer's shape: its
// size and content kinds, an isError result as one.
func TestTheFakeAnswersWithTheRecordedShape(t *testing.T) {
	root := row(audit.KindToolCallTrace, "docmost_search", 0, time.Second, "ok")
	root.ParentID, root.Project = "", "docmost"
	up := row(audit.KindUpstreamCall, "search", 0, 200*time.Millisecond, "ok")
	up.Server, up.Bytes, up.Content = "docmost", 14321, "text:2,image:1,structured"
	p, err := PlanOf(planBundle(t, []audit.Row{root, up}), 1)
	if err != nil {
		t.Fatal(err)
	}
	want := upstream.Shape{Bytes: 14321, Blocks: []upstream.Block{{Type: "text", N: 2}, {Type: "image", N: 1}}, Structured: true}
	got := p.Upstream["search"]
	if got.Kind != upstream.Slow || got.Delay != 200*time.Millisecond || got.Shape == nil || !reflect.DeepEqual(*got.Shape, want) {
		t.Errorf("upstream search: %+v (shape %+v), want slow 200ms with shape %+v", got, got.Shape, want)
	}
	up.Status, up.Bytes, up.Content = "error", 80, "text:1,isError"
	p, err = PlanOf(planBundle(t, []audit.Row{root, up}), 1)
	if err != nil {
		t.Fatal(err)
	}
	if got := p.Upstream["search"]; got.Kind != upstream.ErrorResult || got.Shape == nil || got.Shape.Bytes != 80 || !got.Shape.IsError {
		t.Errorf("an isError answer: %+v (shape %+v), want an error result of 80 bytes", got, got.Shape)
	}
}

// A call recorded through any server the bundle's config names is
// planned on a fake of that server; one the config does not name is
// refused, naming it.
func TestACallThroughAnyConfiguredServerIsPlanned(t *testing.T) {
	root := row(audit.KindToolCallTrace, "wiki_get_page", 0, time.Second, "ok")
	root.ParentID, root.Project = "", "docmost"
	up := row(audit.KindUpstreamCall, "get_page", 0, 20*time.Millisecond, "ok")
	up.Server = "wiki"
	b := planBundle(t, []audit.Row{root, up})
	var cfg config.Config
	if err := yaml.Unmarshal([]byte(b.Config), &cfg); err != nil {
		t.Fatal(err)
	}
	cfg.Projects["docmost"].Servers["wiki"] = &config.Server{URL: "http://127.0.0.1:2/mcp"}
	y, err := config.Marshal(&cfg)
	if err != nil {
		t.Fatal(err)
	}
	b.Config = string(y)
	p, err := PlanOf(b, 1)
	if err != nil {
		t.Fatalf("a call through wiki: %v\n%s", err, b.Config)
	}
	if p.Server != "wiki" || p.UpstreamTool != "get_page" || p.Tool != "wiki_get_page" {
		t.Errorf("plan: %+v", p)
	}
	up.Server = "jira"
	if _, err := PlanOf(planBundle(t, []audit.Row{root, up}), 1); err == nil || !strings.Contains(err.Error(), `"jira"`) {
		t.Errorf("a server the config does not name: %v, want a refusal naming it", err)
	}
}

// Each kind of network failure is played as itself: a refused connection
// as the link down, a reset as reset_peer, a network timeout as a
// blackhole; an error result as the fake's.
func TestEachNetworkFailureIsPlayedAsItself(t *testing.T) {
	root := row(audit.KindToolCallTrace, "docmost_search", 0, time.Second, "ok")
	root.ParentID, root.Project = "", "docmost"
	for detail, want := range map[string]Network{
		`upstream docmost: calling "tools/call": rejected by transport: Post "http://127.0.0.1:1/mcp": dial tcp 127.0.0.1:1: connect: connection refused`: NetworkRefused,
		`upstream docmost: calling "tools/call": rejected by transport: Post "http://127.0.0.1:1/mcp": EOF`:                                               NetworkReset,
		`upstream docmost: read tcp 127.0.0.1:5->127.0.0.1:1: read: connection reset by peer`:                                                             NetworkReset,
		`upstream docmost: calling "tools/call": Post "http://127.0.0.1:1/mcp": dial tcp 127.0.0.1:1: i/o timeout`:                                        NetworkTimeout,
		`fake upstream docmost: search failed on purpose`:                                                                                                 "",
	} {
		up := row(audit.KindUpstreamCall, "search", 0, 5*time.Millisecond, "error")
		up.Server, up.Detail = "docmost", detail
		p, err := PlanOf(planBundle(t, []audit.Row{root, up}), 1)
		if err != nil {
			t.Fatal(err)
		}
		if p.Network != want {
			t.Errorf("%s: played as %q, want %q", detail, p.Network, want)
		}
	}
}
