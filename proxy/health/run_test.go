package health

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpchaos/mcpchaos/proxy/config"
	"github.com/mcpchaos/mcpchaos/proxy/upstream"
)

// TestACheckToolThatIsNotThereNamesTheToolsSorted: a healthCheck.tool the
// server does not have is a configuration error listing the server's tools
// in name order; one that answers isError says so with its text.
func TestACheckToolThatIsNotThereNamesTheToolsSorted(t *testing.T) {
	srv := mcp.NewServer(&mcp.Implementation{Name: "up", Version: "0"}, nil)
	for _, name := range []string{"zeta", "alpha", "mid"} {
		srv.AddTool(&mcp.Tool{Name: name, InputSchema: map[string]any{"type": "object"}}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "index offline"}}}, nil
		})
	}
	ts := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
	defer ts.Close()
	conn := upstream.New("s", ts.URL, upstream.Options{ConnectTimeout: 5 * time.Second, CallTimeout: 5 * time.Second})
	defer conn.Close()
	err := run(context.Background(), Target{Project: "p", Server: "s", Check: &config.HealthCheck{Tool: "search"}}, conn)
	want := `configuration error: healthCheck.tool "search" is not a tool of server s (it has: alpha, mid, zeta)`
	if err == nil || err.Error() != want || !errors.Is(err, errMisconfigured) {
		t.Fatalf("err = %v, want %q", err, want)
	}
	err = run(context.Background(), Target{Project: "p", Server: "s", Check: &config.HealthCheck{Tool: "mid"}}, conn)
	if err == nil || err.Error() != "tools/call mid answered isError: index offline" {
		t.Fatalf("err = %v", err)
	}
}
