package knobs

import (
	"slices"
	"strings"
	"testing"
	"time"
)

// TestCheckAllowsEqualBoundsAndNamesEachContradiction: an inner bound equal
// to its outer one is no contradiction; one past it is, in this whole text.
func TestCheckAllowsEqualBoundsAndNamesEachContradiction(t *testing.T) {
	v := Defaults()
	v.LLMProviderTimeout, v.LLMCallBudget = time.Second, time.Second
	v.UpstreamCallTimeout, v.RequestDeadline = 2*time.Second, 2*time.Second
	if err := v.Check(); err != nil {
		t.Fatalf("equal bounds: %v", err)
	}
	v.UpstreamCallTimeout = 2*time.Second + time.Millisecond
	want := "knob MCPCTL_UPSTREAM_CALL_TIMEOUT_MS (2.001s) exceeds MCPCTL_REQUEST_DEADLINE_MS (2s): an upstream call runs inside the request"
	if err := v.Check(); err == nil || err.Error() != want {
		t.Fatalf("Check = %v, want %q", err, want)
	}
}

// TestEnvironLeavesOutZeroKnobs: a knob at 0 is not passed on (the proxy
// then takes its default), every positive one is.
func TestEnvironLeavesOutZeroKnobs(t *testing.T) {
	v := Defaults()
	if !v.Set("MCPCTL_REQUEST_DEADLINE_MS", 0) {
		t.Fatal("Set refused a duration knob")
	}
	env := v.Environ()
	for _, e := range env {
		if strings.HasPrefix(e, "MCPCTL_REQUEST_DEADLINE_MS=") {
			t.Fatalf("a zero knob was passed on: %s", e)
		}
	}
	want := len(Table) - 1
	for _, k := range Table {
		if k.DefaultRaw() == 0 {
			want-- // off by default: nothing to pass on
		}
	}
	if len(env) != want {
		t.Fatalf("%d knobs passed on, want every positive one (%d)", len(env), want)
	}
}

// TestSetAndGetOnlyDurationKnobs: Set and Get work on duration knobs by
// name; an unknown name or a count knob is refused.
func TestSetAndGetOnlyDurationKnobs(t *testing.T) {
	v := Defaults()
	if !v.Set("MCPCTL_REQUEST_DEADLINE_MS", 1234*time.Millisecond) || v.RequestDeadline != 1234*time.Millisecond {
		t.Fatalf("Set: %v", v.RequestDeadline)
	}
	if d, ok := v.Get("MCPCTL_REQUEST_DEADLINE_MS"); !ok || d != 1234*time.Millisecond {
		t.Fatalf("Get = %v %v", d, ok)
	}
	before := v
	for _, name := range []string{"MCPCTL_NO_SUCH_KNOB", "MCPCTL_SESSIONS_MAX"} {
		if v.Set(name, time.Second) {
			t.Errorf("Set(%s) accepted", name)
		}
		if _, ok := v.Get(name); ok {
			t.Errorf("Get(%s) answered", name)
		}
	}
	if !slices.Equal(v.Environ(), before.Environ()) {
		t.Error("a refused Set changed a knob")
	}
}
