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

	"github.com/mcpchaos/mcpchaos/proxy/trace"
	"github.com/mcpchaos/mcpchaos/smoke"
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

// TestSmokeWireContractMatchesTheProxy: smoke writes the trace-code contract
// down on its own (it must not import the proxy); it must agree with the proxy's.
func TestSmokeWireContractMatchesTheProxy(t *testing.T) {
	if smoke.TraceMetaKey != trace.MetaKey {
		t.Fatalf("smoke looks for _meta.%s, the proxy writes _meta.%s", smoke.TraceMetaKey, trace.MetaKey)
	}
	samples := []string{"", "9Q77WKZW", "9q77wkzw", "9Q77WKZ", "9Q77WKZWX", "ILOU0000", "0000000U", "ZZZZZZZZ", "AB-DEFGH"}
	for i := 0; i < 200; i++ {
		samples = append(samples, trace.New())
	}
	for _, s := range samples {
		if smoke.ValidTraceCode(s) != trace.Valid(s) {
			t.Errorf("%q: smoke says valid=%v, the proxy says %v", s, smoke.ValidTraceCode(s), trace.Valid(s))
		}
	}
}
