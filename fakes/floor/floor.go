// Package floor is the floor a proxy's cost is measured against: a plain
// reverse proxy (Go's net/http/httputil) that forwards every request to one
// upstream byte for byte, flushes streamed answers as they come, and
// understands nothing of MCP: no session, no tool name, no audit. Whatever a
// real proxy costs beyond it is the cost of what the real proxy does.
package floor

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"time"
)

// Handler forwards every request to upstream's scheme and host, keeping the
// request's path and query; answers (SSE streams included) are flushed at
// once (FlushInterval -1).
func Handler(upstream *url.URL) http.Handler {
	origin := &url.URL{Scheme: upstream.Scheme, Host: upstream.Host}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConns = 0 // no bound: one kept-alive connection per client connection
	tr.MaxIdleConnsPerHost = 4096
	tr.DisableCompression = true
	return &httputil.ReverseProxy{
		Rewrite:       func(r *httputil.ProxyRequest) { r.SetURL(origin) },
		FlushInterval: -1,
		Transport:     tr,
	}
}

// Serve listens on addr and forwards to upstream until ctx ends; ready, if
// set, gets the address once the listener is open.
func Serve(ctx context.Context, addr string, upstream *url.URL, ready func(net.Addr)) error {
	if upstream.Scheme != "http" && upstream.Scheme != "https" || upstream.Host == "" {
		return fmt.Errorf("floor: upstream %q: want an http(s) URL", upstream)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("floor: %w", err)
	}
	srv := &http.Server{Handler: Handler(upstream), ReadHeaderTimeout: 10 * time.Second}
	if ready != nil {
		ready(ln.Addr())
	}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	err = srv.Shutdown(sctx)
	if errors.Is(err, context.DeadlineExceeded) {
		err = srv.Close() // held streams do not end by themselves
	}
	return err
}

// Main is `mcpchaos fake floor ARGS`: it serves until ctx ends.
func Main(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("fake floor", flag.ContinueOnError)
	fs.SetOutput(stderr)
	listen := fs.String("listen", "127.0.0.1:0", "address to listen on")
	up := fs.String("upstream", "", "the upstream's URL; its scheme and host receive every request (required)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	u, err := url.Parse(*up)
	if err != nil || *up == "" {
		return fmt.Errorf("fake floor: --upstream %q: want the upstream's URL", *up)
	}
	return Serve(ctx, *listen, u, func(a net.Addr) {
		fmt.Fprintf(stdout, "fake floor serving at http://%s, forwarding to %s://%s\n", a, u.Scheme, u.Host)
	})
}
