package catalogue

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/mcpchaos/mcpchaos/proxy/knobs"
	"github.com/mcpchaos/mcpchaos/scenarios/harness"
)

func TestScenarioNamesAreUniqueAndComplete(t *testing.T) {
	seen := map[string]bool{}
	for _, s := range All() {
		if seen[s.Name()] {
			t.Errorf("two scenarios are named %q", s.Name())
		}
		seen[s.Name()] = true
		if s.Expect == nil || s.Budget == nil || s.Operation.Do == nil || s.Promise == "" || len(s.Labels) == 0 {
			t.Errorf("%s: incomplete (every scenario needs an operation, a budget, an expectation, a promise and labels)", s.Name())
		}
	}
}

func TestJudgeFailsLateAndBrokenAnswers(t *testing.T) {
	s := All()[0]
	kv := knobs.Defaults()
	late := Observation{Latency: s.Budget(kv) + Tolerance + 1, Trace: "ABCDEFGH"}
	if r := s.Judge(kv, late); r.Pass {
		t.Error("an answer past budget + tolerance passed")
	}
	broken := Observation{Trace: "ABCDEFGH", Broken: []string{"notice missing"}}
	if r := s.Judge(kv, broken); r.Pass || r.Reason != "[mcp] "+s.Promise+": notice missing" {
		t.Errorf("a broken promise passed: %+v", r)
	}
	if r := s.Judge(kv, Observation{Trace: "ABCDEFGH"}); !r.Pass {
		t.Errorf("a good answer failed: %s", r.Reason)
	}
}

// The budget verdict takes out the time the machine did not run the client
// (Observation.Stalled), and only that: an answer late by more than the
// stalls explain still fails, and the breach says how much was load.
func TestJudgeTakesOutStallsAndOnlyThem(t *testing.T) {
	s := All()[0]
	kv := knobs.Defaults()
	over := s.Budget(kv) + Tolerance + 400*time.Millisecond
	if r := s.Judge(kv, Observation{Latency: over, Stalled: 500 * time.Millisecond, Trace: "ABCDEFGH"}); !r.Pass {
		t.Errorf("an answer late only by 400ms of a 500ms stall failed: %s", r.Reason)
	}
	r := s.Judge(kv, Observation{Latency: over, Stalled: 300 * time.Millisecond, Trace: "ABCDEFGH"})
	if r.Pass {
		t.Fatal("an answer 400ms late with 300ms of stalls passed")
	}
	if !strings.Contains(r.Reason, "(300ms of it the machine's load, not counted)") {
		t.Errorf("the breach does not say how much was load: %s", r.Reason)
	}
}

// bare is a target that claims no capability, as a foreign proxy's spec may.
type bare struct{ harness.Target }

func (bare) Name() string      { return "foreign:bare" }
func (bare) Has(c string) bool { return false }

func byName(t *testing.T, name string) Scenario {
	t.Helper()
	for _, s := range All() {
		if s.Name() == name {
			return s
		}
	}
	t.Fatalf("no scenario %q", name)
	return Scenario{}
}

// The verdict lists every promise broken, each with its tier; mcplocal's own
// promises bind only targets that claim them, so a foreign proxy's real
// finding is not hidden behind a missing trace code.
func TestJudgeListsEveryBreachByTier(t *testing.T) {
	kv := knobs.Defaults()
	s := byName(t, "blackhole × small tools/call")
	late := Observation{Latency: kv.RequestDeadline + Tolerance + time.Second, Err: context.DeadlineExceeded}
	r := s.JudgeOn(nil, kv, late)
	if r.Pass || len(r.Breaches) != 3 {
		t.Fatalf("want 3 breaches (never answered, late, protocol error), got %d: %s", len(r.Breaches), r.Reason)
	}
	for _, want := range []string{"[mcp] answered: never answered", "[mcp] within budget: answered after", "[mcp] tool failure as isError: answered with a protocol error"} {
		if !strings.Contains(r.Reason, want) {
			t.Errorf("reason lacks %q: %s", want, r.Reason)
		}
	}

	// A readable isError without a trace code: broken for mcplocal, held for
	// a proxy that does not claim traceCode.
	untraced := Observation{Latency: time.Millisecond, IsError: true, Text: "upstream unreachable"}
	if r := s.JudgeOn(nil, kv, untraced); r.Pass || len(r.Breaches) != 1 || r.Breaches[0].Tier != Own || r.Breaches[0].Promise != PromiseTraceCode {
		t.Errorf("mcplocal without a trace code: %+v", r.Breaches)
	}
	if r := s.JudgeOn(bare{}, kv, untraced); !r.Pass {
		t.Errorf("a proxy that does not claim traceCode was held to it: %s", r.Reason)
	}

	// A success without a trace code on the baseline, and an isError
	// instead of a result: both listed for mcplocal, only the generic one
	// for the bare proxy.
	base := byName(t, "none × small tools/call")
	both := Observation{Latency: time.Millisecond, IsError: true, Text: "boom"}
	if r := base.JudgeOn(nil, kv, both); len(r.Breaches) != 2 {
		t.Errorf("mcplocal: want 2 breaches, got %s", r.Reason)
	}
	if r := base.JudgeOn(bare{}, kv, both); len(r.Breaches) != 1 || r.Breaches[0].Tier != Generic || r.Breaches[0].Promise != PromiseSuccess {
		t.Errorf("bare: want only the generic breach, got %s", r.Reason)
	}
}

// Labels is the one list: every label a scenario carries is in it, and every
// entry of it selects at least one scenario.
func TestLabelsAreOneFrozenList(t *testing.T) {
	used := map[string]bool{}
	for _, s := range All() {
		for _, l := range s.Labels {
			if err := CheckLabel(l); err != nil {
				t.Errorf("%s: %v", s.Name(), err)
			}
			used[l] = true
		}
	}
	for _, l := range Labels {
		if !used[l] {
			t.Errorf("label %q selects no scenario: drop it from Labels", l)
		}
	}
	if CheckLabel("basline") == nil {
		t.Error("a misspelt label was accepted")
	}
}

// TestSurfaceAndSecurityOperationsAreJudgedThroughTheStallMeter: the
// verdict on every surface and security operation takes out the stalls its
// timed part saw, as the other operations' do (a loaded machine is not a
// late proxy). With every meter reporting an hour of stalls more than it
// saw, each operation, run once in process, must report at least that hour:
// one timed on the wall clock alone reports none (an operation with no timed
// part reports neither latency nor stalls).
func TestSurfaceAndSecurityOperationsAreJudgedThroughTheStallMeter(t *testing.T) {
	const simulated = time.Hour
	restore := harness.SimulateStalls(simulated)
	defer restore()
	seen := map[string]bool{}
	for _, s := range All() {
		if !s.HasLabel("surface") && !s.HasLabel("security") {
			continue
		}
		if seen[s.Operation.Name] || s.NotApplicable(&harness.InProcess{}) != "" {
			continue
		}
		if _, ok := s.Fault.(harness.None); !ok && !s.HasLabel("security") {
			continue // the surface operations once each, on a healthy link
		}
		seen[s.Operation.Name] = true
		t.Run(s.Name(), func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			r := s.Run(ctx, &harness.InProcess{})
			if r.NotApplicable != "" {
				// The loop kept only scenarios applicable in process: one
				// that says otherwise once run is not judged at all.
				t.Fatalf("said applicable in process, then ran as not applicable: %s", r.NotApplicable)
			}
			if r.Latency == 0 && r.Stalled == 0 {
				return // nothing of it is timed (a config check): no budget verdict to excuse
			}
			if r.Stalled < simulated {
				t.Errorf("%q is judged on the wall clock: it reported %v stalled, want its timed part metered (harness.MeterStalls)", s.Operation.Name, r.Stalled)
			}
		})
	}
	if len(seen) < 10 {
		t.Fatalf("only %d surface and security operations found", len(seen))
	}
}
