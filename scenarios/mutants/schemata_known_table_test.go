package mutants

import (
	"context"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// TestPatchHeadersSayWhatEachFileUndergoes: each file of a git diff with
// its old and new path (from its diff line when it has no ---/+++ lines:
// a binary file, a rename), and whether the patch adds, removes, renames,
// copies or re-modes it, or patches it as binary.
func TestPatchHeadersSayWhatEachFileUndergoes(t *testing.T) {
	patch := "" +
		"--- a/stray.go\n" + // before any diff header: no file
		"diff --git a/p/x.go b/p/x.go\n--- a/p/x.go\n+++ b/p/x.go\n@@ -1 +1 @@\n-a\n+b\n" +
		"diff --git a/p/new.go b/p/new.go\nnew file mode 100644\n--- /dev/null\n+++ b/p/new.go\n" +
		"diff --git a/p/old.go b/p/old.go\ndeleted file mode 100644\n--- a/p/old.go\n+++ /dev/null\n" +
		"diff --git a/p/a.go b/p/b.go\nrename from p/a.go\nrename to p/b.go\n" +
		"diff --git a/p/c.go b/p/d.go\ncopy from p/c.go\ncopy to p/d.go\n" +
		"diff --git a/p/e.sh b/p/e.sh\nold mode 100644\nnew mode 100755\n" +
		"diff --git a/p/f.png b/p/f.png\nBinary files a/p/f.png and b/p/f.png differ\n" +
		"diff --git a/p/g.bin b/p/g.bin\nGIT binary patch\n"
	want := []patchHeader{
		{from: "p/x.go", to: "p/x.go"},
		{to: "p/new.go", lifecycle: true},
		{from: "p/old.go", lifecycle: true},
		{from: "p/a.go", to: "p/b.go", lifecycle: true},
		{from: "p/c.go", to: "p/d.go", lifecycle: true},
		{from: "p/e.sh", to: "p/e.sh", lifecycle: true},
		{from: "p/f.png", to: "p/f.png", binary: true},
		{from: "p/g.bin", to: "p/g.bin", binary: true},
	}
	if got := patchFiles(patch); !reflect.DeepEqual(got, want) {
		t.Errorf("headers\n got %+v\nwant %+v", got, want)
	}
}

// TestImportChangesTheSharedTreeTakes: what a patch adds to and removes
// from a file's imports, named or not; a blank, dot or cgo import that
// changes, or one path imported under two names, is refused.
func TestImportChangesTheSharedTreeTakes(t *testing.T) {
	parse := func(imports string) *ast.File {
		f, err := parser.ParseFile(token.NewFileSet(), "x.go", "package p\n\nimport (\n"+imports+")\n", parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	for _, c := range []struct {
		orig, patched  string
		added, removed []string
		err            string
	}{
		{"\"fmt\"\n\"os\"\n", "\"fmt\"\n\"strings\"\n", []string{` "strings"`}, []string{` "os"`}, ""},
		{"\"fmt\"\n", "\"fmt\"\nstr \"strings\"\n", []string{`str "strings"`}, nil, ""},
		{"\"fmt\"\n", "\"fmt\"\n", nil, nil, ""},
		{"\"fmt\"\n", "\"fmt\"\n_ \"embed\"\n", nil, nil, "a _ import"},
		{"\"fmt\"\n. \"strings\"\n", "\"fmt\"\n", nil, nil, "a . import"},
		{"\"fmt\"\n", "\"fmt\"\n\"C\"\n", nil, nil, "cgo import"},
		{"\"strings\"\n", "s \"strings\"\n", nil, nil, "under another name"},
	} {
		got, err := compareImports(parse(c.orig), parse(c.patched))
		if (err == nil) != (c.err == "") || (err != nil && !strings.Contains(err.Error(), c.err)) {
			t.Errorf("%q → %q: err %v, want %q", c.orig, c.patched, err, c.err)
			continue
		}
		if c.err == "" && (!reflect.DeepEqual(got.added, c.added) || !reflect.DeepEqual(got.removed, c.removed)) {
			t.Errorf("%q → %q: added %q removed %q, want %q and %q", c.orig, c.patched, got.added, got.removed, c.added, c.removed)
		}
	}
	if got := importText([]string{`str "strings"`, ` "os"`}); got != `; import str "strings"; import  "os"` {
		t.Errorf("importText = %q", got)
	}
	if got := importText(nil); got != "" {
		t.Errorf("importText of none = %q", got)
	}
}

// TestEditsApplyFromTheEnd: edits given in any order land at their own
// offsets in the original text.
func TestEditsApplyFromTheEnd(t *testing.T) {
	src := []byte("abcdef")
	got := applyEdits(src, []textEdit{{1, 2, "B"}, {4, 4, "_"}, {0, 0, "<"}, {5, 6, ""}})
	if string(got) != "<aBcd_e" || string(src) != "abcdef" {
		t.Errorf("edits gave %q (source now %q)", got, src)
	}
}

// TestASiblingIsNamedAndItsParametersToo: a patched declaration renamed
// for its sibling, its unnamed and blank receiver and parameters named
// as the dispatch passes them, variadic ones passed on with "...".
func TestASiblingIsNamedAndItsParametersToo(t *testing.T) {
	for _, c := range []struct{ decl, want string }{
		{"func f(a int, b string) int { return a }", "func f__known_m(a int, b string) int { return a }"},
		{"func (s *S) f(int, string) {}", "func (s *S) f__known_m(__mcpchaosp0 int, __mcpchaosp1 string) {}"},
		{"func f(_ int, b int) {}", "func f__known_m(__mcpchaosp0 int, b int) {}"},
		{"func (*S) f(xs ...int) {}", "func (__mcpchaosr0 *S) f__known_m(xs ...int) {}"},
	} {
		got, err := renameSibling(c.decl, "f__known_m")
		if err != nil || got != c.want {
			t.Errorf("renameSibling(%q) = %q, %v; want %q", c.decl, got, err, c.want)
		}
	}
	if _, err := renameSibling("func f() {}\nfunc g() {}", "x"); err == nil {
		t.Error("two declarations renamed as one")
	}
	if _, err := renameSibling("func f( {", "x"); err == nil {
		t.Error("no error for a declaration that does not parse")
	}
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "x.go", "package p\n\nfunc (_ *S) f(a, _ int, xs ...string) {}\n", 0)
	if err != nil {
		t.Fatal(err)
	}
	fd := f.Decls[0].(*ast.FuncDecl)
	_, recv, args := signatureEdits(fset, fd.Recv, fd.Type, 0)
	if recv != "__mcpchaosr0" || strings.Join(args, ", ") != "a, __mcpchaosp1, xs..." {
		t.Errorf("the dispatch passes %q to %q", args, recv)
	}
	if got := funcName(fd, []byte("package p\n\nfunc (_ *S) f(a, _ int, xs ...string) {}\n"), fset); got != "(*S).f" {
		t.Errorf("funcName = %q", got)
	}
}

// TestWhyAPatchIsNotShared: a patch the shared tree cannot take says
// why, before anything is applied: it names no file, it adds, removes or
// renames one, it patches a binary or a file that is not Go, or the file
// it patches is not there.
func TestWhyAPatchIsNotShared(t *testing.T) {
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "go.mod"), []byte("module example.com/k\n\ngo 1.22\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	hdr := func(from, to string, extra ...string) string {
		return "diff --git a/" + from + " b/" + to + "\n" + strings.Join(extra, "") + "--- a/" + from + "\n+++ b/" + to + "\n@@ -1 +1 @@\n-a\n+b\n"
	}
	muts := []Mutant{
		{Name: "none", Patch: "just words\n"},
		{Name: "added", Patch: "diff --git a/p/n.go b/p/n.go\nnew file mode 100644\n--- /dev/null\n+++ b/p/n.go\n"},
		{Name: "removed", Patch: "diff --git a/p/o.go b/p/o.go\ndeleted file mode 100644\n--- a/p/o.go\n+++ /dev/null\n"},
		{Name: "binary", Patch: "diff --git a/p/f.png b/p/f.png\nBinary files a/p/f.png and b/p/f.png differ\n"},
		{Name: "docs", Patch: hdr("README.md", "README.md")},
		{Name: "missing", Patch: hdr("p/x.go", "p/x.go")},
	}
	k, err := PlanKnownSchemata(context.Background(), root, muts)
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{
		"none":    "its patch names no file",
		"added":   "it adds, removes or renames a file (p/n.go)",
		"removed": "it adds, removes or renames a file (p/o.go)",
		"binary":  "it patches a binary file (p/f.png)",
		"docs":    "it patches a file that is not Go (README.md)",
		"missing": "reading p/x.go",
	} {
		if why := k.NotShared[name]; !strings.Contains(why, want) || k.Shared(name) {
			t.Errorf("%s: not shared because %q, want %q", name, why, want)
		}
	}
	if len(k.Placed) != 0 || len(k.Files) != 0 {
		t.Errorf("placed %v, files %d", k.Placed, len(k.Files))
	}
}

// TestTheSharedTreeIsWrittenWithItsSwitch: Write puts each rewritten file
// at its place in the copy and the switch package beside them; a copy it
// cannot write into is an error.
func TestTheSharedTreeIsWrittenWithItsSwitch(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "p", "q"), 0o755); err != nil {
		t.Fatal(err)
	}
	k := &KnownSchemata{Files: map[string][]byte{"p/a.go": []byte("package p // a\n"), "p/q/b.go": []byte("package q // b\n")},
		Placed: map[string][]string{"m": {"p/a.go:f"}}}
	if err := k.Write(dir); err != nil {
		t.Fatal(err)
	}
	for rel, want := range map[string]string{"p/a.go": "package p // a\n", "p/q/b.go": "package q // b\n", SwitchDir + "/switch.go": switchSource} {
		if b, err := os.ReadFile(filepath.Join(dir, rel)); err != nil || string(b) != want {
			t.Errorf("%s: %v, holds %.40q", rel, err, b)
		}
	}
	if !k.Shared("m") || k.Shared("n") {
		t.Errorf("Shared(m) = %v, Shared(n) = %v", k.Shared("m"), k.Shared("n"))
	}
	blocked := t.TempDir()
	if err := os.WriteFile(filepath.Join(blocked, SwitchDir), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := k.Write(blocked); err == nil {
		t.Error("no error writing the switch where a file is in the way")
	}
	missing := &KnownSchemata{Files: map[string][]byte{"nodir/a.go": nil}}
	if err := missing.Write(t.TempDir()); err == nil {
		t.Error("no error writing a file into a directory the copy lacks")
	}
}
