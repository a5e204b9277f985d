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

	"github.com/mcpchaos/mcpchaos/proxy/bycall"
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
	// sessAbort aborts the requests of the current session's own HTTP client
	// (the handshake's, then the session's); called once the session is closed.
	sessAbort context.CancelFunc
	closed    bool

	closeGrace time.Duration
	closing    context.Context // ends every HTTP request of this Conn
	abort      context.CancelFunc
	standalone func() bool // asked at each connect: open the upstream's standalone stream?
	streaming  bool        // the current session opened its standalone stream
	limit      *Limit
	ownHTTP    bool // the transport is the Conn's own: Close closes its idle connections

	pending pendingCalls // calls sent and not yet answered or told (cancel.go)

	rootsMu   sync.Mutex // one roots/list_changed at a time
	rootsSet  bool       // the placeholder root is in the client's set
	onConnect func(context.Context, *mcp.ClientSession)
}

// Options bounds a Conn.
type Options struct {
	// Client configures the go-sdk client of this Conn: the handlers for what
	// the upstream sends (server-to-client requests, notifications) and the
	// capabilities it advertises. Nil: a client with no handlers.
	Client *mcp.ClientOptions
	// Transport is the HTTP transport the Conn's requests go through, shared
	// by the Conns of many sessions; nil: a transport of its own.
	Transport http.RoundTripper
	// Standalone is asked at each connect whether the new upstream session
	// opens the upstream's standalone SSE stream, for what it sends outside
	// any request (resources/updated, list_changed, log messages). The stream
	// costs three goroutines and an HTTP connection for the session's whole
	// life; nil: never. Listen opens it on a session connected without it
	// when Standalone says so then.
	Standalone func() bool
	// Limit, if set, is taken while the Conn holds an upstream session.
	Limit *Limit
	// Receiving middleware of the client, for requests the upstream sends
	// that have no handler option (roots/list).
	Receiving []mcp.Middleware

	Headers          http.Header   // sent with every request: credentials from the config (headers.go)
	ConnectTimeout   time.Duration // knob MCPCTL_UPSTREAM_CONNECT_TIMEOUT_MS
	CallTimeout      time.Duration // knob MCPCTL_UPSTREAM_CALL_TIMEOUT_MS
	MaxResponseBytes int64         // knob MCPCTL_UPSTREAM_MAX_RESPONSE_BYTES (limit.go)
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
	co := &mcp.ClientOptions{}
	if o.Client != nil {
		cp := *o.Client
		co = &cp
	}
	co.Logger = o.Logger
	var base http.RoundTripper = o.Transport
	if base == nil {
		base = http.DefaultTransport.(*http.Transport).Clone()
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "mcplocal", Version: "0.1.0"}, co)
	client.AddReceivingMiddleware(o.Receiving...)
	c := &Conn{
		ownHTTP:        o.Transport == nil,
		standalone:     o.Standalone,
		limit:          o.Limit,
		closeGrace:     o.CloseGrace,
		closing:        closing,
		abort:          abort,
		Name:           name,
		URL:            url,
		connectTimeout: o.ConnectTimeout,
		callTimeout:    o.CallTimeout,
		logger:         o.Logger,
		client:         client,
		lock:           make(chan struct{}, 1),
	}
	c.httpClient = &http.Client{Transport: tracking{
		// route: what arrives on a call's stream is tagged with the call.
		base:  bycall.Transport(Shape(LimitResponses(WithHeaders(abortable{base: base, closing: closing}, o.Headers), o.MaxResponseBytes))),
		calls: &c.pending,
	}}
	return c
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
	return c.connect(ctx, false)
}

// Listen makes the current upstream session one with its standalone
// stream, if Standalone now says so: a session connected without it is
// closed and replaced by one that opens it (OnConnect replays the client's
// state on it). A Conn with no session opens the stream on its next
// connect, if Standalone says so then.
// The SDK opens that stream only while it connects, hence the new session.
func (c *Conn) Listen(ctx context.Context) error {
	select {
	case c.lock <- struct{}{}:
	case <-ctx.Done():
		return fmt.Errorf("upstream %s: waiting to connect: %w", c.Name, context.Cause(ctx))
	}
	defer func() { <-c.lock }()
	c.mu.Lock()
	s, streaming, closed := c.session, c.streaming, c.closed
	c.mu.Unlock()
	if closed || s == nil || streaming || c.standalone == nil || !c.standalone() {
		return nil
	}
	// The old session is closed in the background; the go-sdk's Close
	// waits for the calls still running on it, so none fails or runs twice
	// (TestListenReplacesTheSessionWithoutFailingOrRepeatingARunningCall).
	c.drop(s)
	_, err := c.connect(ctx, false)
	return err
}

// connect connects a new upstream session; the caller holds c.lock. again
// says it is a second connect, made because the first learned the stream is
// wanted.
func (c *Conn) connect(ctx context.Context, again bool) (*mcp.ClientSession, error) {
	if !c.limit.take() {
		return nil, &LimitError{Server: c.Name, Max: c.limit.Max()}
	}
	cctx, cancel := context.WithTimeout(ctx, c.connectTimeout)
	defer cancel()
	// The handshake's requests go through a client of their own, which can be
	// aborted without touching the Conn's other requests: when a handshake
	// fails after the upstream handed out a session id, the SDK ends that
	// session with a DELETE bounded by its own 5 s, not by cctx, on the
	// connecting goroutine. So the connect runs aside, the caller gets its
	// answer at the connect timeout, and what is left of the handshake gets the
	// close grace in the background (abandon).
	sessCtx, sessAbort := context.WithCancel(context.Background())
	hc := &http.Client{Transport: abortable{base: c.httpClient.Transport, closing: sessCtx}}
	done := make(chan connected, 1)
	listen := c.standalone != nil && c.standalone()
	go func() {
		s, err := c.client.Connect(cctx, &mcp.StreamableClientTransport{
			Endpoint:             c.URL,
			HTTPClient:           hc,
			DisableStandaloneSSE: !listen,
			MaxRetries:           -1,
		}, &mcp.ClientSessionOptions{ProtocolVersion: ProtocolVersion})
		done <- connected{s, err}
	}()
	var r connected
	select {
	case r = <-done:
	case <-cctx.Done():
		go c.abandon(done, sessAbort)
		return nil, c.connectError(ctx, cctx, context.Cause(cctx))
	}
	s, err := r.s, r.err
	if err != nil {
		sessAbort()
		c.limit.give()
		return nil, c.connectError(ctx, cctx, err)
	}
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		_ = s.Close()
		sessAbort()
		c.limit.give()
		return nil, ErrClosed
	}
	c.session, c.sessAbort, c.streaming = s, sessAbort, listen
	hook := c.onConnect
	c.mu.Unlock()
	if hook != nil {
		hook(ctx, s)
	}
	if !listen && !again && c.standalone != nil && c.standalone() {
		// What Standalone answers may depend on what this connect learned
		// (the upstream's capabilities, e.g. after a restart that added
		// logging): the stream is wanted after all, and the SDK opens it
		// only while it connects. Once: the next connect opens it.
		c.drop(s)
		return c.connect(ctx, true)
	}
	return s, nil
}

// connected is what a connect running aside hands back.
type connected struct {
	s   *mcp.ClientSession
	err error
}

// connectError names a connect that failed: past the connect timeout (the
// caller's own context still live), or for another reason.
func (c *Conn) connectError(ctx, cctx context.Context, err error) error {
	if cctx.Err() != nil && ctx.Err() == nil {
		return fmt.Errorf("upstream %s: connect did not finish within %v: %w", c.Name, c.connectTimeout, err)
	}
	return fmt.Errorf("upstream %s: connect: %w", c.Name, err)
}

// abandon waits, in the background, for a connect whose caller stopped
// waiting: the SDK's clean-up of a half-open session (its DELETE) gets the
// close grace, then the handshake's requests are aborted; a session that
// arrives late is closed the same way. The session slot is held until then.
func (c *Conn) abandon(done <-chan connected, abort context.CancelFunc) {
	defer c.limit.give()
	defer abort()
	t := time.NewTimer(c.closeGrace)
	defer t.Stop()
	var r connected
	select {
	case r = <-done:
	case <-t.C:
		abort()
		r = <-done
	}
	if r.s == nil {
		return
	}
	closed := make(chan struct{})
	go func() { _ = r.s.Close(); close(closed) }()
	select {
	case <-closed:
	case <-t.C:
		abort()
		<-closed
	}
}

// OnConnect sets f to run after every new upstream session is established
// (first use and every reconnect), on the path of the call that connected:
// the proxy replays per-session state there (the client's log level).
func (c *Conn) OnConnect(f func(context.Context, *mcp.ClientSession)) {
	c.mu.Lock()
	c.onConnect = f
	c.mu.Unlock()
}

// rootPlaceholder is toggled in the client's root set to make the SDK send
// notifications/roots/list_changed; the proxy answers roots/list itself (with
// the client's own roots), so the upstream never sees it.
const rootPlaceholder = "mcplocal://roots-changed"

// NotifyRootsListChanged tells the upstream that the client's roots changed,
// so it asks roots/list again. The SDK sends that notification only when its
// own root set changes (and only if the client said it would), so each call
// toggles a placeholder root: one notification per call.
func (c *Conn) NotifyRootsListChanged() {
	c.rootsMu.Lock()
	defer c.rootsMu.Unlock()
	if c.rootsSet {
		c.client.RemoveRoots(rootPlaceholder)
	} else {
		c.client.AddRoots(&mcp.Root{URI: rootPlaceholder})
	}
	c.rootsSet = !c.rootsSet
}

// Init is what the upstream answered to initialize on the current session,
// or nil when the Conn holds none.
func (c *Conn) Init() *mcp.InitializeResult {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.session == nil {
		return nil
	}
	return c.session.InitializeResult()
}

// Connect establishes the upstream session now, if there is none, bounded by
// the connect timeout and ctx.
func (c *Conn) Connect(ctx context.Context) error {
	_, err := c.get(ctx)
	return err
}

// drop forgets s (if it is still current) so the next call reconnects.
func (c *Conn) drop(s *mcp.ClientSession) {
	var abort context.CancelFunc
	c.mu.Lock()
	if c.session == s {
		c.session, abort = nil, c.sessAbort
	} else {
		s = nil
	}
	c.mu.Unlock()
	if s != nil {
		c.limit.give()
		c.pending.forgetSession(s.ID())
		go func() { // Close sends a DELETE; never on the caller's path
			_ = s.Close()
			abort()
		}()
	}
}

// ListTools lists the upstream's tools, bounded by the call timeout.
func (c *Conn) ListTools(ctx context.Context) ([]*mcp.Tool, error) {
	var tools []*mcp.Tool
	err := c.do(ctx, true, func(ctx context.Context, s *mcp.ClientSession) error {
		tools = tools[:0]
		for t, err := range s.Tools(ctx, nil) {
			if err != nil {
				return err
			}
			tools = append(tools, t)
		}
		return nil
	})
	if err != nil {
		return nil, err // f may still be running: tools is not ours to read
	}
	return tools, nil
}

// CallTool calls tool (its upstream name, unprefixed) with raw JSON arguments,
// bounded by the call timeout and by ctx. meta (the client's _meta, with its
// progressToken) is passed on as it is.
func (c *Conn) CallTool(ctx context.Context, tool string, args json.RawMessage, meta mcp.Meta) (*mcp.CallToolResult, error) {
	var res *mcp.CallToolResult
	err := c.do(ctx, true, func(ctx context.Context, s *mcp.ClientSession) error {
		var a any = args
		if len(args) == 0 {
			a = map[string]any{}
		}
		r, err := s.CallTool(ctx, &mcp.CallToolParams{Meta: meta, Name: tool, Arguments: a})
		res = r
		return err
	})
	if err != nil {
		return nil, err // f may still be running: res is not ours to read
	}
	return res, nil
}

// Do runs f on a live upstream session, bounded by the call timeout and by
// ctx, reconnecting once if the upstream forgot the session. Do waits for f
// to return (f may fill in what the caller reads, whatever the error), so f
// must honour its context; CallTool and ListTools do not wait.
func (c *Conn) Do(ctx context.Context, f func(context.Context, *mcp.ClientSession) error) error {
	return c.do(ctx, false, f)
}

// do runs f on a live session under the call timeout. If the upstream says
// it no longer knows our session (it restarted), do reconnects and runs f once
// more: the upstream rejected the first try, so nothing ran twice.
// detached: do returns as soon as ctx or the call timeout ends, without
// waiting for f (see run).
func (c *Conn) do(ctx context.Context, detached bool, f func(context.Context, *mcp.ClientSession) error) error {
	ctx, cancel := context.WithTimeoutCause(ctx, c.callTimeout, &TimeoutError{Server: c.Name, After: c.callTimeout})
	defer cancel()
	for attempt := 0; ; attempt++ {
		s, err := c.get(ctx)
		if err != nil {
			return err
		}
		// Tracked after the connect: the call's own requests are noted,
		// not the handshake's (cancel.go).
		tctx, end := c.pending.track(ctx, false)
		if detached {
			err = run(tctx, s, f)
		} else {
			err = f(tctx, s)
		}
		end(err != nil && ctx.Err() != nil)
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

// run runs f and returns its error, or ctx's error as soon as ctx ends,
// whether or not f has returned: a call parked inside the SDK (waiting for
// its connection's lock, a write stuck behind a slow one) must not hold the
// answer past the call timeout. f keeps running until it notices ctx; its
// late result is dropped, so callers read what f wrote only when run
// returned nil.
func run(ctx context.Context, s *mcp.ClientSession, f func(context.Context, *mcp.ClientSession) error) error {
	done := make(chan error, 1)
	go func() { done <- f(ctx, s) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		return ctx.Err()
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

// Close tells the upstream of the calls it still has (running, or given up
// and not yet cancelled: cancel.go), closes the upstream session, giving
// those cancels and its DELETE at most CloseGrace together (an upstream
// behind a dead link would otherwise hold it for the SDK's own 5 s), then
// aborts whatever the Conn still has in flight. Close may be called more
// than once.
func (c *Conn) Close() error {
	c.mu.Lock()
	s, sessAbort := c.session, c.sessAbort
	c.session, c.closed = nil, true
	c.mu.Unlock()
	var err error
	if s != nil {
		defer c.limit.give()
		// The upstream hears of the calls still running (or given up
		// untold) before the DELETE, within the same grace.
		t := time.NewTimer(c.closeGrace)
		tctx, cancelTell := context.WithTimeout(context.Background(), c.closeGrace)
		c.tellPending(tctx, negotiated(s))
		cancelTell()
		done := make(chan error, 1)
		go func() { done <- s.Close() }()
		select {
		case err = <-done:
		case <-t.C:
			c.abort()
			err = <-done
		}
		t.Stop()
		sessAbort()
	}
	c.abort()
	if c.ownHTTP {
		c.httpClient.CloseIdleConnections()
	}
	return err
}

// abortable ends each request when the Conn is closing, whatever context the
// SDK gave it.
type abortable struct {
	base    http.RoundTripper
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

func (a abortable) CloseIdleConnections() {
	if c, ok := a.base.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
}

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

// Limit bounds how many upstream sessions the Conns sharing it hold at once
// (knob MCPCTL_UPSTREAM_SESSIONS_MAX). A nil Limit bounds nothing. It is safe
// for concurrent use.
type Limit struct {
	slots chan struct{}
}

// NewLimit returns a Limit of max sessions.
func NewLimit(max int64) *Limit { return &Limit{slots: make(chan struct{}, max)} }

// Max is the bound; 0 for a nil Limit.
func (l *Limit) Max() int {
	if l == nil {
		return 0
	}
	return cap(l.slots)
}

// InUse is how many upstream sessions are held now.
func (l *Limit) InUse() int {
	if l == nil {
		return 0
	}
	return len(l.slots)
}

func (l *Limit) take() bool {
	if l == nil {
		return true
	}
	select {
	case l.slots <- struct{}{}:
		return true
	default:
		return false
	}
}

func (l *Limit) give() {
	if l != nil {
		<-l.slots
	}
}

// LimitError says a new upstream session was refused because the proxy
// already holds as many as MCPCTL_UPSTREAM_SESSIONS_MAX allows.
type LimitError struct {
	Server string
	Max    int
}

func (e *LimitError) Error() string {
	return fmt.Sprintf("upstream %s: the proxy already holds %d upstream sessions (knob MCPCTL_UPSTREAM_SESSIONS_MAX); close idle sessions or raise the knob", e.Server, e.Max)
}

// RawSession is the current upstream session as the raw relay
// (proxy/relay) sends on it: the Conn's HTTP client (config headers, the
// response-size limit, the shape check and Close's abort included), the
// endpoint, the session id and the negotiated protocol version.
type RawSession struct {
	HTTP            *http.Client
	URL             string
	ID              string
	ProtocolVersion string
	s               *mcp.ClientSession
}

// Raw returns the session the Conn holds now; ok is false when it holds
// none (the relay then leaves the call to the SDK path, which connects).
func (c *Conn) Raw() (RawSession, bool) {
	c.mu.Lock()
	s, closed := c.session, c.closed
	c.mu.Unlock()
	if s == nil || closed {
		return RawSession{}, false
	}
	return RawSession{HTTP: c.httpClient, URL: c.URL, ID: s.ID(), ProtocolVersion: negotiated(s), s: s}, true
}

// negotiated is the protocol version s agreed at initialize, else ours.
func negotiated(s *mcp.ClientSession) string {
	if ir := s.InitializeResult(); ir != nil && ir.ProtocolVersion != "" {
		return ir.ProtocolVersion
	}
	return ProtocolVersion
}

// Reconnect forgets rs (the upstream said it no longer knows it) and
// connects anew, bounded by the connect timeout and ctx, as do does for the
// SDK path.
func (c *Conn) Reconnect(ctx context.Context, rs RawSession) (RawSession, error) {
	if rs.s != nil {
		c.logger.Info("upstream session lost; reconnecting", "server", c.Name)
		c.drop(rs.s)
	}
	if _, err := c.get(ctx); err != nil {
		return RawSession{}, err
	}
	n, ok := c.Raw()
	if !ok {
		return RawSession{}, ErrClosed
	}
	return n, nil
}

// Forget forgets rs, if it is still the Conn's session, as the go-sdk client
// fails a session whose answer it could not read: the next call connects
// anew (the old session is closed in the background).
func (c *Conn) Forget(rs RawSession) {
	if rs.s != nil {
		c.drop(rs.s)
	}
}

// Session returns the session the Conn holds, connecting first if it holds
// none (bounded by the connect timeout and ctx), as the SDK path's calls do.
func (c *Conn) Session(ctx context.Context) (RawSession, error) {
	if rs, ok := c.Raw(); ok {
		return rs, nil
	}
	if _, err := c.get(ctx); err != nil {
		return RawSession{}, err
	}
	rs, ok := c.Raw()
	if !ok {
		return RawSession{}, ErrClosed
	}
	return rs, nil
}

// CallTimeout is the knob bounding one call on this Conn.
func (c *Conn) CallTimeout() time.Duration { return c.callTimeout }
