package harness

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
)

// TestEveryItHasASpecContextAndASpecTimeout walks the Ginkgo suites' test
// files (./scenarios, ./smoke, ./fakes/llm) and fails on any It, FIt or PIt
// whose body does not take a SpecContext or whose decorators carry no
// SpecTimeout: such a spec can hang the suite, and nothing cancels its work
// when it times out.
func TestEveryItHasASpecContextAndASpecTimeout(t *testing.T) {
	fset := token.NewFileSet()
	checked := 0
	for _, root := range []string{"..", "../../smoke", "../../fakes/llm"} {
		err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(path, "_test.go") {
				return err
			}
			f, err := parser.ParseFile(fset, path, nil, 0)
			if err != nil {
				return err
			}
			ast.Inspect(f, func(n ast.Node) bool {
				call, ok := n.(*ast.CallExpr)
				if !ok || !isIt(call.Fun) {
					return true
				}
				checked++
				if why := itProblem(call); why != "" {
					t.Errorf("%s: %s", fset.Position(call.Pos()), why)
				}
				return true
			})
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if checked < 100 {
		t.Fatalf("checked only %d It calls: the walk does not reach the suites", checked)
	}
}

// isIt reports whether fun names Ginkgo's It (or its focused/pending forms).
func isIt(fun ast.Expr) bool {
	name := ""
	switch f := fun.(type) {
	case *ast.Ident:
		name = f.Name
	case *ast.SelectorExpr:
		name = f.Sel.Name
	}
	return name == "It" || name == "FIt" || name == "PIt"
}

// itProblem says what an It call lacks ("" when nothing).
func itProblem(call *ast.CallExpr) string {
	var body *ast.FuncLit
	timeout := false
	for _, a := range call.Args {
		switch a := a.(type) {
		case *ast.FuncLit:
			body = a
		case *ast.CallExpr:
			if isNamed(a.Fun, "SpecTimeout") {
				timeout = true
			}
		}
	}
	var problems []string
	if body == nil {
		problems = append(problems, "its body is not a func literal taking a SpecContext")
	} else if ps := body.Type.Params.List; len(ps) != 1 || !isNamed(ps[0].Type, "SpecContext") {
		problems = append(problems, "its body does not take a SpecContext")
	}
	if !timeout {
		problems = append(problems, "it has no SpecTimeout(...)")
	}
	return strings.Join(problems, "; ")
}

func isNamed(e ast.Expr, name string) bool {
	switch e := e.(type) {
	case *ast.Ident:
		return e.Name == name
	case *ast.SelectorExpr:
		return e.Sel.Name == name
	}
	return false
}
