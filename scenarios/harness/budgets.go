package harness

import (
	"slices"
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
