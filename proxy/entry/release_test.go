package entry

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpchaos/mcpchaos/proxy/audit"
	"github.com/mcpchaos/mcpchaos/proxy/knobs"
	"github.com/mcpchaos/mcpchaos/proxy/project"
	"github.com/mcpchaos/mcpchaos/proxy/session"
)

// A client's DELETE releases what its session held upstream.
func TestDeleteReleasesTheUpstreamSession(t *testing.T) {
	up := mcp.NewServer(&mcp.Implementation{Name: "up", Version: "0"}, nil)
	mcp.AddTool(up, &mcp.Tool{Name: "echo"}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok"}}}, nil, nil
	})
	upSrv := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return up }, nil))
	t.Cleanup(upSrv.Close)
	reg := session.NewRegistry(session.Limits{})
	tbl := reg.Table("p")
	p := project.New("p", project.Options{Servers: map[string]string{"s": upSrv.URL}, Sessions: tbl, Audit: discard{}, Knobs: knobs.Defaults(), Logger: nopLogger()})
	t.Cleanup(p.Close)
	h := New(Options{Projects: map[string]Project{"p": {P: p, Sessions: tbl}}, Users: map[string]string{"alice-token": "alice"},
		Registry: reg, Records: audit.NewMemory(), Audit: discard{}})
	mux := http.NewServeMux()
	mux.Handle("/projects/{project}/mcp", h)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)

	id := initAs(t, srv, "alice-token")
	a := send(t, srv, http.MethodPost, onSession("alice-token", id), `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"s_echo","arguments":{}}}`)
	if a.status != 200 || !strings.Contains(a.body, `"text":"ok"`) {
		t.Fatalf("s_echo: %d %s", a.status, a.body)
	}
	if n := p.UpstreamSessions(); n != 1 {
		t.Fatalf("%d upstream sessions, want 1", n)
	}
	if a := send(t, srv, http.MethodDelete, onSession("alice-token", id), ""); a.status/100 != 2 {
		t.Fatalf("DELETE: %d %s", a.status, a.body)
	}
	if n := p.UpstreamSessions(); n != 0 {
		t.Errorf("%d upstream sessions after the client's DELETE, want 0", n)
	}
}
