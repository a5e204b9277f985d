package mutants

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// TestEachOperatorHasItsSlips: every operator the generic mutator swaps
// gives exactly the swaps one keystroke away, each applied in place of the
// operator and nothing else.
func TestEachOperatorHasItsSlips(t *testing.T) {
	for _, c := range []struct {
		expr string
		want []string // the expression with each mutant applied
	}{
		{"a == b", []string{"a != b"}},
		{"a != b", []string{"a == b"}},
		{"a < b", []string{"a <= b", "a >= b"}},
		{"a <= b", []string{"a < b", "a > b"}},
		{"a > b", []string{"a >= b", "a <= b"}},
		{"a >= b", []string{"a > b", "a < b"}},
		{"p && q", []string{"p || q"}},
		{"p || q", []string{"p && q"}},
		{"a + b", []string{"a - b"}},
		{"a - b", []string{"a + b"}},
		{"a * b", []string{"a / b"}},
		{"a / b", []string{"a * b"}},
		{"!p", []string{"p"}},
		{"a % b", nil},
		{"a & b", nil},
		{"a << b", nil},
		{"-a", nil},
	} {
		src := "package p\n\nfunc f(a, b int, p, q bool) any {\n\treturn " + c.expr + "\n}\n"
		ms, err := FindMutants("p/p.go", []byte(src))
		if err != nil {
			t.Fatalf("%s: %v", c.expr, err)
		}
		var got []string
		for _, m := range ms {
			if m.Line != 4 || m.Col != 9+strings.IndexAny(c.expr, "=!<>&|+-*/") {
				t.Errorf("%s: mutant %q at %d:%d, want the operator's place", c.expr, m.Op, m.Line, m.Col)
			}
			applied := string(m.apply([]byte(src)))
			line := strings.Split(applied, "\n")[3]
			got = append(got, strings.TrimPrefix(line, "\treturn "))
		}
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: mutants give %q, want %q", c.expr, got, c.want)
		}
	}
}

// TestMutantOpNamesTheChange: a mutant's Op says which operator became
// which, and what a removed call was.
func TestMutantOpNamesTheChange(t *testing.T) {
	src := "package p\n\nfunc f(a, b int, p bool, g func(int) int) bool {\n\tg(a)\n\treturn a <= b || !p\n}\n"
	ms, err := FindMutants("p/p.go", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, m := range ms {
		got = append(got, fmt.Sprintf("%s %s", m.ID(), m.Op))
	}
	want := []string{
		"p/p.go:4:2 remove call g(a)",
		"p/p.go:5:11 <= → <",
		"p/p.go:5:11 <= → >",
		"p/p.go:5:16 || → &&",
		"p/p.go:5:19 drop !",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("mutants\n got %q\nwant %q", got, want)
	}
}

// TestWhatIsNoSlip: string concatenation (which no swap compiles), data
// (constants and package variables), panics and the builtin prints give no
// mutant; a call through a selector, deferred or not, is a call statement
// like any other only when it stands alone.
func TestWhatIsNoSlip(t *testing.T) {
	for _, c := range []struct {
		body string
		want []string
	}{
		{`_ = s + "x"`, nil},
		{`_ = "x" + s`, nil},
		{`_ = 'x' + r`, nil},
		{`_ = s + s`, []string{"+ → -"}},
		{`panic(s)`, nil},
		{`print(s)`, nil},
		{`println(s)`, nil},
		{`fmt.Println(s)`, []string{"remove call fmt.Println(s)"}},
		{`defer g()`, nil},
		{`go g()`, nil},
		{`_ = len(s)`, nil},
		{`x := g; x()`, []string{"remove call x()"}},
	} {
		src := "package p\n\nimport \"fmt\"\n\nconst k = 1 + 2\n\nvar v = k < 3\n\nvar _ = fmt.Sprint\n\nfunc f(s string, r rune, g func()) {\n\t" + c.body + "\n}\n"
		ms, err := FindMutants("p/p.go", []byte(src))
		if err != nil {
			t.Fatalf("%s: %v", c.body, err)
		}
		var got []string
		for _, m := range ms {
			got = append(got, m.Op)
		}
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: mutants %q, want %q", c.body, got, c.want)
		}
	}
}

// TestAFunctionsVariablesAreLogic: constants and package variables are
// data, not mutated; a variable declared in a function is computed there
// like any assignment, and its slips are mutants.
func TestAFunctionsVariablesAreLogic(t *testing.T) {
	src := "package p\n\nconst k = 1 + 2\n\nvar v = k < 3\n\nvar (\n\tw = !v\n)\n\n" +
		"func f(a, b int) int {\n\tconst c = 2 * 3\n\tvar n = a - b\n\tvar (\n\t\tm, o = a < b, b == c\n\t)\n\t_, _ = m, o\n\treturn n\n}\n"
	ms, err := FindMutants("p/p.go", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, m := range ms {
		got = append(got, m.ID()+" "+m.Op)
	}
	want := []string{"p/p.go:13:12 - → +", "p/p.go:15:12 < → <=", "p/p.go:15:12 < → >=", "p/p.go:15:19 == → !="}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("mutants\n got %q\nwant %q", got, want)
	}
}

// TestARemovedCallIsNamedShortly: the Op of a removed call is its text on
// one line, clipped to 60 characters.
func TestARemovedCallIsNamedShortly(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"g(a)", "g(a)"},
		{"g(a,\n\t\tb)", "g(a, b)"},
		{strings.Repeat("x", 60), strings.Repeat("x", 60)},
		{strings.Repeat("x", 61), strings.Repeat("x", 57) + "..."},
	} {
		if got := clipOp(c.in); got != c.want {
			t.Errorf("clipOp(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// TestFindMutantsRefusesWhatDoesNotParse: a file that is not Go is an
// error, not a file without mutants.
func TestFindMutantsRefusesWhatDoesNotParse(t *testing.T) {
	if _, err := FindMutants("p/p.go", []byte("package p\n\nfunc f( {\n")); err == nil {
		t.Fatal("no error for a file that does not parse")
	}
}

// TestMutantsComeInFileOrder: mutants are sorted by where they change
// the file, nested expressions included.
func TestMutantsComeInFileOrder(t *testing.T) {
	src := "package p\n\nfunc f(a, b, c int) bool {\n\treturn a+b*c < c-a && !(a == b)\n}\n"
	ms, err := FindMutants("p/p.go", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	for i := 1; i < len(ms); i++ {
		if ms[i].from < ms[i-1].from {
			t.Fatalf("mutant %d (%s at %d) before mutant %d (%s at %d)", i, ms[i].Op, ms[i].from, i-1, ms[i-1].Op, ms[i-1].from)
		}
	}
	var cols []int
	for _, m := range ms {
		cols = append(cols, m.Col)
	}
	want := []int{10, 12, 15, 15, 18, 21, 24, 28}
	if !reflect.DeepEqual(cols, want) {
		t.Errorf("columns %v, want %v", cols, want)
	}
}

// TestGenericScoreCountsEachVerdict: killed and timed out kill; survived
// and not covered are judged but not killed; not viable, not expressible
// and errors are no verdict on the tests.
func TestGenericScoreCountsEachVerdict(t *testing.T) {
	for _, c := range []struct {
		v              GenericVerdict
		killed, judged int
	}{
		{GKilled, 1, 1},
		{GTimedOut, 1, 1},
		{GSurvived, 0, 1},
		{GNotCovered, 0, 1},
		{GNotViable, 0, 0},
		{GNotExpressible, 0, 0},
		{GError, 0, 0},
	} {
		k, j := GenericScore([]GenericOutcome{{Verdict: c.v}, {Verdict: c.v}})
		if k != 2*c.killed || j != 2*c.judged {
			t.Errorf("two %q: killed %d of %d, want %d of %d", c.v, k, j, 2*c.killed, 2*c.judged)
		}
	}
}

// TestSelectMutantsByPlaceThenLimit: --at keeps the mutants at the named
// places (every mutant of a place), in file order; --limit then keeps the
// first N.
func TestSelectMutantsByPlaceThenLimit(t *testing.T) {
	all := []GenericMutant{
		{File: "p/a.go", Line: 1, Col: 2, Op: "< → <="},
		{File: "p/a.go", Line: 1, Col: 2, Op: "< → >="},
		{File: "p/a.go", Line: 3, Col: 4, Op: "drop !"},
		{File: "p/b.go", Line: 1, Col: 2, Op: "+ → -"},
	}
	ops := func(ms []GenericMutant) string {
		var s []string
		for _, m := range ms {
			s = append(s, m.ID()+" "+m.Op)
		}
		return strings.Join(s, "; ")
	}
	for _, c := range []struct {
		ids   []string
		limit int
		want  string
	}{
		{nil, 0, ops(all)},
		{nil, 2, ops(all[:2])},
		{nil, 9, ops(all)},
		{[]string{"p/b.go:1:2", "p/a.go:1:2"}, 0, ops([]GenericMutant{all[0], all[1], all[3]})},
		{[]string{"p/b.go:1:2", "p/a.go:1:2"}, 1, ops(all[:1])},
		{[]string{"p/c.go:1:2"}, 0, ""},
	} {
		if got := ops(selectMutants(all, c.ids, c.limit)); got != c.want {
			t.Errorf("ids %v limit %d: %s, want %s", c.ids, c.limit, got, c.want)
		}
	}
}
