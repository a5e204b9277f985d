package report

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/mcpchaos/mcpchaos/scenarios/catalogue"
	"github.com/mcpchaos/mcpchaos/scenarios/harness"
)

// Two scenarios that differ only by their pipeline (or fallback) must not
// print as two identical rows: the table names each scenario whole.
func TestTableNamesEveryScenarioWhole(t *testing.T) {
	staged := func(stages ...string) catalogue.Scenario {
		s := catalogue.Scenario{Fault: harness.None{}, Operation: op("paginating tools/call")}
		// The stages are the catalogue's own: the report knows no proxy's types.
		for _, st := range stages {
			found := false
			for _, x := range catalogue.All() {
				for _, p := range x.Env.Pipeline {
					if p.Name == st && !found {
						s.Env.Pipeline, found = append(s.Env.Pipeline, p), true
					}
				}
			}
			if !found {
				t.Fatalf("no catalogue scenario runs the stage %q", st)
			}
		}
		return s
	}
	fallback := staged("paginate")
	fallback.Env.Fallback = true
	run := Run{Tolerance: 300 * time.Millisecond, Results: []catalogue.Result{
		{Scenario: staged(), Budget: time.Second, Pass: true},
		{Scenario: staged("paginate"), Budget: time.Second, Pass: true},
		{Scenario: staged("summarize-tree"), Budget: time.Second, Pass: true},
		{Scenario: fallback, Budget: time.Second, Pass: true},
	}}
	var b bytes.Buffer
	if err := WriteTable(&b, run); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimRight(b.String(), "\n"), "\n")
	if len(lines) != 1+len(run.Results) {
		t.Fatalf("table has %d lines, want a header and %d rows:\n%s", len(lines), len(run.Results), b.String())
	}
	seen := map[string]bool{}
	for i, l := range lines[1:] {
		name := run.Results[i].Scenario.Name()
		if !strings.HasSuffix(l, "  "+name) {
			t.Errorf("row %d does not end with the scenario's whole name %q:\n%s", i, name, l)
		}
		row := strings.Join(strings.Fields(l), " ")
		if seen[row] {
			t.Errorf("two rows read the same: %q", row)
		}
		seen[row] = true
	}
}

// A budget of zero is not a budget of "0s": it means no time of its own,
// only the tolerance; a scenario that did not run has no budget at all; an
// answer faster than the millisecond the table rounds to is "<1ms", not 0s.
func TestTableShowsNoZeroBudget(t *testing.T) {
	s := catalogue.Scenario{Fault: harness.None{}, Operation: op("small tools/call")}
	run := Run{Tolerance: 300 * time.Millisecond, Results: []catalogue.Result{
		{Scenario: s, Budget: 0, Pass: true, Observation: catalogue.Observation{Latency: 4 * time.Millisecond}},
		{Scenario: s, NotApplicable: "target inprocess lacks kill"},
		{Scenario: s, Budget: 1500 * time.Millisecond, Pass: true, Observation: catalogue.Observation{Latency: 300 * time.Microsecond}},
	}}
	var b bytes.Buffer
	if err := WriteTable(&b, run); err != nil {
		t.Fatal(err)
	}
	for _, f := range strings.Fields(b.String()) {
		if f == "0s" {
			t.Fatalf("the table shows 0s (a budget, or a latency under 1ms):\n%s", b.String())
		}
	}
	for _, want := range []string{"≤300ms", "1.5s", "4ms", "<1ms"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, b.String())
		}
	}
	if got := BudgetText(run.Results[0], run.Tolerance); got != "≤300ms" {
		t.Errorf("BudgetText(0) = %q", got)
	}
	if got := BudgetText(run.Results[1], run.Tolerance); got != "-" {
		t.Errorf("BudgetText(not applicable) = %q", got)
	}
}

// A row that broke several promises shows every one, with its tier, in the
// table, the JUnit failure and the HTML, not only the first.
func TestReportsShowEveryPromiseBroken(t *testing.T) {
	s := catalogue.All()
	var bh catalogue.Scenario
	for _, x := range s {
		if x.Name() == "blackhole × small tools/call" {
			bh = x
		}
	}
	late := fmt.Errorf("calling: %w", &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "upstream timed out"})
	r := bh.JudgeOn(nil, harness.CompressedBounds(), catalogue.Observation{Latency: 3 * time.Minute, Err: late})
	if len(r.Breaches) < 2 {
		t.Fatalf("want 2 breaches (late, a JSON-RPC error for mcplocal), got %s", r.Reason)
	}
	run := Run{Tolerance: catalogue.Tolerance, Results: []catalogue.Result{r}}
	var table, junit, page bytes.Buffer
	if err := WriteTable(&table, run); err != nil {
		t.Fatal(err)
	}
	if err := WriteJUnit(&junit, run); err != nil {
		t.Fatal(err)
	}
	if err := WriteHTML(&page, run); err != nil {
		t.Fatal(err)
	}
	if recs := Records(run); len(recs) != 1 || len(recs[0].Broken) != len(r.Breaches) {
		t.Errorf("the JSON record names %v, want every breach of %s", recs[0].Broken, r.Reason)
	}
	for _, b := range r.Breaches {
		short := string(b.Tier) + ":" + b.Promise
		if !strings.Contains(table.String(), short) {
			t.Errorf("the table lacks %q:\n%s", short, table.String())
		}
		if !strings.Contains(junit.String(), b.Detail[:20]) {
			t.Errorf("the JUnit failure lacks %q:\n%s", b.Detail, junit.String())
		}
		if !strings.Contains(page.String(), "broken ["+string(b.Tier)+"] "+b.Promise) {
			t.Errorf("the HTML lacks breach %q", b.Error())
		}
	}
}
