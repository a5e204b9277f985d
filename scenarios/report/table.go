package report

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/mcpchaos/mcpchaos/scenarios/catalogue"
)

// WriteTable writes the run as a plain-text table, one row per scenario in run
// order: the scenario's whole name (fault × operation, its pipeline and
// fallback, so no two rows read alike), the fault's parameters, the budget,
// the observed latency ("<1ms" below a millisecond), the verdict, the trace
// code, and every promise broken, each with its tier (BrokenText).
func WriteTable(w io.Writer, run Run) error {
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "SCENARIO\tPARAMS\tBUDGET\tOBSERVED\tVERDICT\tTRACE\tBROKEN")
	for _, r := range run.Results {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", scenarioName(r.Scenario), dashed(faultParams(r.Scenario)),
			BudgetText(r, run.Tolerance), observed(r), verdictOf(r), dashed(r.Trace), dashed(BrokenText(r)))
	}
	return tw.Flush()
}

// BrokenText names every promise a result broke, "tier:promise" joined by
// ", " (e.g. "mcp:within budget, mcp:tool failure as isError"); "" when
// it broke none.
func BrokenText(r catalogue.Result) string {
	var parts []string
	for _, b := range r.Breaches {
		parts = append(parts, string(b.Tier)+":"+b.Promise)
	}
	return strings.Join(parts, ", ")
}

// BudgetText is a result's budget as a person reads it: "-" for a scenario
// that did not run; "≤" and the tolerance for a budget of zero (the operation
// may spend no time of its own, only the tolerance: "0s" would read as a bug);
// otherwise the budget.
func BudgetText(r catalogue.Result, tolerance time.Duration) string {
	switch {
	case r.NotApplicable != "":
		return "-"
	case r.Budget <= 0:
		return "≤" + tolerance.String()
	}
	return r.Budget.String()
}

func dashed(s string) string {
	if strings.TrimSpace(s) == "" {
		return "-"
	}
	return s
}
