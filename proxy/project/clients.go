package project

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpchaos/mcpchaos/proxy/bycall"
	"github.com/mcpchaos/mcpchaos/proxy/relay"
	"github.com/mcpchaos/mcpchaos/proxy/trace"
	"github.com/mcpchaos/mcpchaos/proxy/upstream"
)

// client is what the proxy holds for one client session: its own MCP server
// and session, and its upstream sessions, one per server it touched.
type client struct {
	p   *Project
	id  string
	srv *mcp.Server
	ss  *mcp.ServerSession
	// caps are the client's own capabilities, mirrored to its upstream
	// sessions: an upstream never learns of more than the client offers.
	caps *mcp.ClientCapabilities

	mu        sync.Mutex
	conns     map[string]*upstream.Conn
	level     mcp.LoggingLevel              // the client's logging/setLevel, replayed on new upstream sessions
	uris      map[string]string             // resource URI -> the server that listed it
	templates map[string]string             // resource URI template -> its server
	subs      map[string]string             // subscribed resource URI -> its server, replayed on new upstream sessions
	listening int                           // the client's standalone streams (GET) open at the proxy now
	active    []*inflight                   // requests being forwarded, oldest first
	relays    map[string]context.CancelFunc // calls on the raw relay, by the client's JSON-RPC id
	asks      map[string]chan relay.Message // the relay's requests to the client awaiting its answer, by their id (ask)
	closed    bool
}

// inflight is one client request being forwarded to server: what the
// upstream sends meanwhile (progress, log messages, sampling, elicitation,
// roots) is related to it, so it travels on that request's own stream.
type inflight struct {
	ctx    context.Context
	server string
	token  any          // the client's progressToken, if it gave one
	call   *bycall.Call // what the upstream sends on this request's stream carries its tag
}

// inflightKey is the context key of a request's inflight, for the relay,
// which reads the upstream's messages itself.
type inflightKey struct{}

func (p *Project) newClient(id string, srv *mcp.Server, ss *mcp.ServerSession) *client {
	c := &client{p: p, id: id, srv: srv, ss: ss, conns: map[string]*upstream.Conn{},
		uris: map[string]string{}, templates: map[string]string{}, subs: map[string]string{}, caps: &mcp.ClientCapabilities{}}
	if ip := ss.InitializeParams(); ip != nil && ip.Capabilities != nil {
		cp := *ip.Capabilities
		c.caps = &cp
	}
	p.mu.Lock()
	old := p.clients[id]
	p.clients[id] = c
	closed := p.closed
	p.mu.Unlock()
	if old != nil {
		p.closeClient(old)
	}
	if closed {
		p.closeClient(c)
	}
	return c
}

// clientOf returns the state of the request's session, or nil.
func (p *Project) clientOf(req mcp.Request) *client {
	s := req.GetSession()
	if s == nil {
		return nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.clients[s.ID()]
}

func (p *Project) closeClient(c *client) {
	c.mu.Lock()
	conns := c.conns
	c.conns, c.closed = map[string]*upstream.Conn{}, true
	c.mu.Unlock()
	for _, conn := range conns {
		p.closing.Add(1)
		go func() {
			defer p.closing.Done()
			_ = conn.Close() // bounded by the shutdown grace
		}()
	}
}

// connected are the session's upstream connections that hold a session.
func (c *client) connected() []*upstream.Conn {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]*upstream.Conn, 0, len(c.conns))
	for _, conn := range c.conns {
		if conn.Init() != nil {
			out = append(out, conn)
		}
	}
	return out
}

func (c *client) upstreams() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, conn := range c.conns {
		if conn.Init() != nil {
			n++
		}
	}
	return n
}

// conn returns the session's upstream connection to server, creating it
// (unconnected) on first use.
func (c *client) conn(server string) (*upstream.Conn, error) {
	c.p.mu.Lock()
	url, ok := c.p.servers[server]
	hdr := c.p.headers[server] // PutServer replaces it: never changed in place
	c.p.mu.Unlock()
	if !ok {
		return nil, fmt.Errorf("project %s has no server %q", c.p.Name, server)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil, upstream.ErrClosed
	}
	if conn := c.conns[server]; conn != nil {
		return conn, nil
	}
	conn := upstream.New(server, url, upstream.Options{
		ConnectTimeout:   c.p.knobs.UpstreamConnect,
		CallTimeout:      c.p.knobs.UpstreamCallTimeout,
		CloseGrace:       c.p.knobs.ShutdownGrace,
		Logger:           c.p.logger,
		Transport:        c.p.transport,
		MaxResponseBytes: c.p.knobs.UpstreamMaxResponseBytes,
		Headers:          hdr,
		Limit:            c.p.limit,
		Standalone:       func() bool { return c.isListening() && c.mayHearUnprompted(server) },
		Client:           c.clientOptions(server),
		Receiving:        []mcp.Middleware{c.rootsMiddleware(server)},
	})
	conn.OnConnect(func(ctx context.Context, s *mcp.ClientSession) {
		if r := s.InitializeResult(); r != nil && r.Capabilities != nil {
			c.p.mu.Lock()
			c.p.caps[server] = r.Capabilities
			c.p.mu.Unlock()
		}
		c.mu.Lock()
		level := c.level
		var subs []string
		for uri, srv := range c.subs {
			if srv == server {
				subs = append(subs, uri)
			}
		}
		c.mu.Unlock()
		if level != "" && hasLogging(s) {
			_ = s.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: level})
		}
		for _, uri := range subs {
			_ = s.Subscribe(ctx, &mcp.SubscribeParams{URI: uri})
		}
	})
	c.conns[server] = conn
	return conn, nil
}

// isListening reports whether the client holds a standalone stream of its
// own at the proxy: only then can what an upstream sends outside a request
// reach it (the proxy keeps no event store), so only then do its upstream
// sessions open theirs (three goroutines and a connection each; see
// docs/performance.md, "Idle sessions").
func (c *client) isListening() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.listening > 0
}

// mayHearUnprompted reports whether server may send the client something
// outside any request, so that its upstream session needs the upstream's
// standalone stream: by what the server advertised at its latest initialize
// in this project (not known yet: it may), or because the client offers to
// answer requests a server may send at any time (roots, which the proxy's
// roots/list_changed prompts it to ask again; sampling; elicitation).
func (c *client) mayHearUnprompted(server string) bool {
	if k := c.caps; k != nil && (k.Roots.ListChanged || k.RootsV2 != nil || k.Sampling != nil || k.Elicitation != nil) {
		return true
	}
	c.p.mu.Lock()
	sc, known := c.p.caps[server]
	c.p.mu.Unlock()
	return !known || sendsUnprompted(sc)
}

// sendsUnprompted reports whether a server advertising sc may send a
// notification outside any request: a list changed, a subscribed resource
// updated, a log message.
func sendsUnprompted(sc *mcp.ServerCapabilities) bool {
	if sc == nil {
		return false
	}
	return sc.Logging != nil ||
		(sc.Tools != nil && sc.Tools.ListChanged) ||
		(sc.Prompts != nil && sc.Prompts.ListChanged) ||
		(sc.Resources != nil && (sc.Resources.ListChanged || sc.Resources.Subscribe))
}

// listen counts a standalone stream the client opened at the proxy. The
// first one makes every upstream session it holds open its own, before the
// client's stream is served (so nothing the upstream sends from then on is
// missed); the returned func ends the count when the client's stream ends.
// An upstream stream, once open, stays for its session's life.
func (c *client) listen(ctx context.Context) func() {
	c.mu.Lock()
	c.listening++
	first := c.listening == 1
	conns := make([]*upstream.Conn, 0, len(c.conns))
	for _, conn := range c.conns {
		conns = append(conns, conn)
	}
	c.mu.Unlock()
	if first {
		var wg sync.WaitGroup
		for _, conn := range conns {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if err := conn.Listen(ctx); err != nil {
					c.p.logger.Warn("upstream standalone stream not opened; the next call reconnects with it", "session", c.id, "server", conn.Name, "err", err)
				}
			}()
		}
		wg.Wait()
	}
	return func() {
		c.mu.Lock()
		c.listening--
		c.mu.Unlock()
	}
}

// Listening is called when session id's client opens its standalone stream
// (GET) at the proxy; it returns what to call when that stream ends.
func (p *Project) Listening(ctx context.Context, id string) func() {
	p.mu.Lock()
	c := p.clients[id]
	p.mu.Unlock()
	if c == nil {
		return func() {}
	}
	return c.listen(ctx)
}

func hasLogging(s *mcp.ClientSession) bool {
	r := s.InitializeResult()
	return r != nil && r.Capabilities != nil && r.Capabilities.Logging != nil
}

// do runs f on the session's upstream connection to server, with the
// request registered as in flight there (see inflight).
func (c *client) do(ctx context.Context, server string, token any, f func(context.Context, *upstream.Conn) error) error {
	conn, err := c.conn(server)
	if err != nil {
		return err
	}
	in, done := c.begin(ctx, server, token)
	defer done()
	err = f(bycall.With(ctx, in.call), conn)
	// The result may have overtaken the call's last progress and log
	// messages inside the go-sdk client: they go out first, on the call's
	// stream, before its answer ends it.
	in.call.Drain(ctx, c.p.knobs.CallNotifyDrain)
	return err
}

// tags numbers the requests in flight to upstreams, so that each has a tag
// of its own (proxy/bycall).
var tags atomic.Uint64

// begin registers the request ctx to server as in flight until the
// returned func is called.
func (c *client) begin(ctx context.Context, server string, token any) (*inflight, func()) {
	in := &inflight{ctx: ctx, server: server, token: token, call: bycall.NewCall(strconv.FormatUint(tags.Add(1), 36))}
	c.mu.Lock()
	c.active = append(c.active, in)
	c.mu.Unlock()
	return in, func() {
		c.mu.Lock()
		for i, a := range c.active {
			if a == in {
				c.active = append(c.active[:i], c.active[i+1:]...)
				break
			}
		}
		c.mu.Unlock()
	}
}

// related returns the context of the client request that what server just
// sent belongs to: the one whose upstream stream carried it (tag, see
// proxy/route), else the one with the progress token. ok is false when none
// is in flight (the message came on the upstream's standalone stream, or
// after its request was answered); it then goes to the client's standalone
// stream. Never a guess: a message of one call is never relayed on another
// call's stream (promise 9).
func (c *client) related(server string, tag string, token any) (*inflight, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, a := range c.active {
		if a.server != server {
			continue
		}
		if (tag != "" && a.call.Tag == tag) || (tag == "" && token != nil && sameToken(a.token, token)) {
			return a, true
		}
	}
	return nil, false
}

// takeTag removes the route tag from an upstream message's _meta (nil
// when nothing else is left in it) and returns it.
func takeTag(meta *mcp.Meta) string {
	if *meta == nil {
		return ""
	}
	tag := bycall.Take(*meta)
	if len(*meta) == 0 {
		*meta = nil
	}
	return tag
}

// sameToken compares progress tokens as JSON does: 7 and 7.0 are one token.
func sameToken(a, b any) bool {
	if a == nil {
		return false
	}
	return fmt.Sprint(a) == fmt.Sprint(b)
}

// clientOptions are the handlers of the session's upstream client for
// server: everything the upstream sends goes to this client session, and
// only to it.
func (c *client) clientOptions(server string) *mcp.ClientOptions {
	caps := &mcp.ClientCapabilities{}
	if c.caps != nil {
		cp := *c.caps
		caps = &cp
	}
	o := &mcp.ClientOptions{
		Capabilities: caps,
		LoggingMessageHandler: func(_ context.Context, r *mcp.LoggingMessageRequest) {
			c.log(server, takeTag(&r.Params.Meta), r.Params)
		},
		ProgressNotificationHandler: func(_ context.Context, r *mcp.ProgressNotificationClientRequest) {
			c.progress(server, takeTag(&r.Params.Meta), r.Params)
		},
		ResourceUpdatedHandler: func(ctx context.Context, r *mcp.ResourceUpdatedNotificationRequest) {
			takeTag(&r.Params.Meta) // the proxy's own: never relayed
			_ = c.srv.ResourceUpdated(ctx, r.Params)
		},
		ToolListChangedHandler:     func(context.Context, *mcp.ToolListChangedRequest) { c.listChanged("tools") },
		PromptListChangedHandler:   func(context.Context, *mcp.PromptListChangedRequest) { c.listChanged("prompts") },
		ResourceListChangedHandler: func(context.Context, *mcp.ResourceListChangedRequest) { c.listChanged("resources") },
	}
	if caps.Sampling != nil {
		o.CreateMessageHandler = func(ctx context.Context, r *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			rel, cancel := c.toClient(ctx, server, takeTag(&r.Params.Meta))
			defer cancel()
			return c.ss.CreateMessage(rel, r.Params)
		}
	}
	if caps.Elicitation != nil {
		o.ElicitationHandler = func(ctx context.Context, r *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			rel, cancel := c.toClient(ctx, server, takeTag(&r.Params.Meta))
			defer cancel()
			return c.ss.Elicit(rel, r.Params)
		}
	}
	return o
}

// log relays a log message from server to the client: on the stream of the
// request it belongs to while that request is in flight, else on the
// standalone stream. The SDK hands the proxy an upstream's notification
// concurrently with that request's result, so the proxy may answer the
// request between finding it in flight and writing the message; the SDK then
// refuses the write on the request's closed stream, and the message goes out
// of band instead of being lost.
func (c *client) log(server, tag string, p *mcp.LoggingMessageParams) {
	c.outOfBandIfLate(server, tag, nil, func(ctx context.Context) error { return c.ss.Log(ctx, p) })
}

// progress relays a progress notification from server to the client, on
// the stream of the request whose token it carries while that request is in
// flight, else on the standalone stream; like log, out of band when the
// request was answered between finding it and writing.
func (c *client) progress(server, tag string, p *mcp.ProgressNotificationParams) {
	c.outOfBandIfLate(server, tag, p.ProgressToken, func(ctx context.Context) error { return c.ss.NotifyProgress(ctx, p) })
}

// outOfBandIfLate writes an upstream's notification with the context of
// the client request it belongs to (by the stream it came on, else by
// token; see related), and again on the standalone stream if the SDK
// refused the first write because that request was answered in between.
func (c *client) outOfBandIfLate(server, tag string, token any, write func(context.Context) error) {
	in, related := c.related(server, tag, token)
	if !related {
		_ = write(context.Background())
		return
	}
	if err := write(in.ctx); err != nil {
		_ = write(context.Background())
	}
	if tag != "" {
		in.call.Handled()
	}
}

// toClient is the context of a server-to-client request relayed from
// server, which came on the stream of the request tagged tag (see related):
// related to that client request while it is in flight (so it rides its
// stream), ended by that request's deadline, or by the upstream's cancel,
// or by the request deadline knob when it is not in flight.
func (c *client) toClient(upstreamCtx context.Context, server, tag string) (context.Context, context.CancelFunc) {
	in, ok := c.related(server, tag, nil)
	var rel context.Context
	var cancel context.CancelFunc
	if ok {
		rel, cancel = context.WithCancel(in.ctx)
	} else {
		rel, cancel = context.WithTimeout(context.Background(), c.p.knobs.RequestDeadline)
	}
	stop := context.AfterFunc(upstreamCtx, cancel)
	return rel, func() { stop(); cancel() }
}

// rootsMiddleware answers the upstream's roots/list with the client's own
// roots, asked of the client session that owns this upstream session, and
// relays elicitation/create to it as it came.
func (c *client) rootsMiddleware(server string) mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if r, ok := req.(*mcp.ElicitRequest); ok && method == "elicitation/create" && c.caps != nil && c.caps.Elicitation != nil {
				// Straight to the client: the SDK client would first re-check
				// the schema against its own reading of it, and refuse forms
				// (titled enums) the client itself accepts.
				rel, cancel := c.toClient(ctx, server, takeTag(&r.Params.Meta))
				defer cancel()
				return c.ss.Elicit(rel, r.Params)
			}
			if method != "roots/list" {
				return next(ctx, method, req)
			}
			if c.caps == nil || c.caps.RootsV2 == nil {
				return nil, errors.New("the client behind this proxy offers no roots")
			}
			var params *mcp.ListRootsParams
			tag := ""
			if r, ok := req.(*mcp.ListRootsRequest); ok && r.Params != nil {
				params = r.Params
				tag = takeTag(&params.Meta)
			}
			rel, cancel := c.toClient(ctx, server, tag)
			defer cancel()
			return c.ss.ListRoots(rel, params)
		}
	}
}

// listSentinel names the placeholder the proxy adds to and removes from a
// session's own server to make the SDK send that session a list_changed.
const listSentinel = "mcplocal-list-changed"

// listChanged sends the session notifications/{kind}/list_changed. The SDK
// sends those only when a server's feature set changes, and each session has
// a server of its own, so a placeholder added and removed at once reaches
// exactly this session (the SDK folds the two changes into one notification).
func (c *client) listChanged(kind string) {
	switch kind {
	case "tools":
		c.srv.AddTool(&mcp.Tool{Name: listSentinel, InputSchema: map[string]any{"type": "object"}},
			func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) { return nil, nil })
		c.srv.RemoveTools(listSentinel)
	case "prompts":
		c.srv.AddPrompt(&mcp.Prompt{Name: listSentinel},
			func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) { return nil, nil })
		c.srv.RemovePrompts(listSentinel)
	case "resources":
		uri := "mcplocal://" + listSentinel
		c.srv.AddResource(&mcp.Resource{URI: uri, Name: listSentinel},
			func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) { return nil, nil })
		c.srv.RemoveResources(uri)
	}
}

// setLevel remembers the client's log level and passes it to every upstream
// session it holds that does logging; new upstream sessions get it on connect.
func (c *client) setLevel(ctx context.Context, level mcp.LoggingLevel) {
	c.mu.Lock()
	c.level = level
	conns := make([]*upstream.Conn, 0, len(c.conns))
	for _, conn := range c.conns {
		if conn.Init() != nil {
			conns = append(conns, conn)
		}
	}
	c.mu.Unlock()
	var wg sync.WaitGroup
	for _, conn := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := conn.Do(ctx, func(ctx context.Context, s *mcp.ClientSession) error {
				if !hasLogging(s) {
					return nil
				}
				return s.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: level})
			})
			if err != nil {
				c.p.logger.Warn("logging/setLevel: upstream failed", "trace", trace.From(ctx), "server", conn.Name, "err", err)
			}
		}()
	}
	wg.Wait()
}
