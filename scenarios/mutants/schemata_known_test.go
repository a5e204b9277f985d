package mutants

import (
	"bufio"
	"context"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcpchaos/mcpchaos/internal/testtree"
	"github.com/mcpchaos/mcpchaos/scenarios/harness"
)

// knownModuleP is the package the shared-tree tests mutate: functions,
// methods with unnamed and blank receivers and parameters, a variadic
// method with named results, a generic function, function literals in a
// package-level variable, and code outside bodies.
const knownModuleP = `package p

import "strconv"

// T holds a number.
type T struct{ n int }

// F is one.
func F() int {
	return 1
}

// G names T.
func (T) G(int, string) string {
	return "g"
}

// H sums xs.
func (t *T) H(xs ...int) (n int) {
	for _, x := range xs {
		n += x
	}
	return n + t.n
}

// Boom does nothing.
func Boom(_ int) {
	var s []int
	_ = s
}

// Same returns k.
func Same[K comparable](k K) K { return k }

// V is "1".
var V = strconv.Itoa(1)

// Ops are operations by name.
var Ops = map[string]func(int) int{
	"double": func(x int) int {
		return 2 * x
	},
	"drop": func(_ int) int { return 0 },
}
`

// knownModuleExtra is another file of p, with an import of its own.
const knownModuleExtra = `package p

import "errors"

// Extra is 0.
func Extra() int {
	if errors.Is(nil, nil) {
		return 0
	}
	return 1
}
`

// knownModuleMain prints what p's functions return, then the same from a
// child process of itself: a switched-on mutant must reach it too.
const knownModuleMain = `package main

import (
	"fmt"
	"os"
	"os/exec"

	"example.com/tiny/p"
)

func main() {
	if len(os.Args) > 1 && os.Args[1] == "boom" {
		p.Boom(0)
	}
	t := &p.T{}
	fmt.Printf("%d %s %d %d %d %d %d", p.F(), p.T{}.G(1, "x"), t.H(1, 2), p.Same(7), p.Ops["double"](2), p.Ops["drop"](1), p.Extra())
	if len(os.Args) > 1 && os.Args[1] == "child" {
		return
	}
	out, err := exec.Command(os.Args[0], "child").Output()
	if err != nil {
		fmt.Println(" child:", err)
		os.Exit(1)
	}
	fmt.Printf(" | %s\n", out)
}
`

// knownModuleTest kills "f-two" only when no known mutant is switched on
// (so the shared tree, where one is, lets it survive and its own copy kills
// it) and "f-three" anywhere.
const knownModuleTest = `package p

import (
	"os"
	"testing"
)

func TestFOnlyAlone(t *testing.T) {
	if F() != 1 && os.Getenv("MCPCHAOS_KNOWN_MUTANT") == "" {
		t.Fatalf("F() = %d", F())
	}
}

func TestFIsNotThree(t *testing.T) {
	if F() == 3 {
		t.Fatal("F() = 3")
	}
}
`

// gitIn runs git in dir.
func gitIn(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v: %s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// knownModule writes and commits the module the shared-tree tests mutate.
func knownModule(t *testing.T) *module {
	t.Helper()
	dir := t.TempDir()
	testtree.Write(t, dir, map[string]string{
		"go.mod": "module example.com/tiny\n\ngo 1.22\n", "README.md": "tiny\n",
		"p/p.go": knownModuleP, "p/p_test.go": knownModuleTest, "p/extra.go": knownModuleExtra,
		"cmd/tiny/main.go": knownModuleMain,
	})
	gitIn(t, dir, "init", "-q")
	gitIn(t, dir, "add", "-A")
	gitIn(t, dir, "commit", "-q", "-m", "tiny")
	m, err := findModule(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// patchOf makes a patch as the known mutants' are made: edits (old →
// new) of files, files written whole (write) and removed (remove), then
// git diff -U1; the work tree is reset afterwards.
func patchOf(t *testing.T, dir string, edits map[string][2]string, write map[string]string, remove ...string) string {
	t.Helper()
	for f, e := range edits {
		path := filepath.Join(dir, f)
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(b), e[0]) {
			t.Fatalf("%s has no %q", f, e[0])
		}
		if err := os.WriteFile(path, []byte(strings.Replace(string(b), e[0], e[1], 1)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for f, body := range write {
		if err := os.WriteFile(filepath.Join(dir, f), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range remove {
		if err := os.Remove(filepath.Join(dir, f)); err != nil {
			t.Fatal(err)
		}
	}
	gitIn(t, dir, "add", "-A")
	patch := gitIn(t, dir, "diff", "--cached", "-U1")
	gitIn(t, dir, "reset", "-q", "--hard")
	return patch
}

// knownMutants are the tiny module's mutants: eight that change only
// function bodies, the rest something else.
func knownMutants(t *testing.T, dir string) []Mutant {
	p := "p/p.go"
	body := func(old, new string) map[string][2]string { return map[string][2]string{p: {old, new}} }
	mk := func(name string, patch string) Mutant {
		return Mutant{Name: name, Patch: patch, Kill: goTest("./p", "^TestFIsNotThree$")}
	}
	return []Mutant{
		mk("f-two", patchOf(t, dir, body("\treturn 1\n", "\treturn 2\n"), nil)),
		mk("f-three", patchOf(t, dir, body("\treturn 1\n", "\treturn 3\n"), nil)),
		mk("g-blank", patchOf(t, dir, body(`return "g"`, `return "G"`), nil)),
		mk("h-variadic", patchOf(t, dir, body("return n + t.n", "return n*10 + t.n"), nil)),
		mk("same-generic", patchOf(t, dir, body("{ return k }", "{ var z K; return z }"), nil)),
		// Boom's patched body panics two lines further down than its
		// first line: the panic must name the patched file's line.
		mk("boom", patchOf(t, dir, body("\tvar s []int\n\t_ = s\n", "\tvar s []int\n\t_ = s\n\t// the index is out of range\n\t_ = s[len(s)]\n"), nil)),
		mk("lit-triple", patchOf(t, dir, body("return 2 * x", "return 3 * x"), nil)),
		mk("lit-blank", patchOf(t, dir, body("{ return 0 }", "{ return 9 }"), nil)),
		mk("lit-signature-changed", patchOf(t, dir, body("func(_ int) int { return 0 }", "func(int) int { return 0 }"), nil)),
		// errors is linked anyway (strconv imports it): placed.
		mk("import-needed", patchOf(t, dir, body("import \"strconv\"\n\n// T holds a number.\ntype T struct{ n int }\n\n// F is one.\nfunc F() int {\n\treturn 1",
			"import (\n\t\"errors\"\n\t\"strconv\"\n)\n\n// T holds a number.\ntype T struct{ n int }\n\n// F is one.\nfunc F() int {\n\tif errors.Is(nil, nil) {\n\t\treturn 5\n\t}\n\treturn 1"), nil)),
		// Extra's file loses its only import.
		mk("import-dropped", patchOf(t, dir, map[string][2]string{"p/extra.go": {"import \"errors\"\n\n// Extra is 0.\nfunc Extra() int {\n\tif errors.Is(nil, nil) {\n\t\treturn 0\n\t}\n\treturn 1",
			"// Extra is 0.\nfunc Extra() int {\n\treturn 7"}}, nil)),
		mk("type-changed", patchOf(t, dir, body("type T struct{ n int }", "type T struct{ n, m int }"), nil)),
		mk("import-added", patchOf(t, dir, body("import \"strconv\"", "import (\n\t\"fmt\"\n\t\"strconv\"\n)"), nil)),
		mk("signature-changed", patchOf(t, dir, body("func F() int {\n\treturn 1", "func F() int64 {\n\treturn 1"), nil)),
		mk("var-changed", patchOf(t, dir, body("strconv.Itoa(1)", "strconv.Itoa(2)"), nil)),
		mk("doc-changed", patchOf(t, dir, body("// F is one.", "// F is 1."), nil)),
		mk("file-added", patchOf(t, dir, nil, map[string]string{"p/q.go": "package p\n"})),
		mk("file-removed", patchOf(t, dir, nil, nil, "p/extra.go")),
		mk("not-go", patchOf(t, dir, map[string][2]string{"README.md": {"tiny", "small"}}, nil)),
	}
}

// Only patches that change nothing but Go function bodies are shared;
// every other one says why it keeps its own copy, and a patch that adds or
// removes a file is refused.
func TestOnlyFunctionBodiesAreShared(t *testing.T) {
	m := knownModule(t)
	muts := knownMutants(t, m.root)
	k, err := PlanKnownSchemata(context.Background(), m.root, muts)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{ // mutant → "" (placed) or what its reason says
		"f-two": "", "f-three": "", "g-blank": "", "h-variadic": "", "same-generic": "", "boom": "",
		"lit-triple": "", "lit-blank": "", "lit-signature-changed": "outside function bodies",
		"import-needed": "", "import-dropped": "",
		"type-changed": "outside function bodies", "import-added": "its package now links",
		"signature-changed": "outside function bodies", "var-changed": "outside function bodies",
		"doc-changed":  "outside function bodies",
		"file-added":   "adds, removes or renames a file (p/q.go)",
		"file-removed": "adds, removes or renames a file (p/extra.go)",
		"not-go":       "not Go (README.md)",
	}
	for _, mu := range muts {
		why, notShared := k.NotShared[mu.Name]
		switch {
		case want[mu.Name] == "" && !k.Shared(mu.Name):
			t.Errorf("%s: not shared (%s), want it placed", mu.Name, why)
		case want[mu.Name] != "" && k.Shared(mu.Name):
			t.Errorf("%s: placed at %v, want it left to its own copy (%s)", mu.Name, k.Placed[mu.Name], want[mu.Name])
		case want[mu.Name] != "" && !strings.Contains(why, want[mu.Name]):
			t.Errorf("%s: not shared because %q, want a reason saying %q", mu.Name, why, want[mu.Name])
		case k.Shared(mu.Name) == notShared:
			t.Errorf("%s: placed %v and not shared %v: want exactly one", mu.Name, k.Shared(mu.Name), notShared)
		}
	}
	if got := slices.Sorted(mapKeysOf(k.Files)); !slices.Equal(got, []string{"p/extra.go", "p/p.go"}) {
		t.Errorf("rewritten files %v, want only p/extra.go and p/p.go", got)
	}
}

func mapKeysOf[V any](m map[string]V) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// The shared tree keeps every line of the original where it was (a
// failure in unpatched code names the line it always did), names each
// patched function's sibling after the function and the mutant, and says
// which functions each mutant patches.
func TestTheSharedTreeKeepsLinesAndNamesThePatchedFunctions(t *testing.T) {
	m := knownModule(t)
	muts := knownMutants(t, m.root)
	k, err := PlanKnownSchemata(context.Background(), m.root, muts)
	if err != nil {
		t.Fatal(err)
	}
	orig := strings.Split(knownModuleP, "\n")
	got := strings.Split(string(k.Files["p/p.go"]), "\n")
	// A patched function's first line gains the dispatch (and names for
	// its unnamed and blank parameters); every other line is as it was.
	opening := map[string]string{"func F() int {": "func F() int {", "func (T) G(int, string) string {": "func (__mcpchaosr0 T) G(__mcpchaosp0 int, __mcpchaosp1 string) string {",
		"func (t *T) H(xs ...int) (n int) {": "func (t *T) H(xs ...int) (n int) {", "func Boom(_ int) {": "func Boom(__mcpchaosp0 int) {",
		"func Same[K comparable](k K) K { return k }": "func Same[K comparable](k K) K {",
		"\t\"double\": func(x int) int {":             "\t\"double\": func(x int) int {",
		"\t\"drop\": func(_ int) int { return 0 },":   "\t\"drop\": func(__mcpchaosp0 int) int {"}
	for i, l := range orig {
		want := l
		if o, ok := opening[l]; ok {
			want = o
		}
		if i >= len(got) || !strings.HasPrefix(got[i], want) {
			t.Fatalf("line %d of the shared tree's p/p.go is %q, want it to start with %q", i+1, got[min(i, len(got)-1)], want)
		}
	}
	wantPlaced := map[string][]string{
		"f-two": {"p/p.go:F"}, "f-three": {"p/p.go:F"}, "g-blank": {"p/p.go:(T).G"},
		"h-variadic": {"p/p.go:(*T).H"}, "same-generic": {"p/p.go:Same"}, "boom": {"p/p.go:Boom"},
		"lit-triple": {"p/p.go:Ops.func1"}, "lit-blank": {"p/p.go:Ops.func2"},
		"import-needed": {"p/p.go:F"}, "import-dropped": {"p/extra.go:Extra"},
	}
	for name, fns := range wantPlaced {
		if !slices.Equal(k.Placed[name], fns) {
			t.Errorf("%s placed at %v, want %v", name, k.Placed[name], fns)
		}
	}
	f, err := parser.ParseFile(token.NewFileSet(), "p.go", k.Files["p/p.go"], 0)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, d := range f.Decls {
		if fd, ok := d.(*ast.FuncDecl); ok {
			names = append(names, fd.Name.Name)
		}
	}
	for _, n := range []string{"F__known_f_two", "F__known_f_three", "G__known_g_blank", "H__known_h_variadic", "Same__known_same_generic", "Boom__known_boom",
		"Ops__known_lit_triple", "Ops__known_lit_blank"} {
		if !slices.Contains(names, n) {
			t.Errorf("no function %s in the shared tree's p/p.go (it has %v)", n, names)
		}
	}
}

// Built, the shared tree is the original with no mutant switched on, and
// each mutant's own code with MCPCHAOS_KNOWN_MUTANT naming it, in the
// process and in the processes it starts; a panic in a patched body names
// the line it has in the mutant's own copy.
func TestTheSharedTreeSwitchesOneMutantOnByName(t *testing.T) {
	m := knownModule(t)
	muts := knownMutants(t, m.root)
	k, err := PlanKnownSchemata(context.Background(), m.root, muts)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "src")
	if err := m.CopyTo(dir); err != nil {
		t.Fatal(err)
	}
	if err := k.Write(dir); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(t.TempDir(), "tiny")
	build := exec.Command("go", "build", "-o", bin, "./cmd/tiny")
	build.Dir, build.Env = dir, m.env
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("the shared tree does not build: %v\n%s", err, out)
	}
	run := func(mutant string, args ...string) (string, error) {
		cmd := exec.Command(bin, args...)
		cmd.Env = append(os.Environ(), KnownMutantEnv+"="+mutant)
		out, err := cmd.CombinedOutput()
		return strings.TrimSpace(string(out)), err
	}
	for mutant, want := range map[string]string{
		"":               "1 g 3 7 4 0 0 | 1 g 3 7 4 0 0",
		"f-two":          "2 g 3 7 4 0 0 | 2 g 3 7 4 0 0",
		"f-three":        "3 g 3 7 4 0 0 | 3 g 3 7 4 0 0",
		"g-blank":        "1 G 3 7 4 0 0 | 1 G 3 7 4 0 0",
		"h-variadic":     "1 g 30 7 4 0 0 | 1 g 30 7 4 0 0",
		"same-generic":   "1 g 3 0 4 0 0 | 1 g 3 0 4 0 0",
		"lit-triple":     "1 g 3 7 6 0 0 | 1 g 3 7 6 0 0",
		"lit-blank":      "1 g 3 7 4 9 0 | 1 g 3 7 4 9 0",
		"import-needed":  "5 g 3 7 4 0 0 | 5 g 3 7 4 0 0",
		"import-dropped": "1 g 3 7 4 0 7 | 1 g 3 7 4 0 7",
		"type-changed":   "1 g 3 7 4 0 0 | 1 g 3 7 4 0 0", // not placed: the switch does nothing
	} {
		if got, err := run(mutant); err != nil || got != want {
			t.Errorf("%s=%s: got %q (%v), want %q", KnownMutantEnv, mutant, got, err, want)
		}
	}
	// Boom's panic, in its own copy, is at the line of `_ = s[len(s)]`.
	var boom Mutant
	for _, mu := range muts {
		if mu.Name == "boom" {
			boom = mu
		}
	}
	line := 0
	for i, l := range strings.Split(patchedText(t, m, boom, "p/p.go"), "\n") {
		if strings.Contains(l, "s[len(s)]") {
			line = i + 1
		}
	}
	out, err := run("boom", "boom")
	if err == nil || !strings.Contains(out, "index out of range") {
		t.Fatalf("boom: want a panic, got %q (%v)", out, err)
	}
	if want := fmt.Sprintf("p/p.go:%d", line); !strings.Contains(out, want) {
		t.Errorf("boom's panic names no %s (its line in the mutant's own copy):\n%s", want, out)
	}
	if out, err := run("", "boom"); err != nil {
		t.Errorf("with no mutant on, Boom must not panic: %v\n%s", err, out)
	}
}

// patchedText is file as mu's own copy has it.
func patchedText(t *testing.T, m *module, mu Mutant, file string) string {
	t.Helper()
	dir := t.TempDir()
	if err := m.CopyTo(dir); err != nil {
		t.Fatal(err)
	}
	if err := applyPatch(context.Background(), dir, dir, mu.Patch, false); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, file))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// A mutant the shared tree kills is killed there; one it does not kill is
// judged again on its own copy, which decides; one it does not place is
// judged on its own copy alone. --own-copies judges every one so.
func TestAMutantTheSharedTreeDoesNotKillIsJudgedAlone(t *testing.T) {
	m := knownModule(t)
	all := knownMutants(t, m.root)
	pick := func(name, run string) Mutant {
		i := slices.IndexFunc(all, func(mu Mutant) bool { return mu.Name == name })
		mu := all[i]
		mu.Kill = goTest("./p", run)
		return mu
	}
	muts := []Mutant{
		pick("f-three", "^TestFIsNotThree$"),      // killed in the shared tree
		pick("f-two", "^TestFOnlyAlone$"),         // survives there (the switch is on), killed alone
		pick("type-changed", "^TestFIsNotThree$"), // not placed; survives its own copy
	}
	opts := Options{Dir: m.root, Timeout: 2 * time.Minute}.withDefaults()
	out := runMutants(context.Background(), opts, muts)
	type want struct {
		verdict, shared Verdict
		fromShared      bool
		notShared       string
	}
	check := func(out []Outcome, wants []want) {
		t.Helper()
		for i, o := range out {
			w := wants[i]
			if o.Verdict != w.verdict || o.SharedVerdict != w.shared || o.Shared != w.fromShared || !strings.Contains(o.NotShared, w.notShared) || (w.notShared == "") != (o.NotShared == "") {
				t.Errorf("%s: verdict %s, shared tree %q, from the shared tree %v, not shared %q (err %v); want %s, %q, %v, %q",
					o.Mutant.Name, o.Verdict, o.SharedVerdict, o.Shared, o.NotShared, o.Err, w.verdict, w.shared, w.fromShared, w.notShared)
			}
		}
	}
	check(out, []want{
		{Killed, Killed, true, ""},
		{Killed, Survived, false, ""},
		{Survived, "", false, "outside function bodies"},
	})
	opts.OwnCopies = true
	check(runMutants(context.Background(), opts, muts), []want{
		{Killed, "", false, ""},
		{Killed, "", false, ""},
		{Survived, "", false, ""},
	})
}

// A check that fails in the shared tree with no mutant switched on cannot
// tell a mutant apart there: its mutants are judged on their own copies.
func TestASharedCheckThatFailsUnmutatedProvesNothing(t *testing.T) {
	m := knownModule(t)
	all := knownMutants(t, m.root)
	i := slices.IndexFunc(all, func(mu Mutant) bool { return mu.Name == "f-two" })
	mu := all[i]
	// TestFails fails with or without a mutant.
	mu.Kill = goTest("./p", "^TestFIsNotThree$|^TestFails$")
	if err := os.WriteFile(filepath.Join(m.root, "p", "fails_test.go"), []byte("package p\n\nimport \"testing\"\n\nfunc TestFails(t *testing.T) { t.Fatal(\"always\") }\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := runMutants(context.Background(), Options{Dir: m.root, Timeout: 2 * time.Minute}.withDefaults(), []Mutant{mu})
	o := out[0]
	if o.Shared || o.SharedVerdict != Errored {
		t.Errorf("verdict %s, shared tree %q, from the shared tree %v: want the shared tree to refuse to judge (ERROR) and the own copy to decide", o.Verdict, o.SharedVerdict, o.Shared)
	}
	if o.Verdict != Killed { // its own copy's check fails too (always): as before the shared tree
		t.Errorf("own copy's verdict %s, want killed", o.Verdict)
	}
}

// Every known mutant is either placed in the shared tree or listed with
// why it is not; and a mutant is placed exactly when its patch changes Go
// files only, adds and removes none, and changes no line outside the
// bodies of functions and of the function literals of package-level
// variables, but import lines whose change leaves what the program links
// as it was: judged here from the patch's own line numbers and
// the original files' function bodies, apart from how the plan decides.
func TestEveryKnownPatchIsPlacedOrSaysWhyNot(t *testing.T) {
	m := moduleForTest(t)
	all := All()
	k, err := PlanKnownSchemata(context.Background(), m.root, all)
	if err != nil {
		t.Fatal(err)
	}
	placed := 0
	for _, mu := range all {
		why, notShared := k.NotShared[mu.Name]
		if k.Shared(mu.Name) == notShared {
			t.Errorf("%s: placed %v, not shared %v (%q): want exactly one", mu.Name, k.Shared(mu.Name), notShared, why)
			continue
		}
		if notShared && strings.TrimSpace(why) == "" {
			t.Errorf("%s: not shared, with no reason", mu.Name)
		}
		inside, reason := onlyInsideBodies(t, m.root, mu.Patch)
		if inside != k.Shared(mu.Name) {
			t.Errorf("%s: placed %v (%s), but its patch changes only function bodies: %v (%s)", mu.Name, k.Shared(mu.Name), why, inside, reason)
		}
		if k.Shared(mu.Name) {
			placed++
			if len(k.Placed[mu.Name]) == 0 {
				t.Errorf("%s: placed, naming no function", mu.Name)
			}
		}
	}
	t.Logf("%d of %d known mutants placed in the shared tree, in %d files", placed, len(all), len(k.Files))
}

var hunkHeader = regexp.MustCompile(`^@@ -(\d+)(?:,(\d+))? \+\d+(?:,\d+)? @@`)

// onlyInsideBodies applies patch to a copy of the files it changes and
// compares each with the original line by line (git diff --no-index -U0,
// whose line numbers are exact where the patch's may have drifted): every
// removed line, and every place a line is added, must be strictly inside
// the body of a function declaration, or of a function literal in a
// package-level variable's initializer, of the original file (between the
// lines of its braces).
func onlyInsideBodies(t *testing.T, root, patch string) (bool, string) {
	t.Helper()
	for _, h := range patchFiles(patch) {
		switch {
		case h.lifecycle:
			return false, "adds, removes or renames a file"
		case !strings.HasSuffix(h.to, ".go"):
			return false, h.to + " is not Go"
		}
	}
	dir := t.TempDir()
	for _, f := range PatchedFiles(patch) {
		b, err := os.ReadFile(filepath.Join(root, f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, "b", f)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "b", f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := applyPatch(context.Background(), filepath.Join(dir, "b"), dir, patch, false); err != nil {
		t.Fatal(err)
	}
	var importsChanged []string
	for _, file := range PatchedFiles(patch) {
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, filepath.Join(root, file), nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		type body struct{ from, to, lcol, rcol int } // lines and columns of { and }
		var bodies []body
		add := func(b *ast.BlockStmt) {
			l, r := fset.Position(b.Lbrace), fset.Position(b.Rbrace)
			bodies = append(bodies, body{l.Line, r.Line, l.Column, r.Column})
		}
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				if d.Body != nil {
					add(d.Body)
				}
			case *ast.GenDecl:
				// The bodies of function literals in package-level
				// variables' initializers (a literal in a literal is
				// inside the outer one's body).
				if d.Tok == token.VAR {
					ast.Inspect(d, func(n ast.Node) bool {
						if fl, ok := n.(*ast.FuncLit); ok {
							add(fl.Body)
							return false
						}
						return true
					})
				}
			}
		}
		// inside: old lines from..to (to = from-1: an insertion after line
		// from-1) are all inside one body.
		inside := func(from, to int) bool {
			for _, b := range bodies {
				if from > b.from && to < b.to || to == from-1 && from > b.from && from <= b.to {
					return true
				}
			}
			return false
		}
		// oneLine: old line n, a whole function on one line, became new
		// with only the text between its braces changed.
		oneLine := func(n int, old, new string) bool {
			for _, b := range bodies {
				if b.from == n && b.to == n && strings.HasPrefix(new, old[:b.lcol]) && strings.HasSuffix(new, old[b.rcol-1:]) {
					return true
				}
			}
			return false
		}
		cmd := exec.Command("git", "diff", "--no-index", "-U0", filepath.Join(root, file), filepath.Join(dir, "b", file))
		out, _ := cmd.Output() // exit 1: they differ
		type hunk struct {
			start, n   int
			minus, add []string
		}
		var hunks []hunk
		sc := bufio.NewScanner(strings.NewReader(string(out)))
		for sc.Scan() {
			l := sc.Text()
			if m := hunkHeader.FindStringSubmatch(l); m != nil {
				start, _ := strconv.Atoi(m[1])
				n := 1
				if m[2] != "" {
					n, _ = strconv.Atoi(m[2])
				}
				hunks = append(hunks, hunk{start: start, n: n})
				continue
			}
			if len(hunks) == 0 || strings.HasPrefix(l, "--- ") || strings.HasPrefix(l, "+++ ") {
				continue
			}
			h := &hunks[len(hunks)-1]
			if strings.HasPrefix(l, "-") {
				h.minus = append(h.minus, l[1:])
			} else if strings.HasPrefix(l, "+") {
				h.add = append(h.add, l[1:])
			}
		}
		// importOnly: the hunk's lines are all import lines, at the
		// original's imports.
		importFrom, importTo := 0, 0
		for _, is := range f.Imports {
			if importFrom == 0 {
				importFrom = fset.Position(is.Pos()).Line
			}
			importTo = fset.Position(is.End()).Line
		}
		importOnly := func(h hunk) bool {
			for _, l := range slices.Concat(h.minus, h.add) {
				if !importLine.MatchString(l) {
					return false
				}
			}
			return importFrom > 0 && h.start >= importFrom-1 && h.start <= importTo+1
		}
		for _, h := range hunks {
			switch {
			case h.n == 0 && inside(h.start+1, h.start): // added after old line start
			case h.n > 0 && inside(h.start, h.start+h.n-1):
			case h.n == 1 && len(h.add) == 1 && oneLine(h.start, h.minus[0], h.add[0]):
			case importOnly(h):
				importsChanged = append(importsChanged, file)
			default:
				return false, fmt.Sprintf("%s:%d (%d line(s)) is outside every function body", file, h.start, h.n)
			}
		}
	}
	// What a file imports may change only if the program links the same
	// packages: the package's imports (all its non-test files'), before
	// and after, depend on the same packages.
	for _, file := range importsChanged {
		pkg := "./" + filepath.Dir(file)
		before, after := linkedBy(t, root, root, pkg), linkedBy(t, root, filepath.Join(dir, "b"), pkg)
		if !slices.Equal(before, after) {
			return false, fmt.Sprintf("%s changes what %s links", file, pkg)
		}
	}
	return true, "every change is inside a body, or an import the program links anyway"
}

// importLine is a line an import declaration may have (a blank or dot
// import is none: it is there for its effect).
var importLine = regexp.MustCompile(`^\s*(import\s*\(?|\)|[A-Za-z][A-Za-z0-9_]*\s+"[^"]+"|import\s+"[^"]+"|"[^"]+")?\s*(//.*)?$`)

// linkedBy is every package the imports of pkg's non-test files at root
// depend on, with those files read from files instead (a patched copy of
// some of them, or root itself), sorted.
func linkedBy(t *testing.T, root, files, pkg string) []string {
	t.Helper()
	cmd := exec.Command("go", "list", "-f", `{{join .GoFiles "\n"}}`, pkg)
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list %s: %v", pkg, err)
	}
	var imports []string
	for _, name := range strings.Fields(string(out)) {
		path := filepath.Join(files, pkg, name)
		if _, err := os.Stat(path); err != nil {
			path = filepath.Join(root, pkg, name)
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, is := range f.Imports {
			p, _ := strconv.Unquote(is.Path.Value)
			imports = append(imports, p)
		}
	}
	cmd = exec.Command("go", append([]string{"list", "-deps"}, imports...)...)
	cmd.Dir = root
	if out, err = cmd.Output(); err != nil {
		t.Fatalf("go list -deps %v: %v", imports, err)
	}
	return slices.Sorted(slices.Values(strings.Fields(string(out))))
}

// The harness passes the switch into the containers it starts under the
// same name (its own test proves it does).
func TestKnownMutantEnvIsTheHarnesss(t *testing.T) {
	if KnownMutantEnv != harness.KnownMutantEnv {
		t.Errorf("KnownMutantEnv = %q, harness.KnownMutantEnv = %q", KnownMutantEnv, harness.KnownMutantEnv)
	}
}

// Real known mutants behave in the shared tree as on their own copies: for
// a sample of patches (one package's four, each changing other functions of
// the session store), each with its own check and one with another's check
// that its own copy passes, the shared tree's verdict is the own copy's.
func TestPlacedMutantsBehaveAsTheirOwnCopies(t *testing.T) {
	all := All()
	pick := func(name string, kill Check) Mutant {
		i := slices.IndexFunc(all, func(mu Mutant) bool { return mu.Name == name })
		if i < 0 {
			t.Fatalf("no known mutant %s", name)
		}
		mu := all[i]
		if kill.Kind != 0 {
			mu.Kill = kill
		}
		return mu
	}
	other := goTest("./proxy/session", "^TestRecreatedSessionOwesOneNotice$")
	muts := []Mutant{
		pick("silent-recreation", Check{}), pick("sessions-uncapped", Check{}),
		pick("sessions-never-expire", Check{}), pick("readded-session-never-idles", Check{}),
		pick("sessions-uncapped", other), // its own copy passes that check
	}
	muts[4].Name = "sessions-uncapped" // same patch, same switch name: another check
	m := moduleForTest(t)
	opts := Options{Timeout: 3 * time.Minute}.withDefaults()
	shared := runMutantsIn(context.Background(), m, opts, muts)
	opts.OwnCopies = true
	own := runMutantsIn(context.Background(), m, opts, muts)
	survived := 0
	for i := range muts {
		s, o := shared[i], own[i]
		if s.SharedVerdict == "" {
			t.Errorf("%s (%s): not judged in the shared tree (%s)", muts[i].Name, muts[i].Kill, s.NotShared)
			continue
		}
		if s.SharedVerdict != o.Verdict {
			t.Errorf("%s (%s): %s in the shared tree, %s on its own copy (err %v / %v)\nshared: %s\nown: %s",
				muts[i].Name, muts[i].Kill, s.SharedVerdict, o.Verdict, s.Err, o.Err, s.Excerpt, o.Excerpt)
		}
		if o.Verdict == Survived {
			survived++
		}
	}
	if survived == 0 || survived == len(muts) {
		t.Errorf("%d of %d survived their own copies: the sample must hold kills and survivals", survived, len(muts))
	}
}

// The run's queue starts the slowest kinds of check first whatever order
// they were queued in, puts fallbacks (push) last and a group's own jobs
// (pushFront) next, and ends once every job, and every job a job queued,
// has run.
func TestTheQueueStartsSlowKindsFirst(t *testing.T) {
	q := newJobQueue()
	var got []string
	rec := func(s string) func() { return func() { got = append(got, s) } }
	q.pushKind(GoTest, rec("go test 1"))
	q.push(rec("fallback"))
	q.pushKind(Catalogue, rec("catalogue"))
	q.pushKind(Ginkgo, func() {
		got = append(got, "ginkgo build")
		q.pushFront(rec("ginkgo check 1"), rec("ginkgo check 2"))
		q.push(rec("ginkgo fallback"))
	})
	q.pushKind(GoTest, rec("go test 2"))
	q.run(1)
	want := []string{"ginkgo build", "ginkgo check 1", "ginkgo check 2", "catalogue", "go test 1", "go test 2", "fallback", "ginkgo fallback"}
	if !slices.Equal(got, want) {
		t.Errorf("ran %q, want %q", got, want)
	}
}
