package project

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpchaos/mcpchaos/proxy/trace"
	"github.com/mcpchaos/mcpchaos/proxy/upstream"
)

// codeInvalidParams is JSON-RPC's "invalid params": an unknown prompt,
// resource or completion reference.
const codeInvalidParams = -32602

// dispatch forwards every MCP method a client may send to the session's
// upstream sessions, aggregated over the project's servers. What the proxy
// answers itself (initialize, ping) goes to the SDK's own handler.
func (p *Project) dispatch(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		cl := p.clientOf(req)
		if cl == nil {
			return next(ctx, method, req)
		}
		switch method {
		case "tools/list":
			if p.gated(ctx) {
				return p.listProxyTools(), nil
			}
			return p.listTools(ctx, cl)
		case "tools/call":
			return p.callTool(ctx, cl, req.(*mcp.CallToolRequest))
		case "resources/list":
			return p.listResources(ctx, cl)
		case "resources/templates/list":
			return p.listTemplates(ctx, cl)
		case "resources/read":
			return p.readResource(ctx, cl, req.(*mcp.ReadResourceRequest))
		case "resources/subscribe":
			r := req.(*mcp.SubscribeRequest)
			if err := p.subscribe(ctx, cl, r.Params.URI, true); err != nil {
				return nil, err
			}
			return next(ctx, method, req) // the SDK records the subscriber
		case "resources/unsubscribe":
			r := req.(*mcp.UnsubscribeRequest)
			if err := p.subscribe(ctx, cl, r.Params.URI, false); err != nil {
				return nil, err
			}
			return next(ctx, method, req)
		case "prompts/list":
			return p.listPrompts(ctx, cl)
		case "prompts/get":
			return p.getPrompt(ctx, cl, req.(*mcp.GetPromptRequest))
		case "completion/complete":
			return p.complete(ctx, cl, req.(*mcp.CompleteRequest))
		case "notifications/roots/list_changed":
			for _, conn := range cl.connected() {
				conn.NotifyRootsListChanged()
			}
			return next(ctx, method, req)
		case "logging/setLevel":
			res, err := next(ctx, method, req) // the SDK filters what reaches the client by it
			if err == nil {
				if r, ok := req.(*mcp.ServerRequest[*mcp.SetLoggingLevelParams]); ok && r.Params != nil {
					cl.setLevel(ctx, r.Params.Level)
				}
			}
			return res, err
		}
		return next(ctx, method, req)
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
// upstream session. Servers that fail are logged; err joins their errors.
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
				p.logger.Warn(method+": upstream failed", "trace", trace.From(ctx), "server", sn, "err", errs[i])
				errs[i] = fmt.Errorf("%s: %v", sn, errs[i]) // text: the answer's code is the proxy's
			}
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
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

func (p *Project) listResources(ctx context.Context, cl *client) (*mcp.ListResourcesResult, error) {
	var mu sync.Mutex
	out := []*mcp.Resource{}
	err := p.each(ctx, cl, "resources/list", hasResources, func(ctx context.Context, server string, s *mcp.ClientSession) error {
		var got []*mcp.Resource
		for r, err := range s.Resources(ctx, nil) {
			if err != nil {
				return err
			}
			got = append(got, r)
		}
		cl.mu.Lock()
		for _, r := range got {
			cl.uris[r.URI] = server
		}
		cl.mu.Unlock()
		mu.Lock()
		out = append(out, got...)
		mu.Unlock()
		return nil
	})
	if len(out) == 0 && err != nil {
		return nil, fmt.Errorf("no upstream server of project %s answered resources/list: %w", p.Name, err)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].URI < out[j].URI })
	return &mcp.ListResourcesResult{Resources: out}, nil
}

func (p *Project) listTemplates(ctx context.Context, cl *client) (*mcp.ListResourceTemplatesResult, error) {
	var mu sync.Mutex
	out := []*mcp.ResourceTemplate{}
	err := p.each(ctx, cl, "resources/templates/list", hasResources, func(ctx context.Context, server string, s *mcp.ClientSession) error {
		var got []*mcp.ResourceTemplate
		for t, err := range s.ResourceTemplates(ctx, nil) {
			if err != nil {
				return err
			}
			cp := *t
			cp.Name = p.external(server, t.Name)
			got = append(got, &cp)
		}
		cl.mu.Lock()
		for _, t := range got {
			cl.templates[t.URITemplate] = server
		}
		cl.mu.Unlock()
		mu.Lock()
		out = append(out, got...)
		mu.Unlock()
		return nil
	})
	if len(out) == 0 && err != nil {
		return nil, fmt.Errorf("no upstream server of project %s answered resources/templates/list: %w", p.Name, err)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return &mcp.ListResourceTemplatesResult{ResourceTemplates: out}, nil
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
	callFrom(ctx).at(server)
	var res *mcp.ReadResourceResult
	err = p.onOne(ctx, cl, server, func(ctx context.Context, s *mcp.ClientSession) error {
		var err error
		res, err = s.ReadResource(ctx, req.Params)
		return err
	})
	return res, err
}

func (p *Project) subscribe(ctx context.Context, cl *client, uri string, on bool) error {
	server, err := p.resourceServer(ctx, cl, uri)
	if err != nil {
		return err
	}
	callFrom(ctx).at(server)
	return p.onOne(ctx, cl, server, func(ctx context.Context, s *mcp.ClientSession) error {
		if on {
			return s.Subscribe(ctx, &mcp.SubscribeParams{URI: uri})
		}
		return s.Unsubscribe(ctx, &mcp.UnsubscribeParams{URI: uri})
	})
}

func (p *Project) listPrompts(ctx context.Context, cl *client) (*mcp.ListPromptsResult, error) {
	var mu sync.Mutex
	out := []*mcp.Prompt{}
	err := p.each(ctx, cl, "prompts/list", hasPrompts, func(ctx context.Context, server string, s *mcp.ClientSession) error {
		var got []*mcp.Prompt
		for pr, err := range s.Prompts(ctx, nil) {
			if err != nil {
				return err
			}
			cp := *pr
			cp.Name = p.external(server, pr.Name)
			got = append(got, &cp)
		}
		mu.Lock()
		out = append(out, got...)
		mu.Unlock()
		return nil
	})
	if len(out) == 0 && err != nil {
		return nil, fmt.Errorf("no upstream server of project %s answered prompts/list: %w", p.Name, err)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return &mcp.ListPromptsResult{Prompts: out}, nil
}

func (p *Project) getPrompt(ctx context.Context, cl *client, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
	server, name, ok := p.internal(req.Params.Name)
	if !ok {
		return nil, &jsonrpc.Error{Code: codeInvalidParams, Message: fmt.Sprintf("unknown prompt %q in project %s; call prompts/list [trace %s]", req.Params.Name, p.Name, trace.From(ctx))}
	}
	callFrom(ctx).at(server)
	params := *req.Params
	params.Name = name
	var res *mcp.GetPromptResult
	err := p.onOne(ctx, cl, server, func(ctx context.Context, s *mcp.ClientSession) error {
		var err error
		res, err = s.GetPrompt(ctx, &params)
		return err
	})
	return res, err
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
	callFrom(ctx).at(server)
	var res *mcp.CompleteResult
	err := p.onOne(ctx, cl, server, func(ctx context.Context, s *mcp.ClientSession) error {
		var err error
		res, err = s.Complete(ctx, &params)
		return err
	})
	return res, err
}

// advertise is what the session is told the proxy can do: the union of what
// its upstreams advertise, plus the proxy's own tools, never more. Servers
// not yet seen are connected now, on this session's own upstream sessions
// (each bounded by the connect knob); one that cannot be reached adds nothing.
func (p *Project) advertise(ctx context.Context, cl *client) *mcp.ServerCapabilities {
	// The wait is bounded by the connect knob and by half of what is left of
	// the request's deadline: initialize is answered in time whatever the
	// upstreams do (a connect still running goes on in the background).
	wait := p.knobs.UpstreamConnect
	if dl, ok := ctx.Deadline(); ok && time.Until(dl)/2 < wait {
		wait = time.Until(dl) / 2
	}
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
