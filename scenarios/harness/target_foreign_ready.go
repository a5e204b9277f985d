package harness

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
)

// ReadyInitialize is a ForeignSpec's default readiness check: an MCP
// initialize on the endpoint answers 2xx (the session it opened is deleted).
const ReadyInitialize = "initialize"

// checkReady checks a spec's ready: field.
func checkReady(r string) error {
	switch {
	case r == ReadyInitialize, r == "tcp", strings.HasPrefix(r, "/"), strings.Contains(r, "{{"):
		return nil
	case strings.HasPrefix(r, "tcp:"):
		if _, err := strconv.ParseUint(strings.TrimPrefix(r, "tcp:"), 10, 16); err != nil {
			return fmt.Errorf("ready %q: want tcp:PORT", r)
		}
		return nil
	}
	return fmt.Errorf("ready %q: want %s, /PATH, tcp or tcp:PORT", r, ReadyInitialize)
}

// budgetKinds maps each budget kind a spec may set to the bound the
// catalogue's budgets of that kind read.
var budgetKinds = map[string]string{
	"request":    BoundRequest,
	"pagination": BoundPagination,
	"stage":      BoundStage,
	"gate":       BoundGate,
}

// BudgetKinds lists the scenario kinds a target spec's budgets: may set:
// request (every tools/call and session scenario), pagination, stage, gate.
func BudgetKinds() []string {
	out := make([]string, 0, len(budgetKinds))
	for k := range budgetKinds {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

var (
	_ ToolNamer = (*Foreign)(nil)
	_ Budgeter  = (*Foreign)(nil)
	_ Headerer  = (*Foreign)(nil)
)

// ToolName implements ToolNamer: the spec's tools: entry for SERVER/TOOL,
// else its toolName template.
func (f *Foreign) ToolName(server, tool string) string {
	if n, ok := f.Spec.Tools[server+"/"+tool]; ok {
		return n
	}
	var b strings.Builder
	t, err := newTemplate(f.Spec.ToolName)
	if err == nil {
		err = t.Execute(&b, struct{ Server, Tool string }{server, tool})
	}
	if err != nil {
		return server + "_" + tool
	}
	return b.String()
}

// PromptName implements PromptNamer: the spec's promptName template, else
// its toolName template with the prompt as the tool.
func (f *Foreign) PromptName(server, prompt string) string {
	text, data := f.Spec.ToolName, any(struct{ Server, Tool string }{server, prompt})
	if f.Spec.PromptName != "" {
		text, data = f.Spec.PromptName, struct{ Server, Prompt string }{server, prompt}
	}
	var b strings.Builder
	t, err := newTemplate(text)
	if err == nil {
		err = t.Execute(&b, data)
	}
	if err != nil {
		return server + "_" + prompt
	}
	return b.String()
}

// Budgets implements Budgeter: the spec's budgets in place of the bounds.
func (f *Foreign) Budgets(b Bounds) Bounds {
	for k, d := range f.Spec.budgets {
		b = b.WithD(budgetKinds[k], d)
	}
	return b
}

// Budgets implements Budgeter for a foreign proxy's cluster: its spec's.
func (f *ForeignCluster) Budgets(b Bounds) Bounds { return f.proto.Budgets(b) }

// Headers implements Headerer: the spec's headers, rendered.
func (f *Foreign) Headers() map[string]string {
	f.mu.Lock()
	vars := f.vars
	f.mu.Unlock()
	out := map[string]string{}
	for k, v := range f.Spec.Headers {
		if r, err := render(v, vars); err == nil {
			out[k] = r
		}
	}
	return out
}

// readyProbe is the spec's readiness check for the proxy on f.vars.Listen,
// and what it waits for, for errors.
func (f *Foreign) readyProbe() (string, func(context.Context, *http.Client) bool) {
	ready, err := render(f.Spec.Ready, f.vars)
	if err != nil {
		ready = f.Spec.Ready
	}
	base := "http://" + f.vars.Listen
	switch {
	case strings.HasPrefix(ready, "/"):
		return base + ready, func(ctx context.Context, c *http.Client) bool { return healthz(ctx, c, base+ready) }
	case ready == "tcp" || strings.HasPrefix(ready, "tcp:"):
		addr := f.vars.Listen
		if p, ok := strings.CutPrefix(ready, "tcp:"); ok {
			addr = net.JoinHostPort(f.vars.Host, p)
		}
		return "tcp " + addr, func(ctx context.Context, _ *http.Client) bool {
			c, err := (&net.Dialer{Timeout: readyDial}).DialContext(ctx, "tcp", addr)
			if err != nil {
				return false
			}
			_ = c.Close()
			return true
		}
	}
	ep := f.endpointFor(f.vars, Project)
	hdr := map[string]string{}
	for k, v := range f.Spec.Headers {
		if r, err := render(v, f.vars); err == nil {
			hdr[http.CanonicalHeaderKey(k)] = r
		}
	}
	if _, ok := hdr["Authorization"]; !ok {
		// With users configured, initialize as the clients will: as a user.
		if tok := firstUserToken(f.vars.Users); tok != "" {
			hdr["Authorization"] = "Bearer " + tok
		}
	}
	return "initialize on " + ep, func(ctx context.Context, c *http.Client) bool { return initializes(ctx, c, ep, hdr) }
}

// initializes sends one MCP initialize to endpoint and reports whether it
// was answered 2xx; the session it opened, if any, is deleted.
func initializes(ctx context.Context, c *http.Client, endpoint string, headers map[string]string) bool {
	body := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"mcpchaos-ready","version":"0.1.0"}}}`
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, strings.NewReader(body))
	if err != nil {
		return false
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := c.Do(req)
	if err != nil {
		return false
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
	_ = resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return false
	}
	if id := resp.Header.Get("Mcp-Session-Id"); id != "" {
		if del, err := http.NewRequestWithContext(ctx, http.MethodDelete, endpoint, nil); err == nil {
			del.Header.Set("Mcp-Session-Id", id)
			for k, v := range headers {
				del.Header.Set(k, v)
			}
			if r, err := c.Do(del); err == nil {
				_ = r.Body.Close()
			}
		}
	}
	return true
}

// firstUserToken is the token of the first user by name ("" with none).
func firstUserToken(users map[string]string) string {
	names := make([]string, 0, len(users))
	for n := range users {
		names = append(names, n)
	}
	slices.Sort(names)
	if len(names) == 0 {
		return ""
	}
	return users[names[0]]
}
