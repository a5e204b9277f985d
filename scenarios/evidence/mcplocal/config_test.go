package mcplocal

import (
	"reflect"
	"testing"

	"github.com/mcpchaos/mcpchaos/proxy/config"
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
