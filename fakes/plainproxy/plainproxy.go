// Package plainproxy is a second MCP proxy, deliberately plain, for proving
// that the harness holds any proxy to the generic MCP promises and to no
// promise only mcplocal makes. It fronts one upstream at /mcp under the
// upstream's own (unprefixed) tool names, has no health path, puts no trace
// code in _meta, adopts no session, and answers an upstream failure, or a
// call slower than its timeout, with a protocol error rather than an isError
// result. It opens one upstream session at start and never reopens it, so it
// does not survive an upstream restart. Nothing here is a bug to fix: it is
// the kind of proxy the harness must judge fairly.
package plainproxy

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Options configure a plain proxy.
type Options struct {
	// Addr is the address to listen on (127.0.0.1:0 for any port).
	Addr string
	// Upstream is the upstream's Streamable HTTP MCP endpoint.
	Upstream string
	// Timeout bounds one forwarded call; 0 means no bound.
	Timeout time.Duration
	// APIKey, if set, must come in every request's X-Api-Key header; a
	// request without it is answered 401.
	APIKey string
}

// Proxy is a running plain proxy.
type Proxy struct {
	ln       net.Listener
	srv      *http.Server
	upstream *mcp.ClientSession
}

// Start connects to the upstream, lists its tools and serves them at
// http://ADDR/mcp.
func Start(ctx context.Context, o Options) (*Proxy, error) {
	if o.Upstream == "" {
		return nil, errors.New("plainproxy: no upstream")
	}
	c := mcp.NewClient(&mcp.Implementation{Name: "plainproxy", Version: "0.1.0"}, nil)
	up, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: o.Upstream, DisableStandaloneSSE: true}, nil)
	if err != nil {
		return nil, fmt.Errorf("plainproxy: connect to %s: %w", o.Upstream, err)
	}
	tools, err := up.ListTools(ctx, nil)
	if err != nil {
		_ = up.Close()
		return nil, fmt.Errorf("plainproxy: list tools of %s: %w", o.Upstream, err)
	}
	s := mcp.NewServer(&mcp.Implementation{Name: "plainproxy", Version: "0.1.0"}, nil)
	for _, t := range tools.Tools {
		s.AddTool(t, forward(up, o.Timeout))
	}
	ln, err := net.Listen("tcp", o.Addr)
	if err != nil {
		_ = up.Close()
		return nil, fmt.Errorf("plainproxy: %w", err)
	}
	mux := http.NewServeMux()
	var h http.Handler = mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil)
	if o.APIKey != "" {
		h = keyed(o.APIKey, h)
	}
	mux.Handle("/mcp", h)
	p := &Proxy{ln: ln, srv: &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}, upstream: up}
	go func() { _ = p.srv.Serve(ln) }()
	return p, nil
}

// keyed answers 401 to a request whose X-Api-Key is not key.
func keyed(key string, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-Api-Key") != key {
			http.Error(w, "missing or wrong X-Api-Key", http.StatusUnauthorized)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// forward calls the same tool upstream; a failure is returned as an error,
// which the SDK answers as a JSON-RPC error.
func forward(up *mcp.ClientSession, timeout time.Duration) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		if timeout > 0 {
			var cancel context.CancelFunc
			ctx, cancel = context.WithTimeout(ctx, timeout)
			defer cancel()
		}
		return up.CallTool(ctx, &mcp.CallToolParams{Name: req.Params.Name, Arguments: req.Params.Arguments})
	}
}

// URL is the proxy's MCP endpoint.
func (p *Proxy) URL() string { return "http://" + p.ln.Addr().String() + "/mcp" }

// Close stops serving and closes the upstream session.
func (p *Proxy) Close(ctx context.Context) error {
	return errors.Join(p.srv.Shutdown(ctx), p.upstream.Close())
}

// Main is `mcpchaos fake proxy ARGS`: it serves until ctx ends.
func Main(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("fake proxy", flag.ContinueOnError)
	fs.SetOutput(stderr)
	listen := fs.String("listen", "127.0.0.1:0", "address to listen on")
	up := fs.String("upstream", "", "the upstream's Streamable HTTP MCP endpoint (required)")
	timeout := fs.Duration("timeout", 0, "bound of one forwarded call (0: none)")
	key := fs.String("api-key", "", "require this X-Api-Key header on every request (401 without it)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	p, err := Start(ctx, Options{Addr: *listen, Upstream: *up, Timeout: *timeout, APIKey: *key})
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "fake proxy serving MCP at %s\n", p.URL())
	<-ctx.Done()
	return p.Close(context.WithoutCancel(ctx))
}
