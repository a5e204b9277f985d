package harness

import (
	"context"
	"net/http"

	mcpgoclient "github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	mcpgo "github.com/mark3labs/mcp-go/mcp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// bearer adds an Authorization header, and any headers, to every request.
type bearer struct {
	token   string
	headers map[string]string
	next    http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	if b.token != "" || len(b.headers) > 0 {
		r = r.Clone(r.Context())
		for k, v := range b.headers {
			r.Header.Set(k, v)
		}
		if b.token != "" {
			r.Header.Set("Authorization", "Bearer "+b.token)
		}
	}
	return b.next.RoundTrip(r)
}

// HTTPClient returns a client with its own connection pool that sends token
// (if any) as a bearer token. Close its idle connections when done.
func HTTPClient(token string) *http.Client {
	return &http.Client{Transport: bearer{token: token, next: http.DefaultTransport.(*http.Transport).Clone()}}
}

// SDKClient connects the official go-sdk client to url. sessionID, if set,
// presets the session id (to act as a client whose proxy restarted).
func SDKClient(ctx context.Context, url, token string) (*mcp.ClientSession, error) {
	c := mcp.NewClient(&mcp.Implementation{Name: "mcpchaos-sdk", Version: "0.1.0"}, nil)
	return c.Connect(ctx, &mcp.StreamableClientTransport{
		Endpoint:             url,
		HTTPClient:           HTTPClient(token),
		DisableStandaloneSSE: true,
		MaxRetries:           -1,
	}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
}

// Mark3Client connects the independent mark3labs/mcp-go client to url.
// sessionID, if set, presets the session id without initializing.
func Mark3Client(ctx context.Context, url, token, sessionID string) (*mcpgoclient.Client, error) {
	opts := []transport.StreamableHTTPCOption{}
	if token != "" {
		opts = append(opts, transport.WithHTTPHeaders(map[string]string{"Authorization": "Bearer " + token}))
	}
	if sessionID != "" {
		opts = append(opts, transport.WithSession(sessionID))
	}
	c, err := mcpgoclient.NewStreamableHttpClient(url, opts...)
	if err != nil {
		return nil, err
	}
	if err := c.Start(ctx); err != nil {
		return nil, err
	}
	if sessionID != "" {
		return c, nil
	}
	req := mcpgo.InitializeRequest{}
	req.Params.ProtocolVersion = "2025-06-18"
	req.Params.ClientInfo = mcpgo.Implementation{Name: "mcpchaos-mcp-go", Version: "0.1.0"}
	if _, err := c.Initialize(ctx, req); err != nil {
		_ = c.Close()
		return nil, err
	}
	return c, nil
}

// SDKClientWith connects the go-sdk client to url with opts (handlers for
// sampling, elicitation, logging, progress, ...). The client opens the
// standalone SSE stream, for what the server sends outside any request
// (resources/updated, list_changed).
func SDKClientWith(ctx context.Context, url, token string, opts *mcp.ClientOptions, roots ...*mcp.Root) (*mcp.ClientSession, error) {
	c := mcp.NewClient(&mcp.Implementation{Name: "mcpchaos-sdk", Version: "0.1.0"}, opts)
	c.AddRoots(roots...)
	return c.Connect(ctx, &mcp.StreamableClientTransport{
		Endpoint:   url,
		HTTPClient: HTTPClient(token),
		MaxRetries: -1,
	}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
}
