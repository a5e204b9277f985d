package harness

import (
	"slices"
	"strings"
	"testing"
	"time"
)

func mustParseForeign(t *testing.T, doc string) *ForeignSpec {
	t.Helper()
	s, err := ParseForeign([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// A budget that reads a kind the target left undeclared rests on the
// harness's assumption, and says which; one that reads only declared kinds,
// or a target that declares all (mcplocal, a spec passing the knobs), rests
// on nothing assumed.
func TestAssumedBudgetsNamesTheUndeclaredKindsABudgetReads(t *testing.T) {
	f := mustParseForeign(t, "name: half\ncommand: [x]\nbudgets: {request: 7s}").Target(nil)
	b := CompressedBounds()
	request := func(b Bounds) time.Duration { return b.D(BoundRequest) }
	gate := func(b Bounds) time.Duration { return b.D(BoundGate) }
	llm := func(b Bounds) time.Duration { return b.D(BoundStage) + b.D(BoundPagination) }
	if got := AssumedBudgets(f, b, request); got != nil {
		t.Errorf("a budget on the declared request kind assumes %v", got)
	}
	if got := AssumedBudgets(f, b, gate); !slices.Equal(got, []string{"gate"}) {
		t.Errorf("a budget on the gate: %v, want [gate]", got)
	}
	if got := AssumedBudgets(f, b, llm); !slices.Equal(got, []string{"pagination", "stage"}) {
		t.Errorf("a budget on stage and pagination: %v, want them sorted", got)
	}
	if got := AssumedBudgets(f, b, nil); got != nil {
		t.Errorf("no budget assumes %v", got)
	}
	if got := AssumedBudgets(&InProcess{}, b, gate); got != nil {
		t.Errorf("mcplocal assumes %v", got)
	}
	passes := mustParseForeign(t, "name: knobs\ncommand: [x]\npassKnobs: true").Target(nil)
	if got := AssumedBudgets(passes, b, gate); got != nil {
		t.Errorf("a spec passing the knobs assumes %v", got)
	}
	// Whatever value the bound holds, 0 or a small one, moving it is seen.
	for _, n := range []int64{0, 7} {
		if got := AssumedBudgets(f, b.With(BoundGate, n), gate); !slices.Equal(got, []string{"gate"}) {
			t.Errorf("a gate bound of %d: %v, want [gate]", n, got)
		}
	}
}

func TestUndeclaredBudgetsAreTheKindsTheSpecLeavesOut(t *testing.T) {
	f := mustParseForeign(t, "name: half\ncommand: [x]\nbudgets: {request: 7s, gate: 1s}").Target(nil).(*Foreign)
	if got := f.UndeclaredBudgets(); !slices.Equal(got, []string{"pagination", "stage"}) {
		t.Errorf("undeclared %v, want [pagination stage]", got)
	}
	all := mustParseForeign(t, "name: all\ncommand: [x]\nbudgets: {request: 1s, gate: 1s, stage: 1s, pagination: 1s}").Target(nil).(*Foreign)
	if got := all.UndeclaredBudgets(); len(got) != 0 {
		t.Errorf("a spec declaring every kind leaves %v", got)
	}
	live, _ := ParseLive("http://127.0.0.1:1/mcp")
	if got := live.UndeclaredBudgets(); !slices.Equal(got, BudgetKinds()) {
		t.Errorf("a live proxy declares some budgets: undeclared %v", got)
	}
}

func TestAssumedBudgetsTextSaysWhatIsAssumed(t *testing.T) {
	b := CompressedBounds().WithD(BoundGate, 1500*time.Millisecond)
	f := mustParseForeign(t, "name: half\ncommand: [x]\nbudgets: {request: 7s, stage: 1s, pagination: 1s}").Target(nil)
	got := AssumedBudgetsText(f, b)
	if !strings.HasPrefix(got, "not declared by target foreign:half: gate (assumed 1.5s)") || strings.Contains(got, "request") {
		t.Errorf("header %q", got)
	}
	if got := AssumedBudgetsText(&InProcess{}, b); got != "" {
		t.Errorf("mcplocal: %q", got)
	}
	all := mustParseForeign(t, "name: all\ncommand: [x]\nbudgets: {request: 1s, gate: 1s, stage: 1s, pagination: 1s}").Target(nil)
	if got := AssumedBudgetsText(all, b); got != "" {
		t.Errorf("a spec declaring every kind: %q", got)
	}
}

// A slow tool past the budget outlasts twice the request budget and the
// tolerance, whatever the budget; a longer delay, or one not tied to the
// budget, is kept.
func TestDelayInOutlastsTheRequestBudget(t *testing.T) {
	b := CompressedBounds().WithD(BoundRequest, time.Second)
	past := 2*time.Second + Tolerance
	for _, c := range []struct {
		f    ToolSlow
		want time.Duration
	}{
		{ToolSlow{Delay: time.Second, PastBudget: true}, past},
		{ToolSlow{Delay: 5 * time.Second, PastBudget: true}, 5 * time.Second},
		{ToolSlow{Delay: time.Second}, time.Second},
	} {
		if got := c.f.DelayIn(b); got != c.want {
			t.Errorf("%+v: %v, want %v", c.f, got, c.want)
		}
	}
	if got := (ToolSlow{PastBudget: true}).Params(); !strings.Contains(got, "twice the request budget") {
		t.Errorf("params %q", got)
	}
}

// A target's declared budgets replace the harness's bounds; mcplocal reads
// the bounds themselves.
func TestBudgetsOfTakeTheTargetsDeclaredBudgets(t *testing.T) {
	b := CompressedBounds()
	f := mustParseForeign(t, "name: d\ncommand: [x]\nbudgets: {request: 7s}").Target(nil)
	if got := BudgetsOf(f, b); got.D(BoundRequest) != 7*time.Second || got.D(BoundGate) != b.D(BoundGate) {
		t.Errorf("declared: request %v gate %v", got.D(BoundRequest), got.D(BoundGate))
	}
	if got := BudgetsOf(&InProcess{}, b); got.D(BoundRequest) != b.D(BoundRequest) {
		t.Errorf("mcplocal: request %v", got.D(BoundRequest))
	}
	fc := NewForeignCluster(mustParseForeign(t, "name: d\ncommand: [x]\nbudgets: {gate: 3s}\ntoolName: '{{.Tool}}'\nstateless: true"), 2, nil)
	if got := BudgetsOf(fc, b); got.D(BoundGate) != 3*time.Second {
		t.Errorf("a foreign cluster: gate %v", got.D(BoundGate))
	}
	if ToolName(fc, "docmost", "search") != "search" || PromptName(fc, "docmost", "p") != "p" || !IsStateless(fc) || fc.Protocol() != "" ||
		Claims(fc, MethodPing) || fc.FrontsEverything() || len(fc.UndeclaredBudgets()) != 3 || fc.Has(CapKill) {
		t.Error("a foreign cluster does not adapt as its spec says")
	}
}
