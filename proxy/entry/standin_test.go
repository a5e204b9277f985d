package entry

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpchaos/mcpchaos/proxy/audit"
	"github.com/mcpchaos/mcpchaos/proxy/knobs"
	"github.com/mcpchaos/mcpchaos/proxy/project"
	"github.com/mcpchaos/mcpchaos/proxy/session"
)

// A client's notifications/cancelled reaches its request on every path: a
// request served under a stand-in id (its id is one the go-sdk would
// rewrite) is cancelled by the client's own id, and its upstream call
// stops.
func TestACancelReachesARequestServedUnderAStandIn(t *testing.T) {
	started, stopped := make(chan struct{}, 4), make(chan struct{}, 4)
	up := mcp.NewServer(&mcp.Implementation{Name: "up", Version: "0"}, nil)
	mcp.AddTool(up, &mcp.Tool{Name: "wait"}, func(ctx context.Context, _ *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
		started <- struct{}{}
		select {
		case <-ctx.Done():
			stopped <- struct{}{}
		case <-time.After(10 * time.Second):
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "waited"}}}, nil, nil
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
	send(t, srv, http.MethodPost, onSession("alice-token", id), `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	for _, rid := range []string{`7`, `123456789012345678901234567890`, `1.5`, `"\u0041b"`} {
		answered := make(chan rpcAnswer, 1)
		go func() {
			answered <- send(t, srv, http.MethodPost, onSession("alice-token", id), `{"jsonrpc":"2.0","id":`+rid+`,"method":"tools/call","params":{"name":"s_wait","arguments":{}}}`)
		}()
		select {
		case <-started:
		case <-time.After(5 * time.Second):
			t.Fatalf("id %s: the upstream tool never started", rid)
		}
		a := send(t, srv, http.MethodPost, onSession("alice-token", id), `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":`+rid+`,"reason":"the user stopped it"}}`)
		if a.status != http.StatusAccepted {
			t.Errorf("id %s: the cancel got %d %s, want 202", rid, a.status, a.body)
		}
		select {
		case <-stopped:
		case <-time.After(5 * time.Second):
			t.Errorf("id %s: the client's cancel did not reach its request: the upstream call ran on", rid)
		}
		select {
		case <-answered:
		case <-time.After(12 * time.Second):
			t.Fatalf("id %s: the cancelled call never ended", rid)
		}
	}
}

// The ids of an admitted batch (2025-03-26) come back byte for byte, as a
// single message's do: each call of the batch the go-sdk would rewrite is
// served under its own stand-in.
func TestABatchsIDsComeBackByteForByte(t *testing.T) {
	in := start(t, audit.NewMemory(), Options{BatchMax: 8}, session.Limits{})
	a := send(t, in.srv, "POST", with(map[string]string{"Authorization": "Bearer alice-token"}), strings.Replace(initBody, "2025-11-25", "2025-03-26", 1))
	id := a.header.Get("Mcp-Session-Id")
	if a.status != 200 || id == "" {
		t.Fatalf("initialize 2025-03-26: %d %s", a.status, a.body)
	}
	on := with(map[string]string{"Authorization": "Bearer alice-token", "Mcp-Session-Id": id, "Mcp-Protocol-Version": "2025-03-26"})
	send(t, in.srv, "POST", on, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	ids := []string{`123456789012345678901234567890`, `1.5`, `1e3`, `"\u0041b"`, `42`, `"x"`}
	var msgs []string
	for _, rid := range ids {
		msgs = append(msgs, `{"jsonrpc":"2.0","id":`+rid+`,"method":"ping"}`)
	}
	a = send(t, in.srv, "POST", on, "["+strings.Join(msgs, ",")+"]")
	if a.status != 200 {
		t.Fatalf("a batch of pings: %d %s", a.status, a.body)
	}
	for _, rid := range ids {
		if !strings.Contains(a.body, `"id":`+rid+`,`) && !strings.Contains(a.body, `"id":`+rid+`}`) {
			t.Errorf("the batch's ping with id %s is not answered under it: %s", rid, excerptOf(a.body))
		}
	}
	if strings.Contains(a.body, "mcplocal-id-") {
		t.Errorf("a stand-in id reached the client: %s", excerptOf(a.body))
	}
}
