package canary

import (
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcpchaos/mcpchaos/scenarios/report"
)

const tol = 300 * time.Millisecond

func rec(name, verdict string, latency time.Duration) report.Record {
	return report.Record{Name: name, Source: "catalogue", Verdict: verdict, Latency: latency}
}

func changeOf(t *testing.T, rows []report.ComparedRow, name string) report.ComparedRow {
	t.Helper()
	for _, r := range rows {
		if r.Name == name {
			return r
		}
	}
	t.Fatalf("no row %q in %+v", name, rows)
	return report.ComparedRow{}
}

// The canary's one job: a scenario that passed on the baseline and fails on
// the candidate makes the run fail, and says so by name.
func TestNewlyFailingIsARegression(t *testing.T) {
	base := []report.Record{rec("proxy-restart × reconnect", "PASS", 9*time.Millisecond), rec("none × tools/list", "PASS", 2*time.Millisecond)}
	cand := []report.Record{rec("proxy-restart × reconnect", "FAIL", time.Millisecond), rec("none × tools/list", "PASS", 3*time.Millisecond)}
	rows := Compare(base, cand, tol, nil)
	if r := changeOf(t, rows, "proxy-restart × reconnect"); r.Change != NewlyFailing || !r.Regression {
		t.Errorf("PASS → FAIL: change %q, regression %v; want %q and a regression", r.Change, r.Regression, NewlyFailing)
	}
	if r := changeOf(t, rows, "none × tools/list"); r.Change != "" || r.Regression {
		t.Errorf("PASS → PASS 1 ms slower: change %q, regression %v; want no change", r.Change, r.Regression)
	}
	regs := Regressions(rows)
	if len(regs) != 1 || regs[0].Name != "proxy-restart × reconnect" {
		t.Errorf("regressions %+v, want exactly the restart row", regs)
	}
	if v := verdictLine(rows, regs); !strings.HasPrefix(v, "FAIL") {
		t.Errorf("verdict %q does not start with FAIL", v)
	}
}

// A scenario the candidate's suite did not report at all (it crashed, or the
// scenario is gone) cannot count as passing.
func TestAMissingResultIsARegression(t *testing.T) {
	rows := Compare([]report.Record{rec("a", "PASS", 0), rec("b", "FAIL", 0)}, nil, tol, nil)
	if r := changeOf(t, rows, "a"); r.Change != Vanished || !r.Regression {
		t.Errorf("PASS → nothing: %q regression=%v", r.Change, r.Regression)
	}
	if r := changeOf(t, rows, "b"); r.Regression {
		t.Errorf("FAIL → nothing is not a regression: %+v", r)
	}
	rows = Compare([]report.Record{rec("a", "PASS", 0)}, []report.Record{rec("a", "N/A", 0)}, tol, nil)
	if r := changeOf(t, rows, "a"); !r.Regression {
		t.Errorf("PASS → N/A must count as not passing: %+v", r)
	}
}

func TestNewlyPassingAndCandidateOnlyAreReportedNotFailed(t *testing.T) {
	rows := Compare([]report.Record{rec("a", "FAIL", 0)}, []report.Record{rec("a", "PASS", 0), rec("new spec", "PASS", 0)}, tol, nil)
	if r := changeOf(t, rows, "a"); r.Change != NewlyPassing || r.Regression {
		t.Errorf("FAIL → PASS: %+v", r)
	}
	if r := changeOf(t, rows, "new spec"); r.Change != OnlyCand || r.Regression {
		t.Errorf("candidate only: %+v", r)
	}
	if len(Regressions(rows)) != 0 {
		t.Errorf("no regression expected: %+v", Regressions(rows))
	}
}

// The latency column flags a row only beyond the stated tolerance: the noise
// floor of two runs of the same build stays quiet.
func TestSlowerOnlyBeyondTheTolerance(t *testing.T) {
	base := []report.Record{rec("within", "PASS", 1500*time.Millisecond), rec("beyond", "PASS", 10*time.Millisecond), rec("faster", "PASS", time.Second)}
	cand := []report.Record{rec("within", "PASS", 1500*time.Millisecond+tol), rec("beyond", "PASS", 10*time.Millisecond+tol+time.Millisecond), rec("faster", "PASS", 0)}
	rows := Compare(base, cand, tol, nil)
	if r := changeOf(t, rows, "within"); r.Change != "" {
		t.Errorf("exactly the tolerance slower is noise, got %q", r.Change)
	}
	if r := changeOf(t, rows, "beyond"); !strings.HasPrefix(r.Change, Slower) || r.Regression {
		t.Errorf("beyond the tolerance: change %q regression %v, want %q and no regression", r.Change, r.Regression, Slower)
	}
	if r := changeOf(t, rows, "faster"); r.Change != "" {
		t.Errorf("faster is no change, got %q", r.Change)
	}
}

// --allow NAME=reason turns a regression into an accepted, recorded change.
func TestAllowRecordsAnAcceptedChange(t *testing.T) {
	allow := map[string]string{"a": "go-sdk 1.9 answers 400 by design", "typo": "x"}
	rows := Compare([]report.Record{rec("a", "PASS", 0)}, []report.Record{rec("a", "FAIL", 0)}, tol, allow)
	r := changeOf(t, rows, "a")
	if r.Regression || r.Allowed != allow["a"] || r.Change != NewlyFailing {
		t.Errorf("allowed row: %+v", r)
	}
	if got := UnusedAllows(rows, allow); len(got) != 1 || got[0] != "typo" {
		t.Errorf("unused allows %v, want [typo]", got)
	}
	for _, bad := range []string{"name-without-reason", "name=", "=reason without a name", " = "} {
		if _, _, err := ParseAllow(bad); err == nil {
			t.Errorf("ParseAllow(%q): an --allow needs a name and a reason", bad)
		}
	}
	if n, why, err := ParseAllow("proxy-restart × reconnect after restart=known: go-sdk#715"); err != nil || n != "proxy-restart × reconnect after restart" || why != "known: go-sdk#715" {
		t.Errorf("ParseAllow: %q %q %v", n, why, err)
	}
}

// Rows with the same name from different sources are different rows.
func TestRowsAreKeyedBySourceAndName(t *testing.T) {
	g := report.Record{Name: "x", Source: "ginkgo", Verdict: "PASS"}
	rows := Compare([]report.Record{rec("x", "PASS", 0), g}, []report.Record{rec("x", "PASS", 0), {Name: "x", Source: "ginkgo", Verdict: "FAIL"}}, tol, nil)
	if len(rows) != 2 || len(Regressions(rows)) != 1 || Regressions(rows)[0].Source != "ginkgo" {
		t.Errorf("rows %+v", rows)
	}
}

// A candidate that does not build is a result: every baseline row is shown
// NOT BUILT, and each one that passed counts against it.
func TestNotBuiltRowsCountEveryPassAgainstTheCandidate(t *testing.T) {
	rows := NotBuiltRows([]report.Record{rec("a", "PASS", 0), rec("b", "FAIL", 0), rec("c", "PASS", 0)}, map[string]string{"c": "dropped on purpose"})
	if len(rows) != 3 {
		t.Fatalf("rows %+v", rows)
	}
	for _, r := range rows {
		if r.Change != NotBuilt || r.Cand != nil {
			t.Errorf("row %s: change %q cand %v, want %q and no candidate result", r.Name, r.Change, r.Cand, NotBuilt)
		}
	}
	if regs := Regressions(rows); len(regs) != 1 || regs[0].Name != "a" {
		t.Errorf("regressions %+v, want only a (b failed on the baseline, c is allowed)", regs)
	}
}

// A spec's run time includes its world's set-up: it is flagged only when it
// more than doubled beyond the tolerance (the TypeScript client's spec took
// 813 ms, then 1.367 s, on two builds of the same SDK).
func TestSpecRowsAreSlowerOnlyWhenTheirRunTimeMoreThanDoubles(t *testing.T) {
	spec := func(name string, d time.Duration) report.Record {
		return report.Record{Name: name, Source: "ginkgo", Verdict: "PASS", Latency: d}
	}
	base := []report.Record{spec("noise", 813*time.Millisecond), spec("doubled", 813*time.Millisecond), spec("small", 20*time.Millisecond)}
	cand := []report.Record{spec("noise", 1367*time.Millisecond), spec("doubled", 1700*time.Millisecond), spec("small", 20*time.Millisecond+tol+time.Millisecond)}
	rows := Compare(base, cand, tol, nil)
	if r := changeOf(t, rows, "noise"); r.Change != "" {
		t.Errorf("813 ms → 1.367 s is set-up noise for a spec, got %q", r.Change)
	}
	if r := changeOf(t, rows, "doubled"); !strings.HasPrefix(r.Change, Slower) {
		t.Errorf("813 ms → 1.7 s more than doubled: got %q", r.Change)
	}
	if r := changeOf(t, rows, "small"); !strings.HasPrefix(r.Change, Slower) {
		t.Errorf("a short spec slower by more than the tolerance: got %q", r.Change)
	}
}

// A catalogue row flagged slower keeps its flag only when a second
// measurement of both sides finds the candidate slower past the tolerance
// again; a one-off stall of a loaded machine is cleared, and a row not
// measured again (or whose verdicts changed) keeps its flag.
func TestRecheckKeepsOnlyRepeatedSlowness(t *testing.T) {
	const tol = 300 * time.Millisecond
	rec := func(name, verdict string, lat time.Duration) report.Record {
		return report.Record{Name: name, Source: "catalogue", Verdict: verdict, Latency: lat}
	}
	base := []report.Record{rec("stall", "PASS", 4*time.Millisecond), rec("real", "PASS", 4*time.Millisecond), rec("gone", "PASS", 4*time.Millisecond), rec("same", "PASS", 4*time.Millisecond)}
	cand := []report.Record{rec("stall", "PASS", 381*time.Millisecond), rec("real", "PASS", 900*time.Millisecond), rec("gone", "PASS", 700*time.Millisecond), rec("same", "PASS", 5*time.Millisecond)}
	rows := Compare(base, cand, tol, nil)
	if got := SlowerCatalogueRows(rows); !reflect.DeepEqual(got, []string{"stall", "real", "gone"}) {
		t.Fatalf("flagged slower: %v", got)
	}
	base2 := []report.Record{rec("stall", "PASS", 5*time.Millisecond), rec("real", "PASS", 5*time.Millisecond)}
	cand2 := []report.Record{rec("stall", "PASS", 6*time.Millisecond), rec("real", "PASS", 880*time.Millisecond)}
	got, notes := Recheck(rows, base2, cand2, tol)
	change := map[string]string{}
	for _, r := range got {
		change[r.Name] = r.Change
	}
	if change["stall"] != "" {
		t.Errorf("a one-off stall kept its flag: %q", change["stall"])
	}
	if !strings.HasPrefix(change["real"], Slower) {
		t.Errorf("a row slower twice lost its flag: %q", change["real"])
	}
	if !strings.HasPrefix(change["gone"], Slower) {
		t.Errorf("a row not measured again lost its flag: %q", change["gone"])
	}
	if change["same"] != "" {
		t.Errorf("an unflagged row got %q", change["same"])
	}
	if len(notes) != 3 {
		t.Errorf("want a note per flagged row, got %q", notes)
	}
	if !strings.HasPrefix(rows[0].Change, Slower) {
		t.Error("Recheck changed its input rows")
	}
}

// A Ginkgo spec flagged slower is measured again as a catalogue row is: a
// spec slowed once by the machine (the canary runs beside other work) loses
// its flag, one slower again past its slack (more than the tolerance and
// more than its baseline run time) keeps it.
func TestRecheckMeasuresSpecsAgainToo(t *testing.T) {
	const tol = 300 * time.Millisecond
	rec := func(name, source string, lat time.Duration) report.Record {
		return report.Record{Name: name, Source: source, Verdict: "PASS", Latency: lat}
	}
	base := []report.Record{rec("A spec stalled once", "ginkgo", 86*time.Millisecond), rec("A spec slower twice", "ginkgo", 90*time.Millisecond), rec("row", "catalogue", 4*time.Millisecond)}
	cand := []report.Record{rec("A spec stalled once", "ginkgo", 428*time.Millisecond), rec("A spec slower twice", "ginkgo", 900*time.Millisecond), rec("row", "catalogue", 700*time.Millisecond)}
	rows := Compare(base, cand, tol, nil)
	if got := SlowerSpecRows(rows); !reflect.DeepEqual(got, []string{"A spec stalled once", "A spec slower twice"}) {
		t.Fatalf("specs flagged slower: %v", got)
	}
	if got := SlowerCatalogueRows(rows); !reflect.DeepEqual(got, []string{"row"}) {
		t.Fatalf("catalogue rows flagged slower: %v", got)
	}
	base2 := []report.Record{rec("A spec stalled once", "ginkgo", 80*time.Millisecond), rec("A spec slower twice", "ginkgo", 95*time.Millisecond)}
	cand2 := []report.Record{rec("A spec stalled once", "ginkgo", 120*time.Millisecond), rec("A spec slower twice", "ginkgo", 850*time.Millisecond)}
	got, _ := Recheck(rows, base2, cand2, tol)
	change := map[string]string{}
	for _, r := range got {
		change[r.Name] = r.Change
	}
	if change["A spec stalled once"] != "" {
		t.Errorf("a spec slowed once by the machine kept its flag: %q", change["A spec stalled once"])
	}
	if !strings.HasPrefix(change["A spec slower twice"], Slower) {
		t.Errorf("a spec slower twice lost its flag: %q", change["A spec slower twice"])
	}
	if !strings.HasPrefix(change["row"], Slower) {
		t.Errorf("a catalogue row not measured again lost its flag: %q", change["row"])
	}
}

// Ginkgo matches --focus against "DESCRIPTION TEXT", and the records of
// the suites besides the main one are named "DESCRIPTION: TEXT": the focus
// of a recheck must match both kinds of spec as Ginkgo sees them.
func TestSpecFocusMatchesWhatGinkgoMatches(t *testing.T) {
	focus := regexp.MustCompile(specFocus([]string{
		"Stale sessions keeps working across a proxy restart",
		"Conformance: The official MCP conformance suite passes through mcplocal",
	}))
	for _, seen := range []string{
		"Scenarios Stale sessions keeps working across a proxy restart",
		"Conformance The official MCP conformance suite passes through mcplocal",
	} {
		if !focus.MatchString(seen) {
			t.Errorf("focus %q does not match %q", focus, seen)
		}
	}
	if focus.MatchString("Scenarios Stale sessions keeps working across a proxy restart twice") {
		t.Errorf("focus %q matches a spec not named", focus)
	}
}

// The flag says by how much the candidate was slower; measured again, a row
// is judged by the difference of its two latencies, however long both are,
// and exactly the tolerance slower is still noise; a row measured again on
// one side only keeps its flag.
func TestSlowerSaysByHowMuchAndRecheckJudgesTheDifference(t *testing.T) {
	const tol = 300 * time.Millisecond
	base := []report.Record{rec("long", "PASS", 2*time.Second), rec("edge", "PASS", time.Second), rec("half", "PASS", time.Millisecond)}
	cand := []report.Record{rec("long", "PASS", 2*time.Second+tol+time.Millisecond), rec("edge", "PASS", time.Second+tol+time.Millisecond), rec("half", "PASS", time.Second)}
	rows := Compare(base, cand, tol, nil)
	if r := changeOf(t, rows, "long"); r.Change != Slower+" by 301ms" {
		t.Errorf("flag %q, want %q", r.Change, Slower+" by 301ms")
	}
	base2 := []report.Record{rec("long", "PASS", 2*time.Second), rec("edge", "PASS", time.Second)}
	cand2 := []report.Record{rec("long", "PASS", 2*time.Second), rec("edge", "PASS", time.Second+tol), rec("half", "PASS", time.Second)}
	got, notes := Recheck(rows, base2, cand2, tol)
	for _, name := range []string{"long", "edge"} {
		if r := changeOf(t, got, name); r.Change != "" {
			t.Errorf("%s, no longer slower past the tolerance measured again, kept %q", name, r.Change)
		}
	}
	if r := changeOf(t, got, "half"); !strings.HasPrefix(r.Change, Slower) {
		t.Errorf("a row measured again on the candidate's side only lost its flag: %q", r.Change)
	}
	if !slices.ContainsFunc(notes, func(n string) bool { return strings.HasPrefix(n, "half: not measured again") }) {
		t.Errorf("no note says half was not measured again: %q", notes)
	}
}
