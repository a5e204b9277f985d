package project

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpchaos/mcpchaos/proxy/knobs"
	"github.com/mcpchaos/mcpchaos/proxy/redact"
	"github.com/mcpchaos/mcpchaos/proxy/session"
)

// An upstream that echoes a secret the proxy holds (its own header's key,
// say) in its result: the client gets the result with the secret masked,
// on the go-sdk path and on the relay alike.
func TestAnUpstreamEchoingAHeldSecretIsMasked(t *testing.T) {
	const secret = "held-by-the-proxy-4242"
	redact.Hold(secret)
	s := mcp.NewServer(&mcp.Implementation{Name: "up", Version: "0"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "echo"}, func(_ context.Context, _ *mcp.CallToolRequest, in struct {
		Text string `json:"text"`
	}) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: in.Text}}}, nil, nil
	})
	up := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil))
	t.Cleanup(up.Close)
	for _, relayOn := range []bool{false, true} {
		p := New("p", Options{Servers: map[string]string{"s": up.URL}, Relay: relayOn, Sessions: session.NewTable(),
			Audit: discardRows{}, Knobs: knobs.Defaults(), Logger: slog.New(slog.DiscardHandler)})
		t.Cleanup(p.Close)
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "0"}, &mcp.ClientOptions{Capabilities: &mcp.ClientCapabilities{}}).Connect(ctx,
			&mcp.StreamableClientTransport{Endpoint: serveRelaying(t, p), DisableStandaloneSSE: true, MaxRetries: -1}, nil)
		if err != nil {
			t.Fatal(err)
		}
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "s_echo", Arguments: map[string]any{"text": "the key is " + secret}})
		_ = cs.Close()
		if err != nil || len(res.Content) != 1 {
			t.Fatalf("relay=%v: %+v %v", relayOn, res, err)
		}
		if got := res.Content[0].(*mcp.TextContent).Text; got != "the key is "+redact.Mask {
			t.Errorf("relay=%v: the client got %q, want the secret masked", relayOn, got)
		}
		if relayOn && p.Relayed() != 1 {
			t.Errorf("the relay answered %d calls, want 1", p.Relayed())
		}
	}
}
