package proxy_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// testUpstream is the upstream MCP server of the proxy's own tests: a
// go-sdk server on loopback with the tools they call (search, update_page,
// whoami), recording every call. update_page can be made slow. It stands
// in for fakes/upstream, which the proxy's tests may not import (the
// layout: the proxy knows nothing of the harness).
type testUpstream struct {
	srv   *httptest.Server
	mu    sync.Mutex
	calls []string // tool names, in call order
	slow  time.Duration
}

// newTestUpstream starts a testUpstream, closed when the test ends.
func newTestUpstream(t *testing.T) *testUpstream {
	t.Helper()
	u := &testUpstream{}
	s := mcp.NewServer(&mcp.Implementation{Name: "test-upstream", Version: "0"}, nil)
	type query struct {
		Query string `json:"query,omitempty"`
	}
	type page struct {
		PageID  string `json:"page_id,omitempty"`
		Content string `json:"content,omitempty"`
	}
	mcp.AddTool(s, &mcp.Tool{Name: "search", Description: "Finds pages."}, func(ctx context.Context, _ *mcp.CallToolRequest, in query) (*mcp.CallToolResult, any, error) {
		u.record("search")
		return textResult("results for " + in.Query), nil, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "update_page", Description: "Updates a page."}, func(ctx context.Context, _ *mcp.CallToolRequest, _ page) (*mcp.CallToolResult, any, error) {
		u.record("update_page")
		u.mu.Lock()
		d := u.slow
		u.mu.Unlock()
		if d > 0 {
			timer := time.NewTimer(d)
			defer timer.Stop()
			select {
			case <-timer.C:
			case <-ctx.Done():
				return nil, nil, ctx.Err()
			}
		}
		return textResult("updated"), nil, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "whoami", Description: "Answers with the caller's MCP session id."}, func(_ context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
		u.record("whoami")
		return textResult(req.Session.ID()), nil, nil
	})
	u.srv = httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil))
	t.Cleanup(func() { u.srv.CloseClientConnections(); u.srv.Close() })
	return u
}

// URL is the server's MCP endpoint.
func (u *testUpstream) URL() string { return u.srv.URL }

// SlowUpdates makes every later update_page answer after d (0: at once),
// or fail when its caller goes away first.
func (u *testUpstream) SlowUpdates(d time.Duration) {
	u.mu.Lock()
	u.slow = d
	u.mu.Unlock()
}

// Calls are the tools called so far, in order.
func (u *testUpstream) Calls() []string {
	u.mu.Lock()
	defer u.mu.Unlock()
	return append([]string(nil), u.calls...)
}

func (u *testUpstream) record(tool string) {
	u.mu.Lock()
	u.calls = append(u.calls, tool)
	u.mu.Unlock()
}

func textResult(s string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
}
