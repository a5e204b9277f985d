package proxy

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpchaos/mcpchaos/proxy/audit"
	"github.com/mcpchaos/mcpchaos/proxy/config"
)

// TestASessionBelongsToOneProject (the attack: "a DELETE that the SDK refused,
// 404 on another project, 403 for a bad Host, still tombstones the id for
// every project"): alice's session of project a, presented on project b, is
// refused there (a request, a DELETE), before and after a restart; a DELETE
// refused for its Host changes nothing; none of it tombstones the id, which
// still serves alice on a, and is recreated for her there after the restart.
func TestASessionBelongsToOneProject(t *testing.T) {
	up := mcp.NewServer(&mcp.Implementation{Name: "up", Version: "0"}, nil)
	mcp.AddTool(up, &mcp.Tool{Name: "t"}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok"}}}, nil, nil
	})
	upSrv := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return up }, nil))
	defer upSrv.Close()
	dsn := "sqlite:" + filepath.Join(t.TempDir(), "audit.db")
	cfg := &config.Config{
		Listen: "127.0.0.1:0", Audit: dsn,
		Users: map[string]config.User{"alice": {Token: "alice-token"}},
		Projects: map[string]*config.Project{
			"a": {Servers: map[string]*config.Server{"s": {URL: upSrv.URL}}},
			"b": {Servers: map[string]*config.Server{"s": {URL: upSrv.URL}}},
		},
	}
	start := func() *Proxy {
		p, err := New(context.Background(), cfg, Options{Getenv: func(string) string { return "" }})
		if err != nil {
			t.Fatal(err)
		}
		if err := p.Start("127.0.0.1:0"); err != nil {
			t.Fatal(err)
		}
		return p
	}
	p := start()
	type answer struct {
		status int
		id     string
		body   string
		code   int
	}
	send := func(p *Proxy, method, project, session, host, body string) answer {
		t.Helper()
		req, err := http.NewRequest(method, "http://"+p.Addr()+"/projects/"+project+"/mcp", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer alice-token")
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
		if session != "" {
			req.Header.Set("Mcp-Session-Id", session)
		}
		if host != "" {
			req.Host = host
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		a := answer{status: resp.StatusCode, id: resp.Header.Get("Mcp-Session-Id"), body: string(b)}
		var m struct {
			Error struct{ Code int } `json:"error"`
		}
		if json.Unmarshal(b, &m) == nil {
			a.code = m.Error.Code
		}
		return a
	}
	const (
		initialize = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"0"}}}`
		list       = `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`
	)
	a := send(p, http.MethodPost, "a", "", "", initialize)
	id := a.id
	if a.status != http.StatusOK || id == "" {
		t.Fatalf("initialize on a: %d %s", a.status, a.body)
	}
	_ = send(p, http.MethodPost, "a", id, "", `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	refusedOnB := func(p *Proxy, when string) {
		t.Helper()
		for _, method := range []string{http.MethodPost, http.MethodDelete} {
			if a := send(p, method, "b", id, "", list); a.status != http.StatusNotFound || a.code == 0 {
				t.Errorf("%s: alice's %s on project b with her session of a: %d %s; want a JSON-RPC 404", when, method, a.status, a.body)
			}
		}
	}
	refusedOnB(p, "live")
	if a := send(p, http.MethodDelete, "a", id, "evil.example", ""); a.status != http.StatusForbidden {
		t.Errorf("a DELETE with Host evil.example: %d %s; want 403", a.status, a.body)
	}
	if a := send(p, http.MethodPost, "a", id, "", list); a.status != http.StatusOK || a.code != 0 {
		t.Fatalf("alice's session on a after the refused requests: %d %s", a.status, a.body)
	}
	if err := p.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	store, err := audit.Open(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	recs, err := store.LookupSession(context.Background(), id)
	_ = store.Close()
	if err != nil || len(recs) != 1 || recs[0].Project != "a" || recs[0].Owner != "alice" || recs[0].Tombstone() {
		t.Fatalf("the id's records %+v (%v); want one, of project a, alice's, open", recs, err)
	}
	p = start()
	defer p.Close(context.Background())
	refusedOnB(p, "after a restart")
	if a := send(p, http.MethodPost, "a", id, "", list); a.status != http.StatusOK || a.code != 0 {
		t.Errorf("after a restart, alice's session of a is not recreated for her there: %d %s", a.status, a.body)
	}
}
