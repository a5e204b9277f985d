// Package project is one MCP endpoint of the proxy: it aggregates the tools
// of a project's upstream servers (prefixed with the server name), routes
// tools/call to the right upstream, and post-processes results.
//
// Every request a client sends is bounded and answered by one guard,
// deadline.Guard: the go-sdk's receiving middleware runs it for every method
// (deadline.Middleware, first in each session's server) and the raw
// tools/call relay runs it for the calls it takes (RelayCall). Nothing here
// can leave a request unanswered.
package project

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpchaos/mcpchaos/proxy/audit"
	"github.com/mcpchaos/mcpchaos/proxy/deadline"
	"github.com/mcpchaos/mcpchaos/proxy/failpoint"
	"github.com/mcpchaos/mcpchaos/proxy/gate"
	"github.com/mcpchaos/mcpchaos/proxy/knobs"
	"github.com/mcpchaos/mcpchaos/proxy/pause"
	"github.com/mcpchaos/mcpchaos/proxy/redact"
	"github.com/mcpchaos/mcpchaos/proxy/session"
	"github.com/mcpchaos/mcpchaos/proxy/stage"
	"github.com/mcpchaos/mcpchaos/proxy/trace"
	"github.com/mcpchaos/mcpchaos/proxy/upstream"
)

// Internal headers the entry sets after authenticating a request; it strips
// any the client sent, so the handlers can trust them.
const (
	HeaderUser      = "X-Mcplocal-User"
	HeaderRecreated = "X-Mcplocal-Recreated" // value: why the session was unknown
)

// ProtocolVersions are the MCP versions the proxy serves to clients.
var ProtocolVersions = []string{"2025-11-25", "2025-06-18", "2025-03-26"}

// Project serves one project's MCP endpoint.
//
// Every client session gets an MCP server of its own (so list_changed and
// resources/updated reach exactly that session) and, lazily, one upstream
// session per server it touches (so server-to-client requests and
// notifications have exactly one place to go). Release frees both.
type Project struct {
	Name      string
	stopped   context.Context // ended first thing in Close: every request still running ends
	stop      context.CancelFunc
	servers   map[string]string      // server name -> MCP URL
	headers   map[string]http.Header // server name -> headers sent to it (config headers)
	names     []string               // server names, sorted
	prefix    bool                   // tools, prompts and templates are named server_name
	sessions  *session.Table
	audit     audit.Sink
	knobs     knobs.Values
	logger    *slog.Logger
	fail      *failpoint.Set
	pipeline  *stage.Pipeline
	pages     *stage.Pages
	gate      *gate.Gate
	transport *http.Transport // shared by every upstream session of the project
	limit     *upstream.Limit
	pause     *pause.Queue

	mu      sync.Mutex
	clients map[string]*client                 // session id -> its state
	caps    map[string]*mcp.ServerCapabilities // server -> what it advertised
	closed  bool
	closing sync.WaitGroup // upstream sessions being closed

	relayOn bool         // config `relay: true`
	relayed atomic.Int64 // tools/calls answered by the raw relay
}

// Options are what a Project needs from the proxy around it.
type Options struct {
	Headers map[string]http.Header // server name -> headers sent to it (credentials from the config)
	Servers map[string]string      // server name -> MCP URL
	// NoPrefix passes the names of a one-server project through unchanged
	// (config `prefix: false`); with several servers names are always prefixed.
	NoPrefix bool
	// UpstreamSessions bounds the upstream sessions held at once, shared by
	// every project of the proxy (knob MCPCTL_UPSTREAM_SESSIONS_MAX); nil: unbounded.
	UpstreamSessions *upstream.Limit
	Sessions         *session.Table
	Audit            audit.Sink
	Knobs            knobs.Values
	Logger           *slog.Logger
	// Failpoints lets the chaos harness make handlers misbehave; nil in production.
	Failpoints *failpoint.Set
	// Pipeline post-processes tool results; nil or empty: results pass through.
	Pipeline *stage.Pipeline
	// Pages holds paginated results for the get_page tool.
	Pages *stage.Pages
	// Gate, if set, hides and refuses upstream tools until begin_session.
	Gate *gate.Gate
	// Pause, if set, holds the project's requests while an operator has it
	// paused (see hold).
	Pause *pause.Queue
	// Relay answers plain tools/calls through the raw relay (RelayCall;
	// config.Config.RelayOn: on unless the file says `relay: false`).
	Relay bool
}

// New builds a project; upstreams connect on first use.
func New(name string, o Options) *Project {
	p := &Project{
		Name:      name,
		servers:   map[string]string{},
		headers:   map[string]http.Header{}, // PutServer changes the project's own
		prefix:    !(o.NoPrefix && len(o.Servers) == 1),
		sessions:  o.Sessions,
		audit:     o.Audit,
		knobs:     o.Knobs,
		logger:    o.Logger.With("project", name),
		fail:      o.Failpoints,
		pipeline:  o.Pipeline,
		pages:     o.Pages,
		gate:      o.Gate,
		transport: newUpstreamTransport(),
		limit:     o.UpstreamSessions,
		pause:     o.Pause,
		relayOn:   o.Relay,
		clients:   map[string]*client{},
		caps:      map[string]*mcp.ServerCapabilities{},
	}
	p.stopped, p.stop = context.WithCancel(context.Background())
	for sn, h := range o.Headers {
		p.headers[sn] = h
	}
	for sn, u := range o.Servers {
		p.servers[sn] = u
		p.names = append(p.names, sn)
	}
	sort.Strings(p.names)
	return p
}

// Server returns a new MCP server for a session created by initialize: each
// session has a server of its own.
func (p *Project) Server() *mcp.Server { return p.NewServer("") }

// serverCapabilities is what the SDK server may handle; what a session is
// told at initialize is narrowed to its upstreams' union (see advertise).
var serverCapabilities = &mcp.ServerCapabilities{
	Tools:       &mcp.ToolCapabilities{ListChanged: true},
	Resources:   &mcp.ResourceCapabilities{Subscribe: true, ListChanged: true},
	Prompts:     &mcp.PromptCapabilities{ListChanged: true},
	Completions: &mcp.CompletionCapabilities{},
	Logging:     &mcp.LoggingCapabilities{},
}

// NewServer returns an MCP server for one session of this project. With a
// non-empty id, the server mints exactly that session id: the entry uses it
// to recreate a session under the id its client already holds.
func (p *Project) NewServer(id string) *mcp.Server {
	opts := &mcp.ServerOptions{
		Logger:                    p.logger,
		Capabilities:              serverCapabilities,
		SupportedProtocolVersions: ProtocolVersions,
		// The dispatch middleware forwards subscriptions upstream first; the
		// SDK then records them, so resources/updated reaches the subscriber.
		SubscribeHandler:   func(context.Context, *mcp.SubscribeRequest) error { return nil },
		UnsubscribeHandler: func(context.Context, *mcp.UnsubscribeRequest) error { return nil },
	}
	if id != "" {
		opts.GetSessionID = func() string { return id }
	}
	s := mcp.NewServer(&mcp.Implementation{Name: "mcplocal/" + p.Name, Version: "0.1.0"}, opts)
	s.AddReceivingMiddleware(
		deadline.Middleware(p.guard()),
		p.track(s),
		p.dispatch,
	)
	return s
}

// guard is the options of every request's guard (deadline.Guard), on the
// go-sdk path (its Middleware) and on the raw relay (which begins a call
// from its HTTP request instead).
func (p *Project) guard() deadline.Options {
	return deadline.Options{Deadline: p.knobs.RequestDeadline, Begin: p.begin, OnAnswer: p.answered, Hold: p.hold, Stop: p.stopped}
}

// Release frees everything a client session holds in the project: its MCP
// server and its upstream sessions (closed in the background, each bounded
// by the shutdown grace). The entry calls it when the client DELETEs the
// session; idle expiry calls it too. Release may be called more than once.
func (p *Project) Release(id string) {
	p.mu.Lock()
	c := p.clients[id]
	delete(p.clients, id)
	p.mu.Unlock()
	if c != nil {
		p.closeClient(c)
	}
}

// UpstreamSessions is how many upstream sessions the project's clients hold.
func (p *Project) UpstreamSessions() int {
	p.mu.Lock()
	cs := make([]*client, 0, len(p.clients))
	for _, c := range p.clients {
		cs = append(cs, c)
	}
	p.mu.Unlock()
	n := 0
	for _, c := range cs {
		n += c.upstreams()
	}
	return n
}

// Close closes every session of the project and their upstream sessions.
// Close may be called more than once.
func (p *Project) Close() {
	// First, the requests still running end (their answers were given by
	// the entry's shutdown, or are given now): what they wait on upstream
	// is given up, so each upstream is told (upstream.Conn's Close) before
	// its session ends, and a client told to retry does not run a tool twice.
	p.stop()
	p.mu.Lock()
	clients := p.clients
	p.clients = map[string]*client{}
	p.closed = true
	p.mu.Unlock()
	// ServerSession.Close waits for the session's in-flight handlers; one
	// stuck past every bound must not hold the proxy's shutdown forever.
	var wg sync.WaitGroup
	for _, c := range clients {
		for ss := range c.srv.Sessions() {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_ = ss.Close()
			}()
		}
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	t := time.NewTimer(p.knobs.ShutdownGrace)
	select {
	case <-done:
	case <-t.C:
		p.logger.Error("sessions still busy after the shutdown grace; leaving them", "grace", p.knobs.ShutdownGrace)
	}
	t.Stop()
	for _, c := range clients {
		p.closeClient(c)
	}
	p.closing.Wait()
	p.transport.CloseIdleConnections()
}

// call is the per-request state the handlers fill in and the audit row reads.
type call struct {
	mu       sync.Mutex
	session  string
	user     string
	server   string
	tool     string
	status   string // overrides the outcome on the tool_call_trace row ("refused")
	degraded []string
}

type callKey struct{}

func callFrom(ctx context.Context) *call {
	c, _ := ctx.Value(callKey{}).(*call)
	if c == nil {
		c = &call{}
	}
	return c
}

func (c *call) degrade(reason string) {
	c.mu.Lock()
	c.degraded = append(c.degraded, reason)
	c.mu.Unlock()
}

func (p *Project) begin(ctx context.Context, method string, req mcp.Request) context.Context {
	c := &call{}
	if s := req.GetSession(); s != nil {
		c.session = s.ID()
	}
	if ex := req.GetExtra(); ex != nil && ex.Header != nil {
		c.user = ex.Header.Get(HeaderUser)
	}
	if c.user == "" {
		if info, ok := p.sessions.Get(c.session); ok {
			c.user = info.User
		}
	}
	return context.WithValue(ctx, callKey{}, c)
}

// answered logs every request and writes its root audit row:
// tool_call_trace for tools/call, mcp_request for every other method.
func (p *Project) answered(ctx context.Context, a deadline.Answer) {
	c := callFrom(ctx)
	c.mu.Lock()
	row := audit.Row{
		Kind: audit.KindToolCallTrace, CorrelationID: a.Trace, SpanID: a.Span,
		SessionID: c.session, User: c.user, Project: p.Name, Server: c.server, Tool: c.tool,
		Start: a.Start, Duration: a.Duration, Status: string(a.Outcome), Detail: a.Detail,
	}
	if len(c.degraded) > 0 {
		row.Degraded, row.DegradedReason = true, strings.Join(c.degraded, "; ")
	}
	if c.status != "" {
		row.Status = c.status
	}
	c.mu.Unlock()
	if a.Stack != nil {
		p.logger.Error("handler panicked", "trace", a.Trace, "method", a.Method, "panic", a.Detail, "stack", string(a.Stack))
	}
	p.logger.Info("request", "trace", a.Trace, "method", a.Method, "session", c.session, "user", c.user,
		"tool", row.Tool, "outcome", a.Outcome, "ms", a.Duration.Milliseconds())
	if a.Method == "tools/call" {
		if row.Tool == "" {
			if r, ok := a.Request.(*mcp.CallToolRequest); ok && r.Params != nil {
				row.Tool = r.Params.Name
			}
		}
	} else {
		row.Kind, row.Tool = audit.KindMCPRequest, a.Method
	}
	p.audit.Record(row)
}

// track registers sessions created by initialize in the session table and
// gives each its client state, bound to srv, the session's own server.
func (p *Project) track(srv *mcp.Server) mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			res, err := next(ctx, method, req)
			if method != "initialize" || err != nil {
				return res, err
			}
			ss, _ := req.GetSession().(*mcp.ServerSession)
			info := session.Info{ID: req.GetSession().ID(), Project: p.Name}
			if ex := req.GetExtra(); ex != nil && ex.Header != nil {
				info.User = ex.Header.Get(HeaderUser)
				if why := ex.Header.Get(HeaderRecreated); why != "" {
					info.Recreated, info.Reason = true, why
				}
			}
			if info.ID == "" || ss == nil {
				return res, err
			}
			if r, ok := res.(*mcp.InitializeResult); ok {
				info.Protocol = r.ProtocolVersion
			}
			p.sessions.Add(info)
			c := p.newClient(info.ID, srv, ss)
			if r, ok := res.(*mcp.InitializeResult); ok {
				r.Capabilities = p.advertise(ctx, c)
			}
			return res, err
		}
	}
}

func (p *Project) listTools(ctx context.Context, cl *client) (*mcp.ListToolsResult, error) {
	var out []*mcp.Tool
	err := p.each(ctx, cl, "tools/list", hasTools, func(ctx context.Context, server string, s *mcp.ClientSession) error {
		var got []*mcp.Tool
		for t, err := range s.Tools(ctx, nil) {
			if err != nil {
				return err
			}
			cp := *t
			cp.Name = p.external(server, t.Name)
			got = append(got, &cp)
		}
		cl.mu.Lock()
		out = append(out, got...)
		cl.mu.Unlock()
		return nil
	})
	if len(out) == 0 && err != nil {
		return nil, fmt.Errorf("no upstream server of project %s answered tools/list: %w", p.Name, err) // each redacted it
	}
	for _, se := range serverErrors(err) {
		out = append(out, p.unavailableTool(ctx, se))
	}
	out = append(out, p.listProxyTools().Tools...)
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return &mcp.ListToolsResult{Tools: out}, nil
}

// unavailableTool is the ⚠ notice, in a tools/list the other servers
// answered, for a server that could not list its tools: a tool named
// <server>_unavailable whose description says why and what to do, so the
// server's tools do not just vanish. Calling it reaches the server and
// answers with its error as it is then. The request's row is degraded.
func (p *Project) unavailableTool(ctx context.Context, se *serverError) *mcp.Tool {
	code := trace.From(ctx)
	callFrom(ctx).degrade(fmt.Sprintf("server %s unavailable: tools/list: %v", se.server, se.err))
	return &mcp.Tool{
		Name: se.server + "_unavailable",
		Description: fmt.Sprintf("⚠ Server %s unavailable (tools/list: %v): its tools are missing from this list; %s. "+
			"They are listed again by the first tools/list after it answers. [trace %s]",
			se.server, se.err, upstream.Advice(se.err, se.server), code),
		InputSchema: map[string]any{"type": "object", "properties": map[string]any{}},
	}
}

func (p *Project) callTool(ctx context.Context, cl *client, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	c := callFrom(ctx)
	code := trace.From(ctx)
	p.fail.Eval(ctx, failpoint.ToolCall, req.Params.Name)
	if pt, ok := p.proxyTool(req.Params.Name); ok {
		c.mu.Lock()
		c.tool = req.Params.Name
		c.mu.Unlock()
		return pt.call(ctx, req), nil
	}
	server, tool, ok := p.internal(req.Params.Name)
	if !ok {
		return errorResult(fmt.Sprintf("unknown tool %q in project %s; call tools/list for the tools it has [trace %s]", req.Params.Name, p.Name, code)), nil
	}
	if p.gated(ctx) {
		c.mu.Lock()
		c.server, c.tool, c.status = server, req.Params.Name, audit.StatusRefused
		c.mu.Unlock()
		res := errorResult(fmt.Sprintf("project %s is gated: call %s first (with your intent) to open its tools [trace %s]", p.Name, gate.BeginSession, code))
		if why, owed := p.sessions.TakeNotice(c.session); owed {
			res.Content = append([]mcp.Content{&mcp.TextContent{Text: recreatedNotice(why, code)}}, res.Content...)
			c.degrade("session state unavailable: " + why)
		}
		return res, nil
	}
	c.mu.Lock()
	c.server, c.tool = server, req.Params.Name // the row names the tool as the client called it
	c.mu.Unlock()

	res, err := p.upstreamCall(ctx, cl, server, tool, req)
	if err == nil {
		maskHeld(res)
	}
	if err != nil {
		res = errorResult(fmt.Sprintf("%v; %s [trace %s]", err, upstream.Advice(err, server), code))
	} else if !res.IsError && !p.pipeline.Empty() {
		res = p.postProcess(ctx, c, res)
	}
	if why, owed := p.sessions.TakeNotice(c.session); owed {
		res.Content = append([]mcp.Content{&mcp.TextContent{Text: recreatedNotice(why, code)}}, res.Content...)
		c.degrade("session state unavailable: " + why)
	}
	return res, nil
}

func recreatedNotice(why, code string) string {
	return fmt.Sprintf("⚠ Session state unavailable (%s). The proxy recreated this session under the same id; call begin_session again to restore session state. [trace %s]", why, code)
}

// gated reports whether the request's session must still call begin_session.
func (p *Project) gated(ctx context.Context) bool {
	if p.gate == nil {
		return false
	}
	info, ok := p.sessions.Get(callFrom(ctx).session)
	return !ok || !info.GateOpen
}

// postProcess runs the pipeline over a result made only of text, and puts a
// ⚠ notice in front for every degradation.
func (p *Project) postProcess(ctx context.Context, c *call, res *mcp.CallToolResult) *mcp.CallToolResult {
	var text strings.Builder
	for _, ct := range res.Content {
		t, ok := ct.(*mcp.TextContent)
		if !ok {
			return res // images, resources: the stages only know text
		}
		text.WriteString(t.Text)
	}
	c.mu.Lock()
	row := audit.Row{SessionID: c.session, User: c.user, Project: p.Name, Server: c.server, Tool: c.tool}
	c.mu.Unlock()
	out, degs := p.pipeline.Run(ctx, row, text.String())
	content := make([]mcp.Content, 0, len(degs)+1)
	for _, d := range degs {
		content = append(content, &mcp.TextContent{Text: d.Notice(trace.From(ctx))})
		c.degrade(d.AuditReason())
	}
	content = append(content, &mcp.TextContent{Text: out})
	cp := *res
	cp.Content = content
	return &cp
}

// upstreamCall forwards one tools/call on the session's own upstream session
// and writes its upstream_call row. The client's _meta (its progressToken)
// goes upstream with it, and the upstream's progress comes back to this call.
func (p *Project) upstreamCall(ctx context.Context, cl *client, server, tool string, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	c := callFrom(ctx)
	ctx, span, parent := trace.StartSpan(ctx)
	start := time.Now()
	var res *mcp.CallToolResult
	err := cl.do(ctx, server, req.Params.GetProgressToken(), func(ctx context.Context, conn *upstream.Conn) error {
		var err error
		res, err = conn.CallTool(ctx, tool, req.Params.Arguments, upstreamMeta(req.Params.Meta))
		return err
	})
	err = redact.Error(err) // upstream URLs may carry keys in their query
	var result []byte
	if err == nil {
		// The shape of the result as the SDK decoded it: measured on its
		// JSON, as the relay measures the bytes it got.
		result, _ = json.Marshal(res)
	}
	p.audit.Record(p.upstreamRow(c, trace.From(ctx), span, parent, server, tool, start, err, result))
	return res, err
}

// upstreamRow is the upstream_call row of one tools/call sent upstream, on
// the go-sdk path (upstreamCall) and on the raw relay (relayUpstream) alike:
// err is the call's error, redacted; result, the upstream's result as JSON
// (nil when the call got none), of which the row keeps the shape: its size,
// its content kinds, whether it is an isError result. Never its content.
func (p *Project) upstreamRow(c *call, code, span, parent, server, tool string, start time.Time, err error, result []byte) audit.Row {
	row := audit.Row{
		Kind: audit.KindUpstreamCall, CorrelationID: code, SpanID: span, ParentID: parent,
		SessionID: c.session, User: c.user, Project: p.Name, Server: server, Tool: tool,
		Start: start, Duration: time.Since(start), Status: audit.StatusOK,
	}
	var isError bool
	if err == nil && result != nil {
		n, shape := audit.ShapeOf(result)
		row.Bytes, row.Content, isError = n, shape.String(), shape.IsError
	}
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		row.Status, row.Detail = audit.StatusTimeout, err.Error()
	case err != nil:
		row.Status, row.Detail = audit.StatusError, err.Error()
	case isError:
		row.Status = audit.StatusError
	}
	return row
}

func errorResult(text string) *mcp.CallToolResult {
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: text}}}
}

// at records the upstream server a request went to, for its audit row.
func (c *call) at(server string) {
	c.mu.Lock()
	c.server = server
	c.mu.Unlock()
}

// newUpstreamTransport is the HTTP transport of a project's upstream
// sessions. Every client session has upstream sessions of its own, so a
// project under load has as many upstream requests in flight as it has busy
// clients: Go's default keeps only 2 idle connections per host and dials the
// rest anew for every call. It keeps up to its whole idle pool (Go's default
// of 100) for one host instead.
func newUpstreamTransport() *http.Transport {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConnsPerHost = t.MaxIdleConns
	return t
}

// maskHeld masks, in res's texts, every secret value the proxy holds: an
// upstream may echo one (its own header's key, a token).
func maskHeld(res *mcp.CallToolResult) {
	if !redact.Holding() {
		return
	}
	for _, c := range res.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			t.Text = redact.Values(t.Text)
		}
	}
}
