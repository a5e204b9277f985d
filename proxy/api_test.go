package proxy

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/mcpchaos/mcpchaos/proxy/audit"
	"github.com/mcpchaos/mcpchaos/proxy/config"
)

// apiProxy starts a proxy with one project p (its upstream unreachable) and
// the given users, over a memory store.
func apiProxy(t *testing.T, users map[string]config.User) *Proxy {
	t.Helper()
	cfg := &config.Config{
		Listen: "127.0.0.1:0", Audit: "memory", Users: users,
		Projects: map[string]*config.Project{"p": {Servers: map[string]*config.Server{"s": {URL: "http://127.0.0.1:1/mcp"}}}},
	}
	p, err := New(context.Background(), cfg, Options{Getenv: func(string) string { return "" }})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Start("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close(context.Background()) })
	return p
}

// get sends method path with the token (if any) and header pairs, and
// returns the status, the headers and the body without its final newline.
func get(t *testing.T, p *Proxy, method, path, token string, hdr ...string) (int, http.Header, string) {
	t.Helper()
	req, err := http.NewRequest(method, "http://"+p.Addr()+path, strings.NewReader("{}"))
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, strings.TrimSuffix(string(b), "\n")
}

// GET /api/v1/audit, answer by answer: its refusals word for word, a
// non-admin user's rows only, an admin's every row, in start order.
func TestAuditAPIWholeShape(t *testing.T) {
	p := apiProxy(t, map[string]config.User{"alice": {Token: "a-tok", Admin: true}, "bob": {Token: "b-tok"}})
	t0 := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	for i, r := range []audit.Row{
		{Kind: audit.KindMCPRequest, CorrelationID: "AAAAAAAA", SpanID: "s3", User: "bob", Start: t0.Add(3 * time.Second), Status: "ok"},
		{Kind: audit.KindMCPRequest, CorrelationID: "AAAAAAAA", SpanID: "s1", User: "alice", Start: t0.Add(1 * time.Second), Status: "ok"},
		{Kind: audit.KindMCPRequest, CorrelationID: "AAAAAAAA", SpanID: "s2", User: "bob", Start: t0.Add(2 * time.Second), Status: "ok"},
		{Kind: audit.KindMCPRequest, CorrelationID: "BBBBBBBB", SpanID: "s4", SessionID: "sess", User: "bob", Start: t0, Status: "ok"},
	} {
		if err := p.store.Write(context.Background(), r); err != nil {
			t.Fatalf("row %d: %v", i, err)
		}
	}
	spans := func(body string) string {
		var v struct {
			Rows []audit.Row `json:"rows"`
		}
		if err := json.Unmarshal([]byte(body), &v); err != nil || v.Rows == nil {
			t.Fatalf("not {rows: [...]}: %s", body)
		}
		var s []string
		for _, r := range v.Rows {
			s = append(s, r.SpanID)
		}
		return strings.Join(s, ",")
	}
	for _, c := range []struct {
		what, token, query string
		status             int
		want               string // the body, or the spans of its rows
	}{
		{"no token", "", "?trace=AAAAAAAA", 401, `{"error":"this proxy has users: send one's bearer token (Authorization: Bearer \u003ctoken\u003e)"}`},
		{"an unknown token", "x-tok", "?trace=AAAAAAAA", 401, `{"error":"this proxy has users: send one's bearer token (Authorization: Bearer \u003ctoken\u003e)"}`},
		{"no filter", "a-tok", "", 400, `{"error":"give ?trace=CODE or ?session=ID"}`},
		{"a bad trace code", "a-tok", "?trace=nope", 400, `{"error":"\"nope\" is not a trace code (8 Crockford base32 characters)"}`},
		{"bob's own rows", "b-tok", "?trace=AAAAAAAA", 200, "s2,s3"},
		{"the admin's", "a-tok", "?trace=AAAAAAAA", 200, "s1,s2,s3"},
		{"by session", "b-tok", "?session=sess", 200, "s4"},
		{"none", "a-tok", "?trace=CCCCCCCC", 200, ""},
	} {
		status, hdr, body := get(t, p, http.MethodGet, "/api/v1/audit"+c.query, c.token)
		got := body
		if status == 200 {
			got = spans(body)
		}
		if status != c.status || got != c.want || hdr.Get("Content-Type") != "application/json" {
			t.Errorf("%s: %d %s %s, want %d %s", c.what, status, hdr.Get("Content-Type"), body, c.status, c.want)
		}
		if wa := hdr.Get("WWW-Authenticate"); (status == 401) != (wa == `Bearer realm="mcplocal"`) {
			t.Errorf("%s: WWW-Authenticate %q", c.what, wa)
		}
	}
	if _, _, body := get(t, p, http.MethodGet, "/api/v1/audit?trace=CCCCCCCC", "a-tok"); body != `{"rows":[]}` {
		t.Errorf("no rows: %s, want {\"rows\":[]}", body)
	}
	_ = p.store.Close()
	if status, _, body := get(t, p, http.MethodGet, "/api/v1/audit?trace=AAAAAAAA", "a-tok"); status != 503 || body != `{"error":"audit: closed"}` {
		t.Errorf("the store closed: %d %s", status, body)
	}
}

// Without users the one local user reads every row, with no token.
func TestAuditAPIWithoutUsersShowsEveryRow(t *testing.T) {
	p := apiProxy(t, nil)
	for _, u := range []string{"alice", "bob", ""} {
		_ = p.store.Write(context.Background(), audit.Row{Kind: audit.KindMCPRequest, CorrelationID: "AAAAAAAA", SpanID: "s-" + u, User: u, Start: time.Now(), Status: "ok"})
	}
	status, _, body := get(t, p, http.MethodGet, "/api/v1/audit?trace=AAAAAAAA", "")
	if status != 200 || strings.Count(body, `"spanId"`) != 3 {
		t.Errorf("%d %s, want the 3 rows", status, body)
	}
}

var traceIn = regexp.MustCompile(`\[trace ([0-9A-Z]{8})\]`)

// /healthz, /readyz and a refused Origin, whole.
func TestProbesAndOriginRefusalsWholeShape(t *testing.T) {
	p := apiProxy(t, nil)
	if status, _, body := get(t, p, http.MethodGet, "/healthz", ""); status != 200 || body != `{"status":"live"}` {
		t.Errorf("/healthz: %d %s", status, body)
	}
	if status, _, body := get(t, p, http.MethodGet, "/readyz", ""); status != 200 || body != `{"paused":[],"status":"ready"}` {
		t.Errorf("/readyz: %d %s", status, body)
	}
	const evil = "http://evil.example"
	status, hdr, body := get(t, p, http.MethodGet, "/api/v1/audit?trace=AAAAAAAA", "", "Origin", evil)
	if status != 403 || hdr.Get("Content-Type") != "application/json" || body != `{"error":"Origin \"http://evil.example\" is not allowed (loopback origins, or config allowedOrigins)"}` {
		t.Errorf("an API request from another origin: %d %s", status, body)
	}
	status, _, body = get(t, p, http.MethodPost, "/projects/p/mcp", "", "Origin", evil, "Content-Type", "application/json")
	m := traceIn.FindStringSubmatch(body)
	if status != 403 || m == nil || body != `{"error":{"code":-32600,"data":{"traceCode":"`+m[1]+`"},"message":"Origin \"http://evil.example\" is not allowed (loopback origins, or config allowedOrigins) [trace `+m[1]+`]"},"id":null,"jsonrpc":"2.0"}` {
		t.Errorf("an MCP request from another origin: %d %s", status, body)
	}
	// /readyz is open to anyone: it says the store fails, not the store's
	// own words (a database's error names its host and user); the log has
	// them.
	_ = p.store.Close()
	if status, _, body := get(t, p, http.MethodGet, "/readyz", ""); status != 503 || body != `{"auditStore":"failing (the proxy's log says why)","status":"not ready"}` {
		t.Errorf("/readyz with the store closed: %d %s", status, body)
	}
	_ = p.Close(context.Background())
	rec := httptest.NewRecorder()
	p.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "http://127.0.0.1/readyz", nil))
	if rec.Code != 503 || strings.TrimSpace(rec.Body.String()) != `{"status":"not serving"}` {
		t.Errorf("/readyz after Close: %d %s", rec.Code, rec.Body.String())
	}
}

// A chat turn is refused unless its body is declared JSON.
func TestChatRequiresAJSONBody(t *testing.T) {
	p := apiProxy(t, nil)
	for ct, refused := range map[string]bool{"": true, "text/plain": true, "application/x-www-form-urlencoded": true, "application/json": false,
		"application/json; charset=utf-8": false} {
		status, _, body := get(t, p, http.MethodPost, "/api/v1/chat", "", "Content-Type", ct)
		if got := status == 415 && body == `{"error":"Content-Type must be application/json"}`; got != refused {
			t.Errorf("Content-Type %q: %d %s", ct, status, body)
		}
	}
}

// A chat turn needs a user's token when the proxy has users, and none when
// it has not (the one local user).
func TestChatNeedsATokenOnlyWhenThereAreUsers(t *testing.T) {
	for _, withUsers := range []bool{true, false} {
		var users map[string]config.User
		if withUsers {
			users = map[string]config.User{"alice": {Token: "a-tok"}}
		}
		p := apiProxy(t, users)
		status, _, body := get(t, p, http.MethodPost, "/api/v1/chat", "", "Content-Type", "application/json")
		want := "{\"error\":\"want {\\\"messages\\\": [{\\\"role\\\": \\\"user\\\", \\\"content\\\": \\\"...\\\"}], \\\"stream\\\": false}: \\u003cnil\\u003e\""
		if withUsers {
			want = `{"error":"chat requires a bearer token (Authorization: Bearer \u003ctoken\u003e)"`
		}
		m := traceIn.FindStringSubmatch(`[trace ` + strings.TrimSuffix(body[strings.LastIndex(body, `"traceCode":"`)+13:], `"}`) + `]`)
		if status != map[bool]int{true: 401, false: 400}[withUsers] || m == nil || body != want+`,"traceCode":"`+m[1]+`"}` {
			t.Errorf("users %v: %d %s\nwant %s", withUsers, status, body, want)
		}
	}
}

// The host the proxy listens on is one of its own Host names (beside the
// loopback names and allowedHosts), unless it is no name a client can use.
func TestTheListenHostIsAnAllowedHost(t *testing.T) {
	for _, c := range []struct {
		listen, host string
		allowed      bool
	}{
		{"mcp.internal:9000", "mcp.internal:9000", true},
		{"mcp.internal:9000", "other.internal:9000", false},
		{"10.1.2.3:9000", "10.1.2.3:9000", true},
		{"0.0.0.0:9000", "0.0.0.0:9000", false},
		{"[::]:9000", "[::]:9000", false},
		{"mcp.internal", "mcp.internal", false}, // no port: not a listen address
		{":9000", "127.0.0.1:9000", true},
		{":9000", "", false}, // no host to listen on names no Host
	} {
		p, err := New(context.Background(), &config.Config{Audit: "memory", Listen: c.listen, Projects: oneProject("http://127.0.0.1:1/mcp")},
			Options{Getenv: func(string) string { return "" }})
		if err != nil {
			t.Fatal(err)
		}
		r := httptest.NewRequest(http.MethodGet, "/healthz", nil)
		r.Host = c.host
		rec := httptest.NewRecorder()
		p.Handler().ServeHTTP(rec, r)
		if (rec.Code == 200) != c.allowed {
			t.Errorf("listen %s, Host %s: %d %s, allowed want %v", c.listen, c.host, rec.Code, rec.Body, c.allowed)
		}
		_ = p.Close(context.Background())
	}
}
