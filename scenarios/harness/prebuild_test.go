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

// buildFuncs are the functions that compile or package what a suite runs:
// BuildMcplocal, BuildCommand, ImageSet.Build, mutants.Build and BuildWith,
// conformance.Build.
var buildFuncs = map[string]bool{"BuildMcplocal": true, "BuildCommand": true, "Build": true, "BuildWith": true}

// beforeSuite are the Ginkgo nodes that run before any spec, outside every
// spec's timeout.
var beforeSuite = map[string]bool{"SynchronizedBeforeSuite": true, "BeforeSuite": true}

// TestNothingIsBuiltInsideASpec walks the Ginkgo suites' test files
// (./scenarios and below, ./smoke) and fails on any build call (buildFuncs)
// that is not made before the specs run: inside a SynchronizedBeforeSuite or
// BeforeSuite, or in a function of the suite called only from there. A build
// inside a spec, or in a BeforeAll that a spec's timeout also bounds, turns a
// busy machine's slow compile into a red spec.
func TestNothingIsBuiltInsideASpec(t *testing.T) {
	fset := token.NewFileSet()
	byDir := map[string][]*ast.File{}
	for _, root := range []string{"..", "../../smoke"} {
		err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(path, "_test.go") {
				return err
			}
			f, err := parser.ParseFile(fset, path, nil, 0)
			if err != nil {
				return err
			}
			if usesGinkgo(f) {
				byDir[filepath.Dir(path)] = append(byDir[filepath.Dir(path)], f)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	builds := 0
	for _, files := range byDir {
		builds += checkBuildsBeforeSuite(t, fset, files)
	}
	if builds < 3 {
		t.Fatalf("found only %d build calls in the suites: the walk does not reach them", builds)
	}
}

// usesGinkgo reports whether f imports Ginkgo.
func usesGinkgo(f *ast.File) bool {
	for _, im := range f.Imports {
		if strings.HasPrefix(im.Path.Value, `"github.com/onsi/ginkgo/v2`) {
			return true
		}
	}
	return false
}

// buildSite is a build call, or a call of a function of the suite that
// builds, and whether it runs before the suite's specs.
type buildSite struct {
	pos    token.Pos
	callee string
	before bool
}

// checkBuildsBeforeSuite checks the build calls of one package's suite
// files and returns how many it found.
func checkBuildsBeforeSuite(t *testing.T, fset *token.FileSet, files []*ast.File) int {
	t.Helper()
	// helpers are the package's named functions that build; each must be
	// called only before the suite, as a direct build call must be.
	helpers := map[string]bool{}
	for _, f := range files {
		for _, d := range f.Decls {
			if fd, ok := d.(*ast.FuncDecl); ok && fd.Body != nil {
				ast.Inspect(fd.Body, func(n ast.Node) bool {
					if c, ok := n.(*ast.CallExpr); ok && isBuildCall(c) {
						helpers[fd.Name.Name] = true
					}
					return true
				})
			}
		}
	}
	var sites []buildSite
	found := 0
	var walk func(n ast.Node, before, inHelper bool)
	walk = func(n ast.Node, before, inHelper bool) {
		ast.Inspect(n, func(m ast.Node) bool {
			c, ok := m.(*ast.CallExpr)
			if !ok {
				return true
			}
			if beforeSuite[calleeName(c.Fun)] && !before {
				for _, a := range c.Args {
					walk(a, true, inHelper)
				}
				return false
			}
			switch {
			case isBuildCall(c):
				found++
				if !inHelper { // a helper's own calls are judged where it is called
					sites = append(sites, buildSite{c.Pos(), calleeName(c.Fun), before})
				}
			case isIdent(c.Fun) && helpers[calleeName(c.Fun)]:
				sites = append(sites, buildSite{c.Pos(), calleeName(c.Fun), before})
			}
			return true
		})
	}
	for _, f := range files {
		for _, d := range f.Decls {
			fd, isFunc := d.(*ast.FuncDecl)
			walk(d, false, isFunc && helpers[fd.Name.Name])
		}
	}
	for _, s := range sites {
		if !s.before {
			t.Errorf("%s: %s builds inside the specs' time (in a spec, or in a BeforeAll a spec's timeout bounds): build it in the SynchronizedBeforeSuite",
				fset.Position(s.pos), s.callee)
		}
	}
	return found
}

// isBuildCall reports whether c calls one of buildFuncs through a package
// or a value (harness.BuildMcplocal, images.Build, mutants.Build).
func isBuildCall(c *ast.CallExpr) bool {
	sel, ok := c.Fun.(*ast.SelectorExpr)
	return ok && buildFuncs[sel.Sel.Name]
}

func isIdent(e ast.Expr) bool {
	_, ok := e.(*ast.Ident)
	return ok
}

func calleeName(e ast.Expr) string {
	switch e := e.(type) {
	case *ast.Ident:
		return e.Name
	case *ast.SelectorExpr:
		return e.Sel.Name
	}
	return ""
}
