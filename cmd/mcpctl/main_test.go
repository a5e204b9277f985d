package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpchaos/mcpchaos/proxy/audit"
)

// result is one CLI invocation as the shell sees it.
type result struct {
	code           int
	stdout, stderr string
}

// cli runs mcpctl with args the way main does, with MCPCTL_URL, MCPCTL_TOKEN
// and MCPCTL_TOKEN_FILE unset.
func cli(t *testing.T, args ...string) result {
	t.Helper()
	for _, k := range []string{envURL, envToken, envTokenFile} {
		t.Setenv(k, "")
	}
	var out, errOut strings.Builder
	code := report(run(args, &out, &errOut), &errOut)
	return result{code, out.String(), errOut.String()}
}

func (r result) wantCode(t *testing.T, code int) {
	t.Helper()
	if r.code != code {
		t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", r.code, code, r.stdout, r.stderr)
	}
}

func (r result) wantStderr(t *testing.T, parts ...string) {
	t.Helper()
	for _, p := range parts {
		if !strings.Contains(r.stderr, p) {
			t.Errorf("stderr lacks %q:\n%s", p, r.stderr)
		}
	}
}

var base = time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)

func sampleRows(code string) []audit.Row {
	return []audit.Row{
		{ID: 1, Kind: audit.KindToolCallTrace, CorrelationID: code, SpanID: "R", SessionID: "s-1", User: "alice",
			Project: "docmost", Tool: "docmost_search", Start: base, Duration: 800 * time.Millisecond, Status: "ok",
			Degraded: true, DegradedReason: "pagination index unavailable (llm timeout)"},
		{ID: 2, Kind: audit.KindUpstreamCall, CorrelationID: code, SpanID: "U", ParentID: "R", Server: "docmost",
			Tool: "search", Start: base.Add(100 * time.Millisecond), Duration: 600 * time.Millisecond, Status: "ok"},
	}
}

// proxyStub is a fake proxy audit endpoint recording what it was asked.
type proxyStub struct {
	mu      sync.Mutex
	queries []string // path?query of every request
	status  int
	body    string
}

func newStub(t *testing.T, status int, body string) (*proxyStub, *httptest.Server) {
	s := &proxyStub{status: status, body: body}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.queries = append(s.queries, r.Method+" "+r.URL.RequestURI())
		s.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(s.status)
		fmt.Fprint(w, s.body)
	}))
	t.Cleanup(srv.Close)
	return s, srv
}

func (s *proxyStub) asked() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.queries...)
}

func rowsBody(t *testing.T, rows []audit.Row) string {
	t.Helper()
	b, err := json.Marshal(map[string]any{"rows": rows})
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestHelp(t *testing.T) {
	for _, args := range [][]string{{"--help"}, {"-h"}, {"help"}, {"help", "help"}} {
		r := cli(t, args...)
		r.wantCode(t, 0)
		for _, want := range []string{"mcpctl trace CODE", "--url URL", "--timeout", "--json", "mcpctl help", "MCPCTL_URL", "Exit status"} {
			if !strings.Contains(r.stdout, want) {
				t.Errorf("%v: help lacks %q:\n%s", args, want, r.stdout)
			}
		}
		if !strings.Contains(r.stdout, "mcpctl get instances") {
			t.Errorf("help does not offer get instances:\n%s", r.stdout)
		}
	}
	for _, args := range [][]string{{"help", "trace"}, {"trace", "--help"}, {"trace", "7K3M9QXZ", "-h"}} {
		r := cli(t, args...)
		r.wantCode(t, 0)
		for _, want := range []string{"GET URL/api/v1/audit?trace=CODE", "Crockford", "--url URL", "--timeout D", "--json", "← slowest", "⚠", "✗"} {
			if !strings.Contains(r.stdout, want) {
				t.Errorf("%v: trace help lacks %q:\n%s", args, want, r.stdout)
			}
		}
	}
}

func TestUsageErrors(t *testing.T) {
	for _, c := range []struct {
		args []string
		want []string
	}{
		{nil, []string{"missing command", "Run 'mcpctl help'"}},
		{[]string{"frobnicate"}, []string{`unknown command "frobnicate"`, "trace, get, chat, pause, resume, create, delete, apply, help"}},
		{[]string{"get"}, []string{`want 'get instances'`}},
		{[]string{"get", "pods"}, []string{`want 'get instances'`}},
		{[]string{"get", "instances", "extra"}, []string{`unexpected arguments: extra`}},
		{[]string{"help", "trace", "extra"}, []string{"at most one command"}},
		{[]string{"trace"}, []string{"missing trace CODE", "Run 'mcpctl help trace'"}},
		{[]string{"trace", "7K3M9QXZ", "7K3M9QXA"}, []string{"want one trace CODE, got 2"}},
		{[]string{"trace", "short"}, []string{`"short" is not a trace code`, "Crockford"}},
		{[]string{"trace", "7K3M9QXZ9"}, []string{"is not a trace code"}},
		{[]string{"trace", "7K3M9QXU"}, []string{`"7K3M9QXU" is not a trace code`}},
		{[]string{"trace", "7k3moqxi"}, []string{"is not a trace code", "did you mean 7K3M0QX1?"}},
		{[]string{"trace", "7K3M9QXZ", "--bogus"}, []string{"flag provided but not defined: -bogus"}},
		{[]string{"trace", "7K3M9QXZ", "--timeout", "soon"}, []string{`invalid value "soon" for flag -timeout`}},
		{[]string{"trace", "7K3M9QXZ", "--timeout", "0s"}, []string{"--timeout must be positive"}},
		{[]string{"trace", "7K3M9QXZ", "--url", "127.0.0.1:8080"}, []string{"bad --url", "http://HOST:PORT"}},
		{[]string{"trace", "7K3M9QXZ", "--url", "ftp://x"}, []string{"bad --url"}},
	} {
		r := cli(t, c.args...)
		r.wantCode(t, exitUsage)
		r.wantStderr(t, c.want...)
		if r.stdout != "" {
			t.Errorf("%v: usage error wrote to stdout:\n%s", c.args, r.stdout)
		}
	}
}

func TestTraceRendersWaterfall(t *testing.T) {
	stub, srv := newStub(t, http.StatusOK, rowsBody(t, sampleRows("7K3M9QXZ")))
	// Lower-case code, flags after it, a trailing slash on the URL.
	r := cli(t, "trace", "7k3m9qxz", "--url", srv.URL+"/")
	r.wantCode(t, 0)
	if got := stub.asked(); len(got) != 1 || got[0] != "GET /api/v1/audit?trace=7K3M9QXZ" {
		t.Errorf("proxy asked %q", got)
	}
	for _, want := range []string{
		"trace 7K3M9QXZ  total 800.0ms  2 spans, 1 degraded\n",
		"session s-1  user alice  project docmost",
		"tool_call_trace  docmost_search",
		"  ⚠ pagination index unavailable (llm timeout)\n",
		"  upstream_call  search",
		"← slowest",
		"slowest: upstream_call search (600.0ms)\n",
	} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("output lacks %q:\n%s", want, r.stdout)
		}
	}
	if r.stderr != "" {
		t.Errorf("stderr on success: %q", r.stderr)
	}
}

func TestTraceJSON(t *testing.T) {
	rows := sampleRows("7K3M9QXZ")
	_, srv := newStub(t, http.StatusOK, rowsBody(t, rows))
	r := cli(t, "trace", "--json", "--url", srv.URL, "7K3M9QXZ")
	r.wantCode(t, 0)
	var got []audit.Row
	if err := json.Unmarshal([]byte(r.stdout), &got); err != nil {
		t.Fatalf("--json output is not a JSON array of rows: %v\n%s", err, r.stdout)
	}
	if len(got) != len(rows) || got[1].SpanID != "U" || got[1].ParentID != "R" || got[0].Duration != rows[0].Duration ||
		!got[0].Start.Equal(rows[0].Start) || got[0].DegradedReason != rows[0].DegradedReason {
		t.Errorf("rows changed on the way through:\n%s", r.stdout)
	}
	for _, field := range []string{`"durationNs": 800000000`, `"durationMs": 800`, `"correlationId": "7K3M9QXZ"`} {
		if !strings.Contains(r.stdout, field) {
			t.Errorf("--json lacks %s:\n%s", field, r.stdout)
		}
	}
}

func TestTraceNoRows(t *testing.T) {
	for _, body := range []string{`{"rows":[]}`, `{"rows":null}`} {
		_, srv := newStub(t, http.StatusOK, body)
		for _, extra := range [][]string{nil, {"--json"}} {
			r := cli(t, append([]string{"trace", "7K3M9QXZ", "--url", srv.URL}, extra...)...)
			r.wantCode(t, exitFailure)
			r.wantStderr(t, "no audit rows for trace 7K3M9QXZ at "+srv.URL+"\n")
			if r.stdout != "" {
				t.Errorf("stdout on no rows: %q", r.stdout)
			}
		}
	}
}

func TestTraceProxyErrors(t *testing.T) {
	for _, c := range []struct {
		name   string
		status int
		body   string
		want   []string
	}{
		{"error JSON", 500, `{"error":"audit: database is locked"}`, []string{"proxy answered 500 Internal Server Error: audit: database is locked"}},
		{"unavailable", 503, `{"error":"audit: closed"}`, []string{"503 Service Unavailable: audit: closed"}},
		{"not JSON", 502, "<html>\n<h1>Bad gateway</h1></html>", []string{"502 Bad Gateway: <html> <h1>Bad gateway</h1></html>"}},
		{"empty body", 404, "", []string{"404 Not Found: (empty body)"}},
		{"200 not JSON", 200, "hello", []string{"answer is not audit JSON", "hello"}},
		{"200 without rows", 200, `{"status":"ok"}`, []string{`answer has no "rows" field`, "is --url a mcplocal proxy?"}},
		{"200 bad row", 200, `{"rows":[{"start":"yesterday"}]}`, []string{"answer is not audit JSON"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, srv := newStub(t, c.status, c.body)
			r := cli(t, "trace", "7K3M9QXZ", "--url", srv.URL)
			r.wantCode(t, exitFailure)
			r.wantStderr(t, c.want...)
			r.wantStderr(t, srv.URL+"/api/v1/audit?trace=7K3M9QXZ")
			if strings.Contains(r.stderr, "Run 'mcpctl help") {
				t.Errorf("a proxy failure is not a usage error:\n%s", r.stderr)
			}
		})
	}
}

func TestTraceTimeout(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}))
	defer srv.Close()
	defer close(release)
	start := time.Now()
	r := cli(t, "trace", "7K3M9QXZ", "--url", srv.URL, "--timeout", "100ms")
	r.wantCode(t, exitFailure)
	r.wantStderr(t, "no answer within 100ms", "--timeout")
	if el := time.Since(start); el > 5*time.Second {
		t.Errorf("--timeout 100ms took %v", el)
	}
}

func TestTraceUnreachable(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close() // nothing listens there any more
	r := cli(t, "trace", "7K3M9QXZ", "--url", url, "--timeout", "5s")
	r.wantCode(t, exitFailure)
	r.wantStderr(t, "cannot reach the proxy", url)
}

func TestTraceURLFromEnvAndFlag(t *testing.T) {
	envStub, envSrv := newStub(t, http.StatusOK, rowsBody(t, sampleRows("7K3M9QXZ")))
	flagStub, flagSrv := newStub(t, http.StatusOK, rowsBody(t, sampleRows("7K3M9QXZ")))
	env := func(k string) string {
		if k == envURL {
			return envSrv.URL + "/prefix/"
		}
		return ""
	}
	var out strings.Builder
	if err := runTrace([]string{"7K3M9QXZ"}, &out, env); err != nil {
		t.Fatalf("with %s: %v", envURL, err)
	}
	if got := envStub.asked(); len(got) != 1 || got[0] != "GET /prefix/api/v1/audit?trace=7K3M9QXZ" {
		t.Errorf("env URL: proxy asked %q", got)
	}
	if err := runTrace([]string{"--url", flagSrv.URL, "7K3M9QXZ"}, &out, env); err != nil {
		t.Fatalf("with --url: %v", err)
	}
	if len(flagStub.asked()) != 1 || len(envStub.asked()) != 1 {
		t.Errorf("--url should win over %s: flag stub %q, env stub %q", envURL, flagStub.asked(), envStub.asked())
	}
}

func TestDefaultURL(t *testing.T) {
	u, err := endpoint("", func(string) string { return "" }, "/api/v1/audit")
	if err != nil || u.String() != "http://127.0.0.1:8080/api/v1/audit" {
		t.Errorf("endpoint(default) = %v, %v", u, err)
	}
	u, err = endpoint("http://proxy:9/prefix/", func(string) string { return "" }, "/api/v1/chat")
	if err != nil || u.String() != "http://proxy:9/prefix/api/v1/chat" {
		t.Errorf("endpoint(with a path prefix) = %v, %v", u, err)
	}
	if !strings.Contains(usage, defaultURL) || !strings.Contains(traceUsage, defaultURL) {
		t.Errorf("help does not name the default URL %s", defaultURL)
	}
}

func TestReport(t *testing.T) {
	for _, c := range []struct {
		err  error
		code int
		want string
	}{
		{nil, 0, ""},
		{errors.New("boom"), 1, "mcpctl: boom\n"},
		{fmt.Errorf("wrapped: %w", usagef("trace", "bad")), 2, "mcpctl: wrapped: bad\nRun 'mcpctl help trace' for usage.\n"},
		{usagef("", "bad"), 2, "mcpctl: bad\nRun 'mcpctl help' for usage.\n"},
	} {
		var b strings.Builder
		if got := report(c.err, &b); got != c.code || b.String() != c.want {
			t.Errorf("report(%v) = %d %q, want %d %q", c.err, got, b.String(), c.code, c.want)
		}
	}
}

func TestParseInterleaved(t *testing.T) {
	for _, c := range []struct {
		args []string
		pos  []string
		json bool
	}{
		{[]string{"A", "--json"}, []string{"A"}, true},
		{[]string{"--json", "A"}, []string{"A"}, true},
		{[]string{"A", "B"}, []string{"A", "B"}, false},
		{[]string{"A", "--", "--json"}, []string{"A", "--json"}, false},
		{[]string{"--json", "A", "--json"}, []string{"A"}, true},
		{[]string{"--json", "A", "B"}, []string{"A", "B"}, true},
	} {
		fs := newTestFlagSet()
		pos, err := parseInterleaved(fs.FlagSet, c.args)
		if err != nil || strings.Join(pos, ",") != strings.Join(c.pos, ",") || *fs.json != c.json {
			t.Errorf("%q: pos %q json %v err %v; want %q %v", c.args, pos, *fs.json, err, c.pos, c.json)
		}
	}
}

type testFlagSet struct {
	*flag.FlagSet
	json *bool
}

func newTestFlagSet() testFlagSet {
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	return testFlagSet{fs, fs.Bool("json", false, "")}
}
