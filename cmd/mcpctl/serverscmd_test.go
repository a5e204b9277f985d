package main

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// scripted is an admin API that answers each "METHOD /path" with a fixed
// status and body (404 for anything else) and notes what it was sent.
type scripted struct {
	mu      sync.Mutex
	answers map[string]scriptedAnswer
	sent    []scriptedRequest
	srv     *httptest.Server
}

type scriptedAnswer struct {
	status int
	body   string
}

type scriptedRequest struct {
	method, path, query, contentType string
	body                             map[string]any
}

func newScripted(t *testing.T, answers map[string]scriptedAnswer) *scripted {
	t.Helper()
	s := &scripted{answers: answers}
	s.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		var body map[string]any
		_ = json.Unmarshal(b, &body)
		s.mu.Lock()
		s.sent = append(s.sent, scriptedRequest{r.Method, r.URL.Path, r.URL.RawQuery, r.Header.Get("Content-Type"), body})
		s.mu.Unlock()
		a, ok := answers[r.Method+" "+r.URL.Path]
		if !ok {
			a = scriptedAnswer{http.StatusNotFound, `{"error":"no such route"}`}
		}
		w.WriteHeader(a.status)
		_, _ = io.WriteString(w, a.body)
	}))
	t.Cleanup(s.srv.Close)
	return s
}

func (s *scripted) requests() []scriptedRequest {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]scriptedRequest(nil), s.sent...)
}

// writes are the requests that would change a server.
func (s *scripted) writes() []scriptedRequest {
	var out []scriptedRequest
	for _, q := range s.requests() {
		if q.method != http.MethodGet && !strings.HasSuffix(q.path, "/check") {
			out = append(out, q)
		}
	}
	return out
}

const (
	twoProjects = `{"servers":[{"name":"wiki","project":"docmost","url":"http://127.0.0.1:1/wiki"},
 {"name":"blog","project":"ops","url":"http://127.0.0.1:1/blog"}]}`
	oneProject = `{"servers":[{"name":"wiki","project":"docmost","url":"http://127.0.0.1:1/wiki"}]}`
	wikiTwice  = `{"servers":[{"name":"wiki","project":"docmost","url":"http://127.0.0.1:1/wiki"},
 {"name":"wiki","project":"ops","url":"http://127.0.0.1:1/wiki2"}]}`
	healthy = `{"answered":true,"tools":1,"probe":"liveness","healthy":true}`
)

var ok200 = func(body string) scriptedAnswer { return scriptedAnswer{http.StatusOK, body} }

// TestCreateServerFindsItsProject: --project may be left out when the proxy
// has one project (the new server goes there) or the server exists in one
// project; with several projects and a new server it is a usage error
// naming --project, as it is for a server existing in two projects.
func TestCreateServerFindsItsProject(t *testing.T) {
	for _, c := range []struct {
		name, servers string
		args          []string
		code          int
		path, stderr  string
	}{
		{"one project, new server", oneProject, []string{"new", "--server-url", "http://127.0.0.1:1/n"}, exitOK, "POST /api/v1/servers", ""},
		{"several projects, new server", twoProjects, []string{"new", "--server-url", "http://127.0.0.1:1/n"}, exitUsage, "", "--project is required"},
		{"several projects, existing server", twoProjects, []string{"blog", "--force"}, exitOK, "PUT /api/v1/servers/ops/blog", ""},
		{"server in two projects", wikiTwice, []string{"wiki", "--force"}, exitUsage, "", "exists in projects docmost and ops: say which with --project"},
		{"server in two projects, --project says", wikiTwice, []string{"wiki", "--force", "--project", "ops"}, exitOK, "PUT /api/v1/servers/ops/wiki", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := newScripted(t, map[string]scriptedAnswer{
				"GET /api/v1/servers":                    ok200(c.servers),
				"POST /api/v1/servers":                   ok200(`{"outcome":"created"}`),
				"PUT /api/v1/servers/ops/blog":           ok200(`{"outcome":"replaced"}`),
				"PUT /api/v1/servers/ops/wiki":           ok200(`{"outcome":"replaced"}`),
				"POST /api/v1/servers/docmost/new/check": ok200(healthy),
				"POST /api/v1/servers/ops/blog/check":    ok200(healthy),
				"POST /api/v1/servers/ops/wiki/check":    ok200(healthy),
			})
			r := cli(t, append([]string{"create", "server", "--url", s.srv.URL}, c.args...)...)
			r.wantCode(t, c.code)
			r.wantStderr(t, c.stderr)
			w := s.writes()
			if c.path == "" {
				if len(w) != 0 {
					t.Errorf("refused, yet sent %s %s", w[0].method, w[0].path)
				}
				return
			}
			if len(w) != 1 || w[0].method+" "+w[0].path != c.path {
				t.Fatalf("writes %+v, want one %s", w, c.path)
			}
			if w[0].contentType != "application/json" {
				t.Errorf("the spec went as %q, want application/json", w[0].contentType)
			}
			if c.path == "POST /api/v1/servers" && w[0].body["project"] != "docmost" {
				t.Errorf("the new server went to project %v, want the proxy's only project docmost", w[0].body["project"])
			}
		})
	}
}

// TestDeleteServerFindsItsProject: delete server without --project deletes
// the server from the one project that has it; a server in two projects is
// a usage error naming --project; a server no project has is exit 1.
func TestDeleteServerFindsItsProject(t *testing.T) {
	for _, c := range []struct {
		name, servers, server string
		code                  int
		path, out, stderr     string
	}{
		{"one project has it", twoProjects, "blog", exitOK, "DELETE /api/v1/servers/ops/blog", "server ops/blog deleted\n", ""},
		{"two projects have it", wikiTwice, "wiki", exitUsage, "", "", "server wiki exists in projects docmost and ops: say which with --project"},
		{"no project has it", twoProjects, "gone", exitFailure, "", "", `no project has a server "gone"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := newScripted(t, map[string]scriptedAnswer{
				"GET /api/v1/servers":             ok200(c.servers),
				"DELETE /api/v1/servers/ops/blog": ok200(`{}`),
			})
			r := cli(t, "delete", "server", c.server, "--url", s.srv.URL)
			r.wantCode(t, c.code)
			r.wantStderr(t, c.stderr)
			if r.stdout != c.out {
				t.Errorf("stdout %q, want %q", r.stdout, c.out)
			}
			w := s.writes()
			if c.path == "" && len(w) != 0 || c.path != "" && (len(w) != 1 || w[0].method+" "+w[0].path != c.path) {
				t.Errorf("writes %+v, want %q", w, c.path)
			}
		})
	}
}

// TestServersCommandsQuoteTheProxysRefusal: an error answer's {"error": ...}
// is what mcpctl says, exit 1; an answer that is not the API's JSON is
// quoted with its status, whether an error status or a 2xx.
func TestServersCommandsQuoteTheProxysRefusal(t *testing.T) {
	for _, c := range []struct {
		name   string
		answer scriptedAnswer
		stderr []string
	}{
		{"the proxy's error", scriptedAnswer{http.StatusForbidden, `{"error":"admin bearer token required"}`}, []string{"get servers: admin bearer token required"}},
		{"an L7 proxy's page", scriptedAnswer{http.StatusBadGateway, `<html>bad gateway</html>`}, []string{"proxy answered 502 Bad Gateway: <html>bad gateway</html>"}},
		{"an error without a message", scriptedAnswer{http.StatusInternalServerError, `{"error":""}`}, []string{"proxy answered 500 Internal Server Error"}},
		{"a 2xx that is not JSON", scriptedAnswer{http.StatusOK, `not json`}, []string{"proxy answered 200 OK: not json"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := newScripted(t, map[string]scriptedAnswer{"GET /api/v1/servers": c.answer})
			r := cli(t, "get", "servers", "--url", s.srv.URL)
			r.wantCode(t, exitFailure)
			r.wantStderr(t, c.stderr...)
			if r.stdout != "" {
				t.Errorf("a failed get printed %q", r.stdout)
			}
		})
	}
}

// TestGetServersOutputs: the table has a header and a row per server with
// its probe; --project asks the proxy for that project only; -o and
// --output agreeing are one choice; an unknown output or a stray argument
// is a usage error and nothing is asked.
func TestGetServersOutputs(t *testing.T) {
	s := newScripted(t, map[string]scriptedAnswer{"GET /api/v1/servers": ok200(oneProject)})
	r := cli(t, "get", "servers", "--project", "docmost", "--url", s.srv.URL)
	r.wantCode(t, exitOK)
	lines := strings.Split(strings.TrimRight(r.stdout, "\n"), "\n")
	if len(lines) != 2 || strings.Join(strings.Fields(lines[0]), " ") != "PROJECT SERVER URL PROBE" ||
		!strings.HasPrefix(strings.Join(strings.Fields(lines[1]), " "), "docmost wiki http://127.0.0.1:1/wiki liveness probe: tools/list every") {
		t.Errorf("table:\n%s", r.stdout)
	}
	if q := s.requests(); len(q) != 1 || q[0].path != "/api/v1/servers" || q[0].query != "project=docmost" {
		t.Errorf("asked %+v, want GET /api/v1/servers?project=docmost", q)
	}

	r = cli(t, "get", "servers", "-o", "json", "--output", "json", "--url", s.srv.URL)
	r.wantCode(t, exitOK)
	var specs []map[string]any
	if err := json.Unmarshal([]byte(r.stdout), &specs); err != nil || len(specs) != 1 || specs[0]["name"] != "wiki" {
		t.Errorf("-o json --output json: want the specs as JSON (%v), got:\n%s", err, r.stdout)
	}
	if q := s.requests(); q[len(q)-1].query != "" {
		t.Errorf("without --project asked with query %q", q[len(q)-1].query)
	}

	before := len(s.requests())
	for _, c := range []struct {
		args   []string
		stderr string
	}{
		{[]string{"-o", "xml"}, `-o "xml": want table, yaml or json`},
		{[]string{"--output", "wide"}, `-o "wide": want table, yaml or json`},
		{[]string{"stray"}, "unexpected arguments: stray"},
		{[]string{"-o", "yaml", "--output", "json"}, "give one"},
	} {
		r := cli(t, append([]string{"get", "servers", "--url", s.srv.URL}, c.args...)...)
		r.wantCode(t, exitUsage)
		r.wantStderr(t, c.stderr)
	}
	if n := len(s.requests()); n != before {
		t.Errorf("usage errors asked the proxy %d times", n-before)
	}
}

// TestApplyReportsEachSpec: apply -f replaces every spec in the file (PUT),
// one line each; a spec without name or project is refused with its index,
// the others still applied, and the run exits 1 counting the refusals.
func TestApplyReportsEachSpec(t *testing.T) {
	s := newScripted(t, map[string]scriptedAnswer{
		"PUT /api/v1/servers/docmost/wiki": ok200(`{"outcome":"unchanged"}`),
		"PUT /api/v1/servers/ops/blog":     {http.StatusBadRequest, `{"error":"url: want http or https"}`},
	})
	file := filepath.Join(t.TempDir(), "servers.yaml")
	specs := "- name: wiki\n  project: docmost\n  url: http://127.0.0.1:1/wiki\n" +
		"- name: nameless\n  url: http://127.0.0.1:1/x\n" +
		"- name: blog\n  project: ops\n  url: ftp://127.0.0.1/blog\n"
	if err := os.WriteFile(file, []byte(specs), 0o600); err != nil {
		t.Fatal(err)
	}
	r := cli(t, "apply", "-f", file, "--url", s.srv.URL)
	r.wantCode(t, exitFailure)
	if r.stdout != "server docmost/wiki unchanged\n" {
		t.Errorf("stdout %q", r.stdout)
	}
	r.wantStderr(t, "apply: 2 of 3 refused", "servers[1]: name and project are required", "server ops/blog: url: want http or https")
	if w := s.writes(); len(w) != 2 {
		t.Errorf("writes %+v, want the two specs with a project sent", w)
	}

	for _, args := range [][]string{{"apply"}, {"apply", "-f", file, "extra"}} {
		r := cli(t, append(args, "--url", s.srv.URL)...)
		r.wantCode(t, exitUsage)
		r.wantStderr(t, "want 'apply -f FILE'")
	}
	r = cli(t, "apply", "-f", filepath.Join(t.TempDir(), "missing.yaml"), "--url", s.srv.URL)
	r.wantCode(t, exitFailure)
	r.wantStderr(t, "apply: ", "missing.yaml")
}

// TestTraceBundleQuotesTheProxysRefusal: a bundle the proxy refuses says
// the proxy's own message (not its JSON), or the body of an answer that is
// not the API's; an answer without a config is no replay context. No
// bundle file is written.
func TestTraceBundleQuotesTheProxysRefusal(t *testing.T) {
	for _, c := range []struct {
		name    string
		context scriptedAnswer
		want    string
	}{
		{"the proxy's error", scriptedAnswer{http.StatusForbidden, `{"error":"a bundle is an admin's"}`}, "proxy answered 403 Forbidden: a bundle is an admin's"},
		{"an L7 proxy's page", scriptedAnswer{http.StatusForbidden, `<html>denied</html>`}, "proxy answered 403 Forbidden: <html>denied</html>"},
		{"an error without a message", scriptedAnswer{http.StatusForbidden, `{"error":""}`}, `proxy answered 403 Forbidden: {"error":""}`},
		{"no config", ok200(`{"version":"v1"}`), "answer is not a replay context"},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := newScripted(t, map[string]scriptedAnswer{
				"GET /api/v1/audit":          ok200(rowsBody(t, sampleRows("7K3M9QXZ"))),
				"GET /api/v1/replay/context": c.context,
			})
			file := filepath.Join(t.TempDir(), "bundle.json")
			r := cli(t, "trace", "7K3M9QXZ", "--bundle", file, "--url", s.srv.URL)
			r.wantCode(t, exitFailure)
			r.wantStderr(t, c.want)
			if _, err := os.Stat(file); err == nil {
				t.Errorf("a refused bundle was written")
			}
		})
	}
}

// TestResumingARunningProjectSaysSo: resuming a project that was not paused
// is harmless and says so.
func TestResumingARunningProjectSaysSo(t *testing.T) {
	s := newScripted(t, map[string]scriptedAnswer{
		"POST /api/v1/projects/docmost/resume": ok200(`{"project":"docmost","paused":false,"changed":false}`),
	})
	r := cli(t, "resume", "docmost", "--url", s.srv.URL)
	r.wantCode(t, exitOK)
	if r.stdout != "project docmost was not paused\n" {
		t.Errorf("stdout %q", r.stdout)
	}
}

// TestNoCommandPrintsTheUsage: mcpctl without a command prints its usage
// on stderr and exits 2.
func TestNoCommandPrintsTheUsage(t *testing.T) {
	r := cli(t)
	r.wantCode(t, exitUsage)
	r.wantStderr(t, "Usage (every command also takes the connection flags below):", "mcpctl trace CODE")
}

// TestPausingAPausedProjectSaysSo: pausing a paused project is harmless and
// says since when and how many requests wait.
func TestPausingAPausedProjectSaysSo(t *testing.T) {
	s := newScripted(t, map[string]scriptedAnswer{
		"POST /api/v1/projects/docmost/pause": ok200(`{"project":"docmost","paused":true,"changed":false,"since":"2026-11-30T01:00:00Z","waiting":2}`),
	})
	r := cli(t, "pause", "docmost", "--url", s.srv.URL)
	r.wantCode(t, exitOK)
	if !strings.HasPrefix(r.stdout, "project docmost was already paused (since ") || !strings.HasSuffix(r.stdout, "); 2 request(s) waiting\n") {
		t.Errorf("stdout %q", r.stdout)
	}
}

// TestApplyRefusesAFileThatIsNoSpecs: a file that is not server specs is
// refused naming the file, exit 1, and nothing is sent.
func TestApplyRefusesAFileThatIsNoSpecs(t *testing.T) {
	s := newScripted(t, nil)
	file := filepath.Join(t.TempDir(), "servers.yaml")
	if err := os.WriteFile(file, []byte("name: [unclosed\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	r := cli(t, "apply", "-f", file, "--url", s.srv.URL)
	r.wantCode(t, exitFailure)
	r.wantStderr(t, "apply -f "+file+": ")
	if q := s.requests(); len(q) != 0 {
		t.Errorf("sent %+v", q)
	}
}
