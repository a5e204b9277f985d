// Package report writes the results of one `mcpchaos run` for people and for
// CI: JUnit XML (one testcase per scenario) and a single self-contained HTML
// page with a summary table and, per scenario, its request waterfall drawn
// as an inline SVG from the answer's audit rows.
//
// Both writers are pure: the same Run always gives the same bytes (times are
// formatted in UTC with fixed precision, nothing depends on map order or the
// clock), so reports can be diffed between runs.
package report

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/mcpchaos/mcpchaos/scenarios/catalogue"
)

// Run is one run of the catalogue, as the report shows it.
type Run struct {
	Seed     uint64
	Target   string
	Started  time.Time
	Duration time.Duration
	// Tolerance is what a bounded answer may take beyond its budget.
	Tolerance time.Duration
	// Results are in run order.
	Results []catalogue.Result
	// Replay, if set, is the command that replays one result alone (the
	// run's selection focused on it); nil: the seed and target, focused.
	Replay func(catalogue.Result) string
	// BudgetsAssumed, when the target left budgets undeclared, says which
	// and what the run assumed instead, for the report's header.
	BudgetsAssumed string
	// NoAudit, when the target offers no audit rows (no waterfalls), says
	// so once, for the header, instead of on every row.
	NoAudit string
}

// File names Write creates inside its directory.
const (
	JUnitFile = "junit.xml"
	HTMLFile  = "report.html"
)

// Write writes dir/junit.xml and dir/report.html, creating dir if needed.
// Each file is rendered in full before it is written, so a rendering error
// leaves no half-written file behind.
func Write(dir string, run Run) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("report: %w", err)
	}
	for _, f := range []struct {
		name  string
		write func(*bytes.Buffer, Run) error
	}{
		{JUnitFile, func(b *bytes.Buffer, r Run) error { return WriteJUnit(b, r) }},
		{HTMLFile, func(b *bytes.Buffer, r Run) error { return WriteHTML(b, r) }},
	} {
		var b bytes.Buffer
		if err := f.write(&b, run); err != nil {
			return fmt.Errorf("report: %s: %w", f.name, err)
		}
		if err := os.WriteFile(filepath.Join(dir, f.name), b.Bytes(), 0o644); err != nil {
			return fmt.Errorf("report: %w", err)
		}
	}
	return nil
}

// ReplayCommand is the command line that runs the same scenarios in the same
// order against the same target.
func ReplayCommand(run Run) string {
	return fmt.Sprintf("mcpchaos run --seed %d --target %s", run.Seed, shellQuote(run.Target))
}

// counts tallies a run's verdicts.
type counts struct{ Total, Passed, Failed, NotApplicable int }

func tally(results []catalogue.Result) counts {
	c := counts{Total: len(results)}
	for _, r := range results {
		switch verdictOf(r) {
		case verdictNA:
			c.NotApplicable++
		case verdictFail:
			c.Failed++
		default:
			c.Passed++
		}
	}
	return c
}

type verdict string

const (
	verdictPass verdict = "PASS"
	verdictFail verdict = "FAIL"
	verdictNA   verdict = "N/A"
)

// verdictOf: a not-applicable result is neither passed nor failed, whatever
// its Pass field says.
func verdictOf(r catalogue.Result) verdict {
	switch {
	case r.NotApplicable != "":
		return verdictNA
	case r.Pass:
		return verdictPass
	}
	return verdictFail
}

// Scenario fields that tolerate a hand-made Scenario with no Fault.

func faultName(s catalogue.Scenario) string {
	if s.Fault == nil {
		return "-"
	}
	return s.Fault.Name()
}

func faultParams(s catalogue.Scenario) string {
	if s.Fault == nil {
		return ""
	}
	return s.Fault.Params()
}

func scenarioName(s catalogue.Scenario) string {
	if s.Fault == nil {
		return "? × " + s.Operation.Name
	}
	return s.Name()
}

// failureText is the reason with everything else the observation says about
// what went wrong.
func failureText(r catalogue.Result) string {
	var b strings.Builder
	b.WriteString(r.Reason)
	if r.Err != nil {
		fmt.Fprintf(&b, "\nerror: %v", r.Err)
	}
	for _, x := range r.Broken {
		fmt.Fprintf(&b, "\nbroken: %s", x)
	}
	return b.String()
}

// Formatting: fixed precision, never locale or clock dependent.

// ms formats d in milliseconds with one decimal, e.g. "12.3 ms"; a second or
// more is shown in seconds with three decimals.
func ms(d time.Duration) string {
	if d >= time.Second || d <= -time.Second {
		return strconv.FormatFloat(d.Seconds(), 'f', 3, 64) + " s"
	}
	return strconv.FormatFloat(float64(d)/float64(time.Millisecond), 'f', 1, 64) + " ms"
}

// secs formats d as JUnit wants it: seconds with three decimals.
func secs(d time.Duration) string { return strconv.FormatFloat(max(d, 0).Seconds(), 'f', 3, 64) }

// observed is an observation's latency rounded to the millisecond.
// observed is a result's latency as the reports print it: "-" for a scenario
// that did not run, "<1ms" below the millisecond it is rounded to (never 0s).
func observed(r catalogue.Result) string {
	switch {
	case r.NotApplicable != "":
		return "-"
	case r.Latency < time.Millisecond:
		return "<1ms"
	}
	return r.Latency.Round(time.Millisecond).String()
}

func stamp(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.UTC().Format("2006-01-02 15:04:05 UTC")
}

func dash(s string) string {
	if strings.TrimSpace(s) == "" {
		return "-"
	}
	return s
}

// oneLine collapses every whitespace run, newlines included, to one space.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// truncate cuts s to n runes, ending in "…" when cut.
func truncate(s string, n int) string {
	if n <= 0 {
		return ""
	}
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}

// shellQuote quotes s for a POSIX shell when it needs it.
func shellQuote(s string) string {
	if s == "" {
		return "''"
	}
	safe := true
	for _, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.ContainsRune("-_./:=@%+,", c)) {
			safe = false
			break
		}
	}
	if safe {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
