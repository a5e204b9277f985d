package harness

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// ready: takes initialize, /PATH, tcp and tcp:PORT (a port number), or a
// template.
func TestCheckReadyTakesWhatTheDocsName(t *testing.T) {
	for _, r := range []string{ReadyInitialize, "/healthz", "tcp", "tcp:8080", "tcp:0", "{{.URL}}/up"} {
		if err := checkReady(r); err != nil {
			t.Errorf("%q: %v", r, err)
		}
	}
	for _, r := range []string{"", "ping", "tcp:", "tcp:70000", "tcp:-1", "udp", "initialise"} {
		if err := checkReady(r); err == nil {
			t.Errorf("%q accepted", r)
		}
	}
}

// The probe of each ready: kind checks what it names, on the proxy's
// address or the port given.
func TestForeignReadyProbesCheckWhatTheyName(t *testing.T) {
	ctx := context.Background()
	var paths []string
	var mu sync.Mutex
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		paths = append(paths, r.URL.Path)
		mu.Unlock()
		if r.URL.Path != "/up-"+strings.Split(r.Host, ":")[1] {
			http.NotFound(w, r)
		}
	}))
	defer ts.Close()
	listen := strings.TrimPrefix(ts.URL, "http://")
	host, port, _ := net.SplitHostPort(listen)
	probe := func(ready string) (string, bool) {
		s := mustParseForeign(t, "name: r\ncommand: [x]\nready: '"+ready+"'")
		f := s.Target(nil).(*Foreign)
		f.vars = ForeignVars{Listen: listen, Host: host, Port: port}
		what, p := f.readyProbe()
		return what, p(ctx, ts.Client())
	}
	if what, ok := probe("/up-{{.Port}}"); !ok || what != ts.URL+"/up-"+port {
		t.Errorf("a templated path: %q %v", what, ok)
	}
	if _, ok := probe("/down"); ok {
		t.Error("a 404 path is ready")
	}
	if what, ok := probe("tcp"); !ok || what != "tcp "+listen {
		t.Errorf("tcp: %q %v", what, ok)
	}
	if what, ok := probe("tcp:" + port); !ok || what != "tcp "+listen {
		t.Errorf("tcp:PORT: %q %v", what, ok)
	}
	closed, _ := freeLoopbackAddr()
	_, free, _ := net.SplitHostPort(closed)
	if what, ok := probe("tcp:" + free); ok || what != "tcp "+net.JoinHostPort(host, free) {
		t.Errorf("tcp on a port nobody listens on: %q %v", what, ok)
	}
}

// The initialize probe sends the spec's headers, the first user's token
// unless a header already authorizes, and deletes the session it opened.
func TestTheInitializeProbeActsAsAClient(t *testing.T) {
	ctx := context.Background()
	type hit struct{ method, auth, key, session string }
	var mu sync.Mutex
	var hits []hit
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		hits = append(hits, hit{r.Method, r.Header.Get("Authorization"), r.Header.Get("X-Key"), r.Header.Get("Mcp-Session-Id")})
		mu.Unlock()
		if r.Method == http.MethodPost {
			w.Header().Set("Mcp-Session-Id", "s-1")
		}
	}))
	defer ts.Close()
	run := func(doc string, users map[string]string) []hit {
		t.Helper()
		mu.Lock()
		hits = nil
		mu.Unlock()
		f := mustParseForeign(t, doc).Target(nil).(*Foreign)
		f.vars = ForeignVars{Listen: strings.TrimPrefix(ts.URL, "http://"), Users: users}
		if _, p := f.readyProbe(); !p(ctx, ts.Client()) {
			t.Errorf("%s: not ready", doc)
		}
		mu.Lock()
		defer mu.Unlock()
		return append([]hit(nil), hits...)
	}
	users := map[string]string{"alice": "alice-token"}
	for _, name := range []string{"bob", "carol", "dave", "erin", "frank", "grace", "heidi", "ivan", "judy"} {
		users[name] = name + "-token"
	}
	got := run("name: a\ncommand: [x]\nheaders: {x-key: k}", users)
	want := []hit{{"POST", "Bearer alice-token", "k", ""}, {"DELETE", "Bearer alice-token", "k", "s-1"}}
	if len(got) != 2 || got[0] != want[0] || got[1] != want[1] {
		t.Errorf("with users: %+v, want %+v", got, want)
	}
	got = run("name: a\ncommand: [x]\nheaders: {authorization: 'Token own'}", map[string]string{"alice": "alice-token"})
	if len(got) != 2 || got[0].auth != "Token own" || got[1].auth != "Token own" {
		t.Errorf("with the spec's own authorization: %+v", got)
	}
	got = run("name: a\ncommand: [x]", nil)
	if len(got) != 2 || got[0].auth != "" {
		t.Errorf("without users: %+v", got)
	}
	if firstUserToken(nil) != "" {
		t.Error("a token without users")
	}
	if initializes(ctx, ts.Client(), "http://127.0.0.1:1/mcp", nil) {
		t.Error("an endpoint nobody serves initialized")
	}
	if initializes(ctx, ts.Client(), "://bad", nil) {
		t.Error("an endpoint that is no URL initialized")
	}
}

// What a spec renders falls back to mcplocal's naming when a template
// cannot execute, and a header that cannot render is left out.
func TestForeignTemplatesThatCannotExecuteFallBack(t *testing.T) {
	f := mustParseForeign(t, `name: odd
command: [x]
endpoint: "/{{.Nope}}/mcp"
toolName: "{{.Nope}}"
promptName: "{{.Nope}}"
headers: {X-Good: "{{.Port}}", X-Bad: "{{.Nope}}"}
`).Target(nil).(*Foreign)
	f.vars = ForeignVars{Listen: "127.0.0.1:9", Port: "9"}
	if got := f.Endpoint(Project); got != "http://127.0.0.1:9/projects/"+Project+"/mcp" {
		t.Errorf("endpoint %q", got)
	}
	if got := f.ToolName("docmost", "search"); got != "docmost_search" {
		t.Errorf("tool %q", got)
	}
	if got := f.PromptName("docmost", "greet"); got != "docmost_greet" {
		t.Errorf("prompt %q", got)
	}
	if h := f.Headers(); len(h) != 1 || h["X-Good"] != "9" {
		t.Errorf("headers %v", h)
	}
	if got := f.Logs(); got != "" {
		t.Errorf("logs of a proxy never started: %q", got)
	}
	if f.Forwards(MethodPing) || f.FrontsEverything() || f.Stateless() || f.Protocol() != "" {
		t.Error("a bare spec claims a method, fronts everything, is stateless or speaks a revision")
	}
	all := mustParseForeign(t, "name: all\ncommand: [x]\ncapabilities: [everything]").Target(nil).(*Foreign)
	if !all.Forwards(MethodElicit) || !all.FrontsEverything() {
		t.Error("the capability everything forwards every method and fronts the everything fake")
	}
}

// The spec's numbers are checked: durations positive, tools keys
// SERVER/TOOL; health: is ready:.
func TestParseForeignChecksItsValues(t *testing.T) {
	s := mustParseForeign(t, "name: a\ncommand: [x]\nstopTimeout: 2s\nhealth: /h\ntools: {docmost/search: find}")
	if s.stopTimeout != 2*time.Second || s.Ready != "/h" {
		t.Errorf("stop %v ready %q", s.stopTimeout, s.Ready)
	}
	for _, doc := range []string{
		"name: a\ncommand: [x]\nstopTimeout: -1s",
		"name: a\ncommand: [x]\nstopTimeout: 0s",
		"name: a\ncommand: [x]\nbudgets: {gate: 0s}",
		"name: a\ncommand: [x]\nbudgets: {gate: -2s}",
		"name: a\ncommand: [x]\ntools: {docmost/: find}",
		"name: a\ncommand: [x]\ntools: {/search: find}",
		"name: a\nimage: i\nargs: [x]\nready: nope",
		"name: a\nimage: i\nenv: {A: '{{.A'}",
		"name: a\nimage: i\nfiles: {a: '{{.A'}",
		"name: a\nimage: i\nheaders: {A: '{{.A'}",
		"name: a\nimage: i\npromptName: '{{.A'",
		"name: a\nimage: i\nendpoint: '{{.A'",
		"name: a\nimage: i\nargs: ['{{.A']",
		"name: a\nimage: '{{.A'",
		"- a list",
	} {
		if _, err := ParseForeign([]byte(doc)); err == nil {
			t.Errorf("accepted %q", doc)
		}
	}
	if _, err := ParseForeign([]byte("name: a\nimage: i\nargs: [serve]")); err != nil {
		t.Errorf("an image with args: %v", err)
	}
	err := func() error {
		_, err := ParseForeign([]byte("name: many\ncommand: [x]\nstopTimeout: x\nready: ping"))
		return err
	}()
	if err == nil || !strings.Contains(err.Error(), `target spec "many"`) || !strings.Contains(err.Error(), "stopTimeout") || !strings.Contains(err.Error(), "ready") {
		t.Errorf("two mistakes: %v, want both named", err)
	}
}
