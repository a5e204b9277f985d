package project

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpchaos/mcpchaos/proxy/trace"
)

// proxyTool is a tool the proxy itself answers, without an upstream.
type proxyTool struct {
	tool *mcp.Tool
	call func(context.Context, *mcp.CallToolRequest) *mcp.CallToolResult
}

// GetPageTool fetches the other pages of a paginated result.
const GetPageTool = "get_page"

// proxyTools lists the tools this project's configuration adds.
func (p *Project) proxyTools() []proxyTool {
	var out []proxyTool
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
