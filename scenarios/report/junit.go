package report

import (
	"encoding/xml"
	"fmt"
	"io"
	"strings"

	"github.com/mcpchaos/mcpchaos/scenarios/catalogue"
)

// The JUnit XML shapes: the common subset Jenkins, GitLab and GitHub readers
// all accept.

type junitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Name     string       `xml:"name,attr"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Errors   int          `xml:"errors,attr"`
	Skipped  int          `xml:"skipped,attr"`
	Time     string       `xml:"time,attr"`
	Suites   []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name       string          `xml:"name,attr"`
	Tests      int             `xml:"tests,attr"`
	Failures   int             `xml:"failures,attr"`
	Errors     int             `xml:"errors,attr"`
	Skipped    int             `xml:"skipped,attr"`
	Time       string          `xml:"time,attr"`
	Timestamp  string          `xml:"timestamp,attr,omitempty"`
	Properties []junitProperty `xml:"properties>property"`
	Cases      []junitCase     `xml:"testcase"`
}

type junitProperty struct {
	Name  string `xml:"name,attr"`
	Value string `xml:"value,attr"`
}

type junitCase struct {
	Name      string        `xml:"name,attr"`
	Classname string        `xml:"classname,attr"`
	Time      string        `xml:"time,attr"`
	Failure   *junitFailure `xml:"failure,omitempty"`
	Skipped   *junitSkipped `xml:"skipped,omitempty"`
	SystemOut *junitText    `xml:"system-out,omitempty"`
}

// junitText is element text kept readable (newlines and all) as CDATA.
type junitText struct {
	Text string `xml:",cdata"`
}

type junitFailure struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr"`
	Text    string `xml:",cdata"`
}

type junitSkipped struct {
	Message string `xml:"message,attr"`
}

// WriteJUnit writes run as JUnit XML: one testsuite "mcpchaos" with one
// testcase per scenario, in run order. A failed scenario carries its reason
// in <failure>; a not-applicable one is <skipped> with the reason it could
// not run, never counted as passed. Each testcase's <system-out> names its
// trace code, budget (and whether it was assumed) and observed latency; a
// failed one's also the command that replays it alone and the tail of the
// proxy's own output around it.
func WriteJUnit(w io.Writer, run Run) error {
	c := tally(run.Results)
	suite := junitSuite{
		Name:     "mcpchaos",
		Tests:    c.Total,
		Failures: c.Failed,
		Skipped:  c.NotApplicable,
		Time:     secs(run.Duration),
		Properties: []junitProperty{
			{Name: "seed", Value: fmt.Sprint(run.Seed)},
			{Name: "target", Value: run.Target},
			{Name: "tolerance", Value: run.Tolerance.String()},
			{Name: "replay", Value: ReplayCommand(run)},
		},
	}
	if !run.Started.IsZero() {
		suite.Timestamp = run.Started.UTC().Format("2006-01-02T15:04:05")
	}
	for _, r := range run.Results {
		suite.Cases = append(suite.Cases, junitCaseOf(run, r))
	}
	doc := junitSuites{Name: "mcpchaos", Tests: suite.Tests, Failures: suite.Failures,
		Skipped: suite.Skipped, Time: suite.Time, Suites: []junitSuite{suite}}

	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return err
	}
	if err := enc.Close(); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}

func junitCaseOf(run Run, r catalogue.Result) junitCase {
	s := r.Scenario
	tc := junitCase{
		Name:      scenarioName(s),
		Classname: dash(s.Promise),
		Time:      secs(r.Latency),
	}
	if s.Promise == "" {
		tc.Classname = faultName(s)
	}
	switch verdictOf(r) {
	case verdictNA:
		tc.Skipped = &junitSkipped{Message: "not applicable: " + r.NotApplicable}
	case verdictFail:
		tc.Failure = &junitFailure{Message: oneLine(r.Reason), Type: "promise broken", Text: xmlSafe(failureText(r))}
	}
	var out strings.Builder
	fmt.Fprintf(&out, "fault: %s %s\n", faultName(s), faultParams(s))
	fmt.Fprintf(&out, "operation: %s\n", s.Operation.Name)
	fmt.Fprintf(&out, "trace: %s\n", dash(r.Trace))
	fmt.Fprintf(&out, "budget: %s\n", BudgetText(r, run.Tolerance))
	if r.BudgetNote != "" {
		fmt.Fprintf(&out, "%s\n", r.BudgetNote)
	}
	fmt.Fprintf(&out, "observed: %s\n", observed(r))
	fmt.Fprintf(&out, "evidence spans: %d\n", len(r.Spans))
	if verdictOf(r) == verdictFail {
		fmt.Fprintf(&out, "replay: %s\n", RowReplay(run, r))
		if r.Log != "" {
			fmt.Fprintf(&out, "the proxy's own output around it:\n%s\n", tailOf(r.Log, logTail))
		}
	}
	tc.SystemOut = &junitText{Text: xmlSafe(out.String())}
	return tc
}

// xmlSafe replaces what XML 1.0 cannot carry at all (even in CDATA) with
// U+FFFD; attribute values need no such care, encoding/xml escapes them.
func xmlSafe(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r == '\t' || r == '\n' || r == '\r',
			r >= 0x20 && r <= 0xD7FF, r >= 0xE000 && r <= 0xFFFD, r >= 0x10000 && r <= 0x10FFFF:
			return r
		}
		return '\uFFFD'
	}, s)
}
