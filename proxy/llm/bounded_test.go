package llm

// "Bounded by construction", held two ways: by reading the source (no
// exported path reaches a provider; one HTTP call site, which demands a
// deadline; nothing else in proxy/ speaks to an LLM), and by behaviour (no
// deadline and no options still ends at the knob's budget).

import (
	"context"
	"errors"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcpchaos/mcpchaos/proxy/knobs"
)

// vendorSDKs must not appear in production proxy code: they retry behind our back.
var vendorSDKs = []string{"github.com/anthropics/anthropic-sdk-go", "github.com/openai/openai-go", "github.com/sashabaranov/go-openai"}

// llmMarkers are strings only code talking to an LLM API needs.
var llmMarkers = []string{"/v1/messages", "/chat/completions", "/v1/models", "anthropic-version", "x-api-key"}

func moduleRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("go.mod not found above the test directory")
		}
		dir = parent
	}
}

// parsePackage parses the non-test files of this package.
func parsePackage(t *testing.T) (*token.FileSet, []*ast.File) {
	t.Helper()
	fset := token.NewFileSet()
	paths, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	var files []*ast.File
	for _, p := range paths {
		if strings.HasSuffix(p, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, p, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	return fset, files
}

func recvName(fd *ast.FuncDecl) string {
	if fd.Recv == nil || len(fd.Recv.List) == 0 {
		return ""
	}
	typ := fd.Recv.List[0].Type
	if st, ok := typ.(*ast.StarExpr); ok {
		typ = st.X
	}
	if id, ok := typ.(*ast.Ident); ok {
		return id.Name
	}
	return ""
}

func mentions(n ast.Node, names map[string]bool) string {
	found := ""
	if n == nil {
		return ""
	}
	ast.Inspect(n, func(n ast.Node) bool {
		if id, ok := n.(*ast.Ident); ok && names[id.Name] && found == "" {
			found = id.Name
		}
		return found == ""
	})
	return found
}

// No exported identifier of the package — function, method, field, variable,
// type — mentions the provider interface, a provider type, or the HTTP layer.
// The only way to reach a provider is therefore Adapter.Complete.
func TestStructureProvidersAreOnlyReachableThroughTheAdapter(t *testing.T) {
	fset, files := parsePackage(t)
	hidden := map[string]bool{"httpCaller": true, "modelResolver": true}
	sawInterface := false
	for _, f := range files {
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.GenDecl:
				for _, s := range d.Specs {
					if ts, ok := s.(*ast.TypeSpec); ok && ts.Name.Name == "provider" {
						it, ok := ts.Type.(*ast.InterfaceType)
						if !ok {
							t.Fatal("provider must be an interface")
						}
						sawInterface = true
						hidden["provider"] = true
						for _, m := range it.Methods.List {
							for _, n := range m.Names {
								if n.IsExported() {
									t.Errorf("provider method %s is exported", n.Name)
								}
							}
						}
					}
				}
			case *ast.FuncDecl:
				if d.Name.Name == "attempt" && recvName(d) != "" {
					hidden[recvName(d)] = true
				}
			}
		}
	}
	if !sawInterface || len(hidden) < 5 { // provider, httpCaller, modelResolver, two provider kinds
		t.Fatalf("expected the provider interface and both provider types, found %v", hidden)
	}
	for name := range hidden {
		if ast.IsExported(name) {
			t.Errorf("%s is exported: providers and the HTTP layer must stay unexported", name)
		}
	}

	report := func(pos token.Pos, what, name string) {
		t.Errorf("%s: exported %s mentions %s; only Adapter.Complete may reach a provider", fset.Position(pos), what, name)
	}
	for _, f := range files {
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				if !d.Name.IsExported() || (d.Recv != nil && !ast.IsExported(recvName(d))) {
					continue
				}
				if n := mentions(d.Type, hidden); n != "" {
					report(d.Pos(), "func "+d.Name.Name, n)
				}
			case *ast.GenDecl:
				for _, s := range d.Specs {
					switch s := s.(type) {
					case *ast.ValueSpec:
						for i, n := range s.Names {
							if !n.IsExported() {
								continue
							}
							if m := mentions(s.Type, hidden); m != "" {
								report(n.Pos(), "var "+n.Name, m)
							}
							if i < len(s.Values) {
								if m := mentions(s.Values[i], hidden); m != "" {
									report(n.Pos(), "var "+n.Name, m)
								}
							}
						}
					case *ast.TypeSpec:
						if !s.Name.IsExported() {
							continue
						}
						switch tt := s.Type.(type) {
						case *ast.StructType:
							for _, fld := range tt.Fields.List {
								exported := len(fld.Names) == 0 // embedded: promotes methods
								for _, n := range fld.Names {
									exported = exported || n.IsExported()
								}
								if m := mentions(fld.Type, hidden); exported && m != "" {
									report(fld.Pos(), "field of "+s.Name.Name, m)
								}
							}
						default:
							if m := mentions(s.Type, hidden); m != "" {
								report(s.Pos(), "type "+s.Name.Name, m)
							}
						}
					}
				}
			}
		}
	}
}

// Exactly one function performs HTTP, it builds the request with the
// context, and it refuses a context without a deadline before anything else.
func TestStructureOneHTTPCallSiteThatDemandsADeadline(t *testing.T) {
	fset, files := parsePackage(t)
	banned := map[string]string{
		"http.NewRequest": "builds a request without a context", "http.Get": "uses the default client",
		"http.Post": "uses the default client", "http.Head": "uses the default client", "http.PostForm": "uses the default client",
		"http.DefaultClient": "shares a client we do not control", "http.DefaultTransport": "shares a transport we do not control",
	}
	var doSites, buildSites []string
	for _, f := range files {
		for _, imp := range f.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			for _, sdk := range vendorSDKs {
				if strings.HasPrefix(path, sdk) {
					t.Errorf("%s imports %s: no vendor SDK in production code", fset.Position(imp.Pos()), path)
				}
			}
		}
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Body == nil {
				continue
			}
			where := recvName(fd) + "." + fd.Name.Name
			ast.Inspect(fd.Body, func(n ast.Node) bool {
				sel, ok := n.(*ast.SelectorExpr)
				if !ok {
					return true
				}
				if x, ok := sel.X.(*ast.Ident); ok {
					if why, bad := banned[x.Name+"."+sel.Sel.Name]; bad {
						t.Errorf("%s: %s.%s %s", fset.Position(sel.Pos()), x.Name, sel.Sel.Name, why)
					}
					if x.Name == "http" && sel.Sel.Name == "NewRequestWithContext" {
						buildSites = append(buildSites, where)
					}
				}
				switch sel.Sel.Name {
				case "Do":
					doSites = append(doSites, where)
				case "RoundTrip":
					t.Errorf("%s: RoundTrip bypasses the client", fset.Position(sel.Pos()))
				}
				return true
			})
			if where == "httpCaller.send" {
				guard, ok := fd.Body.List[0].(*ast.IfStmt)
				if !ok || mentions(guard.Init, map[string]bool{"Deadline": true}) == "" || mentions(guard.Body, map[string]bool{"errUnbounded": true}) == "" {
					t.Errorf("%s: send must start by refusing a context without a deadline (if _, ok := ctx.Deadline(); !ok { return ..., errUnbounded })", fset.Position(fd.Pos()))
				}
			}
		}
	}
	if !slices.Equal(doSites, []string{"httpCaller.send"}) || !slices.Equal(buildSites, []string{"httpCaller.send"}) {
		t.Errorf("HTTP is sent from %v and built in %v; want only httpCaller.send", doSites, buildSites)
	}
}

// Nothing else in the proxy talks to an LLM API or imports a vendor SDK:
// every LLM call in proxy/ goes through this package.
func TestStructureNoLLMTrafficOutsideTheAdapter(t *testing.T) {
	root := moduleRoot(t)
	self, err := filepath.Abs(".")
	if err != nil {
		t.Fatal(err)
	}
	scanned := 0
	for _, top := range []string{"proxy", "cmd/mcplocal", "cmd/mcpctl"} {
		dir := filepath.Join(root, top)
		if _, err := os.Stat(dir); errors.Is(err, fs.ErrNotExist) {
			continue
		}
		err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() {
				if name := d.Name(); name == "testdata" || name == "vendor" || (strings.HasPrefix(name, ".") && path != dir) {
					return filepath.SkipDir
				}
				if path == filepath.Join(self, "llmtest") { // serves the providers' paths to unit tests; calls nothing
					return filepath.SkipDir
				}
				return nil
			}
			if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") || filepath.Dir(path) == self {
				return nil
			}
			scanned++
			fset := token.NewFileSet()
			f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
			if err != nil {
				return nil // someone else's half-written file; their build will say so
			}
			rel, _ := filepath.Rel(root, path)
			for _, imp := range f.Imports {
				p, _ := strconv.Unquote(imp.Path.Value)
				for _, sdk := range vendorSDKs {
					if strings.HasPrefix(p, sdk) {
						t.Errorf("%s imports %s: LLM calls go through proxy/llm", rel, p)
					}
				}
			}
			ast.Inspect(f, func(n ast.Node) bool {
				lit, ok := n.(*ast.BasicLit)
				if !ok || lit.Kind != token.STRING {
					return true
				}
				s, err := strconv.Unquote(lit.Value)
				if err != nil {
					return true
				}
				for _, m := range llmMarkers {
					if strings.Contains(strings.ToLower(s), m) {
						t.Errorf("%s:%d: %q looks like a direct LLM API call; use llm.Adapter.Complete", rel, fset.Position(lit.Pos()).Line, s)
					}
				}
				return true
			})
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("scanned %d production files outside proxy/llm", scanned)
}

// The runtime guard behind the structure: send refuses a context without a
// deadline and never reaches the server.
func TestSendRefusesAnUnboundedContext(t *testing.T) {
	noLeaks(t)
	s := newStub(t, answer("x"))
	c := newHTTPCaller()
	defer c.closeIdle()
	_, err := c.send(context.Background(), http.MethodPost, s.srv.URL+"/v1/messages", jsonHeader(), []byte(`{}`), 1<<10, nil)
	if !errors.Is(err, errUnbounded) || s.hits.Load() != 0 {
		t.Errorf("send without a deadline: %v, hits %d; want errUnbounded and no request", err, s.hits.Load())
	}
}

// Behaviour: context.Background(), no options, a provider that never
// answers — Complete ends at the call budget knob.
func TestBehaviourNoDeadlineNoOptionsEndsAtTheKnobBudget(t *testing.T) {
	noLeaks(t)
	env := map[string]string{"MCPCTL_LLM_CALL_BUDGET_MS": "300", "MCPCTL_LLM_PROVIDER_TIMEOUT_MS": "300"}
	k, err := knobs.Load(func(name string) string { return env[name] })
	if err != nil {
		t.Fatal(err)
	}
	s := newStub(t, hang)
	ad := newAdapter(t, chainOf(openaiCfg("only", s, "m")), k)

	w := startWatch()
	_, err = ad.Complete(context.Background(), hello)
	betweenTimed(t, "Complete(context.Background()) against a hanging provider, budget knob 300ms", w.end(),
		300*time.Millisecond, 300*time.Millisecond+tolerance)
	if !errors.Is(err, ErrBudgetExhausted) {
		t.Errorf("want ErrBudgetExhausted, got %v", err)
	}
}
