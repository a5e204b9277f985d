package mutants

import (
	"reflect"
	"strings"
	"testing"
)

// schemataOf rewrites src with every mutant FindMutants gives it, numbered
// from 1.
func schemataOf(t *testing.T, src string) (string, []SchemataSite, []int, []GenericMutant) {
	t.Helper()
	muts, err := FindMutants("p/p.go", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	ids := make([]int, len(muts))
	for i := range ids {
		ids[i] = i + 1
	}
	out, sites, skipped, err := Schemata("example.com/m", "p/p.go", []byte(src), muts, ids, nil)
	if err != nil {
		t.Fatal(err)
	}
	return string(out), sites, skipped, muts
}

// TestSchemataGuardWhatTheMutatorFinds: the schemata guard the mutants of
// a function's variables as the mutator finds them, and leave constants
// and package variables as they are.
func TestSchemataGuardWhatTheMutatorFinds(t *testing.T) {
	src := "package p\n\nconst k = 1 + 2\n\nvar v = k < 3\n\nfunc f(a, b int) int {\n\tconst c = 2 * 3\n\tvar n = a - b\n\treturn n + c\n}\n"
	out, sites, skipped, muts := schemataOf(t, src)
	if len(muts) != 2 || len(skipped) != 0 || len(sites) != 2 {
		t.Fatalf("%d mutants, %d sites, skipped %v:\n%s", len(muts), len(sites), skipped, out)
	}
	for _, w := range []string{"const k = 1 + 2\n", "var v = k < 3\n", "const c = 2 * 3\n",
		"var n = __mcpchaosm.Arith(1, \"-\", a, b)\n", "return __mcpchaosm.Arith(2, \"+\", n, c)\n"} {
		if !strings.Contains(out, w) {
			t.Errorf("the rewritten file lacks %q:\n%s", w, out)
		}
	}
}

// TestACallOutsideAStatementListIsSkipped: a call statement that is no
// member of a block, a case or a select clause (a for loop's post
// statement) cannot be wrapped in an if: its mutant is returned as
// skipped, the call is left as it is, and the other sites are guarded.
func TestACallOutsideAStatementListIsSkipped(t *testing.T) {
	src := "package p\n\nfunc f(n int, g func()) {\n\tfor i := 0; i < n; g() {\n\t\ti++\n\t\tg()\n\t}\n\tswitch n {\n\tcase 1:\n\t\tg()\n\t}\n\tselect {\n\tdefault:\n\t\tg()\n\t}\n}\n"
	out, sites, skipped, muts := schemataOf(t, src)
	var ops []string
	for _, m := range muts {
		ops = append(ops, m.Op)
	}
	want := []string{"< → <=", "< → >=", "remove call g()", "remove call g()", "remove call g()", "remove call g()"}
	if !reflect.DeepEqual(ops, want) {
		t.Fatalf("mutants %q, want %q", ops, want)
	}
	if !reflect.DeepEqual(skipped, []int{3}) {
		t.Errorf("skipped %v, want [3], the post statement's call", skipped)
	}
	if len(sites) != 4 {
		t.Errorf("%d sites, want the comparison and three calls:\n%s", len(sites), out)
	}
	for _, w := range []string{
		"for i := 0; __mcpchaosm.Cmp(1, \"<\", i, n); g() {",
		"\t\tif !__mcpchaosm.On(4) { g() }\n",
		"\t\tif !__mcpchaosm.On(5) { g() }\n",
		"\t\tif !__mcpchaosm.On(6) { g() }\n",
	} {
		if !strings.Contains(out, w) {
			t.Errorf("the rewritten file lacks %q:\n%s", w, out)
		}
	}
}

// TestSchemataOfAFileWithoutMutants: a file with no mutant is left as it
// is, without the switch's import.
func TestSchemataOfAFileWithoutMutants(t *testing.T) {
	src := "package p\n\nfunc f(a int) int { return a % 2 }\n"
	out, sites, skipped, muts := schemataOf(t, src)
	if out != src || sites != nil || skipped != nil || len(muts) != 0 {
		t.Errorf("rewritten to %q, sites %v, skipped %v", out, sites, skipped)
	}
	if _, _, _, err := Schemata("example.com/m", "p/p.go", []byte("package p\nfunc ("), nil, nil, nil); err == nil {
		t.Error("no error for a file that does not parse")
	}
}

// TestEachGuardIsFoundWhereItIs: siteAt finds each guard of the rewritten
// text at its line and column (1-based, in bytes), the first line
// included, and ignores guards of numbers that are no site's first.
func TestEachGuardIsFoundWhereItIs(t *testing.T) {
	out := []byte("__mcpchaosm.Not(1, x)\n\ny := __mcpchaosm.Cmp(2, \"<\", a, b) && __mcpchaosm.Flip(9, c)\n")
	found := []site{{ids: []int{1}, guard: 1}, {ids: []int{2, 3}, guard: 2}}
	got := siteAt(out, found)
	want := []SchemataSite{{IDs: []int{1}, Line: 1, Col: 1}, {IDs: []int{2, 3}, Line: 3, Col: 6}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("sites %+v, want %+v", got, want)
	}
}

// TestHalfAComparisonIsGuarded: when only one of a comparison's two
// mutants is to be judged (a rerun resumed the other's verdict), its site
// is still guarded, by the numbers of the pair (consecutive), so the
// mutant is judged like any other, never left unguarded and reported as
// not covered.
func TestHalfAComparisonIsGuarded(t *testing.T) {
	src := "package p\n\nfunc f(a, b int) bool { return a < b }\n"
	muts, err := FindMutants("p/p.go", []byte(src))
	if err != nil || len(muts) != 2 {
		t.Fatalf("%d mutants, %v", len(muts), err)
	}
	for i, want := range []string{"__mcpchaosm.Cmp(4, \"<\", a, b)", "__mcpchaosm.Cmp(4, \"<\", a, b)"} {
		out, sites, skipped, err := Schemata("example.com/m", "p/p.go", []byte(src), muts[i:i+1], []int{4 + i}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(out), want) || len(skipped) != 0 || len(sites) != 1 || !reflect.DeepEqual(sites[0].IDs, []int{4 + i}) {
			t.Errorf("only %s (number %d): sites %+v, skipped %v:\n%s", muts[i].Op, 4+i, sites, skipped, out)
		}
	}
}

// TestAGuardsFunctionIsTheOneAroundIt: one-line functions one after the
// other each hold their own guard, whatever the columns.
func TestAGuardsFunctionIsTheOneAroundIt(t *testing.T) {
	src := "package p\n\nfunc a(x, y int) bool { return x < y }\n\nfunc b(x, y int) int { return x + y }\n"
	out, sites, _, _ := schemataOf(t, src)
	if len(sites) != 2 {
		t.Fatalf("sites %+v:\n%s", sites, out)
	}
	for i, line := range []int{3, 5} {
		if f := sites[i].Func; f[0] != line || f[2] != line || sites[i].Line != line {
			t.Errorf("the guard at %d:%d: function body %v, want the one on line %d", sites[i].Line, sites[i].Col, f, line)
		}
	}
}
