package mutants

import (
	"context"
	"strings"
	"testing"
	"time"
)

// --find-smaller runs the whole tests of the package a mutant patches and
// names the test that kills it, as a go test check of that package: the
// candidate for a check that builds one package's tests instead of the
// scenarios suite or mcpchaos. A mutant no package test sees gets none.
func TestFindSmallerNamesThePackageTestThatKills(t *testing.T) {
	m := tinyModule(t)
	opts := Options{Timeout: time.Minute}.withDefaults()
	muts := []Mutant{
		{Name: "seen", Patch: patchTwo("return 3"), Kill: inCatalogue("two")},
		{Name: "unseen", Patch: patchTwo("return 1 + 1"), Kill: Check{Kind: Ginkgo, Label: "two"}},
		{Name: "broken", Patch: patchTwo(`return "two"`), Kill: inCatalogue("two")},
	}
	found := findSmaller(context.Background(), m, muts, opts)
	if len(found) != len(muts) {
		t.Fatalf("%d results for %d mutants", len(found), len(muts))
	}
	seen, unseen, broken := found[0], found[1], found[2]
	c, ok := seen.Kill()
	if !ok || c != goTest("./p", "^TestTwo$") || seen.Err != nil {
		t.Errorf("seen: Kill() = %v, %v (failed %v, err %v), want go test ./p -run ^TestTwo$", c, ok, seen.Failed, seen.Err)
	}
	if strings.Join(seen.Packages, " ") != "./p" {
		t.Errorf("seen: ran the tests of %q, want ./p", seen.Packages)
	}
	if c, ok := unseen.Kill(); ok || unseen.Err != nil || len(unseen.Failed) != 0 {
		t.Errorf("unseen: Kill() = %v, %v (failed %v, err %v), want none", c, ok, unseen.Failed, unseen.Err)
	}
	if c, ok := broken.Kill(); ok || broken.Err == nil || !strings.Contains(broken.Err.Error(), "does not build") {
		t.Errorf("broken: Kill() = %v, %v, err %v; a mutant that does not build proves nothing", c, ok, broken.Err)
	}
}

// A test that also fails on the unpatched module (here TestRelayOn, with
// the relay off as the mutant's check runs it) tells nothing about the
// mutant: it is never proposed. The proposed check keeps the mutant's
// environment.
func TestFindSmallerProposesNoTestThatFailsWithoutTheMutant(t *testing.T) {
	t.Setenv(relayEnv, "1")
	m := tinyModule(t)
	opts := Options{Timeout: time.Minute}.withDefaults()
	kill := Check{Kind: Ginkgo, Label: "two", SDKPath: true}
	found := findSmaller(context.Background(), m, []Mutant{
		{Name: "seen", Patch: patchTwo("return 3"), Kill: kill},
		{Name: "unseen", Patch: patchTwo("return 1 + 1"), Kill: kill},
	}, opts)
	want := goTest("./p", "^TestTwo$")
	want.SDKPath = true
	if c, ok := found[0].Kill(); !ok || c != want || len(found[0].Failed) != 1 {
		t.Errorf("seen: Kill() = %v, %v (failed %v), want %v alone", c, ok, found[0].Failed, want)
	}
	if c, ok := found[1].Kill(); ok {
		t.Errorf("unseen: Kill() = %v; TestRelayOn fails without the mutant too", c)
	}
}

func TestFailedTestsAreTheTopLevelOnes(t *testing.T) {
	out := `=== RUN   TestA
--- FAIL: TestA (1.50s)
    --- FAIL: TestA/sub (0.20s)
        a_test.go:9: no
--- PASS: TestB (0.00s)
--- FAIL: TestC (0.01s)
panic: boom
FAIL
`
	got := failedTests("./p", out)
	want := []FailedTest{{"./p", "TestA", 1500 * time.Millisecond}, {"./p", "TestC", 10 * time.Millisecond}}
	if len(got) != len(want) || got[0] != want[0] || got[1] != want[1] {
		t.Errorf("failedTests = %v, want %v", got, want)
	}
}

// Only packages of patched Go files that have tests are run.
func TestTestedPackagesAreThePatchedOnesWithTests(t *testing.T) {
	patch := "+++ b/a/x.go\n+++ b/b/y.go\n+++ b/a/z.go\n+++ b/docs/d/Dockerfile\n+++ b/c/w.go\n"
	files := []string{"a/x.go", "a/x_test.go", "b/y.go", "c/w.go", "c/w_test.go", "docs/d/Dockerfile", "docs/d/d_test.go"}
	if got := strings.Join(testedPackages(patch, files), " "); got != "./a ./c" {
		t.Errorf("testedPackages = %q, want ./a ./c", got)
	}
}

// The control builds once for all the checks that run from one build: one
// package's -run regexps, the scenarios suite's label filters, the
// catalogue's labels. The unpatched module is the same for each.
func TestControlBuildsOncePerBuild(t *testing.T) {
	g1, g2 := Check{Kind: Ginkgo, Label: "a"}, Check{Kind: Ginkgo, Label: "b", Focus: "x", SDKPath: true}
	muts := []Mutant{
		{Kill: goTest("./p", "^A$")}, {Kill: g1}, {Kill: goTest("./q", "^A$")}, {Kill: goTest("./p", "^B$")},
		{Kill: inCatalogue("x")}, {Kill: g2}, {Kill: goTest("./p", "^A$")}, {Kill: inCatalogue("y")},
	}
	var got []string
	for _, g := range buildGroups(muts) {
		var cs []string
		for _, c := range g {
			cs = append(cs, c.String())
		}
		got = append(got, strings.Join(cs, " + "))
	}
	want := []string{
		"go test -count=1 -failfast ./p -run '^A$' + go test -count=1 -failfast ./p -run '^B$'",
		g1.String() + " + " + g2.String(),
		"go test -count=1 -failfast ./q -run '^A$'",
		"go run ./cmd/mcpchaos run --label x + go run ./cmd/mcpchaos run --label y",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("build groups:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// judgeAll runs several checks from one copy and one build, each with its
// own verdict, as judge would give it alone; checks that need different
// builds are refused.
func TestJudgeAllRunsEachCheckFromOneBuild(t *testing.T) {
	m := tinyModule(t)
	opts := Options{Timeout: time.Minute}.withDefaults()
	checks := []Check{goTest("./p", "^TestTwo$"), goTest("./p", "^TestOther$")}
	outs := judgeAll(context.Background(), m, "tiny", patchTwo("return 3"), checks, opts)
	if len(outs) != 2 || outs[0].Verdict != Killed || outs[1].Verdict != Survived {
		t.Fatalf("verdicts %v, want killed by TestTwo, survived TestOther", outs)
	}
	if outs[0].Mutant.Kill != checks[0] || outs[1].Mutant.Kill != checks[1] {
		t.Errorf("outcomes out of order: %v, %v", outs[0].Mutant.Kill, outs[1].Mutant.Kill)
	}
	if outs[0].BuildDuration != outs[1].BuildDuration || outs[0].BuildDuration == 0 {
		t.Errorf("build %v and %v: one build should serve both", outs[0].BuildDuration, outs[1].BuildDuration)
	}
	mixed := judgeAll(context.Background(), m, "tiny", "", []Check{goTest("./p", "^TestTwo$"), inCatalogue("x")}, opts)
	for _, o := range mixed {
		if o.Verdict != Errored || !strings.Contains(o.Err.Error(), "different builds") {
			t.Errorf("%s: %s (%v), want an error: its build differs", o.Mutant.Kill, o.Verdict, o.Err)
		}
	}
}
