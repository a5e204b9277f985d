package project

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpchaos/mcpchaos/proxy/redact"
	"github.com/mcpchaos/mcpchaos/proxy/trace"
	"github.com/mcpchaos/mcpchaos/proxy/upstream"
)

// codeInvalidParams is JSON-RPC's "invalid params": an unknown prompt,
// resource or completion reference.
const codeInvalidParams = -32602

// dispatch forwards every MCP method a client may send to the session's
// upstream sessions, aggregated over the project's servers, through the
// routes table. What the proxy answers itself (initialize, ping, methods
// not in the table) goes to the SDK's own handler.
func (p *Project) dispatch(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		cl := p.clientOf(req)
		r, ok := routes[method]
		if cl == nil || !ok {
			return next(ctx, method, req)
		}
		return r(p, ctx, cl, req, func() (mcp.Result, error) { return next(ctx, method, req) })
	}
}

// route answers one MCP method for the client session cl. sdk runs the
// SDK's own handler for the request, for methods whose state the SDK keeps
// (subscribers, the log level) after the upstreams were told.
type route func(p *Project, ctx context.Context, cl *client, req mcp.Request, sdk func() (mcp.Result, error)) (mcp.Result, error)

// routes are the MCP methods the proxy forwards upstream, one entry each.
// docs/protocol.md lists them with what each does; scenarios/surface_test.go
// holds every one of them to an answer.
var routes = map[string]route{
	"tools/list": func(p *Project, ctx context.Context, cl *client, _ mcp.Request, _ func() (mcp.Result, error)) (mcp.Result, error) {
		if p.gated(ctx) {
			return p.listProxyTools(), nil
		}
		return p.listTools(ctx, cl)
	},
	"tools/call":               sent((*Project).callTool),
	"resources/list":           listed((*Project).listResources),
	"resources/templates/list": listed((*Project).listTemplates),
	"resources/read":           sent((*Project).readResource),
	"resources/subscribe": thenSDK(func(p *Project, ctx context.Context, cl *client, req mcp.Request) error {
		return p.subscribe(ctx, cl, req.(*mcp.SubscribeRequest).Params.URI, true) // then the SDK records the subscriber
	}),
	"resources/unsubscribe": thenSDK(func(p *Project, ctx context.Context, cl *client, req mcp.Request) error {
		return p.subscribe(ctx, cl, req.(*mcp.UnsubscribeRequest).Params.URI, false)
	}),
	"prompts/list":        listed((*Project).listPrompts),
	"prompts/get":         sent((*Project).getPrompt),
	"completion/complete": sent((*Project).complete),
	"notifications/roots/list_changed": thenSDK(func(_ *Project, _ context.Context, cl *client, _ mcp.Request) error {
		for _, conn := range cl.connected() {
			conn.NotifyRootsListChanged()
		}
		return nil
	}),
	"logging/setLevel": func(_ *Project, ctx context.Context, cl *client, req mcp.Request, sdk func() (mcp.Result, error)) (mcp.Result, error) {
		res, err := sdk() // the SDK filters what reaches the client by it
		if err == nil {
			if r, ok := req.(*mcp.ServerRequest[*mcp.SetLoggingLevelParams]); ok && r.Params != nil {
				cl.setLevel(ctx, r.Params.Level)
			}
		}
		return res, err
	},
}

// listed is a route for a list method: the request's params are not used.
func listed[R mcp.Result](list func(*Project, context.Context, *client) (R, error)) route {
	return func(p *Project, ctx context.Context, cl *client, _ mcp.Request, _ func() (mcp.Result, error)) (mcp.Result, error) {
		return list(p, ctx, cl)
	}
}

// sent is a route for a method answered by one upstream (or by the proxy's
// own tools), taking the SDK's typed request.
func sent[Q mcp.Request, R mcp.Result](send func(*Project, context.Context, *client, Q) (R, error)) route {
	return func(p *Project, ctx context.Context, cl *client, req mcp.Request, _ func() (mcp.Result, error)) (mcp.Result, error) {
		return send(p, ctx, cl, req.(Q))
	}
}

// thenSDK is a route that tells the upstreams first and, when that worked,
// lets the SDK answer (and keep its own state).
func thenSDK(upstreams func(p *Project, ctx context.Context, cl *client, req mcp.Request) error) route {
	return func(p *Project, ctx context.Context, cl *client, req mcp.Request, sdk func() (mcp.Result, error)) (mcp.Result, error) {
		if err := upstreams(p, ctx, cl, req); err != nil {
			return nil, err
		}
		return sdk()
	}
}

// external is the name a client sees for an upstream's tool, prompt or
// resource template.
func (p *Project) external(server, name string) string {
	if !p.prefix {
		return name
	}
	return server + "_" + name
}

// internal splits a name the client used into its server and the upstream's
// own name (the longest server prefix wins).
func (p *Project) internal(name string) (server, upstreamName string, ok bool) {
	names := p.serverNames()
	if !p.prefix {
		if len(names) == 0 {
			return "", "", false
		}
		return names[0], name, true
	}
	for _, sn := range names {
		if strings.HasPrefix(name, sn+"_") && len(sn) > len(server) {
			server = sn
		}
	}
	if server == "" {
		return "", "", false
	}
	return server, strings.TrimPrefix(name, server+"_"), true
}

// each runs f on every server of the project that offers the feature want
// picks out of its capabilities, in parallel, each on the session's own
// upstream session. Servers that fail are logged; err joins their errors,
// redacted (docs/security.md, "Secrets never leave").
func (p *Project) each(ctx context.Context, cl *client, method string, want func(*mcp.ServerCapabilities) bool,
	f func(ctx context.Context, server string, s *mcp.ClientSession) error) error {
	names := p.serverNames()
	errs := make([]error, len(names))
	var wg sync.WaitGroup
	for i, sn := range names {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = cl.do(ctx, sn, nil, func(ctx context.Context, conn *upstream.Conn) error {
				return conn.Do(ctx, func(ctx context.Context, s *mcp.ClientSession) error {
					if r := s.InitializeResult(); r == nil || r.Capabilities == nil || !want(r.Capabilities) {
						return nil // this server does not offer it
					}
					return f(ctx, sn, s)
				})
			})
			if errs[i] != nil {
				// Redacted here, at the source, for every list method alike:
				// an upstream's URL may carry a key in its query (?apikey=...).
				errs[i] = redact.Error(errs[i])
				p.logger.Warn(method+": upstream failed", "trace", trace.From(ctx), "server", sn, "err", errs[i])
				errs[i] = &serverError{server: sn, err: errs[i]} // text: the answer's code is the proxy's
			}
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// serverError is one server's failure in a method each sent to every
// server: "server: error" as text, the error itself kept for what is told
// about it (upstream.Advice) but not unwrapped, so that the answer's code is
// the proxy's, never an upstream's or the SDK's.
type serverError struct {
	server string
	err    error
}

func (e *serverError) Error() string { return e.server + ": " + e.err.Error() }

// serverErrors lists the servers' failures in err, as each returned it.
func serverErrors(err error) []*serverError {
	var out []*serverError
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		for _, e := range j.Unwrap() {
			if se, ok := e.(*serverError); ok {
				out = append(out, se)
			}
		}
	}
	return out
}

// onOne runs f on server's upstream session for the session cl. A JSON-RPC
// error the upstream answered with (invalid params, resource not found)
// reaches the client with its code; a failure to reach the upstream becomes
// the proxy's own failure (-32001, via the deadline middleware), never the
// SDK's internal transport codes.
func (p *Project) onOne(ctx context.Context, cl *client, server string, f func(ctx context.Context, s *mcp.ClientSession) error) error {
	err := cl.do(ctx, server, nil, func(ctx context.Context, conn *upstream.Conn) error { return conn.Do(ctx, f) })
	if err == nil {
		return nil
	}
	var werr *jsonrpc.Error
	if errors.As(err, &werr) && upstreamAnswered(werr.Code) {
		return werr
	}
	return fmt.Errorf("upstream %s: %v", server, err)
}

// upstreamAnswered reports whether a JSON-RPC error code is one a server
// answers with (the spec's codes and MCP's resource not found), not one the
// SDK makes up for a transport failure.
func upstreamAnswered(code int64) bool {
	switch code {
	case -32700, -32600, -32601, -32602, -32603, -32002:
		return true
	}
	return false
}

func hasResources(c *mcp.ServerCapabilities) bool { return c.Resources != nil }
func hasPrompts(c *mcp.ServerCapabilities) bool   { return c.Prompts != nil }
func hasTools(c *mcp.ServerCapabilities) bool     { return c.Tools != nil }

// listing says how one list method is aggregated over a project's servers:
// which servers offer it, how a server's items are fetched, how an item is
// shown to the client (renamed), what the session remembers of where each
// came from, and the order of the merged list.
type listing[T any] struct {
	method   string
	want     func(*mcp.ServerCapabilities) bool
	fetch    func(ctx context.Context, s *mcp.ClientSession) iter.Seq2[*T, error]
	rename   func(p *Project, server string, item *T) *T // nil: as the upstream lists it
	remember func(cl *client, server string, item *T)    // called under cl.mu; nil: nothing
	key      func(item *T) string                        // the merged list is sorted by it
}

// aggregate lists l over every server of the project that offers it, in
// parallel, on the session's own upstream sessions. Servers that fail are
// left out; the answer is an error only when none answered and one failed.
func aggregate[T any](p *Project, ctx context.Context, cl *client, l listing[T]) ([]*T, error) {
	var mu sync.Mutex
	out := []*T{}
	err := p.each(ctx, cl, l.method, l.want, func(ctx context.Context, server string, s *mcp.ClientSession) error {
		var got []*T
		for item, err := range l.fetch(ctx, s) {
			if err != nil {
				return err
			}
			if l.rename != nil {
				item = l.rename(p, server, item)
			}
			got = append(got, item)
		}
		if l.remember != nil {
			cl.mu.Lock()
			for _, item := range got {
				l.remember(cl, server, item)
			}
			cl.mu.Unlock()
		}
		mu.Lock()
		out = append(out, got...)
		mu.Unlock()
		return nil
	})
	if len(out) == 0 && err != nil {
		return nil, fmt.Errorf("no upstream server of project %s answered %s: %w", p.Name, l.method, err)
	}
	sort.SliceStable(out, func(i, j int) bool { return l.key(out[i]) < l.key(out[j]) })
	return out, nil
}

// The list methods the proxy aggregates (tools/list has its own: it adds
// the proxy's tools).
var (
	resourceListing = listing[mcp.Resource]{
		method: "resources/list", want: hasResources,
		fetch: func(ctx context.Context, s *mcp.ClientSession) iter.Seq2[*mcp.Resource, error] {
			return s.Resources(ctx, nil)
		},
		remember: func(cl *client, server string, r *mcp.Resource) { cl.uris[r.URI] = server },
		key:      func(r *mcp.Resource) string { return r.URI },
	}
	templateListing = listing[mcp.ResourceTemplate]{
		method: "resources/templates/list", want: hasResources,
		fetch: func(ctx context.Context, s *mcp.ClientSession) iter.Seq2[*mcp.ResourceTemplate, error] {
			return s.ResourceTemplates(ctx, nil)
		},
		rename: func(p *Project, server string, t *mcp.ResourceTemplate) *mcp.ResourceTemplate {
			cp := *t
			cp.Name = p.external(server, t.Name)
			return &cp
		},
		remember: func(cl *client, server string, t *mcp.ResourceTemplate) { cl.templates[t.URITemplate] = server },
		key:      func(t *mcp.ResourceTemplate) string { return t.Name },
	}
	promptListing = listing[mcp.Prompt]{
		method: "prompts/list", want: hasPrompts,
		fetch: func(ctx context.Context, s *mcp.ClientSession) iter.Seq2[*mcp.Prompt, error] {
			return s.Prompts(ctx, nil)
		},
		rename: func(p *Project, server string, pr *mcp.Prompt) *mcp.Prompt {
			cp := *pr
			cp.Name = p.external(server, pr.Name)
			return &cp
		},
		key: func(pr *mcp.Prompt) string { return pr.Name },
	}
)

func (p *Project) listResources(ctx context.Context, cl *client) (*mcp.ListResourcesResult, error) {
	out, err := aggregate(p, ctx, cl, resourceListing)
	if err != nil {
		return nil, err
	}
	return &mcp.ListResourcesResult{Resources: out}, nil
}

func (p *Project) listTemplates(ctx context.Context, cl *client) (*mcp.ListResourceTemplatesResult, error) {
	out, err := aggregate(p, ctx, cl, templateListing)
	if err != nil {
		return nil, err
	}
	return &mcp.ListResourceTemplatesResult{ResourceTemplates: out}, nil
}

func (p *Project) listPrompts(ctx context.Context, cl *client) (*mcp.ListPromptsResult, error) {
	out, err := aggregate(p, ctx, cl, promptListing)
	if err != nil {
		return nil, err
	}
	return &mcp.ListPromptsResult{Prompts: out}, nil
}

// forward sends one request to server's upstream session for the session
// cl, and records the server for the request's audit row (onOne says how a
// failure is answered).
func forward[R any](p *Project, ctx context.Context, cl *client, server string, send func(ctx context.Context, s *mcp.ClientSession) (R, error)) (R, error) {
	callFrom(ctx).at(server)
	var res R
	err := p.onOne(ctx, cl, server, func(ctx context.Context, s *mcp.ClientSession) error {
		var err error
		res, err = send(ctx, s)
		return err
	})
	return res, err
}

// resourceServer finds the server a resource URI belongs to: the one that
// listed it, else the one whose template it matches, else the only server;
// failing those it lists every server's resources once and looks again.
func (p *Project) resourceServer(ctx context.Context, cl *client, uri string) (string, error) {
	lookup := func() (string, bool) {
		cl.mu.Lock()
		defer cl.mu.Unlock()
		if sn, ok := cl.uris[uri]; ok {
			return sn, true
		}
		best, bestLen := "", -1
		for tmpl, sn := range cl.templates {
			lit, _, _ := strings.Cut(tmpl, "{")
			if strings.HasPrefix(uri, lit) && len(lit) > bestLen {
				best, bestLen = sn, len(lit)
			}
		}
		return best, best != ""
	}
	if names := p.serverNames(); len(names) == 1 {
		return names[0], nil
	}
	if sn, ok := lookup(); ok {
		return sn, nil
	}
	_, _ = p.listResources(ctx, cl)
	_, _ = p.listTemplates(ctx, cl)
	if sn, ok := lookup(); ok {
		return sn, nil
	}
	return "", &jsonrpc.Error{Code: codeInvalidParams, Message: fmt.Sprintf("no server of project %s lists the resource %q; call resources/list [trace %s]", p.Name, uri, trace.From(ctx))}
}

func (p *Project) readResource(ctx context.Context, cl *client, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	server, err := p.resourceServer(ctx, cl, req.Params.URI)
	if err != nil {
		return nil, err
	}
	return forward(p, ctx, cl, server, func(ctx context.Context, s *mcp.ClientSession) (*mcp.ReadResourceResult, error) {
		return s.ReadResource(ctx, req.Params)
	})
}

func (p *Project) subscribe(ctx context.Context, cl *client, uri string, on bool) error {
	server, err := p.resourceServer(ctx, cl, uri)
	if err != nil {
		return err
	}
	_, err = forward(p, ctx, cl, server, func(ctx context.Context, s *mcp.ClientSession) (struct{}, error) {
		if on {
			return struct{}{}, s.Subscribe(ctx, &mcp.SubscribeParams{URI: uri})
		}
		return struct{}{}, s.Unsubscribe(ctx, &mcp.UnsubscribeParams{URI: uri})
	})
	if err == nil {
		// Remembered for the session's next upstream session (a reconnect,
		// or Listen's), which would otherwise not know of it.
		cl.mu.Lock()
		if on {
			cl.subs[uri] = server
		} else {
			delete(cl.subs, uri)
		}
		cl.mu.Unlock()
	}
	return err
}

func (p *Project) getPrompt(ctx context.Context, cl *client, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
	server, name, ok := p.internal(req.Params.Name)
	if !ok {
		return nil, &jsonrpc.Error{Code: codeInvalidParams, Message: fmt.Sprintf("unknown prompt %q in project %s; call prompts/list [trace %s]", req.Params.Name, p.Name, trace.From(ctx))}
	}
	params := *req.Params
	params.Name = name
	return forward(p, ctx, cl, server, func(ctx context.Context, s *mcp.ClientSession) (*mcp.GetPromptResult, error) {
		return s.GetPrompt(ctx, &params)
	})
}

func (p *Project) complete(ctx context.Context, cl *client, req *mcp.CompleteRequest) (*mcp.CompleteResult, error) {
	params := *req.Params
	if params.Ref == nil {
		return nil, &jsonrpc.Error{Code: codeInvalidParams, Message: fmt.Sprintf("completion/complete needs a ref [trace %s]", trace.From(ctx))}
	}
	ref := *params.Ref
	params.Ref = &ref
	var server string
	switch ref.Type {
	case "ref/prompt":
		sn, name, ok := p.internal(ref.Name)
		if !ok {
			return nil, &jsonrpc.Error{Code: codeInvalidParams, Message: fmt.Sprintf("unknown prompt %q in project %s [trace %s]", ref.Name, p.Name, trace.From(ctx))}
		}
		server, ref.Name = sn, name
	default: // ref/resource: a URI or URI template
		cl.mu.Lock()
		sn, ok := cl.templates[ref.URI]
		cl.mu.Unlock()
		if !ok {
			var err error
			if sn, err = p.resourceServer(ctx, cl, ref.URI); err != nil {
				return nil, err
			}
		}
		server = sn
	}
	return forward(p, ctx, cl, server, func(ctx context.Context, s *mcp.ClientSession) (*mcp.CompleteResult, error) {
		return s.Complete(ctx, &params)
	})
}

// advertiseWait is how long initialize waits for servers not yet seen: the
// connect knob (MCPCTL_UPSTREAM_CONNECT_TIMEOUT_MS), and at most half of
// what is left of the request's deadline when it has one.
func advertiseWait(connect, left time.Duration, hasDeadline bool) time.Duration {
	if hasDeadline && left/2 < connect {
		return left / 2
	}
	return connect
}

// advertise is what the session is told the proxy can do: the union of what
// its upstreams advertise, plus the proxy's own tools, never more. Servers
// not yet seen are connected now, on this session's own upstream sessions
// (each bounded by the connect knob); one that cannot be reached adds nothing.
func (p *Project) advertise(ctx context.Context, cl *client) *mcp.ServerCapabilities {
	// The wait is bounded by the connect knob and by half of what is left of
	// the request's deadline: initialize is answered in time whatever the
	// upstreams do (a connect still running goes on in the background).
	dl, hasDeadline := ctx.Deadline()
	wait := advertiseWait(p.knobs.UpstreamConnect, time.Until(dl), hasDeadline)
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), p.knobs.UpstreamConnect)
	var wg sync.WaitGroup
	for _, sn := range p.serverNames() {
		p.mu.Lock()
		known := p.caps[sn] != nil
		p.mu.Unlock()
		if known {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if conn, err := cl.conn(sn); err == nil {
				if err := conn.Connect(cctx); err != nil {
					p.logger.Warn("initialize: upstream unreachable; its features are not advertised", "server", sn, "err", err)
				}
			}
		}()
	}
	done := make(chan struct{})
	go func() { wg.Wait(); cancel(); close(done) }()
	t := time.NewTimer(wait)
	select {
	case <-done:
	case <-t.C:
	}
	t.Stop()
	out := &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{ListChanged: p.gate != nil}}
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, sn := range p.names {
		c := p.caps[sn]
		if c == nil {
			continue
		}
		if c.Tools != nil && c.Tools.ListChanged {
			out.Tools.ListChanged = true
		}
		if c.Resources != nil {
			if out.Resources == nil {
				out.Resources = &mcp.ResourceCapabilities{}
			}
			out.Resources.Subscribe = out.Resources.Subscribe || c.Resources.Subscribe
			out.Resources.ListChanged = out.Resources.ListChanged || c.Resources.ListChanged
		}
		if c.Prompts != nil {
			if out.Prompts == nil {
				out.Prompts = &mcp.PromptCapabilities{}
			}
			out.Prompts.ListChanged = out.Prompts.ListChanged || c.Prompts.ListChanged
		}
		if c.Completions != nil {
			out.Completions = &mcp.CompletionCapabilities{}
		}
		if c.Logging != nil {
			out.Logging = &mcp.LoggingCapabilities{}
		}
	}
	return out
}

// upstreamMeta is the _meta passed upstream with a call: the client's own
// (its progressToken above all), without the proxy's trace code.
func upstreamMeta(m mcp.Meta) mcp.Meta {
	if len(m) == 0 {
		return nil
	}
	out := mcp.Meta{}
	for k, v := range m {
		if k != trace.MetaKey {
			out[k] = v
		}
	}
	return out
}
