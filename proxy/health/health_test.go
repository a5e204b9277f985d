package health

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpchaos/mcpchaos/proxy/config"
)

// TestLastErrorNamesAMisshapenAnswer: a server behind an L7 proxy that
// answers a bare `Access denied` 403 shows that answer, by shape, as its
// lastError, not a generic transport failure.
func TestLastErrorNamesAMisshapenAnswer(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		w.WriteHeader(http.StatusForbidden)
		_, _ = io.WriteString(w, "Access denied")
	}))
	defer srv.Close()
	check := &config.HealthCheck{Tool: "list_sites", IntervalSeconds: 60, TimeoutSeconds: 2, FailureThreshold: 1}
	p := Start([]Target{{Project: "infra", Server: "grafana", URL: srv.URL + "/mcp", Check: check}}, 2*time.Second, 100*time.Millisecond)
	defer p.Stop()
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		in := p.Instances()[0]
		if in.Status != Unknown {
			want := "upstream answered 403 text/plain `Access denied`, not JSON-RPC: something between mcplocal and the server answered (an L7 proxy or gateway?)"
			if in.Status != Unhealthy || in.LastError != want {
				t.Fatalf("status %s, lastError %q; want unhealthy with %q", in.Status, in.LastError, want)
			}
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatal("no probe result within 5s")
}

// TestLastErrorIsCutToTheStoredStringBound: an upstream sizes its own error
// text (here a 64 KiB isError answer to the probe's tool); the prober keeps
// at most MCPCTL_MAX_STORED_STRING_BYTES of it, ending in the marker that
// says how much was cut, until the next probe.
func TestLastErrorIsCutToTheStoredStringBound(t *testing.T) {
	huge := strings.Repeat("x", 64<<10)
	up := mcp.NewServer(&mcp.Implementation{Name: "loud", Version: "0"}, nil)
	mcp.AddTool(up, &mcp.Tool{Name: "probe"}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: huge}}}, nil, nil
	})
	srv := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return up }, nil))
	defer srv.Close()
	const max = 1024
	check := &config.HealthCheck{Tool: "probe", IntervalSeconds: 60, TimeoutSeconds: 2, FailureThreshold: 1}
	p := StartCutting([]Target{{Project: "p", Server: "loud", URL: srv.URL, Check: check}}, 2*time.Second, 100*time.Millisecond, max)
	defer p.Stop()
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		in := p.Instances()[0]
		if in.Status == Unknown {
			continue
		}
		if in.Status != Unhealthy || len(in.LastError) > max || !strings.Contains(in.LastError, "[cut ") || !strings.HasPrefix(in.LastError, "tools/call probe answered isError: xxx") {
			t.Fatalf("status %s, lastError of %d bytes (%.80q...): want unhealthy, at most %d bytes, cut with a marker", in.Status, len(in.LastError), in.LastError, max)
		}
		return
	}
	t.Fatal("no probe result within 5s")
}
