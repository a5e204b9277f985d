package mutants

import (
	"context"
	"os/exec"
	"strings"
	"testing"

	"github.com/mcpchaos/mcpchaos/internal/testtree"
)

// TestTheTypeCheckerJudgesAPackageInProcess: the type checker knows which
// files a build compiles, type-checks a package with some files replaced
// (no error: it compiles; else the compiler's errors, a file that does not
// parse included) and one file as a package of its own, and imports the
// switch package the schemata import.
func TestTheTypeCheckerJudgesAPackageInProcess(t *testing.T) {
	dir := t.TempDir()
	testtree.Write(t, dir, map[string]string{
		"go.mod":       "module example.com/tc\n\ngo 1.22\n",
		"p/p.go":       "package p\n\nimport \"strings\"\n\nfunc Up(s string) string { return strings.ToUpper(s) }\n",
		"p/q.go":       "package p\n\nfunc Twice(s string) string { return Up(s) + Up(s) }\n",
		"p/ignored.go": "//go:build ignore\n\npackage p\n",
	})
	if out, err := exec.Command("git", "init", "-q", dir).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v: %s", err, out)
	}
	ctx := context.Background()
	m, err := findModule(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	tc, err := newTypeChecker(ctx, m, []string{"p"})
	if err != nil {
		t.Fatal(err)
	}
	if tc.modPath != "example.com/tc" {
		t.Errorf("module path %q", tc.modPath)
	}
	for file, want := range map[string]bool{"p/p.go": true, "p/q.go": true, "p/ignored.go": false, "p/none.go": false, "q/p.go": false} {
		if got := tc.builds(file); got != want {
			t.Errorf("builds(%s) = %v, want %v", file, got, want)
		}
	}
	if errs := tc.check("p", nil); len(errs) != 0 {
		t.Errorf("the package as it is: %v", errs)
	}
	if errs := tc.check("p", map[string][]byte{"p/q.go": []byte("package p\n\nfunc Twice(s string) int { return Up(s) }\n")}); len(errs) == 0 ||
		!strings.Contains(errs[0].Error(), "q.go") {
		t.Errorf("a replaced file that does not compile: %v", errs)
	}
	if errs := tc.check("p", map[string][]byte{"p/p.go": []byte("package p\n\nfunc (")}); len(errs) != 1 {
		t.Errorf("a replaced file that does not parse: %v", errs)
	}
	guarded := "package p; import __mcpchaosm \"example.com/tc/" + SwitchDir + "\"\n\nfunc Less(a, b int) bool { return __mcpchaosm.Cmp(1, \"<\", a, b) }\n"
	if errs := tc.checkSource("example.com/tc/p", "p/g.go", guarded); len(errs) != 0 {
		t.Errorf("a file importing the switch: %v", errs)
	}
	if errs := tc.checkSource("example.com/tc/p", "p/g.go", "package p\n\nfunc f() int { return \"x\" }\n"); len(errs) == 0 {
		t.Error("a file that does not compile type-checked")
	}
	if errs := tc.checkSource("example.com/tc/p", "p/g.go", "package p\nfunc ("); len(errs) != 1 {
		t.Errorf("a file that does not parse: %v", errs)
	}
	if errs := tc.checkSource("example.com/tc/p", "p/g.go", "package p\n\nimport \"example.com/elsewhere\"\n\nvar _ = elsewhere.X\n"); len(errs) == 0 {
		t.Error("an import with no export data type-checked")
	}
	if _, err := newTypeChecker(ctx, m, []string{"nope"}); err == nil {
		t.Error("no error for a package that does not exist")
	}
}
