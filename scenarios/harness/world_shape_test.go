package harness

import (
	"reflect"
	"testing"
)

// A world's stages, prompts and health checks reach mcplocal's
// configuration whole: each carries every field the configuration has, and
// a round trip changes nothing.
func TestWorldShapesReachTheConfigurationWhole(t *testing.T) {
	stages := []Stage{{Name: "paginate"}, {Name: "summarize-tree", Options: map[string]any{"depth": 2}}}
	if got := PipelineOf(PipelineConfig(stages)); !reflect.DeepEqual(got, stages) {
		t.Errorf("pipeline round trip: %+v, want %+v", got, stages)
	}
	prompts := []Prompt{{Name: "start", Text: "read first", Priority: 3, Keywords: []string{"a", "b"}}}
	if got := PromptsOf(PromptsConfig(prompts)); !reflect.DeepEqual(got, prompts) {
		t.Errorf("prompts round trip: %+v, want %+v", got, prompts)
	}
	h := &HealthCheck{Tool: "search", Arguments: map[string]any{"q": "x"}, IntervalSeconds: 0.5, TimeoutSeconds: 0.25, FailureThreshold: 4}
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
		{reflect.TypeFor[Stage](), reflect.TypeOf(PipelineConfig(nil)).Elem()},
		{reflect.TypeFor[Prompt](), reflect.TypeOf(PromptsConfig(nil)).Elem()},
		{reflect.TypeFor[HealthCheck](), reflect.TypeOf(healthCheckOf(nil)).Elem()},
	} {
		if pair.ours.NumField() != pair.theirs.NumField() {
			t.Errorf("harness.%s has %d fields, mcplocal's %s %d: a field the world cannot set, or one it drops",
				pair.ours.Name(), pair.ours.NumField(), pair.theirs, pair.theirs.NumField())
		}
	}
}
