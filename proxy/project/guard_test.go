package project

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestTheRelayAndTheSDKPathShareTheGuard: every request of the project is
// bounded and answered by deadline.Guard, with the project's one set of
// guard options (Project.guard): the go-sdk path through its Middleware,
// the raw relay by calling it. No file of the package keeps a guard of its
// own: none recovers a panic, reads a goroutine's stack or mints a trace
// code, which only a copy of the guard would need (the outcomes both paths
// give are deadline's TestEveryPathIsAnsweredByTheOneGuard).
func TestTheRelayAndTheSDKPathShareTheGuard(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	uses := map[string][]string{} // "deadline.Guard", "p.guard()" -> the files that use it
	read := 0
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		src, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		f, err := parser.ParseFile(token.NewFileSet(), name, src, 0)
		if err != nil {
			t.Fatal(err)
		}
		read++
		for _, im := range f.Imports {
			if p, _ := strconv.Unquote(im.Path.Value); p == "runtime/debug" {
				t.Errorf("%s imports runtime/debug: the guard (deadline.Guard) keeps a panic's stack", name)
			}
		}
		ast.Inspect(f, func(n ast.Node) bool {
			c, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			switch fn := c.Fun.(type) {
			case *ast.Ident:
				if fn.Name == "recover" {
					t.Errorf("%s recovers a panic: the guard (deadline.Guard) does, for both paths", name)
				}
			case *ast.SelectorExpr:
				x, _ := fn.X.(*ast.Ident)
				if x == nil {
					return true
				}
				call := x.Name + "." + fn.Sel.Name
				switch call {
				case "trace.New", "trace.Ensure":
					t.Errorf("%s calls %s: the guard (deadline.Guard) gives a request its trace code", name, call)
				case "deadline.Guard", "deadline.Middleware", "p.guard":
					uses[call] = append(uses[call], name)
				}
			}
			return true
		})
	}
	if read < 5 {
		t.Fatalf("read %d files of the package; the test is not seeing it", read)
	}
	want := map[string]string{"deadline.Guard": "relay.go", "deadline.Middleware": "project.go"}
	for call, file := range want {
		if got := uses[call]; len(got) != 1 || got[0] != file {
			t.Errorf("%s called in %v; want it once, in %s", call, got, file)
		}
	}
	if got := uses["p.guard"]; len(got) != 2 || got[0] != "project.go" || got[1] != "relay.go" {
		t.Errorf("the project's guard options (p.guard) are used in %v; want the go-sdk path's (project.go) and the relay's (relay.go)", got)
	}
}
