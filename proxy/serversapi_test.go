package proxy

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpchaos/mcpchaos/proxy/config"
)

// call sends method path with body as admin alice and returns the status
// and the body without its final newline.
func call(t *testing.T, p *Proxy, method, path, body string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(method, "http://"+p.Addr()+path, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer a-tok")
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, strings.TrimSuffix(string(b), "\n")
}

// The servers API, answer by answer, word for word, and the admin line each
// change (not a read) logs.
func TestServersAPIWholeShape(t *testing.T) {
	lg, buf := textLogger()
	cfg := &config.Config{Audit: "memory", Listen: "127.0.0.1:0",
		Users: map[string]config.User{"alice": {Token: "a-tok", Admin: true}},
		Projects: map[string]*config.Project{
			"p": {Servers: map[string]*config.Server{"s": {URL: "http://127.0.0.1:1/mcp"}}},
			"a": {Servers: map[string]*config.Server{"s": {URL: "http://127.0.0.1:1/mcp"}}}}}
	p, err := New(context.Background(), cfg, Options{Getenv: func(string) string { return "" }, Logger: lg})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Start("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	defer p.Close(context.Background())
	const u = "http://127.0.0.1:2/mcp"
	up := mcp.NewServer(&mcp.Implementation{Name: "up", Version: "0"}, nil)
	for _, n := range []string{"b", "a"} {
		mcp.AddTool(up, &mcp.Tool{Name: n}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{}, nil, nil
		})
	}
	upSrv := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return up }, nil))
	defer upSrv.Close()
	for _, c := range []struct {
		method, path, body string
		status             int
		want               string
	}{
		{"GET", "/api/v1/servers?project=zz", "", 404, `{"error":"unknown project \"zz\" (projects: a, p)"}`},
		{"GET", "/api/v1/servers?project=a", "", 200, `{"servers":[{"name":"s","project":"a","url":"http://127.0.0.1:1/mcp"}]}`},
		{"POST", "/api/v1/servers", `{"name":"t","project":"p","url":"` + u + `","x":1}`, 400,
			`{"error":"the body is not a server spec (name, project, url, healthCheck): json: unknown field \"x\""}`},
		{"POST", "/api/v1/servers", `{"name":"t","project":"p","url":"` + u + `"}`, 201,
			`{"outcome":"created","persisted":false,"server":{"name":"t","project":"p","url":"` + u + `"}}`},
		{"POST", "/api/v1/servers", `{"name":"t","project":"p","url":"` + u + `"}`, 409,
			`{"error":"server t already exists in project p; replace it with --force (or mcpctl apply)"}`},
		{"POST", "/api/v1/servers?force=true", `{"name":"t","project":"p","url":"` + u + `"}`, 200,
			`{"outcome":"unchanged","persisted":false,"server":{"name":"t","project":"p","url":"` + u + `"}}`},
		{"POST", "/api/v1/servers?force=yes", `{"name":"t","project":"p","url":"http://127.0.0.1:3/mcp"}`, 409,
			`{"error":"server t already exists in project p; replace it with --force (or mcpctl apply)"}`},
		{"PUT", "/api/v1/servers/p/t", `{"url":"http://127.0.0.1:3/mcp"}`, 200,
			`{"outcome":"replaced","persisted":false,"server":{"name":"t","project":"p","url":"http://127.0.0.1:3/mcp"}}`},
		{"PUT", "/api/v1/servers/p/t", `{"name":"t","project":"a","url":"` + u + `"}`, 400,
			`{"error":"the body names server a/t but the path p/t"}`},
		{"PUT", "/api/v1/servers/p/t", `{"name":"x","url":"` + u + `"}`, 400,
			`{"error":"the body names server p/x but the path p/t"}`},
		{"POST", "/api/v1/servers", `{"name":"u","project":"p","url":"` + upSrv.URL + `","healthCheck":{"tool":"nosuch"}}`, 422,
			`{"error":"healthCheck.tool: \"nosuch\" is not a tool of server u (it has: a, b); a probe on it could never pass"}`},
		{"DELETE", "/api/v1/servers/p/t", "", 200, `{"deleted":true,"name":"t","persisted":false,"project":"p"}`},
		{"DELETE", "/api/v1/servers/p/t", "", 404, `{"error":"project p has no server \"t\""}`},
	} {
		status, body := call(t, p, c.method, c.path, c.body)
		if status != c.status || body != c.want {
			t.Errorf("%s %s %s: %d %s\nwant %d %s", c.method, c.path, c.body, status, body, c.status, c.want)
		}
	}
	var admin []string
	for _, l := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
		if strings.Contains(l, "msg=admin") {
			admin = append(admin, l)
		}
	}
	if len(admin) != 11 || admin[0] != "level=INFO msg=admin user=alice method=POST path=/api/v1/servers" {
		t.Errorf("admin lines (one per change, none per read): %d\n%s", len(admin), strings.Join(admin, "\n"))
	}
}
