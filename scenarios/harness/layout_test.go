package harness

import (
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/mcpchaos/mcpchaos/"

// forbidden are the layout's import rules (docs/design.md, The packages and their imports): the proxy
// knows nothing of the harness; fakes and smoke know nothing of the proxy,
// so they judge it from the outside. Rules hold for test files too.
var forbidden = []struct{ from, to string }{
	{"proxy/", "scenarios/"},
	{"proxy/", "fakes/"},
	{"proxy/", "smoke/"},
	{"fakes/", "proxy/"},
	{"fakes/", "scenarios/"},
	{"smoke/", "proxy/"},
}

// corePackages speak MCP and HTTP only (docs/design.md, The harness core and
// its adapters): they import nothing under proxy/, test files included.
// mcplocal's audit rows, configuration, knobs, failpoints and in-process
// start reach the core through its adapter (scenarios/evidence/mcplocal),
// which may import the proxy.
var corePackages = []string{"scenarios/harness", "scenarios/world", "scenarios/catalogue", "scenarios/report", "scenarios/evidence"}

// proxyFreePackages do not reach the proxy even through an adapter: the
// description of what a target runs (world) and the target-neutral
// evidence, which mcplocal's adapter builds on. Their whole closure of the
// module's packages is read.
var proxyFreePackages = []string{"scenarios/world", "scenarios/evidence"}

// TestLayoutCoreImportsNothingOfTheProxy holds the core to the wire: no core
// file imports a package under proxy/.
func TestLayoutCoreImportsNothingOfTheProxy(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	files := 0
	for _, pkg := range corePackages {
		names, err := filepath.Glob(filepath.Join(root, pkg, "*.go"))
		if err != nil || len(names) == 0 {
			t.Fatalf("core package %s: no Go files (%v)", pkg, err)
		}
		for _, name := range names {
			files++
			for _, to := range moduleImports(t, name) {
				if isProxy(to) {
					t.Errorf("%s/%s imports %s: the harness core speaks MCP and HTTP; mcplocal's types belong in its adapter (scenarios/evidence/mcplocal)", pkg, filepath.Base(name), to)
				}
			}
		}
	}
	if files < 20 {
		t.Fatalf("only %d core files read: the check is not seeing the core", files)
	}
}

// TestLayoutSomeOfTheCoreNeverReachesTheProxy follows every import of the
// module's own packages from each proxyFreePackages package, to the end.
func TestLayoutSomeOfTheCoreNeverReachesTheProxy(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	for _, start := range proxyFreePackages {
		via := map[string]string{start: ""} // package -> the package that imported it
		queue := []string{start}
		for len(queue) > 0 {
			pkg := queue[0]
			queue = queue[1:]
			if isProxy(pkg) {
				path := pkg
				for p := via[pkg]; p != ""; p = via[p] {
					path = p + " -> " + path
				}
				t.Errorf("%s reaches the proxy: %s", start, path)
				continue
			}
			names, _ := filepath.Glob(filepath.Join(root, pkg, "*.go"))
			if len(names) == 0 {
				t.Fatalf("%s (imported by %s): no Go files", pkg, via[pkg])
			}
			for _, name := range names {
				if strings.HasSuffix(name, "_test.go") {
					continue
				}
				for _, to := range moduleImports(t, name) {
					if _, seen := via[to]; !seen {
						via[to] = pkg
						queue = append(queue, to)
					}
				}
			}
		}
	}
}

// moduleImports are the module's own packages the Go file imports, by their
// path inside the module.
func moduleImports(t *testing.T, file string) []string {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), file, nil, parser.ImportsOnly)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, im := range f.Imports {
		p, _ := strconv.Unquote(im.Path.Value)
		if to, ok := strings.CutPrefix(p, module); ok {
			out = append(out, to)
		}
	}
	return out
}

func isProxy(pkg string) bool { return pkg == "proxy" || strings.HasPrefix(pkg, "proxy/") }

// TestLayoutForbiddenImports reads the imports of every Go file of the module
// and fails on any that crosses a forbidden line.
func TestLayoutForbiddenImports(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("module root not found at %s: %v", root, err)
	}
	checked := 0
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if n := d.Name(); n == ".git" || n == "node_modules" || n == "testdata" {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") {
			return nil
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		checked++
		for _, im := range f.Imports {
			p, _ := strconv.Unquote(im.Path.Value)
			to, ok := strings.CutPrefix(p, module)
			if !ok {
				continue
			}
			for _, r := range forbidden {
				if strings.HasPrefix(rel, r.from) && strings.HasPrefix(to+"/", r.to) {
					t.Errorf("%s imports %s: %s must not import %s", rel, p, strings.TrimSuffix(r.from, "/"), strings.TrimSuffix(r.to, "/"))
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked < 50 {
		t.Fatalf("only %d Go files read under %s: the walk is not seeing the module", checked, root)
	}
}
