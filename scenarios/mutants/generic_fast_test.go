package mutants

import (
	"bytes"
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpchaos/mcpchaos/internal/testtree"
)

// schemataModule writes a module whose package p has one mutant of each
// verdict a schemata run gives: Less's < to <= (survives: no test
// compares equal numbers), the first of the package, and to >= (killed
// by TestLess), Untested's * (no test runs it: not covered), Size's +
// (an array length: builds alone, but no guard can stand in a constant:
// not expressible), Cat's + (on strings: not viable) and dec's - (in a
// file this build leaves out: not viable), and in a file of their own
// Neg's ! (killed by TestNeg) and Pos's > (a fuzz test's seed kills the
// <= and misses the >=). TestBroken fails with no mutant on: it judges
// nothing; TestFlaky fails the first time it runs with any mutant on,
// then passes; an example runs Less too, a benchmark judges nothing.
// Package q's test sees Less's mutants too. It returns the
// module's root.
func schemataModule(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	testtree.Write(t, dir, map[string]string{
		"go.mod": "module example.com/sch\n\ngo 1.22\n",
		"p/p.go": `package p

// Less reports a < b.
func Less(a, b int) bool { return a < b }

// Untested doubles a; no test runs it.
func Untested(a int) int { return a * 2 }

// Size is the length of an array of 2+1 ints.
func Size() int { return len([2 + 1]int{}) }

// Cat joins a and b.
func Cat(a, b string) string { return a + b }
`,
		"q/q_test.go": `package q

import (
	"testing"

	"example.com/sch/p"
)

func TestQ(t *testing.T) {
	if !p.Less(1, 2) || p.Less(2, 1) {
		t.Fatal("q sees Less wrong")
	}
}
`,
		"p/r.go":         "package p\n\n// Neg is not b.\nfunc Neg(b bool) bool { return !b }\n\n// Pos reports n > 0.\nfunc Pos(n int) bool { return n > 0 }\n",
		"p/r_test.go":    "package p\n\nimport \"testing\"\n\nfunc TestNeg(t *testing.T) {\n\tif Neg(true) {\n\t\tt.Fatal(\"Neg is wrong\")\n\t}\n}\n\nfunc FuzzPos(f *testing.F) {\n\tf.Add(5)\n\tf.Fuzz(func(t *testing.T, n int) {\n\t\tif !Pos(n) || Pos(-n) {\n\t\t\tt.Fatal(\"Pos is wrong\")\n\t\t}\n\t})\n}\n",
		"p/z_ignored.go": "//go:build ignore\n\npackage p\n\nfunc dec(a int) int { return a - 1 }\n",
		"p/p_test.go": `package p

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

func ExampleLess() {
	fmt.Println(Less(1, 2))
	// Output: true
}

func BenchmarkLess(b *testing.B) {
	for range b.N {
		Less(1, 2)
	}
}

func TestLess(t *testing.T) {
	if !Less(1, 2) || Less(2, 1) {
		t.Fatal("Less is wrong")
	}
}

func TestBroken(t *testing.T) { t.Fatal("fails with no mutant on") }

// TestFlaky fails the first time it runs with a mutant on, whatever
// the mutant.
func TestFlaky(t *testing.T) {
	Less(1, 2)
	if os.Getenv("MCPCHAOS_MUTANT") == "" {
		return
	}
	marker := filepath.Join(os.Getenv("SCH_MARKER_DIR"), "ran")
	if _, err := os.Stat(marker); err != nil {
		_ = os.WriteFile(marker, nil, 0o644)
		t.Fatal("a flake")
	}
}
`,
	})
	if out, err := exec.Command("git", "init", "-q", dir).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v: %s", err, out)
	}
	return dir
}

// TestRunSchemataGivesEachVerdict is the schemata run end to end on a
// small module: each mutant type-checked alone (not viable), written into
// one guarded build (not expressible), selected by the coverage of each
// test run once with no mutant on (not covered; a test failing there
// judges nothing) and judged by the tests that cover it (killed, failing
// twice, or survived; a test that fails once and passes when run again
// kills nothing, and the others still judge; the mutated package's own
// tests judge first). The verdicts go to the
// results file, and a rerun of the unchanged package resumes every one
// without a build.
func TestRunSchemataGivesEachVerdict(t *testing.T) {
	dir := schemataModule(t)
	t.Setenv("SCH_MARKER_DIR", t.TempDir())
	// Started with mutant 2 (Less's < to >=) switched on in its
	// environment, as in a mutation run of this package, the run still
	// records coverage with no mutant on and judges each mutant alone.
	t.Setenv(MutantEnv, "2")
	results := filepath.Join(t.TempDir(), "r.jsonl")
	var progress bytes.Buffer
	opts := SchemataOptions{
		Pkgs:     []string{"./p"},
		TestPkgs: []string{"./..."},
		Timeout:  time.Minute,
		Results:  results,
		Dir:      dir,
		Progress: &progress,
	}
	outs, err := RunSchemata(context.Background(), opts)
	if err != nil {
		t.Fatalf("%v\n%s", err, progress.String())
	}
	want := []string{
		"p/p.go:4:37 < → <=: survived",
		"p/p.go:4:37 < → >=: killed by p TestLess (failed twice)",
		"p/p.go:7:37 * → /: not covered",
		"p/p.go:10:33 + → -: not expressible",
		"p/p.go:13:41 + → -: not viable",
		"p/r.go:4:32 drop !: killed by p TestNeg (failed twice)",
		"p/r.go:7:33 > → >=: survived",
		"p/r.go:7:33 > → <=: killed by p FuzzPos (failed twice)",
		"p/z_ignored.go:5:32 - → +: not viable",
	}
	verdicts := func(outs []GenericOutcome) string {
		var got []string
		for _, o := range outs {
			s := o.Mutant.ID() + " " + o.Mutant.Op + ": " + string(o.Verdict)
			if o.KilledBy != "" {
				s += " by " + o.KilledBy
			}
			got = append(got, s)
		}
		return strings.Join(got, "\n")
	}
	if got := verdicts(outs); got != strings.Join(want, "\n") {
		t.Fatalf("verdicts\n%s\nwant\n%s\nprogress:\n%s", got, strings.Join(want, "\n"), progress.String())
	}
	for _, d := range []struct {
		i    int
		want string
	}{
		{0, "failed once, passed when run again (not a kill): p TestFlaky; passed p: TestLess TestFlaky ExampleLess; q: TestQ"},
		{1, "Less is wrong"},
		{2, "no test or spec runs this code"},
		{3, "not expressible in the schemata"},
		{4, "does not compile"},
		{6, "passed p: FuzzPos"},
		{8, "not compiled in this build"},
	} {
		if !strings.Contains(outs[d.i].Detail, d.want) {
			t.Errorf("%s %s: detail %q, want it to say %q", outs[d.i].Mutant.ID(), outs[d.i].Mutant.Op, outs[d.i].Detail, d.want)
		}
	}
	if d := outs[6].Detail; d != "passed p: FuzzPos" {
		t.Errorf("a survivor no test failed under: detail %q, want what passed alone", d)
	}
	if strings.Contains(outs[0].Detail, "TestBroken") {
		t.Errorf("a test that fails with no mutant on judged: %s", outs[0].Detail)
	}
	for _, w := range []string{
		"generic: 9 mutants in p\n",
		"generic: 0 resumed from " + results + ", 2 not viable, 7 to judge\n",
		"generic: schemata written (1 not expressible)",
		"generic: built p\n",
		"generic: built q\n",
		"generic: 2 test binaries built in",
		"generic: p TestBroken fails with no mutant on: it judges nothing",
		"generic: coverage of p's tests recorded\n",
		"generic: coverage of q's tests recorded\n",
		"generic: coverage recorded in",
		"[1/6] p/p.go:4:37 < → <=: survived",
		"[3/6] p/p.go:7:37 * → /: not covered",
	} {
		if !strings.Contains(progress.String(), w) {
			t.Errorf("progress lacks %q:\n%s", w, progress.String())
		}
	}

	// The rerun: the same verdicts, every one read back, nothing built.
	progress.Reset()
	again, err := RunSchemata(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	if got := verdicts(again); got != strings.Join(want, "\n") {
		t.Errorf("resumed verdicts\n%s\nwant\n%s", got, strings.Join(want, "\n"))
	}
	for _, o := range again {
		if !o.Resumed {
			t.Errorf("%s %s judged again", o.Mutant.ID(), o.Mutant.Op)
		}
	}
	if !strings.Contains(progress.String(), "9 resumed") || strings.Contains(progress.String(), "built") {
		t.Errorf("the rerun's progress:\n%s", progress.String())
	}

	// --at and --limit: only the mutants asked for. The second of Less's
	// two mutants ended in an error, which is no verdict: it alone is
	// judged again, its pair's verdict resumed, and still killed.
	r, err := openResults(results)
	if err != nil {
		t.Fatal(err)
	}
	hash, err := packageHash(dir, "p")
	if err != nil {
		t.Fatal(err)
	}
	if err := r.add(GenericOutcome{Mutant: outs[1].Mutant, Verdict: GError}, hash, "tests/v2"); err != nil {
		t.Fatal(err)
	}
	r.close()
	one, err := RunSchemata(context.Background(), SchemataOptions{Pkgs: []string{"p"}, TestPkgs: []string{"./..."}, Results: results,
		Dir: dir, IDs: []string{"p/p.go:7:37", "p/p.go:4:37"}, Limit: 2})
	if err != nil {
		t.Fatal(err)
	}
	if got := verdicts(one); got != strings.Join(want[:2], "\n") {
		t.Errorf("--at 7:37,4:37 --limit 2 gave\n%s\nwant\n%s", got, strings.Join(want[:2], "\n"))
	}
	if len(one) == 2 && (!one[0].Resumed || one[1].Resumed) {
		t.Errorf("resumed: %v and %v; want the first resumed, the second judged again", one[0].Resumed, one[1].Resumed)
	}
}

// TestRunSchemataStopsAtTestsItCannotList: a test pattern go list cannot
// resolve, or a test package that does not build on the schemata, is an
// error of the run, not a run whose mutants no test covers.
func TestRunSchemataStopsAtTestsItCannotList(t *testing.T) {
	dir := schemataModule(t)
	testtree.Write(t, dir, map[string]string{"bad/bad_test.go": "package bad\n\nimport \"testing\"\n\nfunc TestBad(t *testing.T) { undefined() }\n"})
	for _, c := range []struct{ pkgs, want string }{
		{"./nope", "go list ./nope"},
		{"./bad", "building the tests of bad on the schemata"},
	} {
		outs, err := RunSchemata(context.Background(), SchemataOptions{Pkgs: []string{"p"}, TestPkgs: []string{c.pkgs}, Timeout: time.Minute, Dir: dir})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("tests %s: %v (%d outcomes), want an error saying %q", c.pkgs, err, len(outs), c.want)
		}
	}
}
