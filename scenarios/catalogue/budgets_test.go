package catalogue

import (
	"strings"
	"testing"
	"time"

	"github.com/mcpchaos/mcpchaos/scenarios/harness"
)

func foreignTarget(t *testing.T, doc string) harness.Target {
	t.Helper()
	spec, err := harness.ParseForeign([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	return spec.Target(nil)
}

// A budget the target did not declare is said to be assumed, on every row
// whose verdict rests on it; a row that needs the proxy to cut a call at
// that budget is not applicable, with that reason. A declared budget, or
// knobs the proxy is given, is no assumption.
func TestAnUndeclaredBudgetIsAssumedAndSaysSo(t *testing.T) {
	kv := harness.DefaultBounds()
	silent := foreignTarget(t, "name: silent\ncommand: [x]\nendpoint: /mcp\n")
	declared := foreignTarget(t, "name: declared\ncommand: [x]\nendpoint: /mcp\nbudgets: {request: 2s}\n")
	given := foreignTarget(t, "name: given\ncommand: [x]\npassKnobs: true\n")

	slow := byName(t, "tool-slow × paginating tools/call")
	if why := slow.NotApplicable(silent); !strings.Contains(why, "cut the call at its request budget") || !strings.Contains(why, "foreign:silent does not declare") {
		t.Errorf("a row that needs a cut at an undeclared budget: want N/A saying so, got %q", why)
	}
	for _, tg := range []harness.Target{declared, given, &harness.InProcess{}} {
		if why := slow.NotApplicable(tg); why != "" {
			t.Errorf("%s declares its request budget, yet: %s", tg.Name(), why)
		}
	}
	if why := byName(t, "down × small tools/call").NotApplicable(silent); why != "" {
		t.Errorf("a row that needs no cut was made N/A: %s", why)
	}

	base := byName(t, "none × small tools/call")
	late := Observation{Latency: kv.D(harness.BoundRequest) + Tolerance + time.Second}
	r := base.JudgeOn(silent, kv, late)
	want := "budget assumed: " + kv.D(harness.BoundRequest).String() + ", not declared (request)"
	if r.BudgetNote != want || !strings.Contains(r.Reason, want) {
		t.Errorf("a verdict on an undeclared budget: want the note %q on the row and in its breach, got %q / %s", want, r.BudgetNote, r.Reason)
	}
	for _, tg := range []harness.Target{declared, given, nil} {
		if r := base.JudgeOn(tg, kv, late); r.BudgetNote != "" {
			t.Errorf("a declared budget noted as assumed: %s", r.BudgetNote)
		}
	}
	// A budget that reads no undeclared kind is no assumption.
	if n := harness.AssumedBudgets(silent, kv, func(harness.Bounds) time.Duration { return 0 }); n != nil {
		t.Errorf("a constant budget assumed %v", n)
	}
}

// An N/A reason speaks of the target in front of it: on a foreign target,
// never of mcplocal's insides (an option of proxy.New, a binary's SQLite
// file).
func TestNotApplicableReasonsSpeakOfTheTarget(t *testing.T) {
	plain := foreignTarget(t, "name: plain\ncommand: [x]\nendpoint: /mcp\n")
	for _, s := range All() {
		why := s.NotApplicable(plain)
		for _, insider := range []string{"proxy.New", "SQLite", "WAL", "in process"} {
			if strings.Contains(why, insider) {
				t.Errorf("%s: the reason speaks of mcplocal's %s to a foreign target: %s", s.Name(), insider, why)
			}
		}
	}
}
