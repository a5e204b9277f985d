package harness

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// BudgetDeclarer is implemented by targets whose proxy may leave budgets
// undeclared: UndeclaredBudgets lists the budget kinds (BudgetKinds) whose
// value the harness assumes, from its own knobs, because the target neither
// declared it nor is given the knobs.
type BudgetDeclarer interface {
	UndeclaredBudgets() []string
}

// AssumedBudgets lists the budget kinds t left undeclared on which budget
// (a scenario's, over the bounds b) depends: nil when every budget it reads
// was declared, or t declares all (mcplocal reads the knobs it is given).
func AssumedBudgets(t Target, b Bounds, budget func(Bounds) time.Duration) []string {
	d, ok := t.(BudgetDeclarer)
	if !ok || budget == nil {
		return nil
	}
	var out []string
	base := budget(b)
	for _, k := range d.UndeclaredBudgets() {
		name, ok := budgetKinds[k]
		if !ok {
			continue
		}
		moved := b.With(name, 3*b.N(name)+7) // any other value: does the budget follow it?
		if budget(moved) != base {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out
}

var _ BudgetDeclarer = (*Foreign)(nil)

// UndeclaredBudgets implements BudgetDeclarer: the kinds the spec's budgets:
// does not give; none when it passes the knobs (the proxy reads them).
func (f *Foreign) UndeclaredBudgets() []string {
	if f.Spec.PassKnobs {
		return nil
	}
	var out []string
	for _, k := range BudgetKinds() {
		if _, ok := f.Spec.budgets[k]; !ok {
			out = append(out, k)
		}
	}
	return out
}

// AssumedBudgetsText says, for a run's header, which budgets t left
// undeclared and what the harness assumes for each (the bounds b hold): ""
// when it declared them all.
func AssumedBudgetsText(t Target, b Bounds) string {
	d, ok := t.(BudgetDeclarer)
	if !ok {
		return ""
	}
	var parts []string
	for _, k := range d.UndeclaredBudgets() {
		if name, ok := budgetKinds[k]; ok {
			parts = append(parts, fmt.Sprintf("%s (assumed %v)", k, b.D(name)))
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return "not declared by target " + t.Name() + ": " + strings.Join(parts, ", ") +
		"; a row whose verdict rests on one says so, and a row that needs the proxy to cut a call at one is N/A"
}

var _ BudgetDeclarer = (*Live)(nil)

// UndeclaredBudgets implements BudgetDeclarer: a proxy already running,
// named by its URL alone, declares none.
func (l *Live) UndeclaredBudgets() []string { return BudgetKinds() }

// BudgetsOf is b with the budgets target declares in place of the
// harness's: what a scenario's budget and a fault timed against it read.
func BudgetsOf(target Target, b Bounds) Bounds {
	if d, ok := target.(Budgeter); ok {
		return d.Budgets(b)
	}
	return b
}

// DelayIn is how long a ToolSlow's tool takes under the bounds b (as
// BudgetsOf gives them): Delay, or with PastBudget at least twice the
// request budget and the tolerance, so the tool outlasts the budget a
// target declares, however long.
func (f ToolSlow) DelayIn(b Bounds) time.Duration {
	if past := 2*b.D(BoundRequest) + Tolerance; f.PastBudget && f.Delay < past {
		return past
	}
	return f.Delay
}
