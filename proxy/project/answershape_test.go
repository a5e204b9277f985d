package project

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpchaos/mcpchaos/proxy/audit"
	"github.com/mcpchaos/mcpchaos/proxy/knobs"
	"github.com/mcpchaos/mcpchaos/proxy/session"
)

// shapedResults are the answers of shapedUpstream's tools: every kind of
// content block, structuredContent, an isError result. Their texts are
// private content a row must never hold.
var shapedResults = map[string]*mcp.CallToolResult{
	"rich": {Content: []mcp.Content{
		&mcp.TextContent{Text: "PRIVATE page body " + strings.Repeat("lorem ", 200)},
		&mcp.ImageContent{Data: []byte("PRIVATE-PNG"), MIMEType: "image/png"},
		&mcp.TextContent{Text: "PRIVATE second part"},
		&mcp.AudioContent{Data: []byte("PRIVATE-WAV"), MIMEType: "audio/wav"},
		&mcp.ResourceLink{URI: "wiki://PRIVATE/1", Name: "PRIVATE link"},
		&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "wiki://PRIVATE/2", MIMEType: "text/plain", Text: "PRIVATE resource"}},
	}, StructuredContent: map[string]any{"owner": "PRIVATE"}},
	"broken": {Content: []mcp.Content{&mcp.TextContent{Text: "PRIVATE failure text"}}, IsError: true},
}

// shapedUpstream serves shapedResults.
func shapedUpstream(t *testing.T) string {
	t.Helper()
	s := mcp.NewServer(&mcp.Implementation{Name: "shaped", Version: "0"}, nil)
	for name, res := range shapedResults {
		s.AddTool(&mcp.Tool{Name: name, InputSchema: map[string]any{"type": "object"}}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return res, nil
		})
	}
	srv := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, &mcp.StreamableHTTPOptions{JSONResponse: true}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// The upstream_call row keeps the shape of the answer, on the raw relay and
// on the SDK path alike: the result's size in bytes as JSON and its content
// kinds (block types counted, structuredContent, isError), never a word of
// its content.
func TestTheUpstreamRowKeepsTheAnswersShapeOnBothPaths(t *testing.T) {
	want := map[string]string{
		"rich":   "text:2,image:1,audio:1,resource_link:1,resource:1,structured",
		"broken": "text:1,isError",
	}
	for _, relayOn := range []bool{false, true} {
		t.Run(fmt.Sprintf("relay=%v", relayOn), func(t *testing.T) {
			rows := &rowsSeen{}
			p := New("p", Options{Servers: map[string]string{"s": shapedUpstream(t)}, Relay: relayOn,
				Sessions: session.NewTable(), Audit: rows, Knobs: knobs.Defaults(), Logger: slog.New(slog.DiscardHandler)})
			defer p.Close()
			url := serveRelaying(t, p)
			ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
			defer cancel()
			cs, err := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "0"}, &mcp.ClientOptions{Capabilities: &mcp.ClientCapabilities{}}).Connect(ctx,
				&mcp.StreamableClientTransport{Endpoint: url, DisableStandaloneSSE: true, MaxRetries: -1}, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer cs.Close()
			for tool := range want {
				if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "s_" + tool, Arguments: map[string]any{}}); err != nil {
					t.Fatalf("s_%s: %v", tool, err)
				}
			}
			if relayed := p.Relayed(); relayOn != (relayed == 2) {
				t.Fatalf("%d calls relayed with relay %v", relayed, relayOn)
			}
			rows.mu.Lock()
			defer rows.mu.Unlock()
			seen := 0
			for _, r := range rows.rows {
				if r.Kind != audit.KindUpstreamCall {
					continue
				}
				seen++
				body, _ := json.Marshal(shapedResults[r.Tool])
				if r.Bytes != int64(len(body)) || r.Content != want[r.Tool] {
					t.Errorf("%s: row says %d bytes, %q; want %d bytes, %q", r.Tool, r.Bytes, r.Content, len(body), want[r.Tool])
				}
				if b, _ := json.Marshal(r); strings.Contains(string(b), "PRIVATE") {
					t.Errorf("%s: the row holds the answer's content: %s", r.Tool, b)
				}
			}
			if seen != len(want) {
				t.Errorf("%d upstream_call rows, want %d", seen, len(want))
			}
		})
	}
}
