package report

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/mcpchaos/mcpchaos/scenarios/catalogue"
)

// WriteTable writes the run as a plain-text table no wider than Width: the
// failing rows first, each followed by the promises it broke, each with its
// tier (BrokenText); then the passing rows; then the rows that did not
// apply, one line per reason with their count. Each row gives the verdict,
// the budget ("*" when the target did not declare it), the observed latency
// ("<1ms" below a millisecond), the trace code and the scenario's whole
// name (fault × operation, its pipeline and fallback, so no two rows read
// alike). Details (parameters, breaches' texts) go to the report.
func WriteTable(w io.Writer, run Run) error {
	fails, passes, na := ordered(run.Results)
	var b strings.Builder
	tw := tabwriter.NewWriter(&b, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "VERDICT\tBUDGET\tOBSERVED\tTRACE\tSCENARIO")
	assumed := false
	for _, x := range append(fails, passes...) {
		budget := BudgetText(x.Result, run.Tolerance)
		if x.BudgetNote != "" {
			budget += "*"
			assumed = true
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", verdictOf(x.Result), budget, observed(x.Result), dashed(x.Trace), scenarioName(x.Scenario))
		if bt := BrokenText(x.Result); bt != "" {
			fmt.Fprintf(tw, "\t\t\t\t  broke %s\n", bt)
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, g := range na {
		fmt.Fprintf(&b, "N/A ×%d  %s\n", len(g.Rows), oneLine(g.Reason))
	}
	if assumed {
		fmt.Fprintln(&b, "* budget assumed, not declared by the target (budgets: in its spec)")
	}
	for _, l := range strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n") {
		if _, err := fmt.Fprintln(w, fit(strings.TrimRight(l, " "))); err != nil {
			return err
		}
	}
	return nil
}

// WriteFailures writes, per failing row, every breach (cut to Width), the
// command that replays that row alone, and the last lines of the proxy's own
// output around it; then the summary per promise tier.
func WriteFailures(w io.Writer, run Run) error {
	fails, _, _ := ordered(run.Results)
	var b strings.Builder
	for _, x := range fails {
		fmt.Fprintf(&b, "%s\n", fit("FAIL "+scenarioName(x.Scenario)))
		for _, br := range x.Breaches {
			fmt.Fprintf(&b, "%s\n", fit("  "+oneLine(br.Error())))
		}
		if len(x.Breaches) == 0 && x.Reason != "" {
			fmt.Fprintf(&b, "%s\n", fit("  "+oneLine(x.Reason)))
		}
		fmt.Fprintf(&b, "  replay: %s\n", RowReplay(run, x.Result))
		if x.Log != "" {
			lines := strings.Split(strings.TrimRight(x.Log, "\n"), "\n")
			if len(lines) > logLines {
				lines = lines[len(lines)-logLines:]
			}
			fmt.Fprintln(&b, "  proxy log (last lines; the report keeps more):")
			for _, l := range lines {
				fmt.Fprintf(&b, "%s\n", fit("    "+l))
			}
		}
	}
	for _, l := range TierSummary(run) {
		fmt.Fprintf(&b, "%s\n", fit(l))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// logLines is how many lines of a failing row's proxy log the CLI shows.
const logLines = 6

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
