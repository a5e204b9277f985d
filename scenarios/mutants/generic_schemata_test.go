package mutants

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcpchaos/mcpchaos/internal/testtree"
)

// schemataProg exercises every kind of generic mutant: comparisons (each
// with its two swaps), == and !=, && and ||, !, arithmetic on ints and on
// floats, and a call statement removed. Its output changes under every
// one of its mutants, so comparing outputs compares behaviour.
const schemataProg = `package main

import "fmt"

type acc struct{ n int }

func (a *acc) bump() { a.n++ }

func f(a, b int, ok bool) string {
	var c acc
	r := 0
	if a < b && !ok {
		c.bump()
		r = a + b
	}
	if a <= b || ok {
		r = r - a*b
	}
	if a > b {
		r = r + b/(a-1)
	}
	if a >= b {
		r = r - 1
	}
	if a == b {
		r = r * 3
	}
	if a != 2 {
		c.bump()
	}
	y := float64(a) * 2.5 / 1.25
	var d = a - b
	return fmt.Sprint(r, " ", c.n, " ", y, " ", d)
}

func main() {
	var lines []string
	for _, a := range []int{2, 3, 5} {
		for _, b := range []int{2, 3, 5} {
			for _, ok := range []bool{false, true} {
				lines = append(lines, fmt.Sprint(a, b, ok, f(a, b, ok)))
			}
		}
	}
	fmt.Println(lines)
}
`

// TestSchemataShapes: what each kind of site is rewritten to, nested
// sites inside their outer site, and line numbers kept.
func TestSchemataShapes(t *testing.T) {
	src := "package p\n\nfunc g(a, b int, ok bool, h func(bool)) int {\n\tif a == b || !ok {\n\t\th(a < b)\n\t}\n\treturn a * b\n}\n"
	muts, err := FindMutants("p/p.go", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	ids := make([]int, len(muts))
	for i := range ids {
		ids[i] = i + 1
	}
	out, sites, _, err := Schemata("example.com/m", "p/p.go", []byte(src), muts, ids, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := "package p; import __mcpchaosm \"example.com/m/mcpchaosmutant\"\n\n" +
		"func g(a, b int, ok bool, h func(bool)) int {\n" +
		"\tif __mcpchaosm.Or(2, __mcpchaosm.Flip(1, a == b), func() bool { return __mcpchaosm.Not(3, ok) }) {\n" +
		"\t\tif !__mcpchaosm.On(4) { h(__mcpchaosm.Cmp(5, \"<\", a, b)) }\n" +
		"\t}\n" +
		"\treturn __mcpchaosm.Arith(7, \"*\", a, b)\n}\n"
	if string(out) != want {
		t.Fatalf("rewritten\n%s\nwant\n%s", out, want)
	}
	// Mutants 5 and 6 share the < site; each site's guard is where
	// coverage looks for it.
	got := map[int]SchemataSite{}
	for _, s := range sites {
		got[s.IDs[0]] = s
	}
	if s := got[5]; len(s.IDs) != 2 || s.IDs[1] != 6 || s.Line != 5 || s.Col != 29 {
		t.Fatalf("the < site: %+v, want ids [5 6] at 5:29", s)
	}
	if s := got[7]; s.Line != 7 || s.Col != 9 {
		t.Fatalf("the * site: %+v, want 7:9", s)
	}
	// A disabled site stays as it was, and its import goes when none is left.
	out, _, _, err = Schemata("example.com/m", "p/p.go", []byte(src), muts, ids, map[int]bool{1: true, 2: true, 3: true, 4: true, 5: true, 6: true, 7: true})
	if err != nil || string(out) != src {
		t.Fatalf("all disabled: %v\n%s", err, out)
	}
}

// TestBlameTheInnermostGuardBeforeTheError: a type error is put on the
// last guard at or before it.
func TestBlameTheInnermostGuardBeforeTheError(t *testing.T) {
	sites := []SchemataSite{{IDs: []int{1}, Line: 3, Col: 5}, {IDs: []int{2}, Line: 3, Col: 20}, {IDs: []int{3}, Line: 4, Col: 2}}
	for _, c := range []struct {
		line, col, want int
		disabled        map[int]bool
	}{
		{3, 25, 2, nil},
		{3, 10, 1, nil},
		{3, 25, 1, map[int]bool{2: true}},
		{6, 1, 3, nil},
		{3, 20, 2, nil}, // at the guard itself
	} {
		s, ok := blame(sites, c.line, c.col, c.disabled)
		if !ok || s.IDs[0] != c.want {
			t.Errorf("error at %d:%d (disabled %v): blamed %+v, want site %d", c.line, c.col, c.disabled, s, c.want)
		}
	}
	if _, ok := blame(sites, 2, 1, nil); ok {
		t.Error("an error before every guard was blamed on one")
	}
	// The order of the sites does not matter: the nearest guard before
	// the error is blamed.
	shuffled := []SchemataSite{sites[2], sites[1], sites[0]}
	for _, c := range []struct{ line, col, want int }{{3, 25, 2}, {3, 10, 1}, {6, 1, 3}} {
		if s, ok := blame(shuffled, c.line, c.col, nil); !ok || s.IDs[0] != c.want {
			t.Errorf("sites out of order, error at %d:%d: blamed %+v, want site %d", c.line, c.col, s, c.want)
		}
	}
}

// TestCoverageSelectsByGuard: a mutant is selected by a test exactly when
// a block the test ran holds its guard, block ends exclusive; a guard in
// no block (a case clause's expression) is selected when its function ran.
func TestCoverageSelectsByGuard(t *testing.T) {
	prof := "mode: atomic\n" +
		"example.com/m/p/p.go:3.40,5.3 2 1\n" +
		"example.com/m/p/p.go:5.3,7.2 1 0\n" +
		"example.com/m/p/p.go:21.2,22.5 1 3\n" +
		"example.com/m/p/q.go:10.2,10.30 1 4\n"
	blocks, err := parseProfile(strings.NewReader(prof))
	if err != nil {
		t.Fatal(err)
	}
	if len(blocks) != 4 || !blocks[0].ran || blocks[1].ran {
		t.Fatalf("blocks %+v: want 4, the second not run", blocks)
	}
	guards := []guard{
		{file: "example.com/m/p/p.go", line: 4, col: 9, ids: []int{1, 2}}, // inside the first block
		{file: "example.com/m/p/p.go", line: 5, col: 3, ids: []int{3}},    // where the first ends and the unrun one starts
		{file: "example.com/m/p/p.go", line: 6, col: 1, ids: []int{4}},    // in the unrun block
		{file: "example.com/m/p/q.go", line: 10, col: 29, ids: []int{5}},  // last column inside
		{file: "example.com/m/p/q.go", line: 10, col: 30, ids: []int{6}},  // the end, outside
		{file: "example.com/m/p/r.go", line: 4, col: 9, ids: []int{7}},    // another file
		// In no block, in a function one of whose blocks ran (21.2):
		{file: "example.com/m/p/p.go", line: 23, col: 7, ids: []int{8}, fn: [4]int{20, 30, 30, 2}},
		// In no block, in a function none of whose blocks ran:
		{file: "example.com/m/p/p.go", line: 33, col: 7, ids: []int{9}, fn: [4]int{31, 30, 40, 2}},
	}
	got := coveredIDs(blocks, guards)
	want := map[int]bool{1: true, 2: true, 5: true, 8: true}
	if len(got) != len(want) {
		t.Fatalf("covered %v, want %v", got, want)
	}
	for id := range want {
		if !got[id] {
			t.Fatalf("covered %v, want %v", got, want)
		}
	}
}

// TestEnclosingFuncIsTheInnermost: a guard in a function literal belongs
// to the literal's body, one in a case clause to its function's.
func TestEnclosingFuncIsTheInnermost(t *testing.T) {
	src := "package p\n\nfunc g(a, b int) int {\n\tswitch {\n\tcase a < b:\n\t\treturn 1\n\t}\n\tf := func() bool {\n\t\treturn a == b\n\t}\n\t_ = f\n\treturn 0\n}\n"
	muts, err := FindMutants("p/p.go", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	ids := make([]int, len(muts))
	for i := range ids {
		ids[i] = i + 1
	}
	_, sites, _, err := Schemata("example.com/m", "p/p.go", []byte(src), muts, ids, nil)
	if err != nil || len(sites) != 2 {
		t.Fatalf("sites %+v, %v", sites, err)
	}
	if f := sites[0].Func; f[0] != 3 || f[2] != 13 {
		t.Errorf("the case clause's guard: function body %v, want lines 3 to 13", f)
	}
	if f := sites[1].Func; f[0] != 8 || f[2] != 10 {
		t.Errorf("the literal's guard: function body %v, want lines 8 to 10", f)
	}
}

// TestResultsResumeOnlyAnUnchangedPackage: a verdict written is read back
// for the same mutant and package hash, and not for another hash; a kill
// holds whatever judges, a survival only for the same judges.
func TestResultsResumeOnlyAnUnchangedPackage(t *testing.T) {
	path := filepath.Join(t.TempDir(), "r.jsonl")
	muts, err := FindMutants("p/p.go", []byte(genericSrc))
	if err != nil {
		t.Fatal(err)
	}
	r, err := openResults(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.add(GenericOutcome{Mutant: muts[0], Verdict: GKilled, KilledBy: "p TestX", Took: 1500 * time.Millisecond}, "h1", "tests"); err != nil {
		t.Fatal(err)
	}
	if err := r.add(GenericOutcome{Mutant: muts[1], Verdict: GSurvived}, "h1", "tests"); err != nil {
		t.Fatal(err)
	}
	r.close()
	r, err = openResults(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.close()
	o, ok := r.lookup(muts[0], "h1", "tests+scenarios")
	if !ok || o.Verdict != GKilled || o.KilledBy != "p TestX" || o.Took != 1500*time.Millisecond || !o.Resumed {
		t.Fatalf("resumed %+v, %v", o, ok)
	}
	// Two mutants at one place are two keys.
	if o, ok := r.lookup(muts[1], "h1", "tests"); !ok || o.Verdict != GSurvived || muts[0].ID() != muts[1].ID() {
		t.Fatalf("second mutant at %s: %+v, %v", muts[1].ID(), o, ok)
	}
	if _, ok := r.lookup(muts[1], "h1", "tests+scenarios"); ok {
		t.Fatal("a survivor of the tests alone was resumed when the scenarios judge too")
	}
	if _, ok := r.lookup(muts[0], "h2", "tests"); ok {
		t.Fatal("a verdict was resumed for a changed package")
	}
	if err := r.add(GenericOutcome{Mutant: muts[3], Verdict: GError}, "h1", "tests"); err != nil {
		t.Fatal(err)
	}
	if _, ok := r.lookup(muts[3], "h1", "tests"); ok {
		t.Fatal("an error was resumed as a verdict")
	}
	if _, ok := r.lookup(muts[2], "h1", "tests"); ok {
		t.Fatal("a mutant never judged was resumed")
	}
}

// TestPackageHashSeesTests: a new test in the package changes its hash, so
// its survivors are judged again.
func TestPackageHashSeesTests(t *testing.T) {
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "p"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "p", "p.go"), []byte(genericSrc), 0o644); err != nil {
		t.Fatal(err)
	}
	h1, err := packageHash(root, "p")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "p", "p_test.go"), []byte("package p\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	h2, err := packageHash(root, "p")
	if err != nil || h1 == h2 {
		t.Fatalf("hash before %s, after a new test %s (%v)", h1, h2, err)
	}
}

func TestFailedTestIsNamed(t *testing.T) {
	for out, want := range map[string]string{
		"=== RUN   TestA\n--- FAIL: TestA (0.00s)\n    a_test.go:3: no\nFAIL\n":                                "TestA",
		"Summarizing 1 Failure:\n  [FAIL] Health [It] turns unhealthy\n  /tmp/x/scenarios/health_test.go:42\n": "health_test.go:42",
		"ok\n": "",
	} {
		if got := failedTest(out); !strings.HasSuffix(got, want) || (want == "" && got != "") {
			t.Errorf("failedTest(%q) = %q, want %q", out, got, want)
		}
	}
}

// TestWrittenSourcesCompile: the switch package and the scenarios' spec
// hook, which exist only in copies, type-check against the module's
// dependencies (a hook that does not build fails every scenarios run).
func TestWrittenSourcesCompile(t *testing.T) {
	ctx := context.Background()
	m := moduleForTest(t)
	tc, err := newTypeChecker(ctx, m, []string{"scenarios/mutants"}, "github.com/onsi/ginkgo/v2", "github.com/onsi/ginkgo/v2/types", "runtime/coverage", "fmt", "path/filepath")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tc.switchPkg(); err != nil {
		t.Fatalf("the switch package: %v", err)
	}
	if errs := tc.checkSource("example.com/scenarios_test", "zz_hook_test.go", specHook); len(errs) > 0 {
		t.Fatalf("the spec hook: %v", errs)
	}
}

func TestARunOfNothingIsNoVerdict(t *testing.T) {
	for out, want := range map[string]bool{
		"testing: warning: no tests to run\nPASS\n":        true,
		"Ran 0 of 270 Specs in 0.001 seconds\nSUCCESS!\n":  true,
		"Ran 3 of 270 Specs in 2.1 seconds\nSUCCESS!\n":    false,
		"=== RUN   TestA\n--- PASS: TestA (0.00s)\nPASS\n": false,
	} {
		if got := ranNothing(out); got != want {
			t.Errorf("ranNothing(%q) = %v, want %v", out, got, want)
		}
	}
}

// TestWithoutDropsTheFlakyTestOnly: after a failure that did not repeat,
// the binary's other tests still judge.
func TestWithoutDropsTheFlakyTestOnly(t *testing.T) {
	left, _, ok := without([]string{"TestA", "TestB", "TestC"}, nil, "TestB/sub", false)
	if !ok || strings.Join(left, " ") != "TestA TestC" {
		t.Fatalf("unit: %v, %v", left, ok)
	}
	left, texts, ok := without([]string{"a_test.go:3#1", "b_test.go:9#2", "b_test.go:9#3"}, []string{"x", "y", "z"}, "/tmp/s/b_test.go:9", true)
	if !ok || strings.Join(left, " ") != "a_test.go:3#1" || strings.Join(texts, " ") != "x" {
		t.Fatalf("specs: %v %v, %v", left, texts, ok)
	}
	if _, _, ok := without([]string{"TestA"}, nil, "TestZ", false); ok {
		t.Fatal("a test not in the selection was dropped")
	}
}

// TestSchemataBehaveLikeEachMutantAlone is the promise of the schemata:
// with no mutant on, the rewritten program is the original; with mutant N
// on, it is the program with N alone applied, for every kind of mutant.
func TestSchemataBehaveLikeEachMutantAlone(t *testing.T) {
	muts, err := FindMutants("main.go", []byte(schemataProg))
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[string]bool{}
	for _, m := range muts {
		kinds[strings.Fields(m.Op)[0]] = true
	}
	for _, k := range []string{"<", "<=", ">", ">=", "==", "!=", "&&", "||", "drop", "+", "-", "*", "/", "remove"} {
		if !kinds[k] {
			t.Fatalf("the program has no %q mutant: it no longer covers every kind (%v)", k, kinds)
		}
	}
	ids := make([]int, len(muts))
	for i := range muts {
		ids[i] = i + 1
	}
	out, sites, skipped, err := Schemata("example.com/m", "main.go", []byte(schemataProg), muts, ids, nil)
	if err != nil || len(skipped) > 0 {
		t.Fatalf("schemata: skipped %v, %v", skipped, err)
	}
	if len(sites) == 0 {
		t.Fatal("no site guards found in the rewritten program")
	}
	dir := t.TempDir()
	write := func(rel, src string) { testtree.Write(t, dir, map[string]string{rel: src}) }
	write("go.mod", "module example.com/m\n\ngo 1.24\n")
	write(SwitchDir+"/switch.go", switchSource)
	run := func(src string, env ...string) string {
		t.Helper()
		write("main.go", src)
		bin := filepath.Join(dir, "prog")
		build := exec.Command("go", "build", "-o", bin, ".")
		build.Dir, build.Env = dir, append(os.Environ(), "GOWORK=off", "GOFLAGS=")
		if b, err := build.CombinedOutput(); err != nil {
			t.Fatalf("build: %v\n%s\n%s", err, b, src)
		}
		cmd := exec.Command(bin)
		// No mutant on unless env names one, whatever this test runs in.
		cmd.Env = append(append(os.Environ(), MutantEnv+"="), env...)
		b, _ := cmd.CombinedOutput() // a mutant may panic: its output still compares
		return string(b)
	}
	orig := run(schemataProg)
	if got := run(string(out)); got != orig {
		t.Fatalf("with no mutant on the schemata differ from the original:\n got %s\nwant %s", got, orig)
	}
	// One build of the schemata, then every mutant by switch.
	write("main.go", string(out))
	schemataBin := filepath.Join(dir, "schemata")
	build := exec.Command("go", "build", "-o", schemataBin, ".")
	build.Dir, build.Env = dir, append(os.Environ(), "GOWORK=off", "GOFLAGS=")
	if b, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, b)
	}
	for i, m := range muts {
		want := run(string(m.apply([]byte(schemataProg))))
		cmd := exec.Command(schemataBin)
		cmd.Env = append(os.Environ(), MutantEnv+"="+strconv.Itoa(ids[i]))
		got, _ := cmd.CombinedOutput()
		if string(got) != want {
			t.Errorf("mutant %d (%s %s): schemata give\n%s\nthe mutant alone gives\n%s", ids[i], m.ID(), m.Op, got, want)
		}
		if want == orig {
			t.Errorf("mutant %s %s does not change the program's output: the test cannot tell it", m.ID(), m.Op)
		}
	}
}
