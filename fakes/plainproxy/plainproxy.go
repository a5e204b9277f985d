// Package plainproxy is a second MCP proxy, deliberately plain, for proving
// that the harness holds any proxy to the generic MCP promises and to no
// promise only mcplocal makes. It fronts one upstream at /mcp under the
// upstream's own (unprefixed) tool names, has no health path, puts no trace
// code in _meta, adopts no session, and answers an upstream failure, or a
// call slower than its timeout, with a protocol error rather than an isError
// result. It opens one upstream session at start and never reopens it, so it
// does not survive an upstream restart. Nothing here is a bug to fix: it is
// the kind of proxy the harness must judge fairly. Given a health path and a
// stop drain (Options.Health, Options.StopDrain), it runs behind a load
// balancer as a replica that drains before it stops.
//
// Given Servers instead of one Upstream, it is a whole-surface proxy of
// another shape (see front.go): one path per server (Path with {server}) or
// one aggregated endpoint naming each server's tools and prompts
// SERVER+Separator+NAME, stateful or Stateless, forwarding every method
// (a stateless one keeps no subscription or log level past the request that
// sets it: stateless.go), with tool failures as isError results.
package plainproxy

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"sort"
	"strings"
	"sync/atomic"
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
	// Servers, instead of Upstream, are the upstreams by name (name → MCP
	// endpoint), each forwarded with its whole surface.
	Servers map[string]string
	// Path is where Servers are served: /mcp by default; with {server} in
	// it, each server on its own path under its own names.
	Path string
	// Separator, for Servers on one path, names each server's tools and
	// prompts SERVER+Separator+NAME.
	Separator string
	// Stateless serves without sessions (no Mcp-Session-Id), one client
	// session per request (stateless.go).
	Stateless bool
	// Health, if set, is a path answering 200 while the proxy serves, and
	// 503 once it drains (Drain).
	Health string
	// StopDrain is how long Drain keeps listening before it stops: every
	// request but Health's is answered 503 (not acted on) meanwhile, so a
	// load balancer takes the proxy out before its listener closes.
	StopDrain time.Duration
}

// Proxy is a running plain proxy.
type Proxy struct {
	ln       net.Listener
	srv      *http.Server
	upstream *mcp.ClientSession // nil with Servers
	path     string
	drain    time.Duration
	draining atomic.Bool
}

// serve wraps h with o's health path and the drain's refusals, and starts
// serving on ln.
func (p *Proxy) serve(o Options, h http.Handler) {
	p.drain = o.StopDrain
	p.srv = &http.Server{ReadHeaderTimeout: 10 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case o.Health != "" && r.URL.Path == o.Health:
			if p.draining.Load() {
				http.Error(w, "draining", http.StatusServiceUnavailable)
				return
			}
			_, _ = io.WriteString(w, "ok\n")
		case p.draining.Load():
			w.Header().Set("Retry-After", "1")
			http.Error(w, "stopping: not acted on", http.StatusServiceUnavailable)
		default:
			h.ServeHTTP(w, r)
		}
	})}
	go func() { _ = p.srv.Serve(p.ln) }()
}

// Drain refuses every request (503, not acted on) and fails the health
// path for StopDrain, then closes as Close does.
func (p *Proxy) Drain(ctx context.Context) error {
	p.draining.Store(true)
	if p.drain > 0 {
		t := time.NewTimer(p.drain)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
		}
	}
	return p.Close(ctx)
}

// Start connects to the upstream, lists its tools and serves them at
// http://ADDR/mcp.
func Start(ctx context.Context, o Options) (*Proxy, error) {
	if len(o.Servers) > 0 {
		return startFronts(ctx, o)
	}
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
	p := &Proxy{ln: ln, upstream: up, path: "/mcp"}
	p.serve(o, mux)
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

// URL is the proxy's MCP endpoint (with one path per server, its path
// pattern, {server} left in).
func (p *Proxy) URL() string { return "http://" + p.ln.Addr().String() + p.path }

// Close stops serving and closes the upstream session.
func (p *Proxy) Close(ctx context.Context) error {
	err := p.srv.Shutdown(ctx)
	if p.upstream != nil {
		err = errors.Join(err, p.upstream.Close())
	}
	return err
}

// startFronts serves o.Servers with their whole surface: one front per
// path, each server on its own path or all on one.
func startFronts(ctx context.Context, o Options) (*Proxy, error) {
	path := o.Path
	if path == "" {
		path = "/mcp"
	}
	perServer := strings.Contains(path, "{server}")
	if !perServer && len(o.Servers) > 1 && o.Separator == "" {
		return nil, errors.New("plainproxy: several servers on one path need a separator to name their tools apart")
	}
	names := make([]string, 0, len(o.Servers))
	for n := range o.Servers {
		names = append(names, n)
	}
	sort.Strings(names)
	mux := http.NewServeMux()
	var shared []*backend
	for _, n := range names {
		b := &backend{name: n, url: o.Servers[n]}
		if !perServer {
			if o.Separator != "" {
				b.prefix = n + o.Separator
			}
			shared = append(shared, b)
			continue
		}
		f, err := newFront(ctx, []*backend{b}, o.Timeout, o.Stateless)
		if err != nil {
			return nil, err
		}
		mux.Handle(strings.ReplaceAll(path, "{server}", n), keyedIf(o.APIKey, f.handler()))
	}
	if !perServer {
		f, err := newFront(ctx, shared, o.Timeout, o.Stateless)
		if err != nil {
			return nil, err
		}
		mux.Handle(path, keyedIf(o.APIKey, f.handler()))
	}
	ln, err := net.Listen("tcp", o.Addr)
	if err != nil {
		return nil, fmt.Errorf("plainproxy: %w", err)
	}
	p := &Proxy{ln: ln, path: path}
	p.serve(o, mux)
	return p, nil
}

// keyedIf is keyed when key is set, h otherwise.
func keyedIf(key string, h http.Handler) http.Handler {
	if key == "" {
		return h
	}
	return keyed(key, h)
}

// serverFlags collects repeated --server NAME=URL flags.
type serverFlags map[string]string

func (s serverFlags) String() string { return fmt.Sprint(map[string]string(s)) }

func (s serverFlags) Set(v string) error {
	n, u, ok := strings.Cut(v, "=")
	if !ok || n == "" {
		return fmt.Errorf("want NAME=URL, got %q", v)
	}
	if u != "" { // NAME= serves nothing: a spec passes a URL the world may not have
		s[n] = u
	}
	return nil
}

// Main is `mcpchaos fake proxy ARGS`: it serves until ctx ends.
func Main(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("fake proxy", flag.ContinueOnError)
	fs.SetOutput(stderr)
	listen := fs.String("listen", "127.0.0.1:0", "address to listen on")
	up := fs.String("upstream", "", "the upstream's Streamable HTTP MCP endpoint (required)")
	timeout := fs.Duration("timeout", 0, "bound of one forwarded call (0: none)")
	key := fs.String("api-key", "", "require this X-Api-Key header on every request (401 without it)")
	servers := serverFlags{}
	fs.Var(servers, "server", "NAME=URL: an upstream forwarded with its whole surface (repeatable; instead of --upstream; an empty URL is skipped)")
	path := fs.String("path", "/mcp", "with --server: where to serve; {server} in it serves each server on its own path")
	sep := fs.String("aggregate", "", "with --server on one path: name each server's tools and prompts SERVER+SEP+NAME")
	stateless := fs.Bool("stateless", false, "with --server: serve without sessions (no Mcp-Session-Id)")
	delay := fs.Duration("start-delay", 0, "wait this long before listening: a proxy that takes time to start")
	health := fs.String("health", "", "a path answering 200 while serving, 503 while draining (default: none)")
	drain := fs.Duration("stop-drain", 0, "told to stop, keep listening this long, answering every request 503 (not acted on) and the health path 503, then stop (0: stop at once)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if (*up == "") == (len(servers) == 0) {
		return errors.New("fake proxy: want exactly one of --upstream and --server")
	}
	if *delay > 0 {
		t := time.NewTimer(*delay)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return nil
		}
	}
	p, err := Start(ctx, Options{Addr: *listen, Upstream: *up, Timeout: *timeout, APIKey: *key,
		Servers: servers, Path: *path, Separator: *sep, Stateless: *stateless, Health: *health, StopDrain: *drain})
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "fake proxy serving MCP at %s\n", p.URL())
	<-ctx.Done()
	return p.Drain(context.WithoutCancel(ctx))
}
