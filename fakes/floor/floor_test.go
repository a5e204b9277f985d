package floor

import (
	"bufio"
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/mcpchaos/mcpchaos/fakes/upstream"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The floor carries a whole MCP session (initialize, the session id, a
// tools/call, DELETE) without understanding it.
func TestTheFloorCarriesAnMCPSessionUnchanged(t *testing.T) {
	fake, err := upstream.NewDocmost(upstream.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer fake.Close()
	u, err := url.Parse(fake.URL())
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(Handler(u))
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	client := mcp.NewClient(&mcp.Implementation{Name: "floor-test", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: srv.URL + u.Path}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if cs.ID() == "" {
		t.Fatal("the upstream's Mcp-Session-Id did not come through the floor")
	}
	r, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "update_page", Arguments: map[string]any{"page_id": "p1", "content": "x"}})
	if err != nil || r.IsError {
		t.Fatalf("tools/call through the floor: %+v, %v", r, err)
	}
	if err := cs.Close(); err != nil {
		t.Fatal(err)
	}
}

// A stream's event reaches the client while the upstream still holds the
// stream open: the floor does not buffer what streams.
func TestTheFloorFlushesAStreamAsItComes(t *testing.T) {
	release := make(chan struct{})
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write([]byte("event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/tools/list_changed\"}\n\n"))
		w.(http.Flusher).Flush()
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer up.Close()
	defer close(release)
	u, _ := url.Parse(up.URL + "/mcp")
	srv := httptest.NewServer(Handler(u))
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+"/mcp", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	line, err := bufio.NewReader(resp.Body).ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "event: message") {
		t.Fatalf("first line of the held stream: %q, %v", line, err)
	}
}

func TestServeRefusesAnUpstreamThatIsNotHTTP(t *testing.T) {
	u, _ := url.Parse("ftp://127.0.0.1/mcp")
	if err := Serve(context.Background(), "127.0.0.1:0", u, nil); err == nil {
		t.Fatal("an ftp upstream was accepted")
	}
}
