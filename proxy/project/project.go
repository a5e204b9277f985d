// Package project is one MCP endpoint of the proxy: it aggregates the tools
// of a project's upstream servers (prefixed with the server name), routes
// tools/call to the right upstream, and post-processes results.
//
// Every method a client sends passes through deadline.Middleware first, so
// nothing here can leave a request unanswered.
package project

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpchaos/mcpchaos/proxy/audit"
	"github.com/mcpchaos/mcpchaos/proxy/deadline"
	"github.com/mcpchaos/mcpchaos/proxy/failpoint"
	"github.com/mcpchaos/mcpchaos/proxy/gate"
	"github.com/mcpchaos/mcpchaos/proxy/knobs"
	"github.com/mcpchaos/mcpchaos/proxy/pause"
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

// Recorder takes audit rows without ever blocking (audit.Recorder).
type Recorder interface {
	Record(audit.Row)
}

// Project serves one project's MCP endpoint.
type Project struct {
	Name     string
	conns    map[string]*upstream.Conn
	sessions *session.Table
	audit    Recorder
	knobs    knobs.Values
	logger   *slog.Logger
	server   *mcp.Server
	fail     *failpoint.Set
	pipeline *stage.Pipeline
	pages    *stage.Pages
	gate     *gate.Gate
	pause    *pause.Queue

	mu      sync.Mutex
	adopted map[string]*mcp.Server // session id -> the server minting it
}

// Options are what a Project needs from the proxy around it.
type Options struct {
	Servers  map[string]string // server name -> MCP URL
	Sessions *session.Table
	Audit    Recorder
	Knobs    knobs.Values
	Logger   *slog.Logger
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
}

// New builds a project; upstreams connect on first use.
func New(name string, o Options) *Project {
	p := &Project{
		Name:     name,
		conns:    map[string]*upstream.Conn{},
		sessions: o.Sessions,
		audit:    o.Audit,
		knobs:    o.Knobs,
		logger:   o.Logger.With("project", name),
		fail:     o.Failpoints,
		pipeline: o.Pipeline,
		pages:    o.Pages,
		gate:     o.Gate,
		pause:    o.Pause,
		adopted:  map[string]*mcp.Server{},
	}
	for sn, u := range o.Servers {
		p.conns[sn] = upstream.New(sn, u, upstream.Options{
			ConnectTimeout: o.Knobs.UpstreamConnect,
			CallTimeout:    o.Knobs.UpstreamCallTimeout,
			CloseGrace:     o.Knobs.ShutdownGrace,
			Logger:         p.logger,
		})
	}
	p.server = p.NewServer("")
	return p
}

// Server is the project's shared MCP server, for sessions created by initialize.
func (p *Project) Server() *mcp.Server { return p.server }

// NewServer returns an MCP server for this project. With a non-empty id, the
// server mints exactly that session id: the entry uses one such server per
// recreated session, so the session keeps the id its client already holds.
func (p *Project) NewServer(id string) *mcp.Server {
	opts := &mcp.ServerOptions{
		Logger:                    p.logger,
		Capabilities:              &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{}},
		SupportedProtocolVersions: ProtocolVersions,
	}
	if id != "" {
		opts.GetSessionID = func() string { return id }
	}
	s := mcp.NewServer(&mcp.Implementation{Name: "mcplocal/" + p.Name, Version: "0.1.0"}, opts)
	s.AddReceivingMiddleware(
		deadline.Middleware(deadline.Options{Deadline: p.knobs.RequestDeadline, Begin: p.begin, OnAnswer: p.answered, Hold: p.hold}),
		p.track,
		p.dispatch,
	)
	if id != "" {
		p.mu.Lock()
		p.adopted[id] = s
		p.mu.Unlock()
	}
	return s
}

// Release forgets the server of a recreated session once that session is
// closed, so recreated sessions do not accumulate servers.
func (p *Project) Release(id string) {
	p.mu.Lock()
	delete(p.adopted, id)
	p.mu.Unlock()
}

// Close closes every session of the project, recreated ones included, and
// the upstream connections. Close may be called more than once.
func (p *Project) Close() {
	p.mu.Lock()
	servers := []*mcp.Server{p.server}
	for _, s := range p.adopted {
		servers = append(servers, s)
	}
	p.adopted = map[string]*mcp.Server{}
	p.mu.Unlock()
	// ServerSession.Close waits for the session's in-flight handlers; one
	// stuck past every bound must not hold the proxy's shutdown forever.
	var wg sync.WaitGroup
	for _, s := range servers {
		for ss := range s.Sessions() {
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
	for _, c := range p.conns {
		_ = c.Close()
	}
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

// answered logs every request and writes the tool_call_trace row of tools/call.
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
	p.logger.Info("request", "trace", a.Trace, "method", a.Method, "session", c.session, "user", c.user,
		"tool", row.Tool, "outcome", a.Outcome, "ms", a.Duration.Milliseconds())
	if a.Method == "tools/call" {
		if row.Tool == "" {
			if r, ok := a.Request.(*mcp.CallToolRequest); ok && r.Params != nil {
				row.Tool = r.Params.Name
			}
		}
		p.audit.Record(row)
	}
}

// track registers sessions created by initialize in the session table.
func (p *Project) track(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		res, err := next(ctx, method, req)
		if method != "initialize" || err != nil {
			return res, err
		}
		info := session.Info{ID: req.GetSession().ID(), Project: p.Name}
		if ex := req.GetExtra(); ex != nil && ex.Header != nil {
			info.User = ex.Header.Get(HeaderUser)
			if why := ex.Header.Get(HeaderRecreated); why != "" {
				info.Recreated, info.Reason = true, why
			}
		}
		if info.ID != "" {
			p.sessions.Add(info)
		}
		return res, err
	}
}

// dispatch answers tools/list and tools/call itself; every other method goes
// to the SDK's own handler.
func (p *Project) dispatch(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		switch method {
		case "tools/list":
			if p.gated(ctx) {
				return p.listProxyTools(), nil
			}
			return p.listTools(ctx)
		case "tools/call":
			return p.callTool(ctx, req.(*mcp.CallToolRequest))
		}
		return next(ctx, method, req)
	}
}

func (p *Project) listTools(ctx context.Context) (*mcp.ListToolsResult, error) {
	type listed struct {
		server string
		tools  []*mcp.Tool
		err    error
	}
	ch := make(chan listed, len(p.conns))
	for name, c := range p.conns {
		go func() {
			ts, err := c.ListTools(ctx)
			ch <- listed{name, ts, err}
		}()
	}
	var out []*mcp.Tool
	var failed []string
	for range p.conns {
		l := <-ch
		if l.err != nil {
			p.logger.Warn("tools/list: upstream failed", "trace", trace.From(ctx), "server", l.server, "err", l.err)
			failed = append(failed, fmt.Sprintf("%s: %v", l.server, l.err))
			continue
		}
		for _, t := range l.tools {
			cp := *t
			cp.Name = l.server + "_" + t.Name
			out = append(out, &cp)
		}
	}
	if len(out) == 0 && len(failed) > 0 {
		return nil, fmt.Errorf("no upstream server of project %s answered tools/list: %s", p.Name, strings.Join(failed, "; "))
	}
	out = append(out, p.listProxyTools().Tools...)
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return &mcp.ListToolsResult{Tools: out}, nil
}

// route splits a prefixed tool name into its server and upstream tool name.
func (p *Project) route(name string) (*upstream.Conn, string, bool) {
	var best *upstream.Conn
	for sn, c := range p.conns {
		if strings.HasPrefix(name, sn+"_") && (best == nil || len(sn) > len(best.Name)) {
			best = c
		}
	}
	if best == nil {
		return nil, "", false
	}
	return best, strings.TrimPrefix(name, best.Name+"_"), true
}

func (p *Project) callTool(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	c := callFrom(ctx)
	code := trace.From(ctx)
	p.fail.Eval(ctx, failpoint.ToolCall, req.Params.Name)
	if pt, ok := p.proxyTool(req.Params.Name); ok {
		c.mu.Lock()
		c.tool = req.Params.Name
		c.mu.Unlock()
		return pt.call(ctx, req), nil
	}
	conn, tool, ok := p.route(req.Params.Name)
	if !ok {
		return errorResult(fmt.Sprintf("unknown tool %q in project %s; call tools/list for the tools it has [trace %s]", req.Params.Name, p.Name, code)), nil
	}
	if p.gated(ctx) {
		c.mu.Lock()
		c.server, c.tool, c.status = conn.Name, req.Params.Name, audit.StatusRefused
		c.mu.Unlock()
		res := errorResult(fmt.Sprintf("project %s is gated: call %s first (with your intent) to open its tools [trace %s]", p.Name, gate.BeginSession, code))
		if why, owed := p.sessions.TakeNotice(c.session); owed {
			res.Content = append([]mcp.Content{&mcp.TextContent{Text: recreatedNotice(why, code)}}, res.Content...)
			c.degrade("session state unavailable: " + why)
		}
		return res, nil
	}
	c.mu.Lock()
	c.server, c.tool = conn.Name, req.Params.Name // the row names the tool as the client called it
	c.mu.Unlock()

	res, err := p.upstreamCall(ctx, conn, tool, req)
	if err != nil {
		res = errorResult(fmt.Sprintf("%v; retry, and if it keeps failing the upstream %s may be down [trace %s]", err, conn.Name, code))
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

// upstreamCall forwards one tools/call and writes its upstream_call row.
func (p *Project) upstreamCall(ctx context.Context, conn *upstream.Conn, tool string, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	c := callFrom(ctx)
	ctx, span, parent := trace.StartSpan(ctx)
	start := time.Now()
	res, err := conn.CallTool(ctx, tool, req.Params.Arguments)
	row := audit.Row{
		Kind: audit.KindUpstreamCall, CorrelationID: trace.From(ctx), SpanID: span, ParentID: parent,
		SessionID: c.session, User: c.user, Project: p.Name, Server: conn.Name, Tool: tool,
		Start: start, Duration: time.Since(start), Status: audit.StatusOK,
	}
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		row.Status, row.Detail = audit.StatusTimeout, err.Error()
	case err != nil:
		row.Status, row.Detail = audit.StatusError, err.Error()
	case res.IsError:
		row.Status = audit.StatusError
	}
	p.audit.Record(row)
	return res, err
}

func errorResult(text string) *mcp.CallToolResult {
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: text}}}
}
