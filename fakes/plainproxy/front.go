package plainproxy

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The whole-surface mode (Options.Servers): every MCP method a client may
// send is forwarded to the upstream server it concerns, and everything an
// upstream sends during a call (progress, log messages, sampling and
// elicitation requests, resource updates) goes back to the client session
// that caused it. Each client session gets its own upstream sessions, opened
// at its first use and opened again after a transport failure. A tool
// failure is an isError result; any other method's failure a JSON-RPC error.

// backend is one upstream server as a front serves it.
type backend struct {
	name, url string
	// prefix is prepended to its tools' and prompts' names ("" unprefixed).
	prefix string
	// uris and templates are the resources it lists, for routing reads,
	// subscriptions and completions.
	uris      map[string]bool
	templates []string
}

// front is one MCP endpoint: an mcp.Server over one or more backends.
type front struct {
	srv      *mcp.Server
	backends []*backend
	timeout  time.Duration
	// stateless: each client session lasts one request (statelessHandler).
	stateless bool

	mu       sync.Mutex
	sessions map[*mcp.ServerSession]map[*backend]*upSession
}

// upSession is a client session's upstream session with one backend, and
// the client's requests in flight on it (newest last), whose streams carry
// what the upstream sends back.
type upSession struct {
	cs *mcp.ClientSession
	// gone is closed when cs has ended (its upstream restarted, say).
	gone chan struct{}

	mu    sync.Mutex
	calls []context.Context
}

// ended reports whether the upstream session has ended.
func (u *upSession) ended() bool {
	select {
	case <-u.gone:
		return true
	default:
		return false
	}
}

// callCtx is the context of the newest client request in flight, so that
// what the upstream sends during it travels on that request's stream.
func (u *upSession) callCtx() context.Context {
	u.mu.Lock()
	defer u.mu.Unlock()
	if n := len(u.calls); n > 0 {
		return u.calls[n-1]
	}
	return context.Background()
}

// enter records ctx as in flight until the returned func is called.
func (u *upSession) enter(ctx context.Context) func() {
	u.mu.Lock()
	u.calls = append(u.calls, ctx)
	u.mu.Unlock()
	return func() {
		u.mu.Lock()
		defer u.mu.Unlock()
		for i, c := range u.calls {
			if c == ctx {
				u.calls = append(u.calls[:i], u.calls[i+1:]...)
				break
			}
		}
	}
}

// newFront lists each backend's tools, prompts and resources (one session
// each, closed after) and serves them under their backend's prefix.
func newFront(ctx context.Context, backends []*backend, timeout time.Duration, stateless bool) (*front, error) {
	f := &front{backends: backends, timeout: timeout, stateless: stateless, sessions: map[*mcp.ServerSession]map[*backend]*upSession{}}
	f.srv = mcp.NewServer(&mcp.Implementation{Name: "plainproxy", Version: "0.2.0"}, &mcp.ServerOptions{
		Capabilities:      &mcp.ServerCapabilities{Logging: &mcp.LoggingCapabilities{}, Completions: &mcp.CompletionCapabilities{}},
		CompletionHandler: f.complete,
		SubscribeHandler: func(ctx context.Context, r *mcp.SubscribeRequest) error {
			return f.subscribe(ctx, r.Session, r.Params.URI, true)
		},
		UnsubscribeHandler: func(ctx context.Context, r *mcp.UnsubscribeRequest) error {
			return f.subscribe(ctx, r.Session, r.Params.URI, false)
		},
	})
	if stateless {
		f.srv.AddReceivingMiddleware(carryLevel)
	}
	for _, b := range backends {
		if err := f.discover(ctx, b); err != nil {
			return nil, err
		}
	}
	return f, nil
}

// discover registers b's tools, prompts, resources and templates.
func (f *front) discover(ctx context.Context, b *backend) error {
	c := mcp.NewClient(&mcp.Implementation{Name: "plainproxy", Version: "0.2.0"}, nil)
	cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: b.url, DisableStandaloneSSE: true}, nil)
	if err != nil {
		return fmt.Errorf("plainproxy: connect to %s (%s): %w", b.name, b.url, err)
	}
	defer cs.Close()
	caps := cs.InitializeResult().Capabilities
	b.uris = map[string]bool{}
	if caps.Tools != nil {
		for t, err := range cs.Tools(ctx, nil) {
			if err != nil {
				return fmt.Errorf("plainproxy: tools of %s: %w", b.name, err)
			}
			own := *t
			own.Name = b.prefix + t.Name
			f.srv.AddTool(&own, f.callTool(b, t.Name))
		}
	}
	if caps.Prompts != nil {
		for p, err := range cs.Prompts(ctx, nil) {
			if err != nil {
				return fmt.Errorf("plainproxy: prompts of %s: %w", b.name, err)
			}
			own := *p
			own.Name = b.prefix + p.Name
			f.srv.AddPrompt(&own, f.getPrompt(b, p.Name))
		}
	}
	if caps.Resources != nil {
		for r, err := range cs.Resources(ctx, nil) {
			if err != nil {
				return fmt.Errorf("plainproxy: resources of %s: %w", b.name, err)
			}
			b.uris[r.URI] = true
			f.srv.AddResource(r, f.read(b))
		}
		for t, err := range cs.ResourceTemplates(ctx, nil) {
			if err != nil {
				return fmt.Errorf("plainproxy: resource templates of %s: %w", b.name, err)
			}
			b.templates = append(b.templates, t.URITemplate)
			f.srv.AddResourceTemplate(t, f.read(b))
		}
	}
	return nil
}

// bounded is ctx bounded by the proxy's timeout, if it has one.
func (f *front) bounded(ctx context.Context) (context.Context, context.CancelFunc) {
	if f.timeout > 0 {
		return context.WithTimeout(ctx, f.timeout)
	}
	return context.WithCancel(ctx)
}

// upstream is ss's session with b, opened on first use.
func (f *front) upstream(ctx context.Context, ss *mcp.ServerSession, b *backend) (*upSession, error) {
	f.mu.Lock()
	m, seen := f.sessions[ss]
	if !seen {
		m = map[*backend]*upSession{}
		f.sessions[ss] = m
		go f.release(ss)
	}
	u := m[b]
	if u != nil && u.ended() {
		delete(m, b) // the upstream ended it: open another
		u = nil
	}
	f.mu.Unlock()
	if u != nil {
		return u, nil
	}
	u = &upSession{gone: make(chan struct{})}
	c := mcp.NewClient(&mcp.Implementation{Name: "plainproxy", Version: "0.2.0"}, &mcp.ClientOptions{
		CreateMessageHandler: func(_ context.Context, r *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			return ss.CreateMessage(u.callCtx(), r.Params)
		},
		ElicitationHandler: func(_ context.Context, r *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return ss.Elicit(u.callCtx(), r.Params)
		},
		LoggingMessageHandler: func(_ context.Context, r *mcp.LoggingMessageRequest) {
			_ = ss.Log(u.callCtx(), r.Params)
		},
		ProgressNotificationHandler: func(_ context.Context, r *mcp.ProgressNotificationClientRequest) {
			_ = ss.NotifyProgress(u.callCtx(), r.Params)
		},
		ResourceUpdatedHandler: func(_ context.Context, r *mcp.ResourceUpdatedNotificationRequest) {
			_ = f.srv.ResourceUpdated(u.callCtx(), r.Params)
		},
	})
	if f.stateless {
		// The client's capabilities are not known: its roots are asked for
		// only when the upstream asks, on the stream of the request in
		// flight, so a call that needs none never asks a client that may
		// not offer them.
		c.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
			return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
				if method == "roots/list" {
					return ss.ListRoots(u.callCtx(), nil)
				}
				return next(ctx, method, req)
			}
		})
	} else if p := ss.InitializeParams(); p != nil && p.Capabilities != nil && p.Capabilities.RootsV2 != nil {
		// The upstream asks this proxy for roots: it answers with the client's.
		roots, err := ss.ListRoots(ctx, nil)
		if err != nil {
			return nil, fmt.Errorf("roots of the client: %w", err)
		}
		c.AddRoots(roots.Roots...)
	}
	// A stateless front's upstream session lives for one request: it needs
	// no stream of its own for what the upstream sends outside a request,
	// unless that request is a subscription's listen stream, which the
	// upstream's updates reach on it.
	_, listening := ctx.Value(listenKey{}).(bool)
	// Connected on a context of its own, ending with ctx: a request of the
	// newer revision's context carries its version, which the go-sdk would
	// give the upstream's initialize as the version asked for.
	cctx, stop := context.WithCancel(context.Background())
	defer stop()
	defer context.AfterFunc(ctx, stop)()
	cs, err := c.Connect(cctx, &mcp.StreamableClientTransport{Endpoint: b.url, MaxRetries: -1, DisableStandaloneSSE: f.stateless && !listening}, nil)
	if err != nil {
		return nil, fmt.Errorf("connect to %s: %w", b.name, err)
	}
	u.cs = cs
	go func() {
		_ = cs.Wait()
		close(u.gone)
	}()
	level := mcp.LoggingLevel("debug")
	if perRequest(ss) {
		// The request's own level, from its _meta, is its upstream
		// session's (which lasts as long as the request): none, and the
		// upstream sends no message, as the newer revision says.
		level, _ = ctx.Value(levelKey{}).(mcp.LoggingLevel)
	}
	if caps := cs.InitializeResult().Capabilities; caps.Logging != nil && level != "" {
		// Every message comes up (a request of the newer revision's: those
		// at its level); the client's own level filters what goes down.
		if err := cs.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: level}); err != nil {
			_ = cs.Close()
			return nil, fmt.Errorf("set the log level of %s: %w", b.name, err)
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if m, ok := f.sessions[ss]; ok && m[b] == nil {
		m[b] = u
		return u, nil
	}
	_ = cs.Close() // ss ended meanwhile, or another request opened one first
	if m, ok := f.sessions[ss]; ok {
		return m[b], nil
	}
	return nil, errors.New("the client session ended")
}

// release closes ss's upstream sessions when ss ends.
func (f *front) release(ss *mcp.ServerSession) {
	_ = ss.Wait()
	f.mu.Lock()
	m := f.sessions[ss]
	delete(f.sessions, ss)
	f.mu.Unlock()
	for _, u := range m {
		_ = u.cs.Close()
	}
}

// failed drops u after err, unless err is the upstream's own JSON-RPC
// answer: a transport failure means the session is gone (the upstream
// restarted, the link broke), and the next request opens another.
func (f *front) failed(ss *mcp.ServerSession, b *backend, u *upSession, err error) {
	var werr *jsonrpc.Error
	if errors.As(err, &werr) && !errors.Is(err, mcp.ErrConnectionClosed) && !u.ended() {
		return
	}
	f.mu.Lock()
	if m := f.sessions[ss]; m != nil && m[b] == u {
		delete(m, b)
	}
	f.mu.Unlock()
	// Closed aside: a close waits on the upstream (its DELETE, a request
	// still running), and the client's answer must not.
	go func() { _ = u.cs.Close() }()
}

// do runs one forwarded request on ss's session with b, bounded, with ctx
// as the stream for what the upstream sends meanwhile.
// Whatever the upstream does (a link that swallows bytes, a close that
// waits), the answer comes at the bound: the work goes on aside.
func (f *front) do(ctx context.Context, ss *mcp.ServerSession, b *backend, call func(context.Context, *mcp.ClientSession) error) error {
	ctx, cancel := f.bounded(ctx)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- f.forward(ctx, ss, b, call) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		return fmt.Errorf("%s did not answer: %w", b.name, ctx.Err())
	}
}

// forward is do without its bound.
func (f *front) forward(ctx context.Context, ss *mcp.ServerSession, b *backend, call func(context.Context, *mcp.ClientSession) error) error {
	u, err := f.upstream(ctx, ss, b)
	if err != nil {
		return err
	}
	err = f.callOn(ctx, ss, u, call)
	if err != nil && neverSent(err) {
		// The upstream session was closing (its stream broke as the upstream
		// restarted) when the request was made: it never left, so it is
		// sent once more, on a new session.
		f.failed(ss, b, u, err)
		if u, err = f.upstream(ctx, ss, b); err != nil {
			return err
		}
		err = f.callOn(ctx, ss, u, call)
	}
	if err != nil && errors.Is(ctx.Err(), context.Canceled) {
		// The client cancelled the call (the go-sdk told the upstream):
		// the upstream session is as good as before. Dropping it would
		// close it under the client's next call, which may already be on
		// its way through it.
		return err
	}
	if err != nil {
		f.failed(ss, b, u, err)
		return err
	}
	return nil
}

// callOn runs call on u's session, recorded as in flight. The upstream
// session of a request of the newer revision lasts that request (but for a
// listen stream's): it is closed before the answer, which waits for what
// the upstream sent before its result (log messages, progress), handled on
// a goroutine of the go-sdk's own, to be carried while the request is still
// in flight.
func (f *front) callOn(ctx context.Context, ss *mcp.ServerSession, u *upSession, call func(context.Context, *mcp.ClientSession) error) error {
	defer u.enter(ctx)()
	err := call(ctx, u.cs)
	if _, listening := ctx.Value(listenKey{}).(bool); err == nil && f.stateless && perRequest(ss) && !listening {
		_ = u.cs.Close()
	}
	return err
}

// clientClosing is the go-sdk's JSON-RPC code for a request made while its
// client session was closing: the request was never sent.
const clientClosing = -32003

// neverSent reports whether err says the request never left this proxy.
func neverSent(err error) bool {
	var werr *jsonrpc.Error
	return errors.As(err, &werr) && werr.Code == clientClosing
}

func (f *front) callTool(b *backend, name string) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		var res *mcp.CallToolResult
		err := f.do(ctx, req.Session, b, func(ctx context.Context, cs *mcp.ClientSession) (err error) {
			res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: req.Params.Arguments, Meta: upstreamMeta(req.Params.Meta)})
			return err
		})
		if err != nil {
			return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{
				Text: fmt.Sprintf("%s%s failed upstream at %s: %v", b.prefix, name, b.name, err)}}}, nil
		}
		return res, nil
	}
}

func (f *front) getPrompt(b *backend, name string) mcp.PromptHandler {
	return func(ctx context.Context, req *mcp.GetPromptRequest) (res *mcp.GetPromptResult, err error) {
		err = f.do(ctx, req.Session, b, func(ctx context.Context, cs *mcp.ClientSession) (err error) {
			res, err = cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: name, Arguments: req.Params.Arguments, Meta: upstreamMeta(req.Params.Meta)})
			return err
		})
		if err != nil {
			return nil, err
		}
		return res, nil
	}
}

func (f *front) read(b *backend) mcp.ResourceHandler {
	return func(ctx context.Context, req *mcp.ReadResourceRequest) (res *mcp.ReadResourceResult, err error) {
		err = f.do(ctx, req.Session, b, func(ctx context.Context, cs *mcp.ClientSession) (err error) {
			res, err = cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: req.Params.URI, Meta: upstreamMeta(req.Params.Meta)})
			return err
		})
		if err != nil {
			return nil, err
		}
		return res, nil
	}
}

// owner is the backend serving uri: one that lists it, or one of whose
// templates' literal prefix it starts with.
func (f *front) owner(uri string) *backend {
	for _, b := range f.backends {
		if b.uris[uri] {
			return b
		}
	}
	for _, b := range f.backends {
		for _, t := range b.templates {
			if lit, _, _ := strings.Cut(t, "{"); lit != "" && strings.HasPrefix(uri, lit) {
				return b
			}
		}
	}
	return nil
}

func (f *front) subscribe(ctx context.Context, ss *mcp.ServerSession, uri string, on bool) error {
	b := f.owner(uri)
	if b == nil {
		return fmt.Errorf("no upstream serves %s", uri)
	}
	if on {
		ctx = context.WithValue(ctx, listenKey{}, true)
	}
	return f.do(ctx, ss, b, func(ctx context.Context, cs *mcp.ClientSession) error {
		if on {
			return cs.Subscribe(ctx, &mcp.SubscribeParams{URI: uri})
		}
		return cs.Unsubscribe(ctx, &mcp.UnsubscribeParams{URI: uri})
	})
}

// complete routes a completion by its reference: a prompt by its prefixed
// name, a resource template by the backend that lists it.
func (f *front) complete(ctx context.Context, req *mcp.CompleteRequest) (res *mcp.CompleteResult, err error) {
	p := *req.Params
	p.Meta = upstreamMeta(p.Meta)
	ref := *p.Ref
	p.Ref = &ref
	var b *backend
	switch ref.Type {
	case "ref/prompt":
		for _, c := range f.backends {
			if n, ok := strings.CutPrefix(ref.Name, c.prefix); ok && (b == nil || len(c.prefix) > len(b.prefix)) {
				b, ref.Name = c, n
			}
		}
	case "ref/resource":
		b = f.owner(ref.URI)
	}
	if b == nil {
		return nil, fmt.Errorf("no upstream serves the completion's reference %s %s%s", ref.Type, ref.Name, ref.URI)
	}
	err = f.do(ctx, req.Session, b, func(ctx context.Context, cs *mcp.ClientSession) (err error) {
		res, err = cs.Complete(ctx, &p)
		return err
	})
	if err != nil {
		return nil, err
	}
	return res, nil
}

// handler serves the front over Streamable HTTP, refusing cross-origin
// requests (the MCP spec's DNS-rebinding MUST; the SDK refuses a foreign
// Host on a loopback listener itself); a stateless front one session per
// request (stateless.go).
func (f *front) handler() http.Handler {
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return f.srv },
		&mcp.StreamableHTTPOptions{CrossOriginProtection: http.NewCrossOriginProtection()})
	if !f.stateless {
		return h
	}
	// A request of the newer revision (2026-07-28: no initialize, its
	// version, capabilities and log level in its own _meta) is served by the
	// go-sdk's stateless handler, each on a session of its own.
	modern := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return f.srv }, &mcp.StreamableHTTPOptions{Stateless: true})
	return http.NewCrossOriginProtection().Handler(newStateless(h, modern))
}

// perRequestRevision is the MCP revision from which a request carries its
// protocol version, capabilities and log level in its own _meta, and a
// client listens for updates on a subscriptions/listen stream of its own.
const perRequestRevision = "2026-07-28"

// perRequest reports whether ss is a request's own session of that revision.
func perRequest(ss *mcp.ServerSession) bool {
	p := ss.InitializeParams()
	return p != nil && p.ProtocolVersion >= perRequestRevision
}

// levelKey and listenKey are context keys: the log level a request's _meta
// carries, and that an upstream session is opened for a subscription.
type (
	levelKey  struct{}
	listenKey struct{}
)

// carryLevel puts the log level a request's _meta carries in its context,
// for the upstream session opened for it.
func carryLevel(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if p := req.GetParams(); p != nil && !reflect.ValueOf(p).IsNil() { // typed nil params (notifications/initialized)
			if l, ok := p.GetMeta()[mcp.MetaKeyLogLevel].(string); ok {
				ctx = context.WithValue(ctx, levelKey{}, mcp.LoggingLevel(l))
			}
		}
		return next(ctx, method, req)
	}
}

// upstreamMeta is a request's _meta as an upstream of the older revisions
// takes it: without the newer revision's per-request fields
// (io.modelcontextprotocol/...), which such an upstream refuses.
func upstreamMeta(m mcp.Meta) mcp.Meta {
	var out mcp.Meta
	for k, v := range m {
		if strings.HasPrefix(k, "io.modelcontextprotocol/") {
			continue
		}
		if out == nil {
			out = mcp.Meta{}
		}
		out[k] = v
	}
	return out
}
