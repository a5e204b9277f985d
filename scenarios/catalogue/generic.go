package catalogue

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/mcpchaos/mcpchaos/scenarios/harness"
)

// The generic part of the security rows: what the MCP spec asks of every
// proxy at its MCP endpoint, needing neither mcplocal's audit API nor its
// session adoption. mcplocal's own rows (OriginGuard, BadSessionIDs) hold it
// to more: every endpoint, JSON-RPC bodies, no session or audit row stored.

// ForeignOrigin: an initialize from a foreign Origin is refused with 403,
// as the MCP spec's Streamable HTTP transport says a server MUST (DNS
// rebinding), and opens no session. The spec asks nothing of the Host
// header (a browser's rebound request carries its page's Origin), so the
// generic row does not either; mcplocal's own Origin row holds it to the
// Host as well.
var ForeignOrigin = Operation{Name: "an initialize from a foreign Origin", Do: func(ctx context.Context, env *harness.Env) Observation {
	var o Observation
	clk := startClock()
	status, sid, body, err := rawMCP(ctx, env, func(r *http.Request) { r.Header.Set("Origin", "http://evil.example") }, "", "", initialize)
	o.Err = err
	clk.into(&o)
	if err != nil {
		return o
	}
	switch {
	case status != http.StatusForbidden:
		o.Broken = append(o.Broken, fmt.Sprintf("an initialize from Origin http://evil.example answered %d, want 403: %s", status, excerpt(body)))
	case sid != "":
		o.Broken = append(o.Broken, "an initialize from Origin http://evil.example opened session "+excerpt(sid))
	}
	return o
}}

// MalformedSessionIDs: a session id that is not visible ASCII, or far
// longer than any the proxy issues, is answered at once and cleanly refused
// (a 4xx, never a 5xx, a hang or a success), and the proxy still serves.
var MalformedSessionIDs = Operation{Name: "malformed session ids answered and refused", Do: func(ctx context.Context, env *harness.Env) Observation {
	call := fmt.Sprintf(`{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":%q,"arguments":{"page_id":"p1","content":"x"}}}`, env.Tool("update_page"))
	var o Observation
	for i, id := range []string{"ünï😀", "a b/../c", strings.Repeat("y", 1<<14), "tab\tid"} {
		var clk *clock
		if i == 0 { // the first id's answer is the timed part
			clk = startClock()
		}
		status, _, body, err := rawMCP(ctx, env, nil, id, "", call)
		if i == 0 {
			o.Err = err
			clk.into(&o)
		}
		switch {
		case err != nil:
			o.Broken = append(o.Broken, fmt.Sprintf("id %q: %v", excerpt(id), err))
		case status/100 != 4:
			o.Broken = append(o.Broken, fmt.Sprintf("id %q answered %d, want a 4xx refusal: %s", excerpt(id), status, excerpt(body)))
		}
	}
	if why := dead(ctx, env); why != "" {
		o.Broken = append(o.Broken, why)
	}
	return o
}}

// rawMCP POSTs body to the project's MCP endpoint as alice's client would,
// with the target's headers, a session id and a protocol version header if
// given ("" sends none: an initialize names no version in its header, and a
// request after it names the one the proxy chose, negotiatedVersion), and
// edit applied; it returns the status, the session id the answer issued,
// and the body.
func rawMCP(ctx context.Context, env *harness.Env, edit func(*http.Request), session, version, body string) (int, string, string, error) {
	hc := env.HTTPClient("alice")
	defer hc.CloseIdleConnections()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, env.ProjectURL(), strings.NewReader(body))
	if err != nil {
		return 0, "", "", err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if version != "" {
		req.Header.Set("Mcp-Protocol-Version", version)
	}
	if session != "" {
		req.Header["Mcp-Session-Id"] = []string{session} // as sent, even when not canonical
	}
	if edit != nil {
		edit(req)
	}
	resp, err := hc.Do(req)
	if err != nil {
		return 0, "", "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 1<<16))
	return resp.StatusCode, resp.Header.Get("Mcp-Session-Id"), string(b), err
}

// genericSecurityScenarios are the generic rows beside mcplocal's security
// rows: they apply to every proxy (the session id row to stateful ones).
func genericSecurityScenarios() []Scenario {
	return []Scenario{
		{Fault: harness.None{}, Operation: ForeignOrigin, Promise: "8 a foreign Origin is refused (MCP spec: DNS rebinding)",
			Labels: []string{"security", "origin"}, Budget: requestDeadline, Expect: sessionAnswered},
		{Fault: harness.None{}, Operation: MalformedSessionIDs, Promise: "8 a malformed session id is answered and cleanly refused",
			Labels: []string{"security", "ids"}, Budget: requestDeadline, Expect: sessionAnswered, Needs: harness.NeedsSessions},
	}
}

// negotiatedVersion is the protocol version an initialize's answer chose
// (body, JSON or SSE), or "" when it names none.
func negotiatedVersion(status int, body string) string {
	a, bad := responseOf(status, body)
	if bad != "" || a.Result == nil {
		return ""
	}
	var r struct {
		ProtocolVersion string `json:"protocolVersion"`
	}
	_ = json.Unmarshal(a.Result, &r)
	return r.ProtocolVersion
}
