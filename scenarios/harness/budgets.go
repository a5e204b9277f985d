package harness

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/mcpchaos/mcpchaos/proxy/knobs"
)

// BudgetDeclarer is implemented by targets whose proxy may leave budgets
// undeclared: UndeclaredBudgets lists the budget kinds (BudgetKinds) whose
// value the harness assumes, from its own knobs, because the target neither
// declared it nor is given the knobs.
type BudgetDeclarer interface {
	UndeclaredBudgets() []string
}

// AssumedBudgets lists the budget kinds t left undeclared on which budget
// (a scenario's, over knobs kv) depends: nil when every budget it reads was
// declared, or t declares all (mcplocal reads the knobs it is given).
func AssumedBudgets(t Target, kv knobs.Values, budget func(knobs.Values) time.Duration) []string {
	d, ok := t.(BudgetDeclarer)
	if !ok || budget == nil {
		return nil
	}
	var out []string
	base := budget(kv)
	for _, k := range d.UndeclaredBudgets() {
		at, ok := budgetKinds[k]
		if !ok {
			continue
		}
		moved := kv
		p := at(&moved)
		*p = 3**p + 7*time.Millisecond // any other value: does the budget follow it?
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
// undeclared and what the harness assumes for each (the knobs kv hold): ""
// when it declared them all.
func AssumedBudgetsText(t Target, kv knobs.Values) string {
	d, ok := t.(BudgetDeclarer)
	if !ok {
		return ""
	}
	var parts []string
	for _, k := range d.UndeclaredBudgets() {
		if at, ok := budgetKinds[k]; ok {
			parts = append(parts, fmt.Sprintf("%s (assumed %v)", k, *at(&kv)))
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

// BudgetsOf is kv with the budgets target declares in place of the
// harness's: what a scenario's budget and a fault timed against it read.
func BudgetsOf(target Target, kv knobs.Values) knobs.Values {
	if b, ok := target.(Budgeter); ok {
		return b.Budgets(kv)
	}
	return kv
}

// DelayIn is how long a ToolSlow's tool takes under the budgets kv (as
// BudgetsOf gives them): Delay, or with PastBudget at least twice the
// request budget and the tolerance, so the tool outlasts the budget a
// target declares, however long.
func (f ToolSlow) DelayIn(kv knobs.Values) time.Duration {
	if past := 2*kv.RequestDeadline + Tolerance; f.PastBudget && f.Delay < past {
		return past
	}
	return f.Delay
}
