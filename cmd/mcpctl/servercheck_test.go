package main

import (
	"context"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestCreateServerSaysWhatItFound: create server checks the server it
// configured (its probe run once by the proxy: initialize, tools/list, a
// readiness probe's tools/call) and says what it found: its tools count and
// the probe passed, exit 0; or the error, exit 1, the server staying
// configured and the way to remove it or wait for it named.
func TestCreateServerSaysWhatItFound(t *testing.T) {
	px, extra := serversProxy(t)
	r := cli(t, "create", "server", "wiki", "--project", "docmost", "--server-url", extra, "--url", px)
	r.wantCode(t, 0)
	if !strings.Contains(r.stdout, "server docmost/wiki created (") ||
		!regexp.MustCompile(`check: docmost/wiki answered initialize and tools/list: [1-9][0-9]* tools\n`).MatchString(r.stdout) {
		t.Errorf("create of a server that answers:\n%s", r.stdout)
	}
	r = cli(t, "create", "server", "dead", "--project", "docmost", "--server-url", "http://127.0.0.1:1/mcp", "--url", px)
	r.wantCode(t, 1)
	if !strings.Contains(r.stdout, "server docmost/dead created (") {
		t.Errorf("the server was configured, the output should say so:\n%s", r.stdout)
	}
	r.wantStderr(t, "docmost/dead did not answer", "connection refused", "it stays configured", "mcpctl delete server dead", "--wait")

	r = cli(t, "create", "server", "ready", "--project", "docmost", "--server-url", extra, "--health-check-tool", "search", "--url", px)
	r.wantCode(t, 0)
	if !regexp.MustCompile(`check: docmost/ready answered initialize and tools/list: [1-9][0-9]* tools; readiness: tools/call search passed\n`).MatchString(r.stdout) {
		t.Errorf("create with a readiness probe that passes:\n%s", r.stdout)
	}
	up := mcp.NewServer(&mcp.Implementation{Name: "up", Version: "0"}, nil)
	mcp.AddTool(up, &mcp.Tool{Name: "t"}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "controller unreachable"}}}, nil, nil
	})
	sick := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return up }, nil))
	t.Cleanup(sick.Close)
	r = cli(t, "create", "server", "sick", "--project", "docmost", "--server-url", sick.URL, "--health-check-tool", "t", "--url", px)
	r.wantCode(t, 1)
	r.wantStderr(t, "docmost/sick answered initialize and tools/list (1 tool), but its probe (readiness: tools/call t) failed", "controller unreachable", "it stays configured")
}

// TestCreateServerWaitsBoundedUntilTheServerAnswers: with --wait D, create
// server checks again until the server answers (here an upstream that
// refuses its first two connects), and gives up after D with the last
// error, exit 1; D must be positive.
func TestCreateServerWaitsBoundedUntilTheServerAnswers(t *testing.T) {
	px, _ := serversProxy(t)
	up := mcp.NewServer(&mcp.Implementation{Name: "up", Version: "0"}, nil)
	mcp.AddTool(up, &mcp.Tool{Name: "t"}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{}, nil, nil
	})
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return up }, nil)
	var refused atomic.Int64
	late := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && r.Header.Get("Mcp-Session-Id") == "" && refused.Add(1) <= 2 {
			http.Error(w, "starting", http.StatusServiceUnavailable)
			return
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(late.Close)
	r := cli(t, "create", "server", "late", "--project", "docmost", "--server-url", late.URL, "--wait", "20s", "--url", px)
	r.wantCode(t, 0)
	if !strings.Contains(r.stdout, "check: docmost/late answered initialize and tools/list: 1 tool\n") || refused.Load() < 3 {
		t.Errorf("--wait did not wait for the server (%d connects):\n%s\n%s", refused.Load(), r.stdout, r.stderr)
	}

	start := time.Now()
	r = cli(t, "create", "server", "dead", "--project", "docmost", "--server-url", "http://127.0.0.1:1/mcp", "--wait", "1s", "--url", px)
	took := time.Since(start)
	r.wantCode(t, 1)
	r.wantStderr(t, "docmost/dead did not pass its check within 1s", "did not answer the check", "connection refused")
	if took > 1500*time.Millisecond+defaultTimeout {
		t.Errorf("--wait 1s took %v", took)
	}
	r = cli(t, "create", "server", "other", "--project", "docmost", "--server-url", "http://127.0.0.1:1/mcp", "--wait", "0s", "--url", px)
	r.wantCode(t, 2)
	r.wantStderr(t, "--wait must be positive")
}
