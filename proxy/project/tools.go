package project

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpchaos/mcpchaos/proxy/audit"
	"github.com/mcpchaos/mcpchaos/proxy/gate"
	"github.com/mcpchaos/mcpchaos/proxy/trace"
)

// proxyTool is a tool the proxy itself answers, without an upstream.
type proxyTool struct {
	tool *mcp.Tool
	call func(context.Context, *mcp.CallToolRequest) *mcp.CallToolResult
}

// GetPageTool fetches the other pages of a paginated result.
const GetPageTool = "get_page"

// listProxyTools is the tools/list answer made of the proxy's own tools.
func (p *Project) listProxyTools() *mcp.ListToolsResult {
	out := []*mcp.Tool{}
	for _, pt := range p.proxyTools() {
		out = append(out, pt.tool)
	}
	return &mcp.ListToolsResult{Tools: out}
}

// proxyTools lists the tools this project's configuration adds.
func (p *Project) proxyTools() []proxyTool {
	var out []proxyTool
	if p.gate != nil {
		out = append(out,
			proxyTool{tool: &mcp.Tool{
				Name:        gate.BeginSession,
				Description: "Start a session: say what you intend to do, get the project's prompts ranked for it, and open the project's tools.",
				InputSchema: map[string]any{
					"type":       "object",
					"properties": map[string]any{"intent": map[string]any{"type": "string"}},
					"required":   []string{"intent"},
				},
			}, call: p.beginSession},
			proxyTool{tool: &mcp.Tool{
				Name:        gate.ReadPrompts,
				Description: "List the project's prompts by priority (no LLM involved).",
				InputSchema: map[string]any{"type": "object", "properties": map[string]any{}},
			}, call: p.readPrompts},
		)
	}
	if p.pipeline.Has("paginate") {
		out = append(out, proxyTool{
			tool: &mcp.Tool{
				Name:        GetPageTool,
				Description: "Fetch one page of a paginated tool result, by the handle and page number its first page gave.",
				InputSchema: map[string]any{
					"type": "object",
					"properties": map[string]any{
						"handle": map[string]any{"type": "string"},
						"page":   map[string]any{"type": "integer", "minimum": 1},
					},
					"required": []string{"handle", "page"},
				},
			},
			call: p.getPage,
		})
	}
	return out
}

func (p *Project) proxyTool(name string) (proxyTool, bool) {
	for _, pt := range p.proxyTools() {
		if pt.tool.Name == name {
			return pt, true
		}
	}
	return proxyTool{}, false
}

func (p *Project) beginSession(ctx context.Context, req *mcp.CallToolRequest) *mcp.CallToolResult {
	var args struct {
		Intent string `json:"intent"`
	}
	_ = json.Unmarshal(req.Params.Arguments, &args) // an empty intent still opens the gate
	c := callFrom(ctx)
	c.mu.Lock()
	row := audit.Row{SessionID: c.session, User: c.user, Project: p.Name}
	c.mu.Unlock()
	d := p.gate.Begin(ctx, args.Intent, row)
	p.sessions.OpenGate(c.session)
	p.mu.Lock()
	cl := p.clients[c.session]
	p.mu.Unlock()
	if cl != nil {
		cl.listChanged("tools") // the upstream tools just became visible
	}
	content := []mcp.Content{}
	if d.Degraded != nil {
		content = append(content, &mcp.TextContent{Text: d.Degraded.Notice(trace.From(ctx))})
		c.degrade(d.Degraded.AuditReason())
	}
	content = append(content, &mcp.TextContent{Text: fmt.Sprintf("Session started; the project's tools are open. Prompts, most relevant first:\n\n%s", gate.Render(d.Order))})
	return &mcp.CallToolResult{Content: content}
}

func (p *Project) readPrompts(ctx context.Context, _ *mcp.CallToolRequest) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: gate.Render(gate.Fallback(p.gate.Prompts(), ""))}}}
}

func (p *Project) getPage(ctx context.Context, req *mcp.CallToolRequest) *mcp.CallToolResult {
	var args struct {
		Handle string `json:"handle"`
		Page   int    `json:"page"`
	}
	if err := json.Unmarshal(req.Params.Arguments, &args); err != nil {
		return errorResult(fmt.Sprintf("get_page wants {\"handle\": string, \"page\": number}: %v [trace %s]", err, trace.From(ctx)))
	}
	page, n, ok := p.pages.Get(args.Handle, args.Page)
	if !ok {
		if n == 0 {
			return errorResult(fmt.Sprintf("no paginated result with handle %q (it may have expired); call the original tool again [trace %s]", args.Handle, trace.From(ctx)))
		}
		return errorResult(fmt.Sprintf("page %d does not exist; the result has pages 1 to %d [trace %s]", args.Page, n, trace.From(ctx)))
	}
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf("--- Page %d of %d ---\n%s", args.Page, n, page)}}}
}
