package mcplocal

import (
	"reflect"
	"slices"
	"testing"

	"github.com/mcpchaos/mcpchaos/proxy/config"
	"github.com/mcpchaos/mcpchaos/proxy/llm"
	"github.com/mcpchaos/mcpchaos/scenarios/world"
)

// A world's stages, prompts and health checks reach mcplocal's
// configuration whole: each carries every field the configuration has, and
// a round trip changes nothing.
func TestWorldShapesReachTheConfigurationWhole(t *testing.T) {
	stages := []world.Stage{{Name: "paginate"}, {Name: "summarize-tree", Options: map[string]any{"depth": 2}}}
	if got := PipelineOf(PipelineConfig(stages)); !reflect.DeepEqual(got, stages) {
		t.Errorf("pipeline round trip: %+v, want %+v", got, stages)
	}
	prompts := []world.Prompt{{Name: "start", Text: "read first", Priority: 3, Keywords: []string{"a", "b"}}}
	if got := PromptsOf(PromptsConfig(prompts)); !reflect.DeepEqual(got, prompts) {
		t.Errorf("prompts round trip: %+v, want %+v", got, prompts)
	}
	h := &world.HealthCheck{Tool: "search", Arguments: map[string]any{"q": "x"}, IntervalSeconds: 0.5, TimeoutSeconds: 0.25, FailureThreshold: 4}
	c := healthCheckOf(h)
	if c.Tool != h.Tool || !reflect.DeepEqual(c.Arguments, h.Arguments) || c.IntervalSeconds != h.IntervalSeconds ||
		c.TimeoutSeconds != h.TimeoutSeconds || c.FailureThreshold != h.FailureThreshold {
		t.Errorf("health check %+v became %+v", h, c)
	}
	if healthCheckOf(nil) != nil {
		t.Error("no health check became one")
	}
	for _, pair := range []struct {
		ours, theirs reflect.Type
	}{
		{reflect.TypeFor[world.Stage](), reflect.TypeOf(PipelineConfig(nil)).Elem()},
		{reflect.TypeFor[world.Prompt](), reflect.TypeOf(PromptsConfig(nil)).Elem()},
		{reflect.TypeFor[world.HealthCheck](), reflect.TypeOf(healthCheckOf(nil)).Elem()},
	} {
		if pair.ours.NumField() != pair.theirs.NumField() {
			t.Errorf("world.%s has %d fields, mcplocal's %s %d: a field the world cannot set, or one it drops",
				pair.ours.Name(), pair.ours.NumField(), pair.theirs, pair.theirs.NumField())
		}
	}
}

// A world's relay reaches mcplocal alike in process and through its file:
// on or off when the world forces it, the proxy's default (on) when nil.
func TestAWorldsRelayReachesTheConfiguration(t *testing.T) {
	on, off := true, false
	for _, c := range []struct {
		relay *bool
		want  bool
	}{{nil, true}, {&on, true}, {&off, false}} {
		w := &world.World{Relay: c.relay, Projects: map[string]*world.WorldProject{
			"docmost": {Servers: map[string]*world.WorldServer{"docmost": {URL: "http://127.0.0.1:1/mcp"}}},
		}}
		cfg := Config(w)
		if err := cfg.Validate(); err != nil {
			t.Fatal(err)
		}
		if cfg.RelayOn() != c.want {
			t.Errorf("relay %v: in process RelayOn() = %v, want %v", c.relay, cfg.RelayOn(), c.want)
		}
		doc, err := ConfigYAML(w) // what a process target writes
		if err != nil {
			t.Fatal(err)
		}
		back, err := config.Parse(doc)
		if err != nil {
			t.Fatal(err)
		}
		if back.RelayOn() != c.want {
			t.Errorf("relay %v: the file says RelayOn() = %v, want %v:\n%s", c.relay, back.RelayOn(), c.want, doc)
		}
	}
}

// A world's LLMs, users and open projects reach mcplocal's configuration:
// the first LLM is the primary with the others as its fallbacks in order,
// each in its own wire format; every user keeps their token and admin; an
// open project takes calls without a token. A world with none of them
// configures none.
func TestAWorldsLLMsAndUsersReachTheConfiguration(t *testing.T) {
	w := &world.World{
		Store: "memory",
		Projects: map[string]*world.WorldProject{
			"docmost": {Servers: map[string]*world.WorldServer{"docmost": {URL: "http://127.0.0.1:1/mcp"}}},
			"open":    {Open: true, Gate: true, Servers: map[string]*world.WorldServer{"wiki": {URL: "http://127.0.0.1:2/mcp"}}},
		},
		LLMs: []world.LLMProvider{
			{Name: "first", Kind: world.LLMOpenAI, URL: "http://127.0.0.1:3/v1", Model: "m1", KeyEnv: "FIRST_KEY"},
			{Name: "second", Kind: world.LLMAnthropic, URL: "http://127.0.0.1:4", Model: "m2"},
			{Name: "third", Kind: world.LLMOpenAI, URL: "http://127.0.0.1:5/v1", Model: "m3"},
		},
		Users: map[string]world.User{"alice": {Token: "ta", Admin: true}, "bob": {Token: "tb"}},
	}
	cfg := Config(w)
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	if cfg.LLM == nil || cfg.LLM.Primary != "first" || len(cfg.LLM.Providers) != 3 {
		t.Fatalf("LLMs %+v: want first primary among three", cfg.LLM)
	}
	first, second, third := cfg.LLM.Providers["first"], cfg.LLM.Providers["second"], cfg.LLM.Providers["third"]
	if first.Kind != llm.KindOpenAI || second.Kind != llm.KindAnthropic || third.Kind != llm.KindOpenAI {
		t.Errorf("kinds %q, %q, %q; want openai, anthropic, openai", first.Kind, second.Kind, third.Kind)
	}
	if !slices.Equal(first.Fallbacks, []string{"second", "third"}) || second.Fallbacks != nil || third.Fallbacks != nil {
		t.Errorf("fallbacks: first %v, second %v, third %v; want second then third after the primary alone", first.Fallbacks, second.Fallbacks, third.Fallbacks)
	}
	if first.URL != "http://127.0.0.1:3/v1" || first.Model != "m1" || first.APIKeyEnv != "FIRST_KEY" || second.APIKeyEnv != "" {
		t.Errorf("the primary's provider: %+v", first)
	}
	if cfg.Users["alice"] != (config.User{Token: "ta", Admin: true}) || cfg.Users["bob"] != (config.User{Token: "tb"}) || len(cfg.Users) != 2 {
		t.Errorf("users %+v", cfg.Users)
	}
	if cfg.Projects["open"].RequireAuth == nil || *cfg.Projects["open"].RequireAuth || cfg.Projects["docmost"].RequireAuth != nil {
		t.Errorf("open project requireAuth %v, closed one %v; want false and the default", cfg.Projects["open"].RequireAuth, cfg.Projects["docmost"].RequireAuth)
	}
	if !cfg.Projects["open"].Gate.Enabled || cfg.Projects["docmost"].Gate.Enabled {
		t.Error("the gate is not on exactly where the world turns it on")
	}
	if w.Strict || cfg.Sessions.Strict || cfg.Audit != "memory" || cfg.Listen != "127.0.0.1:0" {
		t.Errorf("store %q, listen %q, strict %v", cfg.Audit, cfg.Listen, cfg.Sessions.Strict)
	}
	bare := Config(&world.World{Store: "memory", Strict: true})
	if bare.LLM != nil || len(bare.Users) != 0 || !bare.Sessions.Strict {
		t.Errorf("a world without LLMs or users: LLM %+v, users %+v, strict %v", bare.LLM, bare.Users, bare.Sessions.Strict)
	}
}
