package report

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpchaos/mcpchaos/scenarios/catalogue"
	"github.com/mcpchaos/mcpchaos/scenarios/evidence"
	"github.com/mcpchaos/mcpchaos/scenarios/harness"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden from the renderers as they are")

// edgeRun is a run of shapes the renderers must survive (TestEdgeCasesRender): spans of zero
// length, a span its own parent, a parent cycle, an orphan of an unknown
// status, a target with a space in it, a reason with bytes XML cannot carry.
func edgeRun() Run {
	zero := []evidence.Span{{ID: "a", Start: t0}, {ID: "b", Parent: "a", Depth: 1, Start: t0}, {ID: "c", Parent: "c", Start: t0},
		{ID: "d", Parent: "e", Start: t0}, {ID: "e", Parent: "d", Depth: 1, Start: t0}, {ID: "f", Parent: "gone", Orphan: true, Start: t0, Status: "weird"}}
	return Run{Seed: 1, Target: "binary:/tmp/my proxy", Results: []catalogue.Result{
		{Scenario: catalogue.Scenario{Operation: op("x")}, Pass: true, Observation: catalogue.Observation{Trace: "AAAAAAAA", Spans: zero}},
		{Scenario: catalogue.Scenario{Operation: op("y")}, Pass: true, Observation: catalogue.Observation{Trace: "BBBBBBBB"}},
		{Scenario: catalogue.Scenario{Operation: op("z")}, Reason: "bad \x00 bytes \xff and ]]> end", Observation: catalogue.Observation{Err: errors.New("]]><x>")}},
	}}
}

// budgetRun has one traced row per place a budget can fall against its
// 100 ms trace: on its end, inside the axis's stretch, at the stretch's
// limit, just past it, far past it, and near the axis's right edge; one
// trace has a single span, one a span longer than the row before it ends.
func budgetRun() Run {
	row := func(name string, budget time.Duration, spans []evidence.Span) catalogue.Result {
		return catalogue.Result{Scenario: catalogue.Scenario{Fault: harness.None{}, Operation: op(name)}, Budget: budget, Pass: true,
			Observation: catalogue.Observation{Latency: msd(100), Trace: "BUDGET00", Spans: spans}}
	}
	one := []evidence.Span{{Kind: "tool_call_trace", ID: "root", Name: "echo", Start: at(0), Duration: msd(100), Status: "error"}}
	long := []evidence.Span{{Kind: "tool_call_trace", ID: "root", Start: at(0), Duration: msd(100), Status: "ok"},
		{Kind: "upstream_call", ID: "up", Parent: "root", Depth: 1, Start: at(99), Duration: msd(1), Status: "cancelled"}}
	return Run{Seed: 3, Target: "inprocess", Tolerance: 300 * time.Millisecond, Results: []catalogue.Result{
		row("on the end", msd(100), pagedSpans("")),
		row("in the stretch", msd(150), pagedSpans("")),
		row("at the stretch's limit", msd(200), one),
		row("past the stretch", msd(201), long),
		row("far past", 1000*time.Second, pagedSpans("")),
		row("near the right edge", msd(104), pagedSpans("")),
		row("a twentieth", 2*time.Second, one),
	}}
}

// renderings are every output the package writes, of every sample, by
// golden file name.
func renderings(t *testing.T) map[string]string {
	t.Helper()
	out := map[string]string{}
	runs := map[string]Run{"sample": sampleRun(), "action": actionRun(), "edge": edgeRun(), "budgets": budgetRun(),
		"na": {Seed: 4, Target: "url:http://127.0.0.1:1/mcp", Results: []catalogue.Result{
			{Scenario: catalogue.Scenario{Fault: harness.ProxyKill{}, Operation: op("reconnect")}, NotApplicable: "target url lacks kill"}}},
	}
	for name, run := range runs {
		for kind, write := range map[string]func(io.Writer, Run) error{
			"html": WriteHTML, "junit.xml": WriteJUnit, "table.txt": WriteTable, "failures.txt": WriteFailures,
		} {
			var b bytes.Buffer
			if err := write(&b, run); err != nil {
				t.Fatalf("%s %s: %v", name, kind, err)
			}
			out[name+"."+kind] = b.String()
		}
		recs, err := json.MarshalIndent(Records(run), "", " ")
		if err != nil {
			t.Fatal(err)
		}
		out[name+".records.json"] = string(recs) + "\n"
		out[name+".tiers.txt"] = strings.Join(TierSummary(run), "\n") + "\n"
	}
	var b bytes.Buffer
	if err := WriteComparisonHTML(&b, sampleComparison()); err != nil {
		t.Fatal(err)
	}
	out["comparison.html"] = b.String()
	b.Reset()
	if err := WriteComparisonJUnit(&b, sampleComparison()); err != nil {
		t.Fatal(err)
	}
	out["comparison.junit.xml"] = b.String()
	return out
}

// Every rendering of the samples is what was last looked at and recorded:
// the tests beside this one say what each must show; this one says nothing
// else changed (a tooltip's line, a bar's coordinates, a count in a
// header). A change on purpose: rerun with -update, read the diff of
// testdata/, commit it.
func TestEveryRenderingIsAsRecorded(t *testing.T) {
	got := renderings(t)
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		for name, text := range got {
			if err := os.WriteFile(filepath.Join("testdata", name+".golden"), []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return
	}
	for name, text := range got {
		want, err := os.ReadFile(filepath.Join("testdata", name+".golden"))
		if err != nil {
			t.Errorf("%s: %v: make it with -update", name, err)
			continue
		}
		if string(want) != text {
			t.Errorf("%s changed; if on purpose, rerun with -update and commit testdata/:\n%s", name, firstDifference(string(want), text))
		}
	}
}

// firstDifference names the first line where got departs from want, with
// both lines.
func firstDifference(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := 0; i < len(w) || i < len(g); i++ {
		var wl, gl string
		if i < len(w) {
			wl = w[i]
		}
		if i < len(g) {
			gl = g[i]
		}
		if wl != gl {
			return fmt.Sprintf("line %d\n- %s\n+ %s", i+1, wl, gl)
		}
	}
	return "(no line differs)"
}
