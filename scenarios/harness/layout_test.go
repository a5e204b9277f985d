package harness

import (
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
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
// mcplocal's audit rows reach the core through its evidence adapter
// (scenarios/evidence/mcplocal), which may import the proxy; its knobs,
// config and failpoints are still the core's types (coreStillImports).
var corePackages = []string{"scenarios/harness", "scenarios/catalogue", "scenarios/report", "scenarios/evidence"}

// coreStillImports are the imports of mcplocal's types the core has not yet
// handed to its adapter, file by file: the rule's known remainder. It may
// only shrink: an import not listed fails, and so does a listed one that is
// gone.
var coreStillImports = map[string][]string{
	"scenarios/harness/target_mcplocal.go":       {"proxy/config", "proxy/llm"},
	"scenarios/harness/target.go":                {"proxy", "proxy/failpoint"},
	"scenarios/harness/target_cluster.go":        {"proxy/audit", "proxy/audit/audittest"},
	"scenarios/harness/target_inprocess.go":      {"proxy/audit"},
	"scenarios/harness/world.go":                 {"proxy/knobs"},
	"scenarios/harness/world_smoke.go":           {"proxy/knobs"},
	"scenarios/harness/relay_test.go":            {"proxy/config"},
	"scenarios/harness/target_binary_test.go":    {"proxy/failpoint", "proxy/knobs"},
	"scenarios/harness/target_inprocess_test.go": {"proxy/audit"},
}

// TestLayoutCoreImportsNothingOfTheProxy holds the core to the wire: a core
// file may import under proxy/ only what coreStillImports lists for it.
func TestLayoutCoreImportsNothingOfTheProxy(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	files := 0
	for _, pkg := range corePackages {
		names, err := filepath.Glob(filepath.Join(root, pkg, "*.go"))
		if err != nil || len(names) == 0 {
			t.Fatalf("core package %s: no Go files (%v)", pkg, err)
		}
		for _, name := range names {
			f, err := parser.ParseFile(token.NewFileSet(), name, nil, parser.ImportsOnly)
			if err != nil {
				t.Fatal(err)
			}
			files++
			rel := pkg + "/" + filepath.Base(name)
			for _, im := range f.Imports {
				p, _ := strconv.Unquote(im.Path.Value)
				to, ok := strings.CutPrefix(p, module)
				if !ok || (to != "proxy" && !strings.HasPrefix(to, "proxy/")) {
					continue
				}
				seen[rel+" "+to] = true
				if !slices.Contains(coreStillImports[rel], to) {
					t.Errorf("%s imports %s: the harness core speaks MCP and HTTP; mcplocal's types belong in its evidence adapter (scenarios/evidence/mcplocal)", rel, p)
				}
			}
		}
	}
	for file, ims := range coreStillImports {
		for _, to := range ims {
			if !seen[file+" "+to] {
				t.Errorf("%s no longer imports %s: strike it from coreStillImports", file, to)
			}
		}
	}
	if files < 20 {
		t.Fatalf("only %d core files read: the check is not seeing the core", files)
	}
}

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
