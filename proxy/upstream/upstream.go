// Package upstream holds the proxy's client sessions to upstream MCP servers.
//
// A Conn connects lazily, keeps one go-sdk client session per server (the SDK
// client is safe for concurrent calls), bounds every connect and call by a
// knob, and reconnects once when the upstream forgot its session (restart).
package upstream

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// ProtocolVersion is the MCP version the proxy speaks to upstreams.
const ProtocolVersion = "2025-11-25"

// Conn is the proxy's connection to one upstream MCP server.
// Its methods are safe for concurrent use.
type Conn struct {
	Name string // server name, the prefix of its tools
	URL  string

	connectTimeout time.Duration
	callTimeout    time.Duration
	client         *mcp.Client
	httpClient     *http.Client
	logger         *slog.Logger

	lock    chan struct{} // 1-slot semaphore around connecting, so waiters honour their ctx
	mu      sync.Mutex
	session *mcp.ClientSession
	closed  bool

	closeGrace time.Duration
	closing    context.Context // ends every HTTP request of this Conn
	abort      context.CancelFunc
}

// Options bounds a Conn.
type Options struct {
	ConnectTimeout time.Duration // knob MCPCTL_UPSTREAM_CONNECT_TIMEOUT_MS
	CallTimeout    time.Duration // knob MCPCTL_UPSTREAM_CALL_TIMEOUT_MS
	// CloseGrace bounds Close: the session's DELETE gets this long before
	// every request of the Conn is aborted (knob MCPCTL_SHUTDOWN_GRACE_MS).
	CloseGrace time.Duration
	Logger     *slog.Logger
}

// New returns an unconnected Conn; it connects on first use.
func New(name, url string, o Options) *Conn {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.CloseGrace <= 0 {
		o.CloseGrace = time.Second
	}
	closing, abort := context.WithCancel(context.Background())
	return &Conn{
		closeGrace:     o.CloseGrace,
		closing:        closing,
		abort:          abort,
		Name:           name,
		URL:            url,
		connectTimeout: o.ConnectTimeout,
		callTimeout:    o.CallTimeout,
		logger:         o.Logger,
		client:         mcp.NewClient(&mcp.Implementation{Name: "mcplocal", Version: "0.1.0"}, &mcp.ClientOptions{Logger: o.Logger}),
		httpClient:     &http.Client{Transport: Shape(abortable{base: http.DefaultTransport.(*http.Transport).Clone(), closing: closing})},
		lock:           make(chan struct{}, 1),
	}
}

// ErrClosed is returned by calls on a closed Conn.
var ErrClosed = errors.New("upstream connection closed")

// get returns the live session, connecting if there is none.
func (c *Conn) get(ctx context.Context) (*mcp.ClientSession, error) {
	select {
	case c.lock <- struct{}{}:
	case <-ctx.Done():
		return nil, fmt.Errorf("upstream %s: waiting to connect: %w", c.Name, context.Cause(ctx))
	}
	defer func() { <-c.lock }()
	c.mu.Lock()
	s, closed := c.session, c.closed
	c.mu.Unlock()
	if closed {
		return nil, ErrClosed
	}
	if s != nil {
		return s, nil
	}
	cctx, cancel := context.WithTimeout(ctx, c.connectTimeout)
	defer cancel()
	s, err := c.client.Connect(cctx, &mcp.StreamableClientTransport{
		Endpoint:             c.URL,
		HTTPClient:           c.httpClient,
		DisableStandaloneSSE: true,
		MaxRetries:           -1,
	}, &mcp.ClientSessionOptions{ProtocolVersion: ProtocolVersion})
	if err != nil {
		if cctx.Err() != nil && ctx.Err() == nil {
			return nil, fmt.Errorf("upstream %s: connect did not finish within %v: %w", c.Name, c.connectTimeout, err)
		}
		return nil, fmt.Errorf("upstream %s: connect: %w", c.Name, err)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		_ = s.Close()
		return nil, ErrClosed
	}
	c.session = s
	return s, nil
}

// drop forgets s (if it is still current) so the next call reconnects.
func (c *Conn) drop(s *mcp.ClientSession) {
	c.mu.Lock()
	if c.session == s {
		c.session = nil
	} else {
		s = nil
	}
	c.mu.Unlock()
	if s != nil {
		go s.Close() // Close sends a DELETE; never on the caller's path
	}
}

// ListTools lists the upstream's tools, bounded by the call timeout.
func (c *Conn) ListTools(ctx context.Context) ([]*mcp.Tool, error) {
	var tools []*mcp.Tool
	err := c.do(ctx, func(ctx context.Context, s *mcp.ClientSession) error {
		tools = tools[:0]
		for t, err := range s.Tools(ctx, nil) {
			if err != nil {
				return err
			}
			tools = append(tools, t)
		}
		return nil
	})
	return tools, err
}

// CallTool calls tool (its upstream name, unprefixed) with raw JSON arguments,
// bounded by the call timeout and by ctx.
func (c *Conn) CallTool(ctx context.Context, tool string, args json.RawMessage) (*mcp.CallToolResult, error) {
	var res *mcp.CallToolResult
	err := c.do(ctx, func(ctx context.Context, s *mcp.ClientSession) error {
		var a any = args
		if len(args) == 0 {
			a = map[string]any{}
		}
		r, err := s.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: a})
		res = r
		return err
	})
	return res, err
}

// do runs f on a live session under the call timeout. If the upstream says
// it no longer knows our session (it restarted), do reconnects and runs f once
// more: the upstream rejected the first try, so nothing ran twice.
func (c *Conn) do(ctx context.Context, f func(context.Context, *mcp.ClientSession) error) error {
	ctx, cancel := context.WithTimeoutCause(ctx, c.callTimeout, &TimeoutError{Server: c.Name, After: c.callTimeout})
	defer cancel()
	for attempt := 0; ; attempt++ {
		s, err := c.get(ctx)
		if err != nil {
			return err
		}
		err = f(ctx, s)
		if err == nil {
			return nil
		}
		if ctx.Err() != nil {
			if cause := context.Cause(ctx); cause != nil && !errors.Is(cause, context.Canceled) {
				return cause
			}
			return err
		}
		if gone(err) {
			c.drop(s)
			if attempt == 0 {
				c.logger.Info("upstream session lost; reconnecting", "server", c.Name, "err", err)
				continue
			}
		}
		return fmt.Errorf("upstream %s: %w", c.Name, err)
	}
}

// TimeoutError says an upstream did not answer within the call timeout.
// It matches context.DeadlineExceeded with errors.Is.
type TimeoutError struct {
	Server string
	After  time.Duration
}

func (e *TimeoutError) Error() string {
	return fmt.Sprintf("the upstream %s did not answer within %v", e.Server, e.After)
}

// Is makes errors.Is(err, context.DeadlineExceeded) true.
func (e *TimeoutError) Is(target error) bool { return target == context.DeadlineExceeded }

// gone reports whether err means the session is dead and a new one is needed.
func gone(err error) bool {
	return errors.Is(err, mcp.ErrSessionMissing) || errors.Is(err, mcp.ErrConnectionClosed)
}

// Close closes the upstream session, giving its DELETE at most CloseGrace
// (an upstream behind a dead link would otherwise hold it for the SDK's own
// 5 s), then aborts whatever the Conn still has in flight. Close may be
// called more than once.
func (c *Conn) Close() error {
	c.mu.Lock()
	s := c.session
	c.session, c.closed = nil, true
	c.mu.Unlock()
	var err error
	if s != nil {
		done := make(chan error, 1)
		go func() { done <- s.Close() }()
		t := time.NewTimer(c.closeGrace)
		select {
		case err = <-done:
		case <-t.C:
			c.abort()
			err = <-done
		}
		t.Stop()
	}
	c.abort()
	c.httpClient.CloseIdleConnections()
	return err
}

// abortable ends each request when the Conn is closing, whatever context the
// SDK gave it.
type abortable struct {
	base    *http.Transport
	closing context.Context
}

func (a abortable) RoundTrip(r *http.Request) (*http.Response, error) {
	ctx, cancel := context.WithCancel(r.Context())
	stop := context.AfterFunc(a.closing, cancel)
	resp, err := a.base.RoundTrip(r.WithContext(ctx))
	if err != nil {
		stop()
		cancel()
		return nil, err
	}
	resp.Body = &releaseBody{ReadCloser: resp.Body, release: func() { stop(); cancel() }}
	return resp, nil
}

func (a abortable) CloseIdleConnections() { a.base.CloseIdleConnections() }

// releaseBody releases a request's context when its body is closed.
type releaseBody struct {
	io.ReadCloser
	once    sync.Once
	release func()
}

func (b *releaseBody) Close() error {
	err := b.ReadCloser.Close()
	b.once.Do(b.release)
	return err
}
