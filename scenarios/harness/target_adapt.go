package harness

import (
	"context"
	"net/http"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// What a target may adapt for a proxy that is not mcplocal: its tool names,
// its budgets, the headers its clients send. mcplocal's targets implement
// none of these and get mcplocal's behaviour.

// ToolNamer is implemented by targets whose proxy names an upstream's tools
// otherwise than mcplocal's SERVER_TOOL.
type ToolNamer interface {
	// ToolName is the proxy's name for the catalogue's logical tool of server.
	ToolName(server, tool string) string
}

// Budgeter is implemented by targets whose proxy does not read the harness's
// knobs: Budgets returns b with the target's own budgets in place of the
// bounds the catalogue's budgets read.
type Budgeter interface {
	Budgets(b Bounds) Bounds
}

// Headerer is implemented by targets whose clients send extra headers (auth).
type Headerer interface {
	Headers() map[string]string
}

// ToolName is t's name for tool of server: mcplocal's SERVER_TOOL unless t
// is a ToolNamer.
func ToolName(t Target, server, tool string) string {
	if n, ok := t.(ToolNamer); ok {
		return n.ToolName(server, tool)
	}
	return server + "_" + tool
}

// Tool is the proxy's name for the docmost fake's tool.
func (e *Env) Tool(tool string) string { return ToolName(e.Target, "docmost", tool) }

// HTTPClient returns a client sending user's bearer token (if any) and the
// target's headers. Close its idle connections when done.
func (e *Env) HTTPClient(user string) *http.Client {
	var h map[string]string
	if hs, ok := e.Target.(Headerer); ok {
		h = hs.Headers()
	}
	return &http.Client{Transport: bearer{token: e.Token(user), headers: h, next: http.DefaultTransport.(*http.Transport).Clone()}}
}

// Connect connects the go-sdk client to the project's endpoint as user, as
// SDKClient does, with the target's headers.
func (e *Env) Connect(ctx context.Context, user string) (*mcp.ClientSession, error) {
	c := mcp.NewClient(&mcp.Implementation{Name: "mcpchaos-sdk", Version: "0.1.0"}, nil)
	return c.Connect(ctx, &mcp.StreamableClientTransport{
		Endpoint:             e.ProjectURL(),
		HTTPClient:           e.HTTPClient(user),
		DisableStandaloneSSE: true,
		MaxRetries:           -1,
	}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
}

// ConnectWith connects the go-sdk client with opts (handlers for sampling,
// elicitation, logging, progress, ...) to endpoint as user, with the
// target's headers. It opens the standalone SSE stream, for what the server
// sends outside any request (resources/updated, list_changed).
func (e *Env) ConnectWith(ctx context.Context, user, endpoint string, opts *mcp.ClientOptions, roots ...*mcp.Root) (*mcp.ClientSession, error) {
	c := mcp.NewClient(&mcp.Implementation{Name: "mcpchaos-sdk", Version: "0.1.0"}, opts)
	c.AddRoots(roots...)
	return e.ConnectAt(ctx, c, user, endpoint, ClientRevision)
}

// ConnectAt connects c as ConnectWith does, speaking revision:
// PerRequestRevision's client discovers the server (server/discover) and
// sends no initialize.
func (e *Env) ConnectAt(ctx context.Context, c *mcp.Client, user, endpoint, revision string) (*mcp.ClientSession, error) {
	return c.Connect(ctx, &mcp.StreamableClientTransport{
		Endpoint:   endpoint,
		HTTPClient: e.HTTPClient(user),
		MaxRetries: -1,
	}, &mcp.ClientSessionOptions{ProtocolVersion: revision})
}
