package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/mcpchaos/mcpchaos/scenarios/mutants"
)

// --generic, spelled any way the flag package takes it, hands the command
// to generic mutation testing, which has flags of its own.
func TestMutantsGenericInAnySpelling(t *testing.T) {
	for _, args := range [][]string{
		{"mutants", "--generic", "proxy/trace"},
		{"mutants", "-generic", "proxy/trace"},
		{"mutants", "--generic=proxy/trace"},
		{"mutants", "-generic=proxy/trace"},
		{"mutants", "--package-tests-only", "--generic", "proxy/trace"},
	} {
		var cmd string
		old := flagsChecked
		flagsChecked = func(c string, _ *flag.FlagSet) error { cmd = c; return errFlagsChecked }
		err := run(context.Background(), args, io.Discard, io.Discard)
		flagsChecked = old
		if !errors.Is(err, errFlagsChecked) || cmd != "mutants --generic" {
			t.Errorf("mcpchaos %s: reached %q (%v), want mutants --generic", strings.Join(args, " "), cmd, err)
		}
	}
	// A flag named like it is not it.
	var cmd string
	old := flagsChecked
	flagsChecked = func(c string, _ *flag.FlagSet) error { cmd = c; return errFlagsChecked }
	_ = run(context.Background(), []string{"mutants", "--only", "--generic-ish"}, io.Discard, io.Discard)
	flagsChecked = old
	if cmd != "mutants" {
		t.Errorf("mutants --only --generic-ish reached %q, want the known mutants", cmd)
	}
}

// mutants --generic needs a package: without one, it says so with the usage.
func TestGenericMutantsNeedAPackage(t *testing.T) {
	var stdout, stderr bytes.Buffer
	err := run(stopped(), []string{"mutants", "--generic", " , "}, &stdout, &stderr)
	if err == nil || !strings.Contains(err.Error(), "name at least one package directory") || !strings.Contains(stderr.String(), "usage: mcpchaos mutants --generic") {
		t.Errorf("mutants --generic with no package: %v\n%s", err, stderr.String())
	}
}

// mutants --generic --list lists each mutant of the package as
// FILE:LINE:COL and its change, then how many there are.
func TestGenericMutantsList(t *testing.T) {
	var stdout bytes.Buffer
	if err := run(context.Background(), []string{"mutants", "--generic", "proxy/trace", "--list"}, &stdout, io.Discard); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
	last := lines[len(lines)-1]
	if want := fmt.Sprintf("%d mutants", len(lines)-1); last != want || len(lines) < 2 {
		t.Fatalf("--list ends with %q, want %q", last, want)
	}
	row := regexp.MustCompile(`^proxy/trace/\w+\.go:\d+:\d+\t\S`)
	for _, l := range lines[:len(lines)-1] {
		if !row.MatchString(l) {
			t.Errorf("--list row %q is not FILE:LINE:COL and the change", l)
		}
	}
}

// mutants --touching DIRS prints, for make quick, one "test PKG RUN" line
// per package of checks and the Ginkgo labels, sorted; --list lists every
// known mutant with its patch and check; --only refuses a name it does not
// know.
func TestKnownMutantsListsAndChecks(t *testing.T) {
	all, err := mutants.Select(nil)
	if err != nil || len(all) == 0 {
		t.Fatalf("no known mutants: %v", err)
	}
	var stdout bytes.Buffer
	if err := run(context.Background(), []string{"mutants", "--list"}, &stdout, io.Discard); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
	if strings.Join(strings.Fields(lines[0]), " ") != "MUTANT PATCH KILLED BY REGRESSION" || len(lines) != len(all)+1 {
		t.Errorf("--list: %d rows for %d mutants, header %q", len(lines)-1, len(all), lines[0])
	}
	if !strings.HasPrefix(lines[1], all[0].Name+" ") || !strings.Contains(lines[1], all[0].PatchFile) {
		t.Errorf("--list's first row %q is not %s with its patch", lines[1], all[0].Name)
	}
	stdout.Reset()
	if err := run(context.Background(), []string{"mutants", "--list", "--only", " " + all[0].Name + " ,"}, &stdout, io.Discard); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(strings.TrimSpace(stdout.String()), "\n"); n != 1 {
		t.Errorf("--list --only %s lists %d rows:\n%s", all[0].Name, n, stdout.String())
	}
	if err := run(stopped(), []string{"mutants", "--list", "--only", "no-such-mutant"}, io.Discard, io.Discard); err == nil || !strings.Contains(err.Error(), "no-such-mutant") {
		t.Errorf("--only no-such-mutant: %v", err)
	}

	// --touching: the plan of the packages every mutant patches.
	dirs := map[string]bool{}
	for _, m := range all {
		for _, f := range mutants.PatchedFiles(m.Patch) {
			if i := strings.LastIndex(f, "/"); i > 0 {
				dirs[f[:i]] = true
			}
		}
	}
	var list []string
	for d := range dirs {
		list = append(list, d)
	}
	p := mutants.Quick(list)
	stdout.Reset()
	if err := run(context.Background(), []string{"mutants", "--touching", strings.Join(list, ",")}, &stdout, io.Discard); err != nil {
		t.Fatal(err)
	}
	var want []string
	for pkg, re := range p.Tests {
		want = append(want, "test "+pkg+" "+re)
	}
	got := strings.Split(strings.TrimSpace(stdout.String()), "\n")
	if p.Labels != "" {
		if got[len(got)-1] != "labels "+p.Labels {
			t.Errorf("--touching does not end with the labels %q:\n%s", p.Labels, stdout.String())
		}
		got = got[:len(got)-1]
	}
	if len(want) == 0 || len(got) != len(want) {
		t.Fatalf("--touching printed %d test lines, want %d:\n%s", len(got), len(want), stdout.String())
	}
	for i := range got {
		if i > 0 && got[i-1] >= got[i] {
			t.Errorf("--touching's test lines are not sorted: %q before %q", got[i-1], got[i])
		}
		if !strings.HasPrefix(got[i], "test ./") {
			t.Errorf("--touching line %q", got[i])
		}
	}
	stdout.Reset()
	if err := run(context.Background(), []string{"mutants", "--touching", "no/such/dir"}, &stdout, io.Discard); err != nil || stdout.Len() != 0 {
		t.Errorf("--touching a directory no mutant patches: %v %q", err, stdout.String())
	}
}

// The run's report: a row per mutant, then what killed each (its check's
// excerpt), what survived and which check no longer kills it, what could
// not be judged; its last line counts each verdict and it fails (exit 1)
// when anything survived or could not be judged.
func TestKnownMutantsReport(t *testing.T) {
	check := mutants.Check{Kind: mutants.GoTest, Pkg: "./p", Run: "^T$"}
	outcomes := []mutants.Outcome{
		{Mutant: mutants.Mutant{Name: "dead", Kill: check, Regression: "a promise " + strings.Repeat("long ", 20)}, Verdict: mutants.Killed,
			KilledBy: "go test ./p", ExitCode: 1, Excerpt: "--- FAIL: T\nline 2\nline 3\nline 4", Shared: true,
			Duration: 4567*time.Millisecond + 89, BuildDuration: 3210*time.Millisecond + 7, CheckDuration: 1543 * time.Millisecond},
		{Mutant: mutants.Mutant{Name: "slow", Kill: check, Regression: "r"}, Verdict: mutants.Killed, KilledBy: "go test ./p", TimedOut: true},
		{Mutant: mutants.Mutant{Name: "alive", Kill: check, Regression: "answers in budget"}, Verdict: mutants.Survived},
		{Mutant: mutants.Mutant{Name: "broken", Kill: check}, Verdict: mutants.Errored, Err: errors.New("does not build"), Excerpt: "x.go:1: oops"},
		{Mutant: mutants.Mutant{Name: "quiet", Kill: check}, Verdict: mutants.Errored, Err: errors.New("no output")},
		{Mutant: mutants.Mutant{Name: "stale", PatchFile: "stale.patch", Kill: check}, Verdict: mutants.Errored,
			Err: &mutants.StalePatchError{Files: []string{"a.go"}, Output: "patch does not apply"}},
	}
	var b strings.Builder
	counts := writeOutcomes(&b, outcomes)
	out := b.String()
	row := func(name string) string {
		for _, l := range strings.Split(out, "\n") {
			if strings.HasPrefix(l, name+" ") {
				return l
			}
		}
		return ""
	}
	for name, want := range map[string][]string{
		"dead":  {"a promise long", "…", "killed", "yes", "go test ./p", "4.6s", "3.2s", "1.5s"},
		"slow":  {"go test ./p (timed out)"},
		"alive": {"SURVIVED", "no", " -"},
	} {
		for _, w := range want {
			if !strings.Contains(row(name), w) {
				t.Errorf("row %s lacks %q: %q", name, w, row(name))
			}
		}
	}
	if f := strings.Fields(strings.SplitN(out, "\n", 2)[0]); strings.Join(f, " ") != "MUTANT REGRESSION VERDICT SHARED KILLED BY DURATION BUILD CHECK" {
		t.Errorf("the report's header: %q", f)
	}
	for _, want := range []string{
		"\n\nkilled   dead (check 1.5s, exit 1):\n         | --- FAIL: T\n         | line 2\n         | line 3\n",
		"SURVIVED alive: `go test -count=1 -failfast ./p -run '^T$'` passed with the mutant applied, so the suite no longer guards against this regression: answers in budget\n",
		"ERROR    broken: does not build\n         | x.go:1: oops\n",
		"ERROR    quiet: no output\nERROR    stale",
		"ERROR    stale: patches/stale.patch no longer applies.",
		"\n\nCHECK KIND",
		"\nshared tree: 1 verdict(s) from it",
		"CHECK KIND",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the report lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "line 4") {
		t.Errorf("the excerpt of a kill is not cut to three lines:\n%s", out)
	}
	if counts[mutants.Killed] != 2 || counts[mutants.Survived] != 1 || counts[mutants.Errored] != 3 {
		t.Errorf("counts %v", counts)
	}

	for _, c := range []struct {
		counts map[mutants.Verdict]int
		fails  bool
		line   string
	}{
		{map[mutants.Verdict]int{mutants.Killed: 3}, false, "\n3 killed, 0 survived, 0 errors, of 3 mutants in 1m2s (parallel 2)\n"},
		{map[mutants.Verdict]int{mutants.Killed: 2, mutants.Survived: 1}, true, "\n2 killed, 1 survived, 0 errors, of 3 mutants"},
		{map[mutants.Verdict]int{mutants.Killed: 2, mutants.Errored: 1}, true, "\n2 killed, 0 survived, 1 errors, of 3 mutants"},
	} {
		var b strings.Builder
		err := writeMutantsVerdict(&b, c.counts, 3, 62*time.Second, 2)
		if (err != nil) != c.fails || (c.fails && err != exitError(1)) {
			t.Errorf("%v: %v, want failing %v (exit 1)", c.counts, err, c.fails)
		}
		if !strings.HasPrefix(b.String(), c.line) {
			t.Errorf("%v: last line %q, want %q", c.counts, b.String(), c.line)
		}
	}
}

// Where the time went, by kind of check: the sums and the means per mutant.
func TestKnownMutantsTimesByKind(t *testing.T) {
	goTest := mutants.Check{Kind: mutants.GoTest, Pkg: "./p", Run: "^T$"}
	cat := mutants.Check{Kind: mutants.Catalogue, Label: "x"}
	var b strings.Builder
	writeTimes(&b, []mutants.Outcome{
		{Mutant: mutants.Mutant{Kill: goTest}, SetupDuration: time.Second, BuildDuration: 4 * time.Second, CheckDuration: 2 * time.Second, Duration: 7 * time.Second},
		{Mutant: mutants.Mutant{Kill: cat}, BuildDuration: 10 * time.Second, CheckDuration: 30 * time.Second, Duration: 40 * time.Second},
		{Mutant: mutants.Mutant{Kill: goTest}, SetupDuration: time.Second, BuildDuration: 2 * time.Second, CheckDuration: 1333 * time.Millisecond, Duration: 4 * time.Second},
	})
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	if len(lines) != 3 {
		t.Fatalf("times:\n%s", b.String())
	}
	want := [][]string{
		{"CHECK", "KIND", "MUTANTS", "COPY+PATCH", "BUILD", "CHECK", "WHOLE", "MEAN", "BUILD", "MEAN", "CHECK"},
		{"catalogue", "1", "0s", "10s", "30s", "40s", "10s", "30s"},
		{"go", "test", "2", "2s", "6s", "3s", "11s", "3s", "1.7s"},
	}
	for i, l := range lines {
		if got := strings.Fields(l); strings.Join(got, " ") != strings.Join(want[i], " ") {
			t.Errorf("times row %d: %q, want %q", i, got, want[i])
		}
	}
}

// --find-smaller names, per mutant, its check now and the smallest go test
// that kills it, then the table entries to change, as Go.
func TestFindSmallerSaysWhatToChange(t *testing.T) {
	ginkgo := mutants.Check{Kind: mutants.Catalogue, Label: "paginate"}
	var b strings.Builder
	err := printSmaller(&b, []mutants.Smaller{
		{Mutant: mutants.Mutant{Name: "m1", Kill: ginkgo}, Failed: []mutants.FailedTest{{Pkg: "./proxy/stage", Name: "TestA", Took: time.Second}, {Pkg: "./proxy/stage", Name: "TestB", Took: 2 * time.Second}}},
		{Mutant: mutants.Mutant{Name: "m2", Kill: mutants.Check{Kind: mutants.Catalogue, Label: "relay", SDKPath: true}}, Failed: []mutants.FailedTest{{Pkg: "./proxy/relay", Name: "TestR"}}},
		{Mutant: mutants.Mutant{Name: "m3", Kill: ginkgo}, Err: errors.New("does not apply")},
		{Mutant: mutants.Mutant{Name: "m4", Kill: ginkgo}},
	})
	if err != nil {
		t.Fatal(err)
	}
	out := b.String()
	row := func(name string) string {
		for _, l := range strings.Split(out, "\n") {
			if strings.HasPrefix(l, name+" ") {
				return l
			}
		}
		return ""
	}
	if f := strings.Fields(strings.SplitN(out, "\n", 2)[0]); strings.Join(f, " ") != "MUTANT CHECK NOW SMALLER CHECK FAILED TESTS" {
		t.Errorf("--find-smaller's header: %q", f)
	}
	if r := row("m1"); !strings.Contains(r, "go test -count=1 -failfast ./proxy/stage -run '^TestA$'") || !strings.Contains(r, "./proxy/stage TestA (1s), ./proxy/stage TestB (2s)") {
		t.Errorf("m1: %q", r)
	}
	if r := row("m3"); !strings.Contains(r, "- (does not apply)") {
		t.Errorf("m3: %q", r)
	}
	if r := strings.Fields(row("m4")); len(r) < 2 || r[len(r)-1] != "-" || r[len(r)-2] != "-" {
		t.Errorf("m4: %q, want no smaller check and no failed test", row("m4"))
	}
	for _, want := range []string{
		"\n2 of 4 mutant(s) have a smaller check:\n",
		"m1:\tKill: goTest(\"./proxy/stage\", \"^TestA$\"),\n",
		"m2:\tKill: Check{Kind: GoTest, Pkg: \"./proxy/relay\", Run: \"^TestR$\", SDKPath: true},\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("--find-smaller lacks %q:\n%s", want, out)
		}
	}
}

// Helpers of the report: a regression is shortened to its width with an
// ellipsis, an excerpt to its first lines behind a margin, and the column
// SHARED says where a verdict came from.
func TestMutantsReportHelpers(t *testing.T) {
	for _, c := range []struct {
		in   string
		n    int
		want string
	}{
		{"abc", 3, "abc"}, {"abcd", 3, "ab…"}, {"ééé", 3, "ééé"}, {"éééé", 3, "éé…"},
	} {
		if got := shorten(c.in, c.n); got != c.want {
			t.Errorf("shorten(%q, %d) = %q, want %q", c.in, c.n, got, c.want)
		}
	}
	if got := indent("\n a\nb\nc\n", 2); got != "         | a\n         | b" {
		t.Errorf("indent: %q", got)
	}
	if got := indent("a\nb", 2); got != "         | a\n         | b" {
		t.Errorf("indent of exactly n lines: %q", got)
	}
	for _, c := range []struct {
		o    mutants.Outcome
		want string
	}{
		{mutants.Outcome{Shared: true, SharedVerdict: mutants.Killed}, "yes"},
		{mutants.Outcome{SharedVerdict: mutants.Survived}, "no (shared: SURVIVED)"},
		{mutants.Outcome{NotShared: "it patches a file that is not Go"}, "no"},
	} {
		if got := sharedColumn(c.o); got != c.want {
			t.Errorf("sharedColumn(%+v) = %q, want %q", c.o, got, c.want)
		}
	}
	for why, want := range map[string]string{
		"it changes proxy/a.go outside function bodies": "it changes a Go file outside function bodies",
		"it patches a file that is not Go (docs/x.cfg)": "it patches a file that is not Go",
		"(leading) no split":                            "(leading) no split",
		" (a leading space)":                            " (a leading space)",
		"its check: go test":                            "its check",
		": leading colon":                               ": leading colon",
	} {
		if got := notSharedKind(why); got != want {
			t.Errorf("notSharedKind(%q) = %q, want %q", why, got, want)
		}
	}
}

// The generic run's report: every mutant not killed with the first line
// of why, then the count of each verdict and the score; it fails when a
// mutant survived, was not covered or could not be judged.
func TestGenericMutantsReport(t *testing.T) {
	m := func(line int, op string) mutants.GenericMutant {
		return mutants.GenericMutant{File: "p/p.go", Line: line, Col: 2, Op: op}
	}
	outs := []mutants.GenericOutcome{
		{Mutant: m(1, "== → !="), Verdict: mutants.GKilled},
		{Mutant: m(2, "< → <="), Verdict: mutants.GTimedOut},
		{Mutant: m(3, "drop !"), Verdict: mutants.GSurvived, Detail: "\n  ran TestA\nand TestB"},
		{Mutant: m(4, "+ → -"), Verdict: mutants.GNotCovered},
		{Mutant: m(5, "* → /"), Verdict: mutants.GNotViable},
	}
	var b strings.Builder
	err := writeGenericReport(&b, []string{"p", "q"}, outs, 90*time.Second)
	out := b.String()
	if err == nil || err.Error() != "2 generic mutant(s) survived, 0 could not be judged" {
		t.Errorf("a run with survivors: %v", err)
	}
	if f := strings.Fields(strings.SplitN(out, "\n", 2)[0]); strings.Join(f, " ") != "MUTANT CHANGE VERDICT WHY" {
		t.Errorf("the report's header: %q", f)
	}
	for _, want := range []string{
		"p/p.go:3:2  drop !  survived  ran TestA\n",
		"generic mutants of p,q: 5 mutants, 2 killed (1 by timeout), 1 survived, 1 not covered, 1 not viable, 0 not expressible, 0 errors; score 50.0% (2/4) in 1m30s\n",
	} {
		if !strings.Contains(strings.Join(strings.Fields(out), " "), strings.Join(strings.Fields(want), " ")) {
			t.Errorf("the report lacks %q:\n%s", want, out)
		}
	}
	for _, hidden := range []string{"p/p.go:1:2", "p/p.go:2:2", "and TestB"} {
		if strings.Contains(out, hidden) {
			t.Errorf("the report shows %q, which was killed or is not the first line:\n%s", hidden, out)
		}
	}
	if !strings.Contains(out, "p/p.go:4:2") || !strings.Contains(out, "p/p.go:5:2") {
		t.Errorf("the report hides a mutant not killed:\n%s", out)
	}

	b.Reset()
	if err := writeGenericReport(&b, []string{"p"}, outs[:2], time.Second); err != nil || !strings.Contains(b.String(), "score 100.0% (2/2)") {
		t.Errorf("all killed: %v\n%s", err, b.String())
	}
	b.Reset()
	err = writeGenericReport(&b, []string{"p"}, []mutants.GenericOutcome{outs[0], {Mutant: m(9, "x"), Verdict: mutants.GError}}, time.Second)
	if err == nil || err.Error() != "0 generic mutant(s) survived, 1 could not be judged" {
		t.Errorf("a mutant not judged: %v", err)
	}
	b.Reset()
	if err := writeGenericReport(&b, []string{"p"}, []mutants.GenericOutcome{outs[4]}, time.Second); err != nil || !strings.Contains(b.String(), "score 0.0% (0/0)") {
		t.Errorf("nothing judged: %v\n%s", err, b.String())
	}
}

// Comma-separated flag values: items trimmed, empty ones dropped; a reason
// is its first non-empty line.
func TestSplitListAndFirstLine(t *testing.T) {
	if got := splitList(" a, ,b ,,"); strings.Join(got, "|") != "a|b" {
		t.Errorf("splitList: %q", got)
	}
	if got := splitList(""); got != nil {
		t.Errorf("splitList of nothing: %q", got)
	}
	if got := firstLine("\n \n  x y \nz"); got != "x y" {
		t.Errorf("firstLine: %q", got)
	}
	if got := firstLine(" \n"); got != "" {
		t.Errorf("firstLine of blanks: %q", got)
	}
}

// A run of the known mutants cut short by its context (Ctrl-C) reports
// nothing it did not judge: it ends with the context's error.
func TestKnownMutantsRunCutShort(t *testing.T) {
	all, err := mutants.Select(nil)
	if err != nil || len(all) == 0 {
		t.Fatalf("no known mutants: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var stdout bytes.Buffer
	start := time.Now()
	err = run(ctx, []string{"mutants", "--only", all[0].Name, "--parallel", "1"}, &stdout, io.Discard)
	if !errors.Is(err, context.Canceled) || stdout.Len() != 0 {
		t.Errorf("a cancelled run: %v, printed:\n%s", err, stdout.String())
	}
	t.Logf("took %v", time.Since(start))
}

// A generic run that cannot run (here: its context is stopped) ends with
// that error and prints no score, whichever way it judges.
func TestGenericMutantsRunCutShort(t *testing.T) {
	for _, way := range [][]string{{"--package-tests-only"}, {"--per-mutant-copy"}} {
		var stdout bytes.Buffer
		args := append([]string{"mutants", "--generic", "proxy/trace", "--results", ""}, way...)
		err := run(stopped(), args, &stdout, io.Discard)
		if err == nil || !strings.Contains(err.Error(), "context canceled") || stdout.Len() != 0 {
			t.Errorf("mcpchaos %s on a stopped context: %v, printed:\n%s", strings.Join(args, " "), err, stdout.String())
		}
	}
}
