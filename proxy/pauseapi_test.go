package proxy

import (
	"context"
	"net/http"
	"testing"

	"github.com/mcpchaos/mcpchaos/proxy/config"
)

// The pause API, answer by answer, and the admin line it logs for each call
// an admin user makes (none when the proxy has no users).
func TestPauseAPIWholeShapeAndAdminLog(t *testing.T) {
	for _, withUsers := range []bool{true, false} {
		lg, buf := textLogger()
		cfg := &config.Config{Audit: "memory", Listen: "127.0.0.1:0", Projects: map[string]*config.Project{
			"p": {Servers: map[string]*config.Server{"s": {URL: "http://127.0.0.1:1/mcp"}}},
			"a": {Servers: map[string]*config.Server{"s": {URL: "http://127.0.0.1:1/mcp"}}}}}
		token := ""
		if withUsers {
			cfg.Users = map[string]config.User{"alice": {Token: "a-tok", Admin: true}}
			token = "a-tok"
		}
		p, err := New(context.Background(), cfg, Options{Getenv: func(string) string { return "" }, Logger: lg})
		if err != nil {
			t.Fatal(err)
		}
		if err := p.Start("127.0.0.1:0"); err != nil {
			t.Fatal(err)
		}
		status, _, body := get(t, p, http.MethodPost, "/api/v1/projects/zz/pause", token)
		if status != 404 || body != `{"error":"unknown project \"zz\" (projects: a, p)"}` {
			t.Errorf("unknown project: %d %s", status, body)
		}
		status, _, body = get(t, p, http.MethodPost, "/api/v1/projects/p/resume", token)
		if status != 200 || body != `{"project":"p","paused":false,"waiting":0,"changed":false}` {
			t.Errorf("resume of a running project: %d %s", status, body)
		}
		if withUsers {
			status, hdr, body := get(t, p, http.MethodPost, "/api/v1/projects/p/pause", "")
			if status != 401 || hdr.Get("WWW-Authenticate") != `Bearer realm="mcplocal"` ||
				body != `{"error":"pausing and resuming a project requires an admin bearer token (Authorization: Bearer \u003ctoken\u003e of a user with admin: true)"}` {
				t.Errorf("no token: %d %v %s", status, hdr, body)
			}
		}
		want := ""
		if withUsers {
			want = "level=INFO msg=admin user=alice path=/api/v1/projects/zz/pause\nlevel=INFO msg=admin user=alice path=/api/v1/projects/p/resume\n"
		}
		if got := buf.String(); got != want {
			t.Errorf("users %v: log %q\nwant %q", withUsers, got, want)
		}
		_ = p.Close(context.Background())
	}
}
