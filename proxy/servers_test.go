package proxy_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpchaos/mcpchaos/proxy"
	"github.com/mcpchaos/mcpchaos/proxy/config"
	"github.com/mcpchaos/mcpchaos/proxy/knobs"
)

// serversTolerance is the slack on every wait here (loopback, -race, two
// shared cores); a wait's budget is the connect knob plus it.
const serversTolerance = 500 * time.Millisecond

// serversWorld is a proxy serving project docmost (one fake docmost) with
// a servers file, and a second fake an operator can add as a server.
type serversWorld struct {
	t     *testing.T
	file  string
	knobs knobs.Values
	up    *testUpstream
	extra *testUpstream
	p     *proxy.Proxy
	base  string
}

func newServersWorld(t *testing.T) *serversWorld {
	t.Helper()
	w := &serversWorld{t: t, file: filepath.Join(t.TempDir(), "mcplocal.servers.yaml"), knobs: knobs.Defaults()}
	w.knobs.UpstreamConnect, w.knobs.ShutdownGrace = time.Second, 200*time.Millisecond
	for _, s := range []**testUpstream{&w.up, &w.extra} {
		up := newTestUpstream(t)
		*s = up
	}
	w.start()
	return w
}

// start (re)starts the proxy from the config file's contents: a fresh
// config each time, as mcplocal reads it at start.
func (w *serversWorld) start() {
	w.t.Helper()
	if w.p != nil {
		_ = w.p.Close(context.Background())
	}
	cfg := &config.Config{Listen: "127.0.0.1:0", Audit: "memory", Projects: map[string]*config.Project{
		"docmost": {Servers: map[string]*config.Server{"docmost": {URL: w.up.URL()}}},
	}}
	p, err := proxy.New(context.Background(), cfg, proxy.Options{Knobs: &w.knobs, ServersFile: w.file})
	if err != nil {
		w.t.Fatal(err)
	}
	if err := p.Start(""); err != nil {
		w.t.Fatal(err)
	}
	w.t.Cleanup(func() { _ = p.Close(context.Background()) })
	w.p, w.base = p, "http://"+p.Addr()
}

func (w *serversWorld) api(method, path string, body any) (int, string) {
	w.t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, _ := http.NewRequest(method, w.base+path, rd)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		w.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func (w *serversWorld) list() []config.ServerSpec {
	w.t.Helper()
	code, body := w.api(http.MethodGet, "/api/v1/servers", nil)
	if code != http.StatusOK {
		w.t.Fatalf("GET /api/v1/servers: %d %s", code, body)
	}
	var out struct{ Servers []config.ServerSpec }
	if err := json.Unmarshal([]byte(body), &out); err != nil {
		w.t.Fatal(err)
	}
	return out.Servers
}

func (w *serversWorld) instance(server string) (status, probe string) {
	_, body := w.api(http.MethodGet, "/api/v1/instances", nil)
	var out struct {
		Instances []struct{ Project, Server, Status, Probe string }
	}
	_ = json.Unmarshal([]byte(body), &out)
	for _, in := range out.Instances {
		if in.Server == server {
			return in.Status, in.Probe
		}
	}
	return "", ""
}

func (w *serversWorld) extraSpec() config.ServerSpec {
	return config.ServerSpec{Name: "wiki", Project: "docmost", URL: w.extra.URL(), HealthCheck: &config.HealthCheck{
		Tool: "search", Arguments: map[string]any{"query": "ping"}, IntervalSeconds: 0.05, TimeoutSeconds: 15, FailureThreshold: 3}}
}

func toolNames(t *testing.T, cs *mcp.ClientSession) []string {
	t.Helper()
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, tl := range res.Tools {
		out = append(out, tl.Name)
	}
	return out
}

// TestServersCreateDeleteApplyRestart: a server created through the API
// appears with its probe; deleted, it is gone; put back (what apply does)
// it is the same server with the same probe; after a restart it is still
// there, from the servers file.
func TestServersCreateDeleteApplyRestart(t *testing.T) {
	w := newServersWorld(t)
	spec := w.extraSpec()
	if code, body := w.api(http.MethodPost, "/api/v1/servers", spec); code != http.StatusCreated {
		t.Fatalf("create: %d %s", code, body)
	}
	if code, body := w.api(http.MethodPost, "/api/v1/servers", spec); code != http.StatusConflict || !strings.Contains(body, "--force") {
		t.Errorf("a second create without force: %d %s, want 409 naming --force", code, body)
	}
	before := w.list()
	if len(before) != 2 || !reflect.DeepEqual(before[1], spec) {
		t.Fatalf("after create, servers = %+v, want docmost and %+v", before, spec)
	}
	if code, body := w.api(http.MethodDelete, "/api/v1/servers/docmost/wiki", nil); code != http.StatusOK {
		t.Fatalf("delete: %d %s", code, body)
	}
	if got := w.list(); len(got) != 1 || got[0].Name != "docmost" {
		t.Fatalf("after delete, servers = %+v", got)
	}
	if code, body := w.api(http.MethodPut, "/api/v1/servers/docmost/wiki", spec); code != http.StatusCreated {
		t.Fatalf("apply (PUT): %d %s", code, body)
	}
	if got := w.list(); !reflect.DeepEqual(got, before) {
		t.Fatalf("apply did not restore the server:\n got %+v\nwant %+v", got, before)
	}
	w.start()
	if got := w.list(); !reflect.DeepEqual(got, before) {
		t.Fatalf("after a restart, servers = %+v, want %+v (from %s)", got, before, w.file)
	}
	// The restarted proxy's prober probes the server the file brought back,
	// with its readiness probe.
	budget := time.Now().Add(w.knobs.UpstreamConnect + serversTolerance)
	for {
		status, probe := w.instance("wiki")
		if status == "healthy" && probe == "readiness: tools/call search" {
			break
		}
		if time.Now().After(budget) {
			t.Fatalf("instance wiki after restart: %q %q, want healthy by readiness: tools/call search", status, probe)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestServersRunningClientSeesListChanged: a client already connected to
// the project is sent tools/list_changed when a server is added, lists its
// tools, and is sent it again when the server is deleted; the health
// prober picks the new server up.
func TestServersRunningClientSeesListChanged(t *testing.T) {
	w := newServersWorld(t)
	changed := make(chan struct{}, 8)
	c := mcp.NewClient(&mcp.Implementation{Name: "servers-test", Version: "0"}, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { changed <- struct{}{} },
	})
	cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: w.base + "/projects/docmost/mcp", MaxRetries: -1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if got := toolNames(t, cs); strings.Contains(strings.Join(got, ","), "wiki_") {
		t.Fatalf("before create, tools already name wiki_: %v", got)
	}
	wait := func(what string) {
		t.Helper()
		select {
		case <-changed:
		case <-time.After(w.knobs.UpstreamConnect + serversTolerance):
			t.Fatalf("no notifications/tools/list_changed after %s", what)
		}
		for len(changed) > 0 { // the change's other notifications
			<-changed
		}
	}
	// A liveness probe: it calls no tool, so the upstreams' call counts
	// below are the client's alone.
	spec := w.extraSpec()
	spec.HealthCheck = &config.HealthCheck{IntervalSeconds: 0.05}
	if code, body := w.api(http.MethodPost, "/api/v1/servers", spec); code != http.StatusCreated {
		t.Fatalf("create: %d %s", code, body)
	}
	wait("create")
	if got := strings.Join(toolNames(t, cs), ","); !strings.Contains(got, "wiki_search") || !strings.Contains(got, "docmost_search") {
		t.Fatalf("after create, tools = %s; want docmost_search and wiki_search", got)
	}
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "wiki_search", Arguments: map[string]any{"query": "x"}})
	if err != nil || res.IsError {
		t.Fatalf("calling the new server's tool: %v %+v", err, res)
	}
	budget := time.Now().Add(w.knobs.UpstreamConnect + serversTolerance)
	for status, _ := w.instance("wiki"); status != "live"; status, _ = w.instance("wiki") {
		if time.Now().After(budget) {
			t.Fatalf("the prober did not pick up server wiki: status %q", status)
		}
		time.Sleep(20 * time.Millisecond)
	}
	// Replaced by a server at another URL, wiki's tools reach the new
	// upstream: the client's session to the old one was closed, not reused.
	moved := spec
	moved.URL = w.up.URL()
	if code, body := w.api(http.MethodPut, "/api/v1/servers/docmost/wiki", moved); code != http.StatusOK || !strings.Contains(body, `"outcome":"replaced"`) {
		t.Fatalf("replace: %d %s", code, body)
	}
	wait("replace")
	oldCalls, newCalls := len(w.extra.Calls()), len(w.up.Calls())
	res, err = cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "wiki_search", Arguments: map[string]any{"query": "x"}})
	if err != nil || res.IsError {
		t.Fatalf("calling the replaced server's tool: %v %+v", err, res)
	}
	if len(w.extra.Calls()) != oldCalls || len(w.up.Calls()) != newCalls+1 {
		t.Fatalf("after replace, wiki_search went to the old upstream (old %d→%d calls, new %d→%d)", oldCalls, len(w.extra.Calls()), newCalls, len(w.up.Calls()))
	}
	if code, body := w.api(http.MethodDelete, "/api/v1/servers/docmost/wiki", nil); code != http.StatusOK {
		t.Fatalf("delete: %d %s", code, body)
	}
	wait("delete")
	if got := strings.Join(toolNames(t, cs), ","); strings.Contains(got, "wiki_") {
		t.Fatalf("after delete, tools = %s", got)
	}
	res, err = cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "wiki_search", Arguments: map[string]any{"query": "x"}})
	if err != nil || !res.IsError {
		t.Fatalf("a deleted server's tool still answers: %v %+v", err, res)
	}
	if status, _ := w.instance("wiki"); status != "" {
		t.Errorf("the prober still probes a deleted server: %q", status)
	}
}

// TestServersRefuseBadSpecs: a probe on a tool the server does not expose,
// a bad URL and a project with no server left are refused, each naming its
// field, and nothing changes.
func TestServersRefuseBadSpecs(t *testing.T) {
	w := newServersWorld(t)
	spec := w.extraSpec()
	spec.HealthCheck.Tool = "list_sites"
	code, body := w.api(http.MethodPost, "/api/v1/servers", spec)
	if code != http.StatusUnprocessableEntity || !strings.Contains(body, `healthCheck.tool: \"list_sites\" is not a tool of server wiki`) {
		t.Errorf("probe on a missing tool: %d %s", code, body)
	}
	spec = w.extraSpec()
	spec.URL = "ftp://nowhere"
	if code, body := w.api(http.MethodPost, "/api/v1/servers", spec); code != http.StatusUnprocessableEntity || !strings.Contains(body, "projects.docmost.servers.wiki.url") {
		t.Errorf("bad url: %d %s", code, body)
	}
	if code, body := w.api(http.MethodDelete, "/api/v1/servers/docmost/docmost", nil); code != http.StatusUnprocessableEntity || !strings.Contains(body, "projects.docmost.servers") {
		t.Errorf("deleting the last server: %d %s", code, body)
	}
	if got := w.list(); len(got) != 1 {
		t.Errorf("refused changes changed the servers: %+v", got)
	}
}

// TestServersAPIIsAdminOnly: with users configured, /api/v1/servers wants an
// admin bearer token for reading as for changing.
func TestServersAPIIsAdminOnly(t *testing.T) {
	w := newPauseWorld(t, 2*time.Second, 2*time.Second, true)
	for _, m := range []string{http.MethodGet, http.MethodPost} {
		if code, body := w.api(m, "/api/v1/servers", ""); code != http.StatusUnauthorized || !strings.Contains(body, "admin bearer token") {
			t.Errorf("%s without a token: %d %s", m, code, body)
		}
	}
	if code, body := w.api(http.MethodDelete, "/api/v1/servers/docmost/docmost", ""); code != http.StatusUnauthorized {
		t.Errorf("DELETE without a token: %d %s", code, body)
	}
	if code, body := w.api(http.MethodPost, "/api/v1/servers/docmost/docmost/check", ""); code != http.StatusUnauthorized {
		t.Errorf("a check without a token: %d %s", code, body)
	}
	if code, body := w.api(http.MethodGet, "/api/v1/servers", w.token); code != http.StatusOK || !strings.Contains(body, `"name":"docmost"`) {
		t.Errorf("GET with the admin token: %d %s", code, body)
	}
}

// TestAdminAPIsRefuseAUserWithoutAdmin: a configured user whose entry lacks
// admin: true is authenticated but not allowed: 403 on every admin API, and
// nothing changes.
func TestAdminAPIsRefuseAUserWithoutAdmin(t *testing.T) {
	w := newPauseWorld(t, 2*time.Second, 2*time.Second, true)
	for _, c := range []struct{ method, path string }{
		{http.MethodGet, "/api/v1/servers"},
		{http.MethodPost, "/api/v1/servers"},
		{http.MethodDelete, "/api/v1/servers/docmost/docmost"},
		{http.MethodPost, "/api/v1/servers/docmost/docmost/check"},
		{http.MethodPost, "/api/v1/projects/docmost/pause"},
		{http.MethodPost, "/api/v1/projects/docmost/resume"},
	} {
		if code, body := w.api(c.method, c.path, bobToken); code != http.StatusForbidden || !strings.Contains(body, "admin: true") {
			t.Errorf("%s %s as bob (no admin): %d %s, want 403 naming admin: true", c.method, c.path, code, body)
		}
	}
	if _, body := w.api(http.MethodGet, "/api/v1/servers", w.token); strings.Count(body, `"name":`) != 1 {
		t.Errorf("a refused call changed the servers: %s", body)
	}
	if _, body := w.api(http.MethodGet, "/readyz", ""); !strings.Contains(body, `"paused":[]`) {
		t.Errorf("a refused pause paused the project: %s", body)
	}
}
