package proxy

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpchaos/mcpchaos/proxy/config"
)

// TestServerCheckSaysWhatTheServerAnswered: POST
// /api/v1/servers/{project}/{server}/check connects to the server as the
// proxy would (initialize, then tools/list) and says what it found: how
// many tools, or the error (a refused connection, an L7 proxy's denial).
// A check is not a change (no admin line); it needs an admin when the
// proxy has users; an unknown server is a 404.
func TestServerCheckSaysWhatTheServerAnswered(t *testing.T) {
	up := mcp.NewServer(&mcp.Implementation{Name: "up", Version: "0"}, nil)
	for _, n := range []string{"a", "b", "c"} {
		mcp.AddTool(up, &mcp.Tool{Name: n}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
			if n == "c" {
				return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "controller unreachable"}}}, nil, nil
			}
			return &mcp.CallToolResult{}, nil, nil
		})
	}
	upSrv := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return up }, nil))
	defer upSrv.Close()
	wall := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, "Access denied", http.StatusForbidden)
	}))
	defer wall.Close()
	lg, buf := textLogger()
	cfg := &config.Config{Audit: "memory", Listen: "127.0.0.1:0",
		Users: map[string]config.User{"alice": {Token: "a-tok", Admin: true}, "bob": {Token: "b-tok"}},
		Projects: map[string]*config.Project{"p": {Servers: map[string]*config.Server{
			"up":   {URL: upSrv.URL},
			"ok":   {URL: upSrv.URL, HealthCheck: &config.HealthCheck{Tool: "a"}},
			"sick": {URL: upSrv.URL, HealthCheck: &config.HealthCheck{Tool: "c"}},
			"down": {URL: "http://127.0.0.1:1/mcp"},
			"wall": {URL: wall.URL},
		}}}}
	p, err := New(context.Background(), cfg, Options{Getenv: func(string) string { return "" }, Logger: lg})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Start("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	defer p.Close(context.Background())
	type check struct {
		Project  string `json:"project"`
		Name     string `json:"name"`
		URL      string `json:"url"`
		Answered bool   `json:"answered"`
		Tools    int    `json:"tools"`
		Probe    string `json:"probe"`
		Healthy  bool   `json:"healthy"`
		Error    string `json:"error"`
	}
	for _, c := range []struct {
		server   string
		answered bool
		tools    int
		probe    string
		healthy  bool
		errHas   []string
	}{
		{"up", true, 3, "liveness: tools/list", true, nil},
		{"ok", true, 3, "readiness: tools/call a", true, nil},
		{"sick", true, 3, "readiness: tools/call c", false, []string{"isError", "controller unreachable"}},
		{"down", false, 0, "liveness: tools/list", false, []string{"connection refused"}},
		{"wall", false, 0, "liveness: tools/list", false, []string{"403", "Access denied"}},
	} {
		status, body := call(t, p, http.MethodPost, "/api/v1/servers/p/"+c.server+"/check", "")
		var got check
		if err := json.Unmarshal([]byte(body), &got); status != http.StatusOK || err != nil {
			t.Fatalf("check %s: %d %s (%v)", c.server, status, body, err)
		}
		if got.Project != "p" || got.Name != c.server || got.URL != cfg.Projects["p"].Servers[c.server].URL ||
			got.Answered != c.answered || got.Tools != c.tools || got.Probe != c.probe || got.Healthy != c.healthy || (c.healthy && got.Error != "") {
			t.Errorf("check %s: %s", c.server, body)
		}
		for _, want := range c.errHas {
			if !strings.Contains(got.Error, want) {
				t.Errorf("check %s: the error does not say %q: %s", c.server, want, body)
			}
		}
	}
	if status, body := call(t, p, http.MethodPost, "/api/v1/servers/p/nosuch/check", ""); status != http.StatusNotFound || body != `{"error":"project p has no server \"nosuch\""}` {
		t.Errorf("check of an unknown server: %d %s", status, body)
	}
	if status, body := call(t, p, http.MethodPost, "/api/v1/servers/zz/up/check", ""); status != http.StatusNotFound || !strings.Contains(body, `unknown project \"zz\"`) {
		t.Errorf("check in an unknown project: %d %s", status, body)
	}
	req, _ := http.NewRequest(http.MethodPost, "http://"+p.Addr()+"/api/v1/servers/p/up/check", nil)
	req.Header.Set("Authorization", "Bearer b-tok")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("a check by a user who is not an admin: %d, want 403", resp.StatusCode)
	}
	if strings.Contains(buf.String(), "msg=admin") {
		t.Errorf("a check logged as a change:\n%s", buf.String())
	}
}
