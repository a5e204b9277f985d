package harness

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpchaos/mcpchaos/smoke"
)

func TestParseForeignRejectsBadSpecs(t *testing.T) {
	for name, doc := range map[string]string{
		"no name":            `command: [x]`,
		"neither":            `name: a`,
		"both":               "name: a\ncommand: [x]\nimage: y",
		"args without image": "name: a\ncommand: [x]\nargs: [y]",
		"unknown field":      "name: a\ncommand: [x]\nport: 1",
		"unknown capability": "name: a\ncommand: [x]\ncapabilities: [teleport]",
		"bad template":       "name: a\ncommand: ['{{.Listen']",
		"bad stopTimeout":    "name: a\ncommand: [x]\nstopTimeout: soon",
		"health and ready":   "name: a\ncommand: [x]\nhealth: /h\nready: tcp",
		"bad ready":          "name: a\ncommand: [x]\nready: ping",
		"bad ready port":     "name: a\ncommand: [x]\nready: tcp:http",
		"bad tools key":      "name: a\ncommand: [x]\ntools: {search: find}",
		"unknown budget":     "name: a\ncommand: [x]\nbudgets: {coffee: 1s}",
		"bad budget":         "name: a\ncommand: [x]\nbudgets: {request: soon}",
		"bad toolName":       "name: a\ncommand: [x]\ntoolName: '{{.Tool'",
	} {
		if _, err := ParseForeign([]byte(doc)); err == nil {
			t.Errorf("%s: accepted %q", name, doc)
		}
	}
	s, err := ParseForeign([]byte("name: a\ncommand: [x]"))
	if err != nil {
		t.Fatal(err)
	}
	if s.Endpoint != "/projects/{{.Project}}/mcp" || s.Ready != ReadyInitialize || s.stopTimeout != foreignStopDefault {
		t.Errorf("defaults: endpoint %q ready %q stop %v", s.Endpoint, s.Ready, s.stopTimeout)
	}
	if got := s.Target(nil).(ToolNamer).ToolName("docmost", "search"); got != "docmost_search" {
		t.Errorf("default tool name %q, want mcplocal's docmost_search", got)
	}
}

// A spec adapts the harness to a proxy that is not mcplocal: its tool names
// (a mapping, then a template), its budgets, its readiness and its headers.
func TestForeignSpecAdaptsNamesBudgetsReadinessAndHeaders(t *testing.T) {
	s, err := ParseForeign([]byte(`name: other
command: [x]
tools: {docmost/update_page: edit_page}
toolName: "{{.Tool}}"
budgets: {request: 7s, gate: 2s}
ready: tcp
headers: {X-Api-Key: "key-{{.Port}}"}
`))
	if err != nil {
		t.Fatal(err)
	}
	f := s.Target(nil).(*Foreign)
	f.vars = ForeignVars{Listen: "127.0.0.1:4242", Host: "127.0.0.1", Port: "4242"}
	if got := ToolName(f, "docmost", "update_page"); got != "edit_page" {
		t.Errorf("mapped tool %q, want edit_page", got)
	}
	if got := ToolName(f, "docmost", "search"); got != "search" {
		t.Errorf("templated tool %q, want search", got)
	}
	if got := ToolName(&InProcess{}, "docmost", "search"); got != "docmost_search" {
		t.Errorf("mcplocal's tool %q, want docmost_search", got)
	}
	b := f.Budgets(DefaultBounds())
	if b.D(BoundRequest) != 7*time.Second || b.D(BoundGate) != 2*time.Second || b.D(BoundPagination) != DefaultBounds().D(BoundPagination) {
		t.Errorf("budgets: request %v gate %v pagination %v", b.D(BoundRequest), b.D(BoundGate), b.D(BoundPagination))
	}
	if got := f.Headers()["X-Api-Key"]; got != "key-4242" {
		t.Errorf("header %q, want key-4242", got)
	}
	if what, _ := f.readyProbe(); what != "tcp 127.0.0.1:4242" {
		t.Errorf("ready probe %q", what)
	}
}

// The default readiness check is an MCP initialize on the endpoint: it holds
// for a server that answers initialize and has no health path, not for one
// that answers something else.
func TestForeignReadyDefaultsToInitialize(t *testing.T) {
	srv := mcp.NewServer(&mcp.Implementation{Name: "bare", Version: "0"}, nil)
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil)
	mux := http.NewServeMux()
	mux.Handle("/mcp", h)
	ts := httptest.NewServer(mux)
	defer ts.Close()
	s, err := ParseForeign([]byte("name: bare\ncommand: [x]\nendpoint: /mcp"))
	if err != nil {
		t.Fatal(err)
	}
	f := s.Target(nil).(*Foreign)
	f.vars = ForeignVars{Listen: strings.TrimPrefix(ts.URL, "http://")}
	what, probe := f.readyProbe()
	if !strings.HasPrefix(what, "initialize on "+ts.URL+"/mcp") {
		t.Errorf("ready probe %q", what)
	}
	ctx := context.Background()
	if !probe(ctx, ts.Client()) {
		t.Error("an MCP server answering initialize is not ready")
	}
	s.Endpoint = "/nothing"
	if _, probe := f.readyProbe(); probe(ctx, ts.Client()) {
		t.Error("a 404 endpoint counted as ready")
	}

	// With users, the probe initializes as one of them: a proxy that wants
	// a bearer token is ready once it answers that user.
	s.Endpoint = "/mcp"
	mux2 := http.NewServeMux()
	mux2.Handle("/mcp", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer alice-token" {
			http.Error(w, "who are you", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	}))
	authed := httptest.NewServer(mux2)
	defer authed.Close()
	f.vars = ForeignVars{Listen: strings.TrimPrefix(authed.URL, "http://")}
	if _, probe := f.readyProbe(); probe(ctx, authed.Client()) {
		t.Error("a 401 counted as ready")
	}
	f.vars.Users = map[string]string{"alice": "alice-token"}
	if _, probe := f.readyProbe(); !probe(ctx, authed.Client()) {
		t.Error("the probe did not initialize as the configured user")
	}
}

func TestLacksNamesTheMissingCapabilities(t *testing.T) {
	if why := Lacks(&InProcess{}, CapAuditAPI, CapSessionAdoption); why != "" {
		t.Errorf("the in-process mcplocal lacks %q", why)
	}
	if why := Lacks(&InProcess{}, CapKill); !strings.Contains(why, CapKill) {
		t.Errorf("the in-process target cannot be killed, got %q", why)
	}
	if why := Lacks(&Binary{}, AllCapabilities...); why != "" {
		t.Errorf("the binary mcplocal lacks %q", why)
	}
	bare, err := ParseForeign([]byte("name: bare\ncommand: [x]\ncapabilities: [auditAPI]"))
	if err != nil {
		t.Fatal(err)
	}
	why := Needs(CapAuditAPI, CapSessionAdoption, CapKill)(bare.Target(nil))
	if want := "target foreign:bare lacks sessionAdoption, kill"; why != want {
		t.Errorf("got %q, want %q", why, want)
	}
	if _, ok := bare.Target(nil).(Killer); ok {
		t.Error("a spec without kill gave a Killer")
	}
}

// The first worked example of docs/targets.md: mcplocal as a foreign proxy
// answers, keeps its sessions across a restart and a kill (adoption), and
// serves its audit API.
func TestForeignRunsTheDocumentedMcplocalExample(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "targets.md"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile("(?s)```yaml\n(name: mcplocal\n.*?)```").FindSubmatch(doc)
	if m == nil {
		t.Fatal("docs/targets.md has no ```yaml block starting with name: mcplocal")
	}
	spec, err := ParseForeign(m[1])
	if err != nil {
		t.Fatal(err)
	}
	if spec.Command[0] != "./bin/mcplocal" {
		t.Fatalf("the example runs %q, this test expects ./bin/mcplocal", spec.Command[0])
	}
	spec.Command[0] = mcplocalBinary(t) // the doc's ./bin/mcplocal, built for this test
	if !spec.Has(CapKill) || Lacks(spec.Target(nil), AllCapabilities...) != "" {
		t.Fatalf("the example claims %v, want every capability", spec.Capabilities)
	}

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var out strings.Builder
	target := spec.Target(&syncWriter{w: &out})
	env := startForAlice(t, ctx, target, &out)
	if got, want := target.Name(), "foreign:mcplocal"; got != want {
		t.Errorf("name %q, want %q", got, want)
	}
	if got, want := target.(Endpointer).Endpoint(Project), env.ProjectURL(); got != want {
		t.Errorf("endpoint %q, want %q", got, want)
	}
	cs, err := SDKClient(ctx, env.ProjectURL(), env.Token("alice"))
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	call := func(step string) string {
		t.Helper()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "docmost_update_page", Arguments: map[string]any{"page_id": "p1", "content": step}})
		if err != nil || res.IsError {
			t.Fatalf("%s: err=%v result=%+v", step, err, res)
		}
		code, _ := res.Meta[smoke.TraceMetaKey].(string)
		if !smoke.ValidTraceCode(code) {
			t.Fatalf("%s: no trace code in _meta: %v", step, res.Meta)
		}
		return code
	}
	code := call("first")
	var audit struct {
		Rows  []json.RawMessage `json:"rows"`
		Error string            `json:"error"`
	}
	if err := env.GetJSON(ctx, "/api/v1/audit?trace="+code, &audit, &audit.Error); err != nil || len(audit.Rows) == 0 {
		t.Errorf("audit of %s: %d rows, %v", code, len(audit.Rows), err)
	}
	if err := target.Restart(ctx); err != nil {
		t.Fatal(err)
	}
	call("after a restart")
	if err := target.(Killer).KillRestart(ctx); err != nil {
		t.Fatal(err)
	}
	call("after a kill")
}

// syncWriter serialises writes from the process's output copier and the
// target's own markers.
type syncWriter struct {
	mu sync.Mutex
	w  *strings.Builder
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}

// startForAlice starts a world for alice on target, whose output goes to
// out; the world is closed when the test ends, and out logged if it failed.
func startForAlice(t *testing.T, ctx context.Context, target Target, out *strings.Builder) *Env {
	t.Helper()
	env, err := NewEnv(ctx, EnvOptions{Target: target, Users: map[string]string{"alice": "alice-token"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := env.Close(context.Background()); err != nil {
			t.Error(err)
		}
		if t.Failed() {
			t.Log(out.String())
		}
	})
	return env
}

// A proxy of one server is given the everything fake as that server in a
// world that has it, and docmost in the others; a proxy of two is given
// each fake as itself.
func TestAProxyOfOneServerIsGivenTheEverythingFakeInItsPlace(t *testing.T) {
	urls := map[string]string{"docmost": "http://docmost", "everything": "http://everything"}
	for _, c := range []struct {
		doc, docmost string
	}{
		{"name: one\ncommand: [x, '{{.DocmostURL}}']", "http://everything"},
		{"name: two\ncommand: [x, '{{.DocmostURL}}', '{{.EverythingURL}}']", "http://docmost"},
	} {
		s, err := ParseForeign([]byte(c.doc))
		if err != nil {
			t.Fatal(err)
		}
		f := s.Target(nil).(*Foreign)
		if d, e := f.upstreamURLs(urls); d != c.docmost || e != "http://everything" {
			t.Errorf("%s: docmost %q everything %q, want docmost %q", s.Name, d, e, c.docmost)
		}
		if d, _ := f.upstreamURLs(map[string]string{"docmost": "http://docmost"}); d != "http://docmost" {
			t.Errorf("%s in a world without the everything fake: docmost %q", s.Name, d)
		}
	}
}

// A proxy given mcplocal's config, or claiming the capability everything,
// fronts the everything fake as itself: nothing stands in.
func TestAProxyGivenTheWholeConfigFrontsEveryServer(t *testing.T) {
	for _, doc := range []string{
		"name: cfg\ncommand: [x, --config, '{{.ConfigFile}}']",
		"name: claims\ncommand: [x, '{{.DocmostURL}}']\ncapabilities: [everything]",
	} {
		s, err := ParseForeign([]byte(doc))
		if err != nil {
			t.Fatal(err)
		}
		if tg := s.Target(nil); StandsIn(tg) {
			t.Errorf("%s: the everything fake stands in for docmost", s.Name)
		}
	}
}
