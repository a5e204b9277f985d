package catalogue

import (
	"context"
	"fmt"
	"sort"
	"testing"
	"time"

	"github.com/mcpchaos/mcpchaos/scenarios/evidence"
	"github.com/mcpchaos/mcpchaos/scenarios/harness"
)

// budgetKnob is the knob each budget kind a target may declare stands for:
// what mcplocal's targets are given, and what a foreign spec's budgets:
// replaces.
var budgetKnob = map[string]string{
	"request":    harness.BoundRequest,
	"pagination": harness.BoundPagination,
	"stage":      harness.BoundStage,
	"gate":       harness.BoundGate,
}

// aRowOfKind is the first row whose budget follows kind's knob alone.
func aRowOfKind(t *testing.T, kind string) Scenario {
	t.Helper()
	base := harness.CompressedBounds()
	for _, s := range All() {
		moves := 0
		for k, env := range budgetKnob {
			moved := base.With(env, 3*base.N(env)+7)
			if s.Budget(moved) != s.Budget(base) {
				moves++
				if k != kind {
					moves = 99
				}
			}
		}
		if moves == 1 {
			return s
		}
	}
	t.Fatalf("no row's budget follows the %s budget alone", kind)
	return Scenario{}
}

// aPassingObservation is an observation the row's checker passes (its
// first, by name, in checkers_test.go's table).
func aPassingObservation(t *testing.T, s Scenario) Observation {
	t.Helper()
	c, ok := checkers[checkerName(s.Expect)]
	if !ok {
		t.Fatalf("%s: checker %s is not in the table", s.Name(), checkerName(s.Expect))
	}
	var names []string
	for n := range c.passes {
		names = append(names, n)
	}
	sort.Strings(names)
	o := c.passes[names[0]]
	if o.Spans == nil {
		o.Spans = []evidence.Span{} // read already: the verdict asks no evidence adapter
	}
	return o
}

// budgetTarget is a kind of target and how it is given a declared budget:
// the target, and the knobs of the world it runs in.
type budgetTarget struct {
	name    string
	declare func(t *testing.T, kind string, d time.Duration) (harness.Target, harness.Bounds)
}

// givenKnobs: mcplocal's targets, and a foreign proxy that is passed the
// knobs, declare a budget by the knob the world gives them.
func givenKnobs(target func() harness.Target) func(*testing.T, string, time.Duration) (harness.Target, harness.Bounds) {
	return func(t *testing.T, kind string, d time.Duration) (harness.Target, harness.Bounds) {
		return target(), harness.CompressedBounds().WithD(budgetKnob[kind], d)
	}
}

// inSpec: a foreign proxy declares a budget in its spec's budgets:, in a
// world whose knobs are the harness's own.
func inSpec(cluster bool) func(*testing.T, string, time.Duration) (harness.Target, harness.Bounds) {
	return func(t *testing.T, kind string, d time.Duration) (harness.Target, harness.Bounds) {
		spec, err := harness.ParseForeign([]byte(fmt.Sprintf("name: budgeted\ncommand: [x]\nendpoint: /mcp\nbudgets: {%s: %s}\n", kind, d)))
		if err != nil {
			t.Fatal(err)
		}
		if cluster {
			return harness.NewForeignCluster(spec, 2, nil), harness.CompressedBounds()
		}
		return spec.Target(nil), harness.CompressedBounds()
	}
}

var budgetTargets = []budgetTarget{
	{"inprocess", givenKnobs(func() harness.Target { return &harness.InProcess{} })},
	{"binary", givenKnobs(func() harness.Target { return &harness.Binary{Path: "bin/mcplocal"} })},
	{"container", givenKnobs(func() harness.Target { return &harness.Container{Image: "mcplocal:test"} })},
	{"cluster", givenKnobs(func() harness.Target { return &harness.Cluster{Path: "bin/mcplocal", Replicas: 2} })},
	{"foreign", inSpec(false)},
	{"foreign passing the knobs", givenKnobs(func() harness.Target {
		spec, err := harness.ParseForeign([]byte("name: knobbed\ncommand: [x]\nendpoint: /mcp\npassKnobs: true\n"))
		if err != nil {
			panic(err)
		}
		return spec.Target(nil)
	})},
	{"foreign cluster", inSpec(true)},
}

// Every budget a target declares reaches the verdict, for every budget
// kind and kind of target: a row of that kind, run the way `mcpchaos run`
// runs it (runIn) on a world built by hand, whose answer comes later than
// the declared budget (plus the tolerance), breaks "within budget"; one just
// inside passes. Each budget is declared above and below the harness's own
// knob, so a budget lost on its way (the verdict falling back to the
// harness's knob, or reading another kind's) fails one of the two.
func TestEveryDeclaredBudgetReachesTheVerdict(t *testing.T) {
	const margin = 10 * time.Millisecond
	if len(budgetKnob) != len(harness.BudgetKinds()) {
		t.Errorf("budget kinds %v, this test knows %d", harness.BudgetKinds(), len(budgetKnob))
	}
	for _, kind := range harness.BudgetKinds() {
		if budgetKnob[kind] == "" {
			t.Errorf("budget kind %s: which knob it stands for is not known here", kind)
			continue
		}
		s := aRowOfKind(t, kind)
		ok := aPassingObservation(t, s)
		own := harness.CompressedBounds().D(budgetKnob[kind])
		for _, declared := range []time.Duration{3*own + 500*time.Millisecond, own / 4} {
			for _, bt := range budgetTargets {
				t.Run(fmt.Sprintf("%s/%s/%v", kind, bt.name, declared), func(t *testing.T) {
					target, b := bt.declare(t, kind, declared)
					judge := func(latency time.Duration) Result {
						o := ok
						o.Latency = latency
						row := s
						row.Operation = Operation{Name: s.Operation.Name, Do: func(context.Context, *harness.Env) Observation { return o }}
						return row.runIn(context.Background(), harness.JudgedOn(target, b))
					}
					late := judge(declared + Tolerance + margin)
					if late.Pass || !hasBreach(late, Generic, PromiseBudget) || late.Budget != declared {
						t.Errorf("%s: an answer %v past the declared %s budget %v must break %q (judged on %v): %s",
							s.Name(), margin, kind, declared, PromiseBudget, late.Budget, late.Reason)
					}
					inside := judge(declared + Tolerance - margin)
					if !inside.Pass || inside.Budget != declared {
						t.Errorf("%s: an answer %v inside the declared %s budget %v must pass (judged on %v): %s",
							s.Name(), margin, kind, declared, inside.Budget, inside.Reason)
					}
					if late.BudgetNote != "" {
						t.Errorf("%s: a declared budget is said to be assumed: %s", s.Name(), late.BudgetNote)
					}
				})
			}
		}
	}
}
